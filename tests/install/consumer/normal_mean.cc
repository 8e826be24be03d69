// A model of a user's, sampled with Sample(): the mean and scale of normal
// data, y ~ normal(mu, sigma), with the data given inline as CmdStan JSON.
// Started by mpirun, with autobatch built with MPI (autobatch::mpi), the
// chains are spread over the ranks and rank 0 prints the summary.
#include <cmath>
#include <cstdio>
#include <string>

#include "mcmc/model/distributions.h"
#include "mcmc/model/program_model.h"
#include "mcmc/sample.h"
#include "support/communicator.h"
#ifdef CONSUMER_HAVE_MPI
#include <memory>

#include "support/mpi/mpi_communicator.h"
#endif

static_assert(EIGEN_MAX_ALIGN_BYTES == 64);  // see newton.cc

using namespace autobatch;

int main(int argc, char** argv) {
#ifdef CONSUMER_HAVE_MPI
  std::unique_ptr<MpiCommunicator> ranks;
  if (StartedByMpiLauncher()) {
    absl::StatusOr<std::unique_ptr<MpiCommunicator>> created = MpiCommunicator::Create(&argc, &argv);
    if (!created.ok()) {
      std::fprintf(stderr, "%s\n", std::string(created.status().message()).c_str());
      return 1;
    }
    ranks = *std::move(created);
  }
  Communicator* communicator = ranks.get();
#else
  (void)argc;
  (void)argv;
  Communicator* communicator = nullptr;
#endif
  mcmc::ProgramModel model("normal_mean");
  mcmc::ModelParameter mu = model.AddParameter("mu");
  mcmc::ModelParameter sigma = model.AddParameter("sigma", {}, mcmc::Transform::LowerBound(0));
  mcmc::ModelData n = model.AddData({.name = "N", .dtype = DType::kI64});
  mcmc::ModelData y = model.AddData({.name = "y", .shape = {"N"}});
  model.SetLogDensity([=](mcmc::ModelTarget& target) {
    target += mcmc::normal_lupdf(mu(), 0.0, 10.0);
    target += mcmc::normal_lupdf(sigma(), 0.0, 5.0);
    target += mcmc::normal_lupdf(y(), mu(), sigma());
  });
  if (absl::Status loaded = model.LoadData(
          R"({"N": 8, "y": [2.1, 3.4, 2.9, 3.8, 2.5, 3.1, 2.7, 3.5]})", "inline data");
      !loaded.ok()) {
    std::fprintf(stderr, "%s\n", std::string(loaded.message()).c_str());
    return 1;
  }
  mcmc::SampleOptions options;
  options.num_chains = 16;
  options.num_warmup = 300;
  options.num_samples = 300;
  options.communicator = communicator;
  absl::StatusOr<mcmc::SampleResult> result = mcmc::Sample(model, options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  if (communicator != nullptr && communicator->rank() != 0) return 0;  // rank 0 reports
  std::printf("%s", mcmc::FormatSummary(*result).c_str());
  // The data's mean is 3.0; with 16 x 300 draws the posterior mean of mu
  // is within 0.1 of it (its posterior sd is about 0.2 / sqrt(ESS)).
  for (size_t i = 0; i < result->summary.size(); ++i) {
    const double mean = result->summary[i].mean;
    if (result->column_names[i] == "mu" && !(std::abs(mean - 3.0) < 0.1)) {
      std::fprintf(stderr, "posterior mean of mu: %g, expected about 3.0\n", mean);
      return 1;
    }
  }
  return 0;
}
