// mpi_bench: what running over MPI ranks costs (docs/SCALING.md). Run it
// under mpirun; rank 0 prints the figures.
//
//   mpirun -n R mpi_bench gather [--chains 1024] [--draws 1000] [--params 25]
//     Sample()'s gather: each rank sends its share of chains x draws x
//     (7 sampler statistics + params) doubles to rank 0 (Communicator::
//     Gather), as a run over R ranks does at its end. Prints the seconds
//     (best of --repeats) and the bandwidth.
//
//   mpirun -n R mpi_bench sample [--target eight_schools] [--chains 1024]
//       [--warmup 200] [--samples 200] [--shards S]
//     One Sample() over the R ranks, each with S shards (threads; default
//     its share of the node's threads): prints the wall time and gradient
//     evaluations per second. Compare `-n 1 ... --shards 2` with `-n 2 ...
//     --shards 1` for MPI's overhead on one machine (tools/bench_mpi.sh).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "mcmc/draw_stats.h"
#include "mcmc/model/targets/registry.h"
#include "mcmc/sample.h"
#include "support/mpi/mpi_communicator.h"

namespace autobatch {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// --name value pairs after the mode.
struct Flags {
  std::string mode;
  std::string target = "eight_schools";
  int64_t chains = 1024, draws = 1000, params = 25, warmup = 200, samples = 200;
  int shards = 0, repeats = 5;
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  if (argc < 2) return false;
  flags.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string name = argv[i], value = argv[i + 1];
    int64_t n = 0;
    if (name == "--target") {
      flags.target = value;
      continue;
    }
    if (!absl::SimpleAtoi(value, &n) || n < 0) return false;
    if (name == "--chains") flags.chains = n;
    else if (name == "--draws") flags.draws = n;
    else if (name == "--params") flags.params = n;
    else if (name == "--warmup") flags.warmup = n;
    else if (name == "--samples") flags.samples = n;
    else if (name == "--shards") flags.shards = static_cast<int>(n);
    else if (name == "--repeats") flags.repeats = static_cast<int>(std::max<int64_t>(n, 1));
    else return false;
  }
  return (argc % 2) == 0 && (flags.mode == "gather" || flags.mode == "sample");
}

int Gather(Communicator& comm, const Flags& f) {
  const auto [first, last] = RankRange(f.chains, comm.rank(), comm.size());
  const int64_t columns = mcmc::kNumDrawStats + f.params;
  // This rank's draws: the bytes of (last - first) x draws x columns doubles.
  const std::string bytes(static_cast<size_t>((last - first) * f.draws * columns) * sizeof(double),
                          '\x3f');
  double best = 1e300;
  for (int r = 0; r < f.repeats; ++r) {
    if (!comm.Barrier().ok()) return 1;
    const Clock::time_point start = Clock::now();
    absl::StatusOr<std::vector<std::string>> gathered = comm.Gather(bytes, 0);
    if (!gathered.ok()) {
      std::fprintf(stderr, "%s\n", std::string(gathered.status().message()).c_str());
      return 1;
    }
    best = std::min(best, Seconds(start));
  }
  if (comm.rank() == 0) {
    const double total = static_cast<double>(f.chains * f.draws * columns) * sizeof(double);
    std::printf("gather  ranks %d  chains %lld x draws %lld x columns %lld = %.1f MB  "
                "best of %d: %.4f s  (%.2f GB/s)\n",
                comm.size(), static_cast<long long>(f.chains), static_cast<long long>(f.draws),
                static_cast<long long>(columns), total / 1e6, f.repeats, best, total / best / 1e9);
  }
  return 0;
}

int Sample(Communicator& comm, const Flags& f) {
  absl::StatusOr<std::unique_ptr<mcmc::Target>> target =
      mcmc::MakeTarget(f.target, nlohmann::json::object());
  if (!target.ok()) {
    std::fprintf(stderr, "%s\n", std::string(target.status().message()).c_str());
    return 1;
  }
  mcmc::SampleOptions o;
  o.num_chains = f.chains;
  o.num_warmup = f.warmup;
  o.num_samples = f.samples;
  o.communicator = &comm;
  if (f.shards > 0) o.call.shards = f.shards;
  if (!comm.Barrier().ok()) return 1;
  const Clock::time_point start = Clock::now();
  absl::StatusOr<mcmc::SampleResult> result = mcmc::Sample(**target, o);
  const double seconds = Seconds(start);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  if (comm.rank() == 0) {
    std::printf("sample  %s  ranks %d x shards %d  chains %lld  warmup %lld  samples %lld  "
                "wall %.3f s  (compile %.3f, warmup %.3f, sampling %.3f)  %.4g grad/s\n",
                f.target.c_str(), comm.size(), result->options.call.shards,
                static_cast<long long>(f.chains), static_cast<long long>(f.warmup),
                static_cast<long long>(f.samples), seconds, result->compile_seconds,
                result->warmup_seconds, result->sampling_seconds,
                static_cast<double>(result->gradient_evaluations) / seconds);
  }
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) {
  autobatch::Flags flags;
  if (!autobatch::ParseFlags(argc, argv, flags)) {
    std::fprintf(stderr,
                 "usage: mpirun -n R mpi_bench gather|sample [--chains N] [--draws N] "
                 "[--params N] [--target NAME] [--warmup N] [--samples N] [--shards N] "
                 "[--repeats N]\n");
    return 2;
  }
  absl::StatusOr<std::unique_ptr<autobatch::MpiCommunicator>> world =
      autobatch::MpiCommunicator::Create(&argc, &argv);
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", std::string(world.status().message()).c_str());
    return 1;
  }
  return flags.mode == "gather" ? autobatch::Gather(**world, flags)
                                : autobatch::Sample(**world, flags);
}
