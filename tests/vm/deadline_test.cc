// Deadlines (CallOptions::timeout_seconds): the Budget's clock readings, fused
// segments run in chunks, and a loop whose one block is heavy stopping soon
// after the deadline on every executor.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/context.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/pipeline.h"
#include "vm/profile.h"
#include "vm/run_support.h"
#include "vm/stack/block_plan.h"
#include "vm/stack/fused_calls.h"

namespace autobatch {
namespace {

using Clock = std::chrono::steady_clock;

// A deadline already passed: any reading of the clock finds it.
Budget PassedDeadline() { return Budget(/*max_steps=*/0, Clock::now() - std::chrono::seconds(1)); }

PrimOp OpOf(Primitive prim) {
  PrimOp op;
  op.prim = prim;
  return op;
}

TEST(BudgetTest, SmallBlocksReadTheClockEvery64Steps) {
  Budget budget = PassedDeadline();
  for (int i = 1; i < Budget::kClockWork / Budget::kBlockWork; ++i) {
    ASSERT_EQ(budget.Step(), Budget::Outcome::kWithin) << "step " << i;
  }
  EXPECT_EQ(budget.Step(), Budget::Outcome::kOutOfTime);
}

TEST(BudgetTest, AnOpTouchingManyBytesReadsTheClock) {
  Budget budget = PassedDeadline();
  const PrimOp tanh_op = OpOf(Primitive::kTanh);
  // Small ops add up to a reading after kClockWork / kOpWork of them.
  for (int i = 1; i < Budget::kClockWork / Budget::kOpWork; ++i) {
    ASSERT_EQ(budget.ChargeOp(tanh_op, /*bytes=*/0), Budget::Outcome::kWithin) << "op " << i;
  }
  EXPECT_EQ(budget.ChargeOp(tanh_op, /*bytes=*/0), Budget::Outcome::kOutOfTime);
  // One op over a megabyte is followed by a reading.
  EXPECT_EQ(budget.ChargeOp(tanh_op, Budget::kClockWork), Budget::Outcome::kOutOfTime);
}

TEST(BudgetTest, AnExpensiveOpReadsTheClock) {
  Budget budget = PassedDeadline();
  const PrimOp matvec = OpOf(Primitive::kMatVec);
  EXPECT_EQ(budget.ChargeOp(matvec, /*bytes=*/0), Budget::Outcome::kOutOfTime);
}

TEST(BudgetTest, WithoutADeadlineWorkNeverRunsOut) {
  Budget budget(/*max_steps=*/0, std::nullopt);
  const PrimOp matvec = OpOf(Primitive::kMatVec);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(budget.Step(), Budget::Outcome::kWithin);
    ASSERT_EQ(budget.ChargeOp(matvec, Budget::kClockWork), Budget::Outcome::kWithin);
  }
}

// The stack VM's fused segments run in chunks of lanes when there is a
// deadline, with a clock reading after each chunk (FusedCalls::Call).
std::vector<std::pair<int64_t, int64_t>>* chunks = nullptr;  // (first lane, lanes)
void RecordChunk(const FusedArgs& args) { chunks->push_back({args.input_lanes[0][0], args.n}); }

class FusedChunksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chunks = &calls_;
    // A lowered program for the plan, with a variable of a megabyte a lane
    // for the segment to read.
    BatchFunction wide = ctx_.Batch("wide")([](Builder&, Value x) {
      return broadcast(x, {Budget::kClockWork / 8});
    });
    absl::StatusOr<Program> lowered =
        LowerProgram(*ctx_.Program(wide), {TensorType{DType::kF64, {}}});
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    program_ = *std::move(lowered);
    absl::StatusOr<BlockPlan> plan = BlockPlan::Build(program_);
    ASSERT_TRUE(plan.ok()) << plan.status();
    plan_.emplace(*std::move(plan));
    for (size_t v = 0; v < program_.module.variables.size(); ++v) {
      if (plan_->var(VarId(static_cast<int32_t>(v))).lane_bytes == Budget::kClockWork) {
        wide_var_[0] = static_cast<int32_t>(v);
      }
    }
    ASSERT_GE(wide_var_[0], 0);
    block_.ops = {OpOf(Primitive::kAdd), OpOf(Primitive::kMul)};
    segment_.end_op = 2;
    segment_.inputs = wide_var_;
    segment_.run = &RecordChunk;
    profile_.builtins.resize(static_cast<size_t>(Primitive::kUserKernel) + 1);
    fused_.Reset(*plan_, /*fused=*/nullptr);
    fused_.ClearArgs();
    fused_.AddInput(nullptr, lanes_.data());
  }
  void TearDown() override { chunks = nullptr; }

  // Calls the segment, two ops reading a megabyte a lane, for four lanes.
  absl::Status Call(Budget& budget) {
    return fused_.Call(block_, segment_, static_cast<int64_t>(lanes_.size()),
                       /*new_execution=*/true, profile_, budget);
  }

  Context ctx_;
  Program program_;
  std::optional<BlockPlan> plan_;
  int32_t wide_var_[1] = {-1};
  std::vector<std::pair<int64_t, int64_t>> calls_;
  const std::vector<int64_t> lanes_ = {10, 11, 12, 13};
  Block block_;
  FusedSegment segment_;
  Profile profile_;
  FusedCalls fused_;
};

TEST_F(FusedChunksTest, WithoutADeadlineASegmentRunsInOneCall) {
  Budget budget(/*max_steps=*/0, std::nullopt);
  ASSERT_TRUE(Call(budget).ok());
  EXPECT_THAT(calls_, ::testing::ElementsAre(std::pair<int64_t, int64_t>{10, 4}));
}

TEST_F(FusedChunksTest, WithADeadlineAHeavySegmentRunsInChunks) {
  Budget budget(/*max_steps=*/0, Clock::now() + std::chrono::hours(1));
  ASSERT_TRUE(Call(budget).ok());
  EXPECT_THAT(calls_, ::testing::ElementsAre(std::pair<int64_t, int64_t>{10, 1},
                                             std::pair<int64_t, int64_t>{11, 1},
                                             std::pair<int64_t, int64_t>{12, 1},
                                             std::pair<int64_t, int64_t>{13, 1}));
}

TEST_F(FusedChunksTest, APassedDeadlineStopsASegmentAfterItsFirstChunk) {
  Budget budget = PassedDeadline();
  EXPECT_EQ(Call(budget).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(calls_, ::testing::ElementsAre(std::pair<int64_t, int64_t>{10, 1}));
}

struct Executor {
  std::string name;
  CallOptions options;
};

class HeavyBlockTest : public ::testing::TestWithParam<Executor> {};

// Runs `spin` (inputs n and x0; it loops while n > 0) with a 0.2 s timeout
// and expects DeadlineExceeded soon after. Lane 0 never stops, lane 1 leaves
// the loop at once, so the batched VMs run the loop's block for one lane of
// two (compact, unless the executor forces dense).
void ExpectStopsSoonAfterTheDeadline(BatchFunction& spin, const Executor& executor) {
  CallOptions options = executor.options;
  options.max_steps = 0;
  options.timeout_seconds = 0.2;
  const std::vector<Tensor> inputs = {*Tensor::FromVector(std::vector<int64_t>{1, 0}),
                                      *Tensor::FromVector(std::vector<double>{0.1, 0.2})};
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::vector<Tensor>> out = spin.Run(inputs, options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
  // Compilation, setup, the deadline and one op, with a wide margin for a
  // loaded machine: not a timing test, but well below the seconds that
  // reading the clock every 64 blocks took (3.5-12 s for the elementwise
  // chain, 4.3-8.7 s for the matvec chain, on the 2-core build machine).
  EXPECT_LT(seconds, 2.0) << executor.name;
  std::printf("%s: stopped %.3f s after the call began (timeout 0.2 s)\n",
              executor.name.c_str(), seconds);
}

// A loop whose one block is kOps lgamma ops on values of kElements doubles:
// a block takes about kOps times one op (milliseconds), and the clock reads
// come from the bytes the ops touch. lgamma, not a cheaper op: the stack VM
// allocates (and zeroes) every variable before the first block, at a cost
// per byte that a cheap op would match, so a block heavy through its ops
// rather than its bytes keeps that setup short.
TEST_P(HeavyBlockTest, ElementwiseChainStopsSoonAfterTheDeadline) {
  constexpr int kOps = 40;
  constexpr int64_t kElements = int64_t{1} << 17;
  Context ctx;
  BatchFunction spin = ctx.Batch("spin")([](Builder& b, Value n, Value x0) {
    Var x = b.Local("x", broadcast(x0, {kElements}));
    b.While([&] { return n > 0; }).Do([&] {
      for (int i = 0; i < kOps; ++i) x = lgamma(x + 2.0);
    });
    return x;
  });
  ExpectStopsSoonAfterTheDeadline(spin, GetParam());
}

// A loop whose one block is kOps products of a kSize x kSize matrix with a
// small vector: heavy through its kernels, light in bytes, so the clock
// reads come from the expensive ops.
TEST_P(HeavyBlockTest, MatvecChainStopsSoonAfterTheDeadline) {
  constexpr int kOps = 300;
  constexpr int64_t kSize = 1024;
  auto matrix = std::make_shared<DenseMatrix>();
  matrix->rows = kSize;
  matrix->cols = kSize;
  matrix->data.assign(static_cast<size_t>(kSize * kSize), 1.0 / kSize);
  Context ctx;
  BatchFunction spin = ctx.Batch("spin")([matrix](Builder& b, Value n, Value x0) {
    Var x = b.Local("x", broadcast(x0, {kSize}));
    b.While([&] { return n > 0; }).Do([&] {
      for (int i = 0; i < kOps; ++i) x = matvec(matrix, x);
    });
    return x;
  });
  ExpectStopsSoonAfterTheDeadline(spin, GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Executors, HeavyBlockTest,
    ::testing::Values(
        Executor{"StackCompact", {.vm = Vm::kStack, .time_dense_or_compact = false}},
        Executor{"StackDense",
                 {.vm = Vm::kStack,
                  .dense_fraction = 0,
                  .dense_fraction_heavy = 0,
                  .time_dense_or_compact = false}},
        Executor{"Stackless", {.vm = Vm::kStackless}},
        Executor{"Reference", {.dry_run = true}}),
    [](const ::testing::TestParamInfo<Executor>& info) { return info.param.name; });

}  // namespace
}  // namespace autobatch
