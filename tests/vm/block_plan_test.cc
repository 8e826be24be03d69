// Tests of the stack VM's block plan: the block-order contract
// (vm/stack/block_plan.h) as order_blocks keeps it, and a plan built once
// per lowered program.
#include "vm/stack/block_plan.h"

#include <cstdint>
#include <numeric>
#include <vector>

#include "frontend/context.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/analysis/cfg.h"
#include "passes/order_blocks.h"
#include "samples/fibonacci/fibonacci.h"
#include "tests/vm/fused_test_programs.h"

namespace autobatch {
namespace {

using ::autobatch::testing::EightSchoolsNuts;
using ::autobatch::testing::FusedTestProgram;
using ::autobatch::testing::FusedTestPrograms;
using ::autobatch::testing::FusedTestSampler;
using ::testing::HasSubstr;

// Reverses blocks 1.. of every function: calling blocks then follow exit
// blocks wherever a function has both.
Program Reversed(Program program) {
  for (Function& fn : program.module.functions) {
    if (fn.blocks.size() < 3) continue;
    std::vector<int32_t> order(fn.blocks.size());
    std::iota(order.begin(), order.end(), 0);
    std::reverse(order.begin() + 1, order.end());
    PermuteBlocks(fn, order);
  }
  return program;
}

// Every sample (fibonacci, mutual recursion, collatz, pea-nuts, ...) and the
// NUTS sampler's program as LowerProgram leaves them keep the contract; with
// their blocks reversed they break it (the checker can fail), and
// order_blocks restores it (this fails if order_blocks stops keeping it).
TEST(BlockOrderTest, OrderBlocksKeepsTheContract) {
  std::vector<FusedTestProgram> programs = FusedTestPrograms();
  FusedTestSampler nuts = EightSchoolsNuts();
  std::vector<std::pair<std::string, const Program*>> all;
  for (const FusedTestProgram& p : programs) all.emplace_back(p.name, &p.lowered);
  all.emplace_back("eight_schools_nuts", nuts.lowered);
  int broken = 0;
  for (const auto& [name, lowered] : all) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(CheckBlockOrder(*lowered).ok()) << CheckBlockOrder(*lowered);
    const Program reversed = Reversed(*lowered);
    const absl::Status status = CheckBlockOrder(reversed);
    if (!status.ok()) {
      ++broken;
      EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(status.message(), HasSubstr("block-order contract"));
    }
    absl::StatusOr<Program> reordered = OrderBlocks(reversed);
    ASSERT_TRUE(reordered.ok()) << reordered.status();
    EXPECT_TRUE(CheckBlockOrder(*reordered).ok()) << CheckBlockOrder(*reordered);
  }
  EXPECT_GE(broken, 3);
}

// The NUTS program's model evaluation (the leaf, inlined into build_tree:
// build_tree's one expensive block) has the highest global index, what
// batched_nuts.cc relies on: every unfinished chain reaches it before it
// runs. (The chain's own expensive blocks, user kernels that record draws,
// need not come last.)
TEST(BlockOrderTest, NutsModelBlockComesLast) {
  FusedTestSampler nuts = EightSchoolsNuts();
  absl::StatusOr<BlockPlan> plan = BlockPlan::Build(*nuts.lowered);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Module& module = nuts.lowered->module;
  std::vector<int32_t> heavy_in_tree;
  for (int32_t gid = 0; gid < plan->num_blocks(); ++gid) {
    const BlockFacts& facts = plan->block(gid);
    if (facts.heavy && module.function(facts.fn).name == "nuts_build_tree") {
      heavy_in_tree.push_back(gid);
    }
  }
  EXPECT_EQ(heavy_in_tree, std::vector<int32_t>{plan->num_blocks() - 1});
}

// Exact messages: an exit block before a calling one, a heavy block before a
// cheap one of its group, and a program not lowered.
TEST(BlockOrderTest, CheckerNamesTheBlocksOutOfPlace) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<const Program*> lowered = ctx.LoweredProgram(fib, {Scalar(DType::kI64)});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const absl::Status status = CheckBlockOrder(Reversed(**lowered));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("function 'fibonacci': block"));
  EXPECT_THAT(status.message(), HasSubstr("exit, cheap) comes before block"));
  EXPECT_THAT(status.message(), HasSubstr("calling blocks come before exit blocks"));
  absl::StatusOr<const Program*> typed = ctx.CompiledProgram(fib, {Scalar(DType::kI64)});
  ASSERT_TRUE(typed.ok());
  const absl::Status not_lowered = CheckBlockOrder(**typed);
  EXPECT_EQ(not_lowered.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_lowered.message(), HasSubstr("runs lowered programs"));
}

// A Context builds the plan of a lowered program once: the second call, and
// every shard of a call, reuse it; RunProgram on a program builds one per
// call (not per shard); a kept plan builds none.
TEST(BlockPlanTest, BuiltOncePerLoweredProgram) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  const std::vector<Tensor> in = {*Tensor::FromVector(std::vector<int64_t>{3, 7, 1, 9})};
  const CallOptions stack{.vm = Vm::kStack, .shards = 2};
  const int64_t before = BlockPlan::BuildCount();
  absl::StatusOr<std::vector<Tensor>> first = fib.Run(in, stack);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(BlockPlan::BuildCount() - before, 1);
  absl::StatusOr<std::vector<Tensor>> second = fib.Run(in, stack);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(BlockPlan::BuildCount() - before, 1);

  absl::StatusOr<const Program*> lowered = ctx.LoweredProgram(fib, {Scalar(DType::kI64)});
  ASSERT_TRUE(lowered.ok());
  ASSERT_TRUE(RunProgram(**lowered, in, &ctx.kernels(), stack).ok());
  EXPECT_EQ(BlockPlan::BuildCount() - before, 2);
  absl::StatusOr<BlockPlan> plan = BlockPlan::Build(**lowered);
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<std::vector<Tensor>> kept = RunProgram(*plan, in, &ctx.kernels(), stack);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(BlockPlan::BuildCount() - before, 3);
  EXPECT_EQ((*kept)[0].data<int64_t>()[3], (*first)[0].data<int64_t>()[3]);
  EXPECT_EQ((*second)[0].data<int64_t>()[1], (*first)[0].data<int64_t>()[1]);
}

}  // namespace
}  // namespace autobatch
