// Tests for order_blocks (passes/order_blocks.h).
#include "passes/order_blocks.h"

#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "passes/fuse_pop_push.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::FindBlock;
using testing::Values;

const TensorType kI64 = Scalar(DType::kI64);

Program Order(const Program& lowered) {
  absl::StatusOr<Program> p = OrderBlocks(lowered);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  EXPECT_TRUE(VerifyProgram(*p).ok()) << VerifyProgram(*p);
  return *std::move(p);
}

std::vector<std::string> Labels(const Program& p, const std::string& function) {
  std::vector<std::string> out;
  for (const Block& b : testing::FindFunction(p, function).blocks) out.push_back(b.label);
  return out;
}

std::vector<Values> RandomInputs(int lanes, int max, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Values> out;
  for (int i = 0; i < lanes; ++i) out.push_back({static_cast<double>(rng() % (max + 1))});
  return out;
}

TEST(OrderBlocksTest, CallingBlocksFirstThenTheWayOut) {
  Program allocated = testing::Allocated(testing::MakeEvenOddProgram(), {kI64});
  Program lowered = testing::Lowered(testing::MakeEvenOddProgram(), {kI64});
  Program p = Order(lowered);
  // The whole text: tests/passes/text/order_blocks_even_odd.ir (text_test.cc).
  // The frontend put the base case before the recursive branch; the block
  // that calls moves ahead of it, the return path stays last.
  EXPECT_EQ(Labels(lowered, "is_odd"),
            (std::vector<std::string>{"entry", "base", "recurse", "recurse.ret1"}));
  EXPECT_EQ(Labels(p, "is_odd"),
            (std::vector<std::string>{"entry", "recurse", "base", "recurse.ret1"}));
  EXPECT_EQ(Labels(p, "main"), Labels(lowered, "main"));

  // Same results, fewer batched block executions on the stack machine.
  std::vector<Values> inputs = RandomInputs(64, 40, 1);
  testing::StackRun before, after;
  ASSERT_TRUE(testing::AgreesWithReference(allocated, lowered, inputs, &before));
  ASSERT_TRUE(testing::AgreesWithReference(allocated, p, inputs, &after));
  EXPECT_LT(after.block_executions, before.block_executions);
  EXPECT_EQ(after.lane_block_executions, before.lane_block_executions);
}

TEST(OrderBlocksTest, ReducesOrKeepsBlockExecutions) {
  struct Case {
    Program (*make)();
    std::vector<TensorType> types;
    bool strictly_better;
  };
  for (const Case& c : std::vector<Case>{
           {testing::MakeFibonacciProgram, {kI64}, false},
           {testing::MakeEvenOddNonTailProgram, {kI64}, true},
           {testing::MakeCollatzProgram, {kI64}, false},
           {testing::MakeEdgeProgram, {kI64}, false},
       }) {
    Program allocated = testing::Allocated(c.make(), c.types);
    absl::StatusOr<Program> fused = FusePopPush(testing::Lowered(c.make(), c.types));
    ASSERT_TRUE(fused.ok());
    Program ordered = Order(*fused);
    std::vector<Values> inputs = RandomInputs(64, 14, 7);
    for (Values& v : inputs) v[0] += 1;  // collatz needs n >= 1
    testing::StackRun before, after;
    ASSERT_TRUE(testing::AgreesWithReference(allocated, *fused, inputs, &before));
    ASSERT_TRUE(testing::AgreesWithReference(allocated, ordered, inputs, &after));
    SCOPED_TRACE(fused->entry_function().name);
    EXPECT_LE(after.block_executions, before.block_executions);
    if (c.strictly_better) {
      EXPECT_LT(after.block_executions, before.block_executions);
    }
  }
}

TEST(OrderBlocksTest, KeepsBlockZeroAndIsIdempotent) {
  Program lowered = testing::Lowered(testing::MakeLoopToEntryProgram(), {kI64, kI64});
  Program once = Order(lowered);
  EXPECT_EQ(testing::FindFunction(once, "loop").blocks[0].label, "entry.pops");
  EXPECT_EQ(Order(once), once);
  // The loop (it calls) comes before the exit (it only returns).
  EXPECT_LT(FindBlock(once, "loop", "body.ret1"), FindBlock(once, "loop", "exit"));
}

TEST(OrderBlocksTest, RejectsUnloweredPrograms) {
  absl::StatusOr<Program> result =
      OrderBlocks(testing::Allocated(testing::MakeFibonacciProgram(), {kI64}));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("run lower_calls first"));
}

}  // namespace
}  // namespace autobatch
