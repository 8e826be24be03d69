// Deadlines (CallOptions::timeout_seconds): the Budget's clock readings, and
// a loop whose one block is heavy stopping soon after the deadline on every
// executor.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/context.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vm/run_support.h"

namespace autobatch {
namespace {

using Clock = std::chrono::steady_clock;

// A deadline already passed: any reading of the clock finds it.
Budget PassedDeadline() { return Budget(/*max_steps=*/0, Clock::now() - std::chrono::seconds(1)); }

TEST(BudgetTest, SmallBlocksReadTheClockEvery64Steps) {
  Budget budget = PassedDeadline();
  for (int i = 1; i < Budget::kClockWork / Budget::kBlockWork; ++i) {
    ASSERT_EQ(budget.Step(), Budget::Outcome::kWithin) << "step " << i;
  }
  EXPECT_EQ(budget.Step(), Budget::Outcome::kOutOfTime);
}

TEST(BudgetTest, AnOpTouchingManyBytesReadsTheClock) {
  Budget budget = PassedDeadline();
  PrimOp tanh_op;
  tanh_op.prim = Primitive::kTanh;
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
  PrimOp matvec;
  matvec.prim = Primitive::kMatVec;
  EXPECT_EQ(budget.ChargeOp(matvec, /*bytes=*/0), Budget::Outcome::kOutOfTime);
}

TEST(BudgetTest, WithoutADeadlineWorkNeverRunsOut) {
  Budget budget(/*max_steps=*/0, std::nullopt);
  PrimOp matvec;
  matvec.prim = Primitive::kMatVec;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(budget.Step(), Budget::Outcome::kWithin);
    ASSERT_EQ(budget.ChargeOp(matvec, Budget::kClockWork), Budget::Outcome::kWithin);
  }
}

struct Executor {
  std::string name;
  CallOptions options;
};

class HeavyBlockTest : public ::testing::TestWithParam<Executor> {};

// A loop whose one block is kOps lgamma ops on values of kElements doubles:
// a block takes about kOps times one op (milliseconds), so reading the clock
// every 64 blocks stopped it many seconds late. lgamma, not a cheaper op:
// the stack VM allocates (and zeroes) every variable before the first
// block, at a cost per byte that a cheap op would match, so a block heavy
// through its ops rather than its bytes keeps that setup short.
constexpr int kOps = 40;
constexpr int64_t kElements = int64_t{1} << 16;

TEST_P(HeavyBlockTest, StopsSoonAfterTheDeadline) {
  Context ctx;
  BatchFunction spin = ctx.Batch("spin")([](Builder& b, Value n, Value x0) {
    Var x = b.Local("x", broadcast(x0, {kElements}));
    b.While([&] { return n > 0; }).Do([&] {
      for (int i = 0; i < kOps; ++i) x = lgamma(x + 2.0);
    });
    return x;
  });
  CallOptions options = GetParam().options;
  options.max_steps = 0;
  options.timeout_seconds = 0.2;
  // Lane 0 never stops; lanes 1 and 2 leave the loop at once, so that the
  // batched VMs run the block for one lane of three (compact, unless the
  // executor forces dense).
  const std::vector<Tensor> inputs = {*Tensor::FromVector(std::vector<int64_t>{1, 0, 0}),
                                      *Tensor::FromVector(std::vector<double>{0.1, 0.2, 0.3})};
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::vector<Tensor>> out = spin.Run(inputs, options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
  // The bound is the deadline plus one op plus compilation with a wide
  // margin for a loaded machine: not a timing test, but well below the
  // seconds that reading the clock every 64 blocks took.
  EXPECT_LT(seconds, 2.0) << GetParam().name;
  std::printf("%s: stopped %.3f s after the call began (timeout 0.2 s)\n",
              GetParam().name.c_str(), seconds);
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
