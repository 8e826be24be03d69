// The example models of samples/models: each validates and loads its data
// file, its compiler-written gradient matches central finite differences, and
// NUTS chains on it are bit-identical to the scalar sampler on the same
// program; logistic regression is the hand-written target's posterior.
#include "samples/models/models.h"

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mcmc/model/gradient_check.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "tests/mcmc/batched_test_util.h"

namespace autobatch::samples {
namespace {

using mcmc::ProgramModel;

std::string DataPath(const std::string& name) {
  return std::string(AUTOBATCH_SOURCE_DIR) + "/samples/models/" + name + ".data.json";
}

// The model `name` with its data file loaded (failures reported, nullptr).
std::unique_ptr<ProgramModel> LoadExample(const std::string& name) {
  absl::StatusOr<std::unique_ptr<ProgramModel>> model = MakeExampleModel(name);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return nullptr;
  std::ifstream in(DataPath(name));
  EXPECT_TRUE(in.good()) << "cannot read " << DataPath(name);
  std::stringstream text;
  text << in.rdbuf();
  const absl::Status loaded = (*model)->LoadData(text.str(), DataPath(name));
  EXPECT_TRUE(loaded.ok()) << loaded;
  return loaded.ok() ? *std::move(model) : nullptr;
}

// Points uniform in (-2, 2) on the unconstrained scale, Stan's initial range.
std::vector<double> RandomPoints(int64_t points, int64_t dimension, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-2, 2);
  std::vector<double> q(static_cast<size_t>(points * dimension));
  for (double& x : q) x = uniform(rng);
  return q;
}

TEST(ExampleModelsTest, TheTableNamesEveryModelAndRefusesOthers) {
  EXPECT_THAT(ExampleModelNames(),
              ::testing::ElementsAre("eight_schools", "logistic_regression", "hierarchical", "ar2",
                                     "mixture", "poisson_regression"));
  absl::StatusOr<std::unique_ptr<ProgramModel>> missing = MakeExampleModel("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              ::testing::HasSubstr("no example model 'nope'; the models are eight_schools, "));
}

class ExampleModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleModelTest, ValidatesAndLoadsItsDataFile) {
  absl::StatusOr<std::unique_ptr<ProgramModel>> model = MakeExampleModel(GetParam());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name(), GetParam());
  EXPECT_TRUE((*model)->Validate().ok()) << (*model)->Validate();
  std::unique_ptr<ProgramModel> loaded = LoadExample(GetParam());
  ASSERT_NE(loaded, nullptr);
  EXPECT_TRUE(loaded->has_data());
  // The data file is exactly what WriteData writes for the data read from
  // it (make_model_data.cc's format), so regenerating it changes nothing.
  std::ifstream in(DataPath(GetParam()));
  std::stringstream text;
  text << in.rdbuf();
  if (GetParam() != "eight_schools") {  // hand-written, with integer reals
    EXPECT_EQ(mcmc::WriteData(loaded->data_specs(), loaded->data()), text.str());
  }
}

// The compiler's gradient against central differences of the log density,
// at points where it is finite. The finite difference carries a rounding
// error of about |log density| 1e-16 / epsilon, hence the absolute bound.
TEST_P(ExampleModelTest, GradientMatchesFiniteDifferences) {
  std::unique_ptr<ProgramModel> model = LoadExample(GetParam());
  ASSERT_NE(model, nullptr);
  const int64_t d = model->dimension();
  const int64_t points = 6;
  const std::vector<double> q = RandomPoints(points, d, 20261201);
  std::vector<double> grad(static_cast<size_t>(d));
  for (int64_t p = 0; p < points; ++p) {
    const std::span<const double> at(q.data() + p * d, static_cast<size_t>(d));
    const double logp = model->LogDensityGradient(at, grad);
    ASSERT_TRUE(std::isfinite(logp)) << "point " << p << ": " << model->last_error();
    mcmc::GradientCheckOptions options;
    options.abs_tol = 1e-6 * (1 + 1e-2 * std::abs(logp));
    const absl::Status check = mcmc::CheckGradient(*model, at, options);
    EXPECT_TRUE(check.ok()) << "point " << p << ": " << check;
  }
}

// NUTS on the batched VMs, all chains together and one at a time, against
// the scalar sampler on the same program: every draw and statistic.
TEST_P(ExampleModelTest, NutsChainsAreBitIdenticalToTheScalarSampler) {
  std::unique_ptr<ProgramModel> model = LoadExample(GetParam());
  ASSERT_NE(model, nullptr);
  mcmc::SamplerConfig config;
  config.step_size = 0.05;
  const uint64_t seed = 20261202;
  const std::vector<uint64_t> ids = mcmc::ChainIds(6);
  const int64_t num_draws = 4;
  absl::StatusOr<std::vector<mcmc::ScalarChainResult>> scalar =
      mcmc::RunScalarChains(*model, config, seed, ids, num_draws);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::map<uint64_t, mcmc::ScalarChainResult> oracle = mcmc::ByChainId(*std::move(scalar));
  absl::StatusOr<std::vector<mcmc::BatchedChain>> all =
      mcmc::MakeBatchedChains(*model, config, seed, ids);
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<std::unique_ptr<mcmc::BatchedSampler>> sampler =
      mcmc::BatchedSampler::Create(*model, mcmc::Algorithm::kNuts, config);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  for (int batch : {1, 6}) {
    std::vector<mcmc::BatchedChain> chains(all->begin(), all->begin() + batch);
    for (const mcmc::VmCase& vm : mcmc::BatchedVms()) {
      const std::string where = "batch " + std::to_string(batch) + ", " + vm.name;
      absl::StatusOr<mcmc::BatchedRunResult> run = (*sampler)->Run(chains, num_draws, vm.options);
      ASSERT_TRUE(run.ok()) << where << ": " << run.status();
      for (size_t k = 0; k < chains.size(); ++k) {
        mcmc::ExpectSameChain(run->chains[k], oracle.at(chains[k].chain_id), where);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExampleModelTest, ::testing::ValuesIn(ExampleModelNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// The data file holds the hand-written target's data, bit for bit, and the
// two log densities differ by a constant (the program keeps what the target
// drops) with the same gradient, at 1000 random points.
TEST(ExampleModelsTest, LogisticRegressionIsTheHandWrittenTarget) {
  std::unique_ptr<ProgramModel> model = LoadExample("logistic_regression");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<std::unique_ptr<mcmc::LogisticRegression>> hand =
      mcmc::LogisticRegression::Create({.rows = 1000, .features = 24});
  ASSERT_TRUE(hand.ok()) << hand.status();
  const mcmc::LogisticRegression::Data& data = (*hand)->data();
  const std::vector<double> x = model->data()[2].ToVector<double>();
  const std::vector<int64_t> y = model->data()[3].ToVector<int64_t>();
  ASSERT_EQ(x.size(), data.x.size());
  ASSERT_EQ(y.size(), data.y.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(mcmc::SameBits(x[i], data.x[i])) << i;
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(static_cast<double>(y[i]), data.y[i]) << i;

  ASSERT_EQ(model->dimension(), (*hand)->dimension());
  const int64_t d = model->dimension();
  const int64_t points = 1000;
  const std::vector<double> q = RandomPoints(points, d, 42);
  std::vector<double> logp(points), grad(q.size());
  model->LogDensityGradientBatch(q.data(), logp.data(), grad.data(), points, nullptr);
  ASSERT_TRUE(model->last_error().ok()) << model->last_error();
  std::vector<double> hand_logp(points), hand_grad(q.size());
  for (int64_t p = 0; p < points; ++p) {
    hand_logp[p] = (*hand)->LogDensityGradient({q.data() + p * d, static_cast<size_t>(d)},
                                               {hand_grad.data() + p * d, static_cast<size_t>(d)});
  }
  for (int64_t p = 1; p < points; ++p) {
    const double scale = 1 + std::abs(logp[p]) + std::abs(logp[p - 1]) + std::abs(hand_logp[p]) +
                         std::abs(hand_logp[p - 1]);
    EXPECT_NEAR(logp[p] - logp[p - 1], hand_logp[p] - hand_logp[p - 1], 1e-12 * scale)
        << "points " << p - 1 << " and " << p;
    for (int64_t i = 0; i < d; ++i) {
      const double g = grad[p * d + i], h = hand_grad[p * d + i];
      EXPECT_NEAR(g, h, 1e-12 * (1 + std::abs(h) + scale)) << "point " << p << " coordinate " << i;
    }
  }
}

}  // namespace
}  // namespace autobatch::samples
