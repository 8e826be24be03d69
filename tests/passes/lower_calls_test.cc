// Tests for lower_calls (passes/lower_calls.h).
#include "passes/lower_calls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using Lines = std::vector<std::string>;
using testing::AgreesWithReference;
using testing::BlockText;
using testing::FindBlock;
using testing::Values;

const TensorType kI64 = Scalar(DType::kI64);

Program Lower(const Program& allocated) {
  absl::StatusOr<Program> p = LowerCalls(allocated);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  EXPECT_EQ(p->stage, Stage::kLowered);
  EXPECT_TRUE(VerifyProgram(*p).ok()) << VerifyProgram(*p);
  for (const Function& f : p->module.functions) {
    for (const Block& b : f.blocks) {
      EXPECT_FALSE(std::holds_alternative<Return>(b.terminator)) << f.name;
      for (const Op& op : b.ops) EXPECT_FALSE(std::holds_alternative<CallOp>(op)) << f.name;
    }
  }
  return *std::move(p);
}

std::vector<Values> Range(int from, int to) {
  std::vector<Values> out;
  for (int n = from; n <= to; ++n) out.push_back({static_cast<double>(n)});
  return out;
}

TEST(LowerCallsTest, Fibonacci) {
  Program allocated = testing::Allocated(testing::MakeFibonacciProgram(), {kI64});
  Program p = Lower(allocated);
  // The whole text: tests/passes/text/lower_calls_fib.ir (text_test.cc).

  const Function& fib = testing::FindFunction(p, "fibonacci");
  const int recurse = FindBlock(p, "fibonacci", "recurse");
  const int ret1 = FindBlock(p, "fibonacci", "recurse.ret1");
  const int ret2 = FindBlock(p, "fibonacci", "recurse.ret2");
  const int base = FindBlock(p, "fibonacci", "base");
  const int exit = FindBlock(p, "fibonacci", "exit");
  ASSERT_EQ(fib.blocks.size(), 6u);
  EXPECT_EQ(FindBlock(p, "fibonacci", "entry"), 0);
  // Each call site splits its block; PushGoto returns to the continuation.
  const FunctionId fib_id = *p.module.FindFunction("fibonacci");
  EXPECT_EQ(fib.blocks[recurse].terminator, Terminator(PushGoto{fib_id, BlockId(ret1)}));
  EXPECT_EQ(fib.blocks[ret1].terminator, Terminator(PushGoto{fib_id, BlockId(ret2)}));
  EXPECT_EQ(fib.blocks[exit].terminator, Terminator(IndirectGoto{}));
  // The argument is copied into the callee's param (a push: n is Full).
  EXPECT_EQ(BlockText(p, "fibonacci", recurse),
            (Lines{"%n_1: i64 temp = sub %n, %one", "%n: i64 full = copy %n_1",
                   "push_goto @fibonacci, ^2"}));
  // After the first call: take the result, pop n where it dies (after
  // n - 2), push the next argument.
  EXPECT_EQ(BlockText(p, "fibonacci", ret1),
            (Lines{"%f1: i64 full = copy %ans", "%two: i64 temp = fill_like %n {literal = i64 2}",
                   "%n_2: i64 temp = sub %n, %two", "pop %n", "%n: i64 full = copy %n_2",
                   "push_goto @fibonacci, ^3"}));
  EXPECT_EQ(BlockText(p, "fibonacci", ret2),
            (Lines{"%f2: i64 temp = copy %ans", "%ans: i64 register = add %f1, %f2",
                   "pop %f1", "goto ^5"}));
  // In the base case n dies after its last read.
  EXPECT_EQ(BlockText(p, "fibonacci", base),
            (Lines{"%ans: i64 register = fill_like %n {literal = i64 1}", "pop %n",
                   "goto ^5"}));
  const FunctionId main_id = *p.module.FindFunction("main");
  EXPECT_EQ(p.module.function(main_id).blocks[0].terminator,
            Terminator(PushGoto{fib_id, BlockId(1)}));

  EXPECT_TRUE(AgreesWithReference(allocated, p, Range(0, 12)));
}

TEST(LowerCallsTest, MutualRecursion) {
  for (Program untyped : {testing::MakeEvenOddProgram(), testing::MakeEvenOddNonTailProgram()}) {
    Program allocated = testing::Allocated(untyped, {kI64});
    Program p = Lower(allocated);
    EXPECT_TRUE(AgreesWithReference(allocated, p, Range(0, 15)));
  }
  Program p = Lower(testing::Allocated(testing::MakeEvenOddNonTailProgram(), {kI64}));
  // The whole text: tests/passes/text/lower_calls_even_odd_non_tail.ir (text_test.cc).
  // is_even.n is Full: pushed by is_odd's call, popped in is_even where it
  // dies: at the start of the base case, after the last read otherwise.
  EXPECT_EQ(BlockText(p, "is_even", FindBlock(p, "is_even", "base"))[0], "pop %n");
  EXPECT_THAT(BlockText(p, "is_even", FindBlock(p, "is_even", "recurse.ret1")),
              ::testing::ElementsAre("%t: bool temp = copy %r",
                                     "%k: i64 temp = fill_like %n {literal = i64 0}",
                                     "%ok: bool temp = ge %n, %k", "pop %n",
                                     "%r: bool register = and %t, %ok", "indirect_goto"));
}

TEST(LowerCallsTest, LoopsWithoutCallsOnlyChangeTheReturn) {
  Program allocated = testing::Allocated(testing::MakeCollatzProgram(), {kI64});
  Program p = Lower(allocated);
  Program expected = allocated;
  expected.stage = Stage::kLowered;
  expected.module.functions[0].blocks.back().terminator = IndirectGoto{};
  EXPECT_EQ(p, expected);
  EXPECT_TRUE(AgreesWithReference(allocated, p, Range(1, 40)));
}

TEST(LowerCallsTest, SelfCallIsAParallelAssignment) {
  Program allocated = testing::Allocated(testing::MakeSwapProgram(), {kI64, kI64, kI64});
  Program p = Lower(allocated);
  // The whole text: tests/passes/text/lower_calls_swap.ir (text_test.cc).
  // swap(b, a, n1) inside swap(a, b, n): both arguments are saved before
  // either param is overwritten.
  EXPECT_THAT(BlockText(p, "swap", FindBlock(p, "swap", "recurse")),
              ::testing::IsSupersetOf({"%b.arg: i64 temp = copy %b",
                                       "%a.arg: i64 temp = copy %a",
                                       "%a: i64 register = copy %b.arg",
                                       "%b: i64 register = copy %a.arg"}));
  // r = swap(...) inside swap writes the callee's own result: no copy back.
  EXPECT_EQ(BlockText(p, "swap", FindBlock(p, "swap", "recurse.ret1")),
            (Lines{"%k2: i64 temp = copy %k", "%k: i64 register = add %k2, %n", "pop %n",
                   "goto ^4"}));
  std::vector<Values> inputs;
  for (int n = -1; n <= 7; ++n) inputs.push_back({5, 2, static_cast<double>(n)});
  EXPECT_TRUE(AgreesWithReference(allocated, p, inputs));
}

TEST(LowerCallsTest, OpReadingAndWritingAFullVariable) {
  Program allocated = testing::Allocated(testing::MakeAccumulateProgram(), {kI64, kI64});
  Program p = Lower(allocated);
  // The whole text: tests/passes/text/lower_calls_accumulate.ir (text_test.cc).
  // x = add(x, y) with x Full: compute into a temporary, pop the old frame,
  // push the new value.
  EXPECT_EQ(BlockText(p, "accumulate", FindBlock(p, "accumulate", "recurse.ret1")),
            (Lines{"%y: i64 temp = copy %r", "%x.new: i64 temp = add %x, %y", "pop %x",
                   "%x: i64 full = copy %x.new", "%r: i64 register = copy %x", "pop %x",
                   "indirect_goto"}));
  // accumulate(x, n1) passes x through while x stays live: saved, pushed.
  EXPECT_THAT(BlockText(p, "accumulate", FindBlock(p, "accumulate", "recurse")),
              ::testing::IsSupersetOf({"%x.arg: i64 temp = copy %x",
                                       "%x: i64 full = copy %x.arg"}));
  std::vector<Values> inputs;
  for (int x = -1; x <= 2; ++x) {
    for (int n = -1; n <= 6; ++n) inputs.push_back({static_cast<double>(x), static_cast<double>(n)});
  }
  EXPECT_TRUE(AgreesWithReference(allocated, p, inputs));
}

TEST(LowerCallsTest, ParamPassedThroughARecursiveCallIsNotCopied) {
  Program allocated = testing::Allocated(testing::MakeScaleProgram(), {kI64, kI64});
  Program p = Lower(allocated);
  // k is a Register that every call passes to itself: no copy, no push, no
  // pop; only n1 goes into n.
  EXPECT_EQ(BlockText(p, "scale", FindBlock(p, "scale", "recurse")),
            (Lines{"%one: i64 temp = fill_like %n {literal = i64 1}",
                   "%n1: i64 temp = sub %n, %one", "%n: i64 register = copy %n1",
                   "push_goto @scale, ^3"}));
  std::vector<Values> inputs;
  for (int k = -2; k <= 3; ++k) {
    for (int n = -1; n <= 6; ++n) inputs.push_back({static_cast<double>(k), static_cast<double>(n)});
  }
  EXPECT_TRUE(AgreesWithReference(allocated, p, inputs));
}

TEST(LowerCallsTest, PopOnAnEdgeGetsItsOwnBlock) {
  Program allocated = testing::Allocated(testing::MakeEdgeProgram(), {kI64});
  Program p = Lower(allocated);
  // The whole text: tests/passes/text/lower_calls_edge.ir (text_test.cc).
  // v is live from rec.ret1 into big but not into small, whose other
  // predecessor (entry) has no frame of v: the pop needs a block of its own.
  const int edge = FindBlock(p, "edge", "rec.to.small");
  const int small = FindBlock(p, "edge", "small");
  const int ret = FindBlock(p, "edge", "rec.ret1");
  const int big = FindBlock(p, "edge", "big");
  ASSERT_GE(edge, 0);
  EXPECT_EQ(BlockText(p, "edge", edge),
            (Lines{"pop %v", absl::StrCat("goto ^", small)}));
  const Function& fn = testing::FindFunction(p, "edge");
  EXPECT_EQ(fn.blocks[ret].terminator,
            Terminator(Branch{testing::FindVar(p, "edge", "d"), BlockId(big), BlockId(edge)}));
  // n dies on every edge into big (one predecessor): popped at its start.
  EXPECT_EQ(BlockText(p, "edge", big)[0], "pop %n");
  EXPECT_TRUE(AgreesWithReference(allocated, p, Range(0, 12)));
}

TEST(LowerCallsTest, DeadParamPoppedInANewEntryBlockWhenBlockZeroIsALoopHeader) {
  Program allocated = testing::Allocated(testing::MakeLoopToEntryProgram(), {kI64, kI64});
  Program p = Lower(allocated);
  // The whole text: tests/passes/text/lower_calls_loop0.ir (text_test.cc).
  EXPECT_EQ(BlockText(p, "loop", 0),
            (Lines{"pop %p", absl::StrCat("goto ^", FindBlock(p, "loop", "head"))}));
  EXPECT_EQ(testing::FindFunction(p, "loop").blocks[0].label, "entry.pops");
  std::vector<Values> inputs;
  for (int n = -2; n <= 6; ++n) inputs.push_back({7, static_cast<double>(n)});
  EXPECT_TRUE(AgreesWithReference(allocated, p, inputs));
}

TEST(LowerCallsTest, RejectsMaybeUnassignedLiveVariables) {
  // f(n): if n > 0 { x = n }; r = x -- typed, then given storage by hand so
  // that only lower_calls runs its check.
  Program p;
  testing::FunctionBuilder f(p, "f", "undef.cc", 1);
  p.entry = f.id();
  VarId n = f.Param("n");
  VarId r = f.Result("r");
  VarId x = f.Var("x");
  VarId zero = f.Var("zero");
  VarId c = f.Var("c");
  BlockId entry = f.Block("entry");
  BlockId then = f.Block("then");
  BlockId join = f.Block("join");
  f.Fill(entry, 2, n, 0, zero);
  f.Prim(entry, 2, Primitive::kGt, {n, zero}, c);
  f.Branch(entry, 2, c, then, join);
  f.Prim(then, 3, Primitive::kCopy, {n}, x);
  f.Goto(then, 3, join);
  f.Prim(join, 4, Primitive::kCopy, {x}, r);
  f.Return(join, 4);
  Program typed = testing::Typed(p, {kI64});
  for (Variable& v : typed.module.variables) v.storage = StorageClass::kRegister;
  typed.stage = Stage::kAllocated;
  absl::StatusOr<Program> result = LowerCalls(typed);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(std::string(result.status().message()),
            "function 'f', block ^2 (join): variable 'x' may be read before it is assigned "
            "(read at undef.cc:4): some path from the start of 'f' reaches this read without "
            "assigning 'x'; assign it on every path before the read (e.g. initialize it "
            "before the If or loop)");
}

TEST(LowerCallsTest, RejectsProgramsNotAllocated) {
  absl::StatusOr<Program> result =
      LowerCalls(testing::Typed(testing::MakeFibonacciProgram(), {kI64}));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("run allocate_variables first"));
}

}  // namespace
}  // namespace autobatch
