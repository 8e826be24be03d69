// Tests of the batched random-walk Metropolis program (per chain
// bit-identical to ScalarRwmh at several batch sizes, on both VMs, in any
// lane order), and of the two user kernels every batched sampler uses: the
// model kernel and the draw recorder (active lanes only, junk tolerated,
// bounds checked).
#include "mcmc/batched/batched_rwmh.h"

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

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "mcmc/batched/batched_sampler.h"
#include "tests/mcmc/batched_test_util.h"
#include "mcmc/batched/draw_recorder.h"
#include "mcmc/batched/model_kernel.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/model/targets/registry.h"
#include "frontend/run.h"

namespace autobatch::mcmc {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;


struct TargetCase {
  std::string name;
  nlohmann::json params;
  double step_size;
  std::vector<double> inv_metric = {};
};
void PrintTo(const TargetCase& c, std::ostream* os) { *os << c.name << " " << c.params.dump(); }

class RwmhBitIdentityTest : public ::testing::TestWithParam<TargetCase> {};

TEST_P(RwmhBitIdentityTest, EveryChainMatchesScalarRwmhAtEveryBatchSizeAndVm) {
  const TargetCase& tc = GetParam();
  std::unique_ptr<Target> target = MakeOrDie(tc.name, tc.params);
  ASSERT_NE(target, nullptr);
  SamplerConfig config;
  config.step_size = tc.step_size;
  config.inv_metric = tc.inv_metric;
  const int64_t draws = 40;
  const uint64_t seed = 4242;
  const std::vector<uint64_t> ids = ChainIds(64);
  ScalarRunOptions scalar_options;
  scalar_options.algorithm = Algorithm::kRwmh;
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, seed, ids, draws, scalar_options);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::map<uint64_t, ScalarChainResult> oracle = ByChainId(*std::move(scalar));
  int accepted = 0, rejected = 0;  // lanes take both paths
  for (const auto& [id, r] : oracle) {
    const size_t d = static_cast<size_t>(r.dimension);
    for (size_t n = 1; n < r.stats.size(); ++n) {
      const bool same = std::equal(r.draws.begin() + n * d, r.draws.begin() + (n + 1) * d,
                                   r.draws.begin() + (n - 1) * d);
      ++(same ? rejected : accepted);
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);

  absl::StatusOr<std::vector<BatchedChain>> all = MakeBatchedChains(*target, config, seed, ids);
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*target, Algorithm::kRwmh, config);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  std::mt19937_64 shuffle(13);
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
        EXPECT_EQ(run->leapfrogs[k], 0);
        EXPECT_EQ(run->divergences[k], 0);
      }
      // One model evaluation per transition, every chain alike.
      EXPECT_EQ(run->utilization.gradients_taken, batch * draws);
      EXPECT_EQ(run->utilization.kernel_active_lanes, batch * draws);
      EXPECT_EQ(run->utilization.kernel_executions, draws);
      EXPECT_EQ(run->utilization.utilization, 1.0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Targets, RwmhBitIdentityTest,
    ::testing::Values(TargetCase{"iid_gaussian", {{"dimension", 10}}, 0.6},
                      TargetCase{"correlated_2d", nlohmann::json::object(), 1.2},
                      TargetCase{"ar1", {{"dimension", 20}}, 0.2, std::vector<double>(20, 0.7)},
                      TargetCase{"eight_schools", nlohmann::json::object(), 0.5}),
    [](const ::testing::TestParamInfo<TargetCase>& info) { return info.param.name; });

TEST(BatchedRwmhTest, ReferenceInterpreterAndAThousandChainsMatchToo) {
  std::unique_ptr<Target> target = MakeOrDie("correlated_2d", nlohmann::json::object());
  SamplerConfig config;
  config.step_size = 1.0;
  const std::vector<uint64_t> ids = ChainIds(1000);
  ScalarRunOptions scalar_options;
  scalar_options.algorithm = Algorithm::kRwmh;
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*target, config, 1, ids, 20, scalar_options);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  BatchedRunOptions options;
  options.algorithm = Algorithm::kRwmh;
  absl::StatusOr<BatchedRunResult> run = RunBatchedChains(*target, config, 1, ids, 20, options);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t k = 0; k < ids.size(); ++k) ExpectSameChain(run->chains[k], (*scalar)[k], "1000");

  options.call.dry_run = true;
  const std::vector<uint64_t> few(ids.begin(), ids.begin() + 3);
  absl::StatusOr<BatchedRunResult> dry = RunBatchedChains(*target, config, 1, few, 20, options);
  ASSERT_TRUE(dry.ok()) << dry.status();
  for (size_t k = 0; k < few.size(); ++k) ExpectSameChain(dry->chains[k], (*scalar)[k], "dry");
}

TEST(BatchedRwmhTest, NanLogDensityIsRejected) {
  // energy_jump with a NaN height: every proposal off the origin has a NaN
  // log density, which counts as -inf: always rejected, never a crash.
  absl::StatusOr<std::unique_ptr<Target>> target =
      MakeTarget("energy_jump", {{"dimension", 2}, {"height", "nan"}});
  ASSERT_TRUE(target.ok()) << target.status();
  BatchedRunOptions options;
  options.algorithm = Algorithm::kRwmh;
  options.inits.assign(5, std::vector<double>{0.0, 0.0});
  for (const VmCase& vm : BatchedVms()) {
    options.call = vm.options;
    absl::StatusOr<BatchedRunResult> run =
        RunBatchedChains(**target, SamplerConfig{}, 2, ChainIds(5), 4, options);
    ASSERT_TRUE(run.ok()) << run.status();
    for (const ScalarChainResult& chain : run->chains) {
      for (const DrawStats& s : chain.stats) {
        EXPECT_EQ(s.accept_stat, 0.0);
        EXPECT_EQ(s.lp, 0.0);
      }
      EXPECT_EQ(chain.final_state.q, (std::vector<double>{0.0, 0.0}));
    }
  }
}

// ---------------------------------------------------------------------------
// The model kernel.

TEST(ModelKernelTest, EvaluatesActiveLanesOnlyAndToleratesJunk) {
  std::unique_ptr<Target> target = MakeOrDie("ar1", {{"dimension", 3}});
  const KernelSignature sig = ModelKernelSignature(*target);
  EXPECT_EQ(sig.inputs, (std::vector<TensorType>{Vector(DType::kF64, 3)}));
  EXPECT_EQ(sig.outputs,
            (std::vector<TensorType>{Scalar(DType::kF64), Vector(DType::kF64, 3)}));
  EXPECT_TRUE(sig.bit_stable);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> q = {0.1, -0.2, 0.3, nan, inf, -inf, 1.0, 2.0, 3.0, 1e308, nan, 0};
  std::vector<double> logp(4, -7.0), grad(12, -7.0);
  const uint8_t active[] = {1, 0, 1, 0};
  const ConstLanesView in[] = {{Vector(DType::kF64, 3), reinterpret_cast<std::byte*>(q.data())}};
  const LanesView out[] = {{Scalar(DType::kF64), reinterpret_cast<std::byte*>(logp.data())},
                           {Vector(DType::kF64, 3), reinterpret_cast<std::byte*>(grad.data())}};
  ASSERT_TRUE(RunModelKernel(*target, KernelCall{in, out, 4, active}).ok());
  for (int lane : {0, 2}) {
    std::vector<double> g(3);
    const double lp = target->LogDensityGradient(
        std::span<const double>(q.data() + 3 * lane, 3), g);
    EXPECT_TRUE(SameBits(logp[lane], lp));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(SameBits(grad[3 * lane + i], g[i]));
  }
  for (int lane : {1, 3}) {  // untouched
    EXPECT_EQ(logp[lane], -7.0);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(grad[3 * lane + i], -7.0);
  }
  // Views that do not fit the signature are an error, not a wild write.
  const ConstLanesView wrong[] = {{Vector(DType::kF64, 4), reinterpret_cast<std::byte*>(q.data())}};
  absl::Status s = RunModelKernel(*target, KernelCall{wrong, out, 1, nullptr});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("ar1"));

  std::unique_ptr<Target> batched = MakeOrDie("ar1_batched", {{"dimension", 3}});
  EXPECT_FALSE(ModelKernelSignature(*batched).bit_stable);
  // A model is a pure function of q: cse and remove_dead_ops may merge or
  // drop its calls.
  EXPECT_TRUE(sig.pure);
  EXPECT_TRUE(ModelKernelSignature(*batched).pure);
}

// ---------------------------------------------------------------------------
// The draw recorder.

// Calls Record on `lanes` lanes with the given slots and iterations.
absl::Status CallRecord(DrawRecorder& recorder, const std::vector<int64_t>& slots,
                        const std::vector<int64_t>& iterations, const std::vector<double>& q,
                        const std::vector<double>& stats, const uint8_t* active,
                        std::vector<int64_t>* ack) {
  const int64_t lanes = static_cast<int64_t>(slots.size());
  ack->assign(static_cast<size_t>(lanes), -1);
  const ConstLanesView in[] = {
      {Scalar(DType::kI64), reinterpret_cast<const std::byte*>(slots.data())},
      {Scalar(DType::kI64), reinterpret_cast<const std::byte*>(iterations.data())},
      {Vector(DType::kF64, recorder.dimension()), reinterpret_cast<const std::byte*>(q.data())},
      {Vector(DType::kF64, kNumDrawStats), reinterpret_cast<const std::byte*>(stats.data())}};
  const LanesView out[] = {{Scalar(DType::kI64), reinterpret_cast<std::byte*>(ack->data())}};
  return recorder.Record(KernelCall{in, out, lanes, active});
}

TEST(DrawRecorderTest, WritesActiveLanesInAnyOrderAndIgnoresJunk) {
  DrawRecorder recorder(/*dimension=*/2, /*num_slots=*/3, /*num_iterations=*/2);
  // Recording is an effect: the kernel is impure, never merged nor dropped.
  EXPECT_FALSE(recorder.Signature().pure);
  // Lane 1 is inactive and holds junk (an out-of-range slot, NaN values).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> q = {1, 2, nan, nan, 5, 6, 7, 8};
  std::vector<double> stats;
  for (int lane = 0; lane < 4; ++lane) {
    for (int s = 0; s < kNumDrawStats; ++s) stats.push_back(lane == 1 ? nan : 10 * lane + s);
  }
  const uint8_t active[] = {1, 0, 1, 1};
  std::vector<int64_t> ack;
  ASSERT_TRUE(
      CallRecord(recorder, {2, -99, 0, 2}, {1, 12345, 0, 0}, q, stats, active, &ack).ok());
  EXPECT_EQ(ack[0], 1);
  EXPECT_EQ(ack[2], 1);
  EXPECT_EQ(ack[3], 1);
  EXPECT_TRUE(recorder.recorded(2, 1));
  EXPECT_TRUE(recorder.recorded(0, 0));
  EXPECT_TRUE(recorder.recorded(2, 0));
  EXPECT_FALSE(recorder.recorded(1, 0));
  EXPECT_EQ(recorder.count(2), 2);
  EXPECT_EQ(recorder.count(1), 0);
  EXPECT_EQ(std::vector<double>(recorder.draw(2, 1).begin(), recorder.draw(2, 1).end()),
            (std::vector<double>{1, 2}));
  EXPECT_EQ(std::vector<double>(recorder.draw(2, 0).begin(), recorder.draw(2, 0).end()),
            (std::vector<double>{7, 8}));
  const DrawStats s = recorder.stats(0, 0);  // lane 2: 20, 21, ...
  EXPECT_EQ(s.lp, 20);
  EXPECT_EQ(s.accept_stat, 21);
  EXPECT_EQ(s.stepsize, 22);
  EXPECT_EQ(s.treedepth, 23);
  EXPECT_EQ(s.n_leapfrog, 24);
  EXPECT_TRUE(s.divergent);
  EXPECT_EQ(s.energy, 26);

  recorder.Reset(1, 1);
  EXPECT_EQ(recorder.num_slots(), 1);
  EXPECT_FALSE(recorder.recorded(0, 0));
}

TEST(DrawRecorderTest, OutOfRangeAndRepeatedCellsAreErrors) {
  DrawRecorder recorder(/*dimension=*/1, /*num_slots=*/2, /*num_iterations=*/3);
  const std::vector<double> q = {0.5};
  const std::vector<double> stats(kNumDrawStats, 0.0);
  std::vector<int64_t> ack;
  for (auto [slot, iteration] : std::vector<std::pair<int64_t, int64_t>>{
           {2, 0}, {-1, 0}, {0, 3}, {0, -1}, {std::numeric_limits<int64_t>::min(), 0}}) {
    absl::Status s = CallRecord(recorder, {slot}, {iteration}, q, stats, nullptr, &ack);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << slot << " " << iteration;
    EXPECT_THAT(std::string(s.message()),
                AllOf(HasSubstr("record_draw"), HasSubstr("slot " + std::to_string(slot))));
  }
  ASSERT_TRUE(CallRecord(recorder, {1}, {2}, q, stats, nullptr, &ack).ok());
  absl::Status twice = CallRecord(recorder, {1}, {2}, q, stats, nullptr, &ack);
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(twice.message()), HasSubstr("already recorded"));
}

TEST(DrawRecorderTest, ARecorderTooSmallForTheRunFailsTheRunCleanly) {
  // The chain program run directly, with a recorder one slot short.
  std::unique_ptr<Target> target = MakeOrDie("iid_gaussian", {{"dimension", 2}});
  SamplerConfig config;
  Context ctx;
  DrawRecorder recorder(2, /*num_slots=*/1, /*num_iterations=*/3);
  Kernel log_density = RegisterModelKernel(ctx, *target);
  Kernel record = recorder.Register(ctx);
  BatchFunction chain = DefineChainProgram(ctx, Algorithm::kRwmh, log_density, record, 2, config);
  absl::StatusOr<Program> program = ctx.Program(chain);
  ASSERT_TRUE(program.ok()) << program.status();

  const std::vector<double> q = {0.1, 0.2, 0.3, 0.4};
  const std::vector<double> grad = {-0.1, -0.2, -0.3, -0.4};
  std::vector<Tensor> inputs = {
      *Tensor::FromVector<double>(q, {2}),
      *Tensor::FromVector<double>({-0.025, -0.125}),
      *Tensor::FromVector<double>(grad, {2}),
      *Tensor::FromVector<uint64_t>({ChainKey(1, 0), ChainKey(1, 1)}),
      *Tensor::FromVector<uint64_t>({0, 0}),
      *Tensor::FromVector<double>({1.0, 1.0}),
      *Tensor::FromVector<double>({1.0, 1.0, 1.0, 1.0}, {2}),
      *Tensor::FromVector<int64_t>({0, 1}),  // slot 1 does not exist
      *Tensor::FromVector<int64_t>({3, 3})};
  for (const VmCase& vm : BatchedVms()) {
    recorder.Reset(1, 3);
    absl::StatusOr<std::vector<Tensor>> out =
        RunProgram(*program, inputs, &ctx.kernels(), vm.options);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange) << vm.name;
    EXPECT_THAT(std::string(out.status().message()),
                AllOf(HasSubstr("record_draw"), HasSubstr("slot 1")));
  }
  // Sized right, it runs and records every draw.
  recorder.Reset(2, 3);
  absl::StatusOr<std::vector<Tensor>> out = RunProgram(*program, inputs, &ctx.kernels(), {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[7].ToVector<int64_t>(), (std::vector<int64_t>{3, 3}));  // acks
  EXPECT_EQ(recorder.count(0), 3);
  EXPECT_EQ(recorder.count(1), 3);
}

}  // namespace
}  // namespace autobatch::mcmc
