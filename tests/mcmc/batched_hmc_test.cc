// Tests of the batched static HMC program: per chain bit-identical to
// ScalarHmc at several batch sizes, on both VMs and the reference
// interpreter, in any lane order; jitter; divergence and NaN energies; full
// batch utilization.
#include "mcmc/batched/batched_hmc.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "mcmc/batched/batched_sampler.h"
#include "tests/mcmc/batched_test_util.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/model/targets/registry.h"
#include "vm/stack/block_plan.h"

namespace autobatch::mcmc {
namespace {


// Every chain used num_leapfrog_steps model evaluations per draw, and the
// kernel evaluated exactly those.
void ExpectConsistentRun(const BatchedRunResult& run, int64_t steps, int64_t draws,
                         bool batched_vm) {
  const int64_t chains = static_cast<int64_t>(run.chains.size());
  for (size_t k = 0; k < run.chains.size(); ++k) {
    EXPECT_EQ(run.leapfrogs[k], steps * draws);
    int64_t divergences = 0;
    for (const DrawStats& s : run.chains[k].stats) {
      EXPECT_EQ(s.n_leapfrog, steps);
      EXPECT_EQ(s.treedepth, 0);
      divergences += s.divergent ? 1 : 0;
    }
    EXPECT_EQ(run.divergences[k], divergences);
  }
  EXPECT_EQ(run.utilization.gradients_taken, chains * steps * draws);
  if (batched_vm && chains > 0 && draws > 0) {
    EXPECT_EQ(run.utilization.kernel_active_lanes, chains * steps * draws);
    // Every chain takes the same number of leapfrogs: nothing is wasted.
    EXPECT_EQ(run.utilization.kernel_executions, steps * draws);
    EXPECT_EQ(run.utilization.utilization, 1.0);
  }
}

struct TargetCase {
  std::string name;
  nlohmann::json params;
  double step_size;
  int64_t num_leapfrog_steps;
  std::vector<double> inv_metric = {};
  double jitter = 0;
};
void PrintTo(const TargetCase& c, std::ostream* os) { *os << c.name << " " << c.params.dump(); }

std::vector<double> RampMetric(int d) {
  std::vector<double> m;
  for (int i = 0; i < d; ++i) m.push_back(0.5 + 0.05 * i);
  return m;
}

class HmcBitIdentityTest : public ::testing::TestWithParam<TargetCase> {};

TEST_P(HmcBitIdentityTest, EveryChainMatchesScalarHmcAtEveryBatchSizeAndVm) {
  const TargetCase& tc = GetParam();
  std::unique_ptr<Target> target = MakeOrDie(tc.name, tc.params);
  ASSERT_NE(target, nullptr);
  SamplerConfig config;
  config.step_size = tc.step_size;
  config.num_leapfrog_steps = tc.num_leapfrog_steps;
  config.inv_metric = tc.inv_metric;
  config.step_size_jitter = tc.jitter;
  const int64_t draws = 15;
  const uint64_t seed = 31337;
  const std::vector<uint64_t> ids = ChainIds(64);
  ScalarRunOptions scalar_options;
  scalar_options.algorithm = Algorithm::kHmc;
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, seed, ids, draws, scalar_options);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::map<uint64_t, ScalarChainResult> oracle = ByChainId(*std::move(scalar));
  // Some proposals are accepted and some rejected (lanes take both paths).
  int moved = 0, stayed = 0;
  for (const auto& [id, r] : oracle) {
    const size_t d = static_cast<size_t>(r.dimension);
    for (size_t n = 1; n < r.stats.size(); ++n) {
      const bool same = std::equal(r.draws.begin() + n * d, r.draws.begin() + (n + 1) * d,
                                   r.draws.begin() + (n - 1) * d);
      ++(same ? stayed : moved);
    }
  }
  EXPECT_GT(moved, 0);
  EXPECT_GT(stayed, 0);

  absl::StatusOr<std::vector<BatchedChain>> all = MakeBatchedChains(*target, config, seed, ids);
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kHmc, config);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  std::mt19937_64 shuffle(11);
  for (int batch : {1, 7, 64}) {
    std::vector<BatchedChain> chains = *all;
    std::shuffle(chains.begin(), chains.end(), shuffle);
    chains.resize(static_cast<size_t>(batch));
    for (const VmCase& vm : BatchedVms()) {
      const std::string where = tc.name + ", batch " + std::to_string(batch) + ", " + vm.name;
      absl::StatusOr<BatchedRunResult> run = (*sampler)->Run(chains, draws, vm.options);
      ASSERT_TRUE(run.ok()) << where << ": " << run.status();
      for (size_t k = 0; k < chains.size(); ++k) {
        ExpectSameChain(run->chains[k], oracle.at(chains[k].chain_id), where);
      }
      ExpectConsistentRun(*run, tc.num_leapfrog_steps, draws, /*batched_vm=*/true);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Targets, HmcBitIdentityTest,
    ::testing::Values(TargetCase{"iid_gaussian", {{"dimension", 10}}, 0.4, 8},
                      TargetCase{"correlated_2d", nlohmann::json::object(), 0.3, 5},
                      TargetCase{"ar1", {{"dimension", 20}}, 0.2, 6, RampMetric(20)},
                      TargetCase{"eight_schools", nlohmann::json::object(), 0.3, 4, {}, 0.5}),
    [](const ::testing::TestParamInfo<TargetCase>& info) { return info.param.name; });

TEST(BatchedHmcTest, ReferenceInterpreterAndAThousandChainsMatchToo) {
  std::unique_ptr<Target> target = MakeOrDie("iid_gaussian", {{"dimension", 2}});
  SamplerConfig config;
  config.step_size = 0.5;
  config.num_leapfrog_steps = 3;
  config.step_size_jitter = 0.2;
  const std::vector<uint64_t> ids = ChainIds(1000);
  ScalarRunOptions scalar_options;
  scalar_options.algorithm = Algorithm::kHmc;
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, 6, ids, 10, scalar_options);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  BatchedRunOptions options;
  options.algorithm = Algorithm::kHmc;
  absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 6, ids, 10, options);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t k = 0; k < ids.size(); ++k) ExpectSameChain(run->chains[k], (*scalar)[k], "1000");
  ExpectConsistentRun(*run, 3, 10, /*batched_vm=*/true);

  options.call.dry_run = true;
  const std::vector<uint64_t> few(ids.begin(), ids.begin() + 3);
  absl::StatusOr<BatchedRunResult> dry = RunBatchedChains(*target, config, 6, few, 10, options);
  ASSERT_TRUE(dry.ok()) << dry.status();
  for (size_t k = 0; k < few.size(); ++k) ExpectSameChain(dry->chains[k], (*scalar)[k], "dry");
  ExpectConsistentRun(*dry, 3, 10, /*batched_vm=*/false);
}

// The stack VM's block plan of a sampler's program is built once, at the
// first run, not at every Run (Context::LoweredPlan).
TEST(BatchedHmcTest, RunsReuseOneBlockPlan) {
  std::unique_ptr<Target> target = MakeOrDie("iid_gaussian", {{"dimension", 2}});
  SamplerConfig config;
  config.step_size = 0.5;
  config.num_leapfrog_steps = 3;
  absl::StatusOr<std::vector<BatchedChain>> chains =
      MakeBatchedChains(*target, config, /*seed=*/6, ChainIds(8));
  ASSERT_TRUE(chains.ok()) << chains.status();
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kHmc, config);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  const CallOptions stack{.vm = Vm::kStack, .shards = 2};
  const int64_t before = BlockPlan::BuildCount();
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<BatchedRunResult> result = (*sampler)->Run(*chains, 2, stack);
    ASSERT_TRUE(result.ok()) << result.status();
  }
  EXPECT_EQ(BlockPlan::BuildCount() - before, 1);
}

// energy_jump from the origin: the end point has energy error `height`.
absl::StatusOr<BatchedRunResult> RunEnergyJump(double height, const CallOptions& call) {
  absl::StatusOr<std::unique_ptr<Target>> target =
      MakeTarget("energy_jump", {{"dimension", 2}, {"height", height}});
  if (!target.ok()) return target.status();
  SamplerConfig config;
  config.step_size = 0.5;
  config.num_leapfrog_steps = 4;
  BatchedRunOptions options;
  options.algorithm = Algorithm::kHmc;
  options.call = call;
  options.inits.assign(7, std::vector<double>{0.0, 0.0});
  return RunBatchedChains(**target, config, 4, ChainIds(7), 3, options);
}

TEST(BatchedHmcTest, DivergentExactlyWhenTheEnergyErrorExceedsTheThreshold) {
  for (const VmCase& vm : BatchedVms()) {
    SCOPED_TRACE(vm.name);
    for (double height : {1000.001, 999.999, std::numeric_limits<double>::quiet_NaN()}) {
      SCOPED_TRACE(height);
      absl::StatusOr<BatchedRunResult> run = RunEnergyJump(height, vm.options);
      ASSERT_TRUE(run.ok()) << run.status();
      const bool divergent = !(height < 1000);  // NaN counts as divergent
      for (size_t k = 0; k < run->chains.size(); ++k) {
        EXPECT_EQ(run->divergences[k], divergent ? 3 : 0);
        for (const DrawStats& s : run->chains[k].stats) {
          EXPECT_EQ(s.divergent, divergent);
          EXPECT_EQ(s.accept_stat, 0.0);  // exp(-height) underflows (or NaN -> inf)
          EXPECT_TRUE(std::isfinite(s.energy));
          EXPECT_EQ(s.lp, 0.0);  // rejected: still at the origin
        }
        EXPECT_EQ(run->chains[k].final_state.q, (std::vector<double>{0.0, 0.0}));
      }
    }
  }
}

}  // namespace
}  // namespace autobatch::mcmc
