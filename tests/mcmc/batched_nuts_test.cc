// Tests of the batched NUTS program: per chain bit-identical to ScalarNuts
// at several batch sizes, on both VMs and the reference interpreter, in any
// lane order; exact tree arithmetic, divergence and NaN energies; free-running
// batch utilization; continuation across calls; per-chain step sizes and
// metrics; argument errors.
#include "mcmc/batched/batched_nuts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "mcmc/batched/batched_sampler.h"
#include "tests/mcmc/batched_test_util.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/model/targets/registry.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

// Run-level bookkeeping that must hold for any run.
void ExpectConsistentRun(const BatchedRunResult& run, bool batched_vm) {
  int64_t taken = 0;
  for (size_t k = 0; k < run.chains.size(); ++k) {
    int64_t leapfrogs = 0, divergences = 0;
    for (const DrawStats& s : run.chains[k].stats) {
      leapfrogs += s.n_leapfrog;
      divergences += s.divergent ? 1 : 0;
    }
    EXPECT_EQ(run.leapfrogs[k], leapfrogs);
    EXPECT_EQ(run.divergences[k], divergences);
    taken += leapfrogs;
  }
  EXPECT_EQ(run.utilization.gradients_taken, taken);
  if (batched_vm) {
    // Every model evaluation the kernel made for an active lane is one a
    // chain used: no wasted or double evaluations.
    EXPECT_EQ(run.utilization.kernel_active_lanes, taken);
    EXPECT_LE(run.utilization.utilization, run.utilization.free_running_bound + 1e-12);
  }
}


// ---------------------------------------------------------------------------
// Bit identity with the scalar oracle.

struct TargetCase {
  std::string name;
  nlohmann::json params;
  double step_size;
  int64_t num_draws;
  std::vector<double> inv_metric = {};  // empty = identity
  bool expect_divergences = false;      // the oracle must diverge somewhere
};
void PrintTo(const TargetCase& c, std::ostream* os) { *os << c.name << " " << c.params.dump(); }

// 0.5, 0.55, 0.6, ... : a metric that is not the identity.
std::vector<double> RampMetric(int d) {
  std::vector<double> m;
  for (int i = 0; i < d; ++i) m.push_back(0.5 + 0.05 * i);
  return m;
}

class NutsBitIdentityTest : public ::testing::TestWithParam<TargetCase> {};

TEST_P(NutsBitIdentityTest, EveryChainMatchesScalarNutsAtEveryBatchSizeAndVm) {
  const TargetCase& tc = GetParam();
  std::unique_ptr<Target> target = MakeOrDie(tc.name, tc.params);
  ASSERT_NE(target, nullptr);
  SamplerConfig config;
  config.step_size = tc.step_size;
  config.inv_metric = tc.inv_metric;
  const uint64_t seed = 20240611;
  const std::vector<uint64_t> ids = ChainIds(64);
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, seed, ids, tc.num_draws);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::map<uint64_t, ScalarChainResult> oracle = ByChainId(*std::move(scalar));
  // The trajectories vary (otherwise lanes never diverge in control flow).
  std::set<int> depths;
  int divergences = 0;
  for (const auto& [id, r] : oracle) {
    for (const DrawStats& s : r.stats) {
      depths.insert(s.treedepth);
      divergences += s.divergent ? 1 : 0;
    }
  }
  EXPECT_GE(depths.size(), 2u);
  if (tc.expect_divergences) {
    EXPECT_GT(divergences, 0);
  }

  absl::StatusOr<std::vector<BatchedChain>> all = MakeBatchedChains(*target, config, seed, ids);
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kNuts, config);
  ASSERT_TRUE(sampler.ok()) << sampler.status();

  std::mt19937_64 shuffle(7);
  for (int batch : {1, 7, 64}) {
    // A different subset and lane order for every batch size.
    std::vector<BatchedChain> chains = *all;
    std::shuffle(chains.begin(), chains.end(), shuffle);
    chains.resize(static_cast<size_t>(batch));
    for (const VmCase& vm : BatchedVms()) {
      const std::string where = tc.name + ", batch " + std::to_string(batch) + ", " + vm.name;
      absl::StatusOr<BatchedRunResult> run = (*sampler)->Run(chains, tc.num_draws, vm.options);
      ASSERT_TRUE(run.ok()) << where << ": " << run.status();
      ASSERT_EQ(run->chains.size(), chains.size());
      for (size_t k = 0; k < chains.size(); ++k) {
        ExpectSameChain(run->chains[k], oracle.at(chains[k].chain_id), where);
      }
      ExpectConsistentRun(*run, /*batched_vm=*/true);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Targets, NutsBitIdentityTest,
    ::testing::Values(TargetCase{"iid_gaussian", {{"dimension", 10}}, 0.5, 25},
                      TargetCase{"correlated_2d", nlohmann::json::object(), 0.4, 30},
                      TargetCase{"ar1", {{"dimension", 20}}, 0.25, 20, RampMetric(20)},
                      TargetCase{"eight_schools", nlohmann::json::object(), 0.3, 25},
                      TargetCase{"funnel", {{"dimension", 5}}, 0.6, 20, {}, true}),
    [](const ::testing::TestParamInfo<TargetCase>& info) { return info.param.name; });

TEST(BatchedNutsTest, ReferenceInterpreterMatchesToo) {
  std::unique_ptr<Target> target = MakeOrDie("eight_schools", nlohmann::json::object());
  SamplerConfig config;
  config.step_size = 0.3;
  const std::vector<uint64_t> ids = {11, 2, 5};
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, 5, ids, 4);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  BatchedRunOptions options;
  options.call.dry_run = true;
  absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 5, ids, 4, options);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t k = 0; k < ids.size(); ++k) {
    ExpectSameChain(run->chains[k], (*scalar)[k], "dry_run");
  }
  ExpectConsistentRun(*run, /*batched_vm=*/false);
}

TEST(BatchedNutsTest, TheThreadedBackendMatchesToo) {
  std::unique_ptr<Target> target = MakeOrDie("ar1", {{"dimension", 10}});
  SamplerConfig config;
  config.step_size = 0.3;
  const std::vector<uint64_t> ids = ChainIds(64);
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, 21, ids, 10);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  for (Vm vm : {Vm::kStack, Vm::kStackless}) {
    BatchedRunOptions options;
    options.call.vm = vm;
    options.call.backend = "threaded:3";
    absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 21, ids, 10, options);
    ASSERT_TRUE(run.ok()) << run.status();
    for (size_t k = 0; k < ids.size(); ++k) {
      ExpectSameChain(run->chains[k], (*scalar)[k], "threaded:3");
    }
    ExpectConsistentRun(*run, /*batched_vm=*/true);
  }
}

TEST(BatchedNutsTest, AThousandChainsOfACheapTarget) {
  std::unique_ptr<Target> target = MakeOrDie("iid_gaussian", {{"dimension", 2}});
  SamplerConfig config;
  config.step_size = 0.6;
  const std::vector<uint64_t> ids = ChainIds(1000);
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, 99, ids, 10);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  for (const VmCase& vm : BatchedVms()) {
    BatchedRunOptions options;
    options.call = vm.options;
    absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 99, ids, 10, options);
    ASSERT_TRUE(run.ok()) << run.status();
    for (size_t k = 0; k < ids.size(); ++k) {
      ExpectSameChain(run->chains[k], (*scalar)[k], std::string("batch 1000, ") + vm.name);
    }
    ExpectConsistentRun(*run, /*batched_vm=*/true);
  }
}

TEST(BatchedNutsTest, JitterSmallMaxDepthAndAMetricMatchToo) {
  std::unique_ptr<Target> target = MakeOrDie("correlated_2d", nlohmann::json::object());
  SamplerConfig config;
  config.step_size = 0.2;
  config.step_size_jitter = 0.5;
  config.max_depth = 3;  // hit often at this step size
  config.inv_metric = {1.0, 4.0};
  const std::vector<uint64_t> ids = ChainIds(7);
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, 3, ids, 12);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  bool hit_max_depth = false;
  for (const ScalarChainResult& r : *scalar) {
    for (const DrawStats& s : r.stats) hit_max_depth |= s.treedepth == 3;
  }
  EXPECT_TRUE(hit_max_depth);
  for (const VmCase& vm : BatchedVms()) {
    BatchedRunOptions options;
    options.call = vm.options;
    absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 3, ids, 12, options);
    ASSERT_TRUE(run.ok()) << run.status();
    for (size_t k = 0; k < ids.size(); ++k) ExpectSameChain(run->chains[k], (*scalar)[k], vm.name);
  }
}

TEST(BatchedNutsTest, EachChainHasItsOwnStepSizeAndMetric) {
  std::unique_ptr<Target> target = MakeOrDie("correlated_2d", nlohmann::json::object());
  const std::vector<double> steps = {0.1, 0.35, 0.8, 1.3};
  const std::vector<std::vector<double>> metrics = {{1.0, 1.0}, {0.5, 3.0}, {2.0, 0.25}, {1, 4}};
  const std::vector<double> init = {0.3, 2.5};
  std::vector<BatchedChain> chains;
  std::vector<ScalarChainResult> expected;
  for (size_t k = 0; k < steps.size(); ++k) {
    SamplerConfig config;
    config.step_size = steps[k];
    config.inv_metric = metrics[k];
    const std::vector<uint64_t> id = {100 + k};
    ScalarRunOptions scalar_options;
    scalar_options.inits = {init};
    absl::StatusOr<std::vector<ScalarChainResult>> scalar =
        RunScalarChains(*target, config, 8, id, 6, scalar_options);
    ASSERT_TRUE(scalar.ok()) << scalar.status();
    expected.push_back((*scalar)[0]);
    absl::StatusOr<std::vector<BatchedChain>> made =
        MakeBatchedChains(*target, config, 8, id, std::vector<std::vector<double>>{init});
    ASSERT_TRUE(made.ok()) << made.status();
    chains.push_back((*made)[0]);
  }
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kNuts, SamplerConfig{});
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  absl::StatusOr<BatchedRunResult> run = (*sampler)->Run(chains, 6);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t k = 0; k < chains.size(); ++k) {
    ExpectSameChain(run->chains[k], expected[k], "per-chain config");
    EXPECT_EQ(run->chains[k].stats[0].stepsize, steps[k]);
  }
}

TEST(BatchedNutsTest, ARunContinuesFromWhereTheLastOneStopped) {
  std::unique_ptr<Target> target = MakeOrDie("ar1", {{"dimension", 5}});
  SamplerConfig config;
  config.step_size = 0.3;
  const std::vector<uint64_t> ids = ChainIds(5);
  absl::StatusOr<std::vector<ScalarChainResult>> whole =
      RunScalarChains(*target, config, 17, ids, 8);
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<std::vector<BatchedChain>> chains = MakeBatchedChains(*target, config, 17, ids);
  ASSERT_TRUE(chains.ok());
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kNuts, config);
  ASSERT_TRUE(sampler.ok());
  absl::StatusOr<BatchedRunResult> first = (*sampler)->Run(*chains, 3);
  ASSERT_TRUE(first.ok()) << first.status();
  for (size_t k = 0; k < ids.size(); ++k) {
    (*chains)[k].state = first->chains[k].final_state;
    (*chains)[k].rng = first->chains[k].final_rng;
  }
  absl::StatusOr<BatchedRunResult> second = (*sampler)->Run(*chains, 5);
  ASSERT_TRUE(second.ok()) << second.status();
  const int64_t d = 5;
  for (size_t k = 0; k < ids.size(); ++k) {
    ScalarChainResult joined = second->chains[k];
    joined.draws.insert(joined.draws.begin(), first->chains[k].draws.begin(),
                        first->chains[k].draws.end());
    joined.stats.insert(joined.stats.begin(), first->chains[k].stats.begin(),
                        first->chains[k].stats.end());
    ASSERT_EQ(static_cast<int64_t>(joined.draws.size()), 8 * d);
    ExpectSameChain(joined, (*whole)[k], "continued");
  }
}

// ---------------------------------------------------------------------------
// Exact tree arithmetic, divergence, NaN.

TEST(BatchedNutsTest, NeverUTurningTargetRunsToMaxDepth) {
  std::unique_ptr<Target> target = MakeOrDie("never_uturn", {{"dimension", 3}});
  for (int max_depth : {1, 4, 6}) {
    SamplerConfig config;
    config.step_size = 0.1;
    config.max_depth = max_depth;
    const std::vector<uint64_t> ids = ChainIds(7);
    for (const VmCase& vm : BatchedVms()) {
      BatchedRunOptions options;
      options.call = vm.options;
      absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 1, ids, 3, options);
      ASSERT_TRUE(run.ok()) << run.status();
      for (const ScalarChainResult& chain : run->chains) {
        for (const DrawStats& s : chain.stats) {
          EXPECT_EQ(s.n_leapfrog, (int64_t{1} << max_depth) - 1);
          EXPECT_EQ(s.treedepth, max_depth);
          EXPECT_EQ(s.accept_stat, 1.0);
          EXPECT_FALSE(s.divergent);
        }
      }
      // Every chain takes the same tree: nothing is wasted.
      EXPECT_EQ(run->utilization.utilization, 1.0);
      EXPECT_EQ(run->utilization.kernel_executions, 3 * ((int64_t{1} << max_depth) - 1));
    }
  }
}

// energy_jump started at the origin: every other point has energy error
// `height`.
absl::StatusOr<BatchedRunResult> RunEnergyJump(double height, const CallOptions& call,
                                               int max_depth = 5) {
  absl::StatusOr<std::unique_ptr<Target>> target =
      MakeTarget("energy_jump", {{"dimension", 2}, {"height", height}});
  if (!target.ok()) return target.status();
  SamplerConfig config;
  config.step_size = 0.5;
  config.max_depth = max_depth;
  BatchedRunOptions options;
  options.call = call;
  options.inits.assign(7, std::vector<double>{0.0, 0.0});
  return RunBatchedChains(**target, config, 4, ChainIds(7), 3, options);
}

TEST(BatchedNutsTest, DivergenceExactlyWhenTheEnergyErrorExceedsTheThreshold) {
  for (const VmCase& vm : BatchedVms()) {
    SCOPED_TRACE(vm.name);
    absl::StatusOr<BatchedRunResult> over = RunEnergyJump(1000.001, vm.options);
    ASSERT_TRUE(over.ok()) << over.status();
    for (size_t k = 0; k < over->chains.size(); ++k) {
      EXPECT_EQ(over->divergences[k], 3);
      for (const DrawStats& s : over->chains[k].stats) {
        EXPECT_TRUE(s.divergent);
        EXPECT_EQ(s.n_leapfrog, 1);
        EXPECT_EQ(s.treedepth, 0);
        EXPECT_EQ(s.lp, 0.0);  // stayed at the origin
      }
      for (double x : over->chains[k].draws) EXPECT_EQ(x, 0.0);
    }
    absl::StatusOr<BatchedRunResult> under = RunEnergyJump(999.999, vm.options);
    ASSERT_TRUE(under.ok()) << under.status();
    for (size_t k = 0; k < under->chains.size(); ++k) {
      EXPECT_EQ(under->divergences[k], 0);
      for (const DrawStats& s : under->chains[k].stats) {
        EXPECT_FALSE(s.divergent);
        EXPECT_EQ(s.n_leapfrog, 31);
        EXPECT_EQ(s.treedepth, 5);
      }
    }
  }
}

TEST(BatchedNutsTest, NanEnergyIsDivergentAndHarmless) {
  for (const VmCase& vm : BatchedVms()) {
    SCOPED_TRACE(vm.name);
    absl::StatusOr<BatchedRunResult> run =
        RunEnergyJump(std::numeric_limits<double>::quiet_NaN(), vm.options);
    ASSERT_TRUE(run.ok()) << run.status();
    for (const ScalarChainResult& chain : run->chains) {
      for (const DrawStats& s : chain.stats) {
        EXPECT_TRUE(s.divergent);
        EXPECT_EQ(s.n_leapfrog, 1);
        EXPECT_TRUE(std::isfinite(s.energy));
        EXPECT_EQ(s.accept_stat, 0.0);  // exp(-inf)
      }
      EXPECT_EQ(chain.final_state.q, (std::vector<double>{0.0, 0.0}));
    }
  }
}

// ---------------------------------------------------------------------------
// Structure and batching.

TEST(BatchedNutsTest, BuildTreeIsRecursiveAndTheLeafComesLast) {
  std::unique_ptr<Target> target = MakeOrDie("iid_gaussian", {{"dimension", 2}});
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kNuts, SamplerConfig{});
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  const Program& program = (*sampler)->program();
  std::vector<std::string> names;
  for (const Function& f : program.module.functions) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"chain", "nuts_transition", "nuts_build_tree",
                                             "nuts_leaf"}));
  const FunctionId build_tree = *program.module.FindFunction("nuts_build_tree");
  int self_calls = 0;
  for (const Block& b : program.module.function(build_tree).blocks) {
    for (const Op& op : b.ops) {
      const CallOp* call = std::get_if<CallOp>(&op);
      if (call != nullptr && call->callee == build_tree) ++self_calls;
    }
  }
  EXPECT_EQ(self_calls, 2);
  EXPECT_EQ(program.module.kernels.count("log_density_gradient"), 1u);
  EXPECT_EQ(program.module.kernels.count("record_draw"), 1u);
}

TEST(BatchedNutsTest, TheStackVmRunsChainsFreely) {
  std::unique_ptr<Target> target = MakeOrDie("ar1", {{"dimension", 20}});
  SamplerConfig config;
  config.step_size = 0.25;
  const std::vector<uint64_t> ids = ChainIds(64);
  absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 2, ids, 10);
  ASSERT_TRUE(run.ok()) << run.status();
  const BatchUtilization& u = run->utilization;
  const int64_t most = *std::max_element(run->leapfrogs.begin(), run->leapfrogs.end());
  // Each model-kernel execution serves every unfinished chain: as many
  // executions as the longest chain has leapfrogs.
  EXPECT_EQ(u.kernel_executions, most);
  EXPECT_DOUBLE_EQ(u.utilization, u.free_running_bound);
  // ... which beats waiting for the slowest chain at every transition.
  EXPECT_GT(u.utilization, u.lock_step_utilization);
  std::cout << "ar1 d=20, 64 chains x 10 draws, stack VM: utilization " << u.utilization
            << " (free-running bound " << u.free_running_bound << ", lock-step "
            << u.lock_step_utilization << "), " << u.gradients_taken << " leapfrogs in "
            << u.kernel_executions << " kernel executions\n";

  BatchedRunOptions stackless;
  stackless.call.vm = Vm::kStackless;
  absl::StatusOr<BatchedRunResult> local = RunBatchedChains(*target, config, 2, ids, 10, stackless);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->utilization.gradients_taken, u.gradients_taken);
  std::cout << "  stackless VM: utilization " << local->utilization.utilization << "\n";

  // Sharded (two threads, chains [0, 32) and [32, 64)): the same leapfrogs;
  // each shard reaches its own free-running bound.
  BatchedRunOptions sharded;
  sharded.call.shards = 2;
  absl::StatusOr<BatchedRunResult> halves = RunBatchedChains(*target, config, 2, ids, 10, sharded);
  ASSERT_TRUE(halves.ok()) << halves.status();
  EXPECT_EQ(halves->leapfrogs, run->leapfrogs);
  const BatchUtilization& h = halves->utilization;
  const int64_t most_first = *std::max_element(run->leapfrogs.begin(), run->leapfrogs.begin() + 32);
  const int64_t most_second = *std::max_element(run->leapfrogs.begin() + 32, run->leapfrogs.end());
  EXPECT_EQ(h.kernel_lane_slots, 32 * most_first + 32 * most_second);
  EXPECT_DOUBLE_EQ(h.utilization, h.free_running_bound);
  EXPECT_GE(h.utilization, u.utilization);
}

// ---------------------------------------------------------------------------
// Arguments.

TEST(BatchedNutsTest, BadArgumentsAreErrors) {
  std::unique_ptr<Target> target = MakeOrDie("iid_gaussian", {{"dimension", 2}});
  SamplerConfig config;
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kNuts, config);
  ASSERT_TRUE(sampler.ok());
  absl::StatusOr<std::vector<BatchedChain>> chains =
      MakeBatchedChains(*target, config, 1, ChainIds(2));
  ASSERT_TRUE(chains.ok());

  EXPECT_EQ((*sampler)->Run(*chains, -1).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<BatchedChain> bad = *chains;
  bad[1].state.q.push_back(0.0);
  absl::Status s = (*sampler)->Run(bad, 2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("chain 1"));
  bad = *chains;
  bad[0].step_size = -1;
  EXPECT_THAT(std::string((*sampler)->Run(bad, 2).status().message()), HasSubstr("step_size"));
  bad = *chains;
  bad[0].inv_metric = {1.0, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THAT(std::string((*sampler)->Run(bad, 2).status().message()),
              HasSubstr("inv_metric[1]"));

  // Draws that could not be held are refused before anything is allocated.
  EXPECT_EQ((*sampler)->Run(*chains, int64_t{1} << 40).status().code(),
            absl::StatusCode::kResourceExhausted);

  SamplerConfig invalid;
  invalid.max_depth = 0;
  EXPECT_EQ(BatchedSampler::Create(*target, Algorithm::kNuts, invalid).status().code(),
            absl::StatusCode::kInvalidArgument);

  // Nothing to do is fine.
  absl::StatusOr<BatchedRunResult> none = (*sampler)->Run({}, 5);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->chains.empty());
  absl::StatusOr<BatchedRunResult> zero = (*sampler)->Run(*chains, 0);
  ASSERT_TRUE(zero.ok()) << zero.status();
  for (size_t k = 0; k < chains->size(); ++k) {
    EXPECT_TRUE(zero->chains[k].draws.empty());
    EXPECT_EQ(zero->chains[k].final_state.q, (*chains)[k].state.q);
    EXPECT_EQ(zero->chains[k].final_rng.counter, (*chains)[k].rng.counter);
  }
}

}  // namespace
}  // namespace autobatch::mcmc
