// Tests for thread_jumps (passes/thread_jumps.h).
#include "passes/thread_jumps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using Lines = std::vector<std::string>;
using testing::BlockText;
using testing::FindBlock;
using testing::Values;

const TensorType kI64 = Scalar(DType::kI64);

Program Thread(const Program& program) {
  return testing::Checked(ThreadJumps(program), "thread_jumps");
}

std::vector<std::string> Labels(const Program& p, const std::string& function) {
  std::vector<std::string> out;
  for (const Block& b : testing::FindFunction(p, function).blocks) out.push_back(b.label);
  return out;
}

// Ends `entry` with pos = gt(n, fill(n, 0)); branch pos ^then ^otherwise.
VarId BranchOnPositive(testing::FunctionBuilder& fn, VarId n, BlockId entry, BlockId then,
                       BlockId otherwise) {
  VarId zero = fn.Var("zero");
  VarId pos = fn.Var("pos");
  fn.Fill(entry, 2, n, 0, zero);
  fn.Prim(entry, 2, Primitive::kGt, {n, zero}, pos);
  fn.Branch(entry, 2, pos, then, otherwise);
  return pos;
}

// jumps(n) -> r, with empty blocks a, c, d and exit:
//   ^0 entry: zero = fill(n, 0); pos = gt(n, zero); branch pos ^1 ^2
//   ^1 a:     goto ^3
//   ^2 b:     r = fill(n, 7); goto ^1
//   ^3 c:     goto ^4
//   ^4 d:     branch pos ^5 ^6
//   ^5 e:     r = add(n, n); goto ^7
//   ^6 f:     r = fill(n, 3); goto ^7
//   ^7 exit:  return
// r = 2n for n > 0, else 3.
Program MakeJumpsProgram() {
  Program program;
  testing::FunctionBuilder fn(program, "jumps", "jumps.cc", 1);
  program.entry = fn.id();
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  BlockId a = fn.Block("a");
  BlockId b = fn.Block("b");
  BlockId c = fn.Block("c");
  BlockId d = fn.Block("d");
  BlockId e = fn.Block("e");
  BlockId f = fn.Block("f");
  BlockId exit = fn.Block("exit");
  VarId pos = BranchOnPositive(fn, n, entry, a, b);
  fn.Goto(a, 3, c);
  fn.Fill(b, 4, n, 7, r);
  fn.Goto(b, 4, a);
  fn.Goto(c, 5, d);
  fn.Branch(d, 6, pos, e, f);
  fn.Prim(e, 7, Primitive::kAdd, {n, n}, r);
  fn.Goto(e, 7, exit);
  fn.Fill(f, 8, n, 3, r);
  fn.Goto(f, 8, exit);
  fn.Return(exit, 9);
  return program;
}

TEST(ThreadJumpsTest, JumpsGoStraightOnAndEmptyBlocksGo) {
  Program typed = testing::Typed(MakeJumpsProgram(), {kI64});
  Program p = Thread(typed);
  // a, c and exit are left unreachable; d stays: the entry's branch lands
  // there, and a branch cannot take over d's own branch.
  EXPECT_EQ(Labels(p, "jumps"), (Lines{"entry", "b", "d", "e", "f"}));
  EXPECT_EQ(BlockText(p, "jumps", 0).back(), "branch %pos, ^2, ^1");
  // b jumped to a -> c -> d: it takes over d's branch.
  EXPECT_EQ(BlockText(p, "jumps", 1).back(), "branch %pos, ^3, ^4");
  EXPECT_EQ(BlockText(p, "jumps", 3).back(), "return");
  EXPECT_EQ(BlockText(p, "jumps", 4).back(), "return");
  for (double n : {-2.0, 0.0, 1.0, 5.0}) {
    absl::StatusOr<Values> before = testing::RunReference(typed, {n});
    absl::StatusOr<Values> after = testing::RunReference(p, {n});
    ASSERT_TRUE(before.ok() && after.ok());
    EXPECT_EQ(*after, *before) << "n = " << n;
    EXPECT_EQ(*after, (Values{n > 0 ? 2 * n : 3}));
  }
  EXPECT_EQ(Thread(p), p);  // idempotent
}

TEST(ThreadJumpsTest, LeavesACycleOfEmptyBlocksAlone) {
  // entry: branch pos ^1 ^3; ^1: goto ^2; ^2: goto ^1 (lanes with n > 0
  // never halt); ^3: r = fill(n, 1); return.
  Program program;
  testing::FunctionBuilder fn(program, "spin", "spin.cc", 1);
  program.entry = fn.id();
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  BlockId ping = fn.Block("ping");
  BlockId pong = fn.Block("pong");
  BlockId out = fn.Block("out");
  BranchOnPositive(fn, n, entry, ping, out);
  fn.Goto(ping, 3, pong);
  fn.Goto(pong, 4, ping);
  fn.Fill(out, 5, n, 1, r);
  fn.Return(out, 5);
  Program typed = testing::Typed(program, {kI64});
  EXPECT_EQ(Thread(typed), typed);
}

TEST(ThreadJumpsTest, FibonacciReturnsWithoutAJoinBlock) {
  // After coalescing, the join of fibonacci's if/else is empty and both
  // branches jump to it only to return.
  PipelineOptions without;
  without.thread_jumps = false;
  absl::StatusOr<Program> joined =
      LowerProgram(autobatch::testing::MakeFibonacciProgram(), {kI64}, without);
  ASSERT_TRUE(joined.ok()) << joined.status();
  ASSERT_NE(FindBlock(*joined, "fibonacci", "exit"), -1);
  EXPECT_EQ(BlockText(*joined, "fibonacci", FindBlock(*joined, "fibonacci", "exit")),
            (Lines{"indirect_goto"}));

  Program p = Thread(*joined);
  EXPECT_EQ(FindBlock(p, "fibonacci", "exit"), -1);
  EXPECT_EQ(testing::FindFunction(p, "fibonacci").blocks.size(),
            testing::FindFunction(*joined, "fibonacci").blocks.size() - 1);
  for (const char* label : {"base", "recurse.ret2"}) {
    EXPECT_EQ(BlockText(p, "fibonacci", FindBlock(p, "fibonacci", label)).back(),
              "indirect_goto")
        << label;
  }
  absl::StatusOr<Program> piped = LowerProgram(autobatch::testing::MakeFibonacciProgram(), {kI64});
  ASSERT_TRUE(piped.ok()) << piped.status();
  EXPECT_EQ(PrintProgram(*piped), PrintProgram(p)) << "the pipeline threads jumps last";

  // Same results; every lane passes one block fewer per call.
  Program allocated = testing::Allocated(autobatch::testing::MakeFibonacciProgram(), {kI64});
  std::vector<Values> inputs;
  for (int i = 0; i < 40; ++i) inputs.push_back({static_cast<double>(i % 13)});
  testing::StackRun before, after;
  ASSERT_TRUE(testing::AgreesWithReference(allocated, *joined, inputs, &before));
  ASSERT_TRUE(testing::AgreesWithReference(allocated, p, inputs, &after));
  EXPECT_LT(after.block_executions, before.block_executions);
  EXPECT_LT(after.lane_block_executions, before.lane_block_executions);
}

TEST(ThreadJumpsTest, AReturnAddressSkipsAnEmptyBlock) {
  PipelineOptions without;
  without.thread_jumps = false;
  absl::StatusOr<Program> lowered =
      LowerProgram(autobatch::testing::MakeFibonacciProgram(), {kI64}, without);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  // The first recursive call returns through an empty detour block.
  Program detoured = *lowered;
  Function& fib = detoured.module.function(
      FunctionId(static_cast<int32_t>(&testing::FindFunction(detoured, "fibonacci") -
                                      detoured.module.functions.data())));
  const int recurse = FindBlock(detoured, "fibonacci", "recurse");
  ASSERT_NE(recurse, -1);
  Block detour;
  detour.label = "detour";
  detour.terminator = Goto{std::get<PushGoto>(fib.blocks[recurse].terminator).return_to};
  fib.blocks.push_back(detour);  // (invalidates references into blocks)
  std::get<PushGoto>(fib.blocks[recurse].terminator).return_to =
      BlockId(static_cast<int32_t>(fib.blocks.size() - 1));
  ASSERT_TRUE(VerifyProgram(detoured).ok());

  Program p = Thread(detoured);
  EXPECT_EQ(FindBlock(p, "fibonacci", "detour"), -1);
  EXPECT_EQ(p, Thread(*lowered));
}

TEST(ThreadJumpsTest, KeepsResultsOnTheTestPrograms) {
  struct Case {
    Program (*make)();
    std::vector<TensorType> types;
  };
  for (const Case& c : std::vector<Case>{
           {autobatch::testing::MakeFibonacciProgram, {kI64}},
           {testing::MakeEvenOddNonTailProgram, {kI64}},
           {testing::MakeCollatzProgram, {kI64}},
           {testing::MakeEdgeProgram, {kI64}},
           {testing::MakeLoopToEntryProgram, {kI64, kI64}},
       }) {
    Program allocated = testing::Allocated(c.make(), c.types);
    SCOPED_TRACE(allocated.entry_function().name);
    PipelineOptions without;
    without.thread_jumps = false;
    absl::StatusOr<Program> lowered = LowerProgram(c.make(), c.types, without);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    Program p = Thread(*lowered);
    EXPECT_EQ(Thread(p), p);
    EXPECT_EQ(p.module.functions[p.entry.value].blocks[0].label,
              lowered->module.functions[lowered->entry.value].blocks[0].label);
    std::vector<Values> inputs = testing::SmallLaneInputs(c.types.size());
    for (Values& v : inputs) v[0] += 1;  // collatz needs n >= 1
    testing::StackRun before, after;
    ASSERT_TRUE(testing::AgreesWithReference(allocated, *lowered, inputs, &before));
    ASSERT_TRUE(testing::AgreesWithReference(allocated, p, inputs, &after));
    EXPECT_LE(after.lane_block_executions, before.lane_block_executions);
  }
}

}  // namespace
}  // namespace autobatch
