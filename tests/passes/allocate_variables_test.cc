// Tests for allocate_variables (passes/allocate_variables.h).
#include "passes/allocate_variables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::StorageOf;

const TensorType kI64 = Scalar(DType::kI64);
constexpr StorageClass kNull = StorageClass::kNull;
constexpr StorageClass kTemp = StorageClass::kTemporary;
constexpr StorageClass kRegister = StorageClass::kRegister;
constexpr StorageClass kFull = StorageClass::kFull;

Program Allocate(Program untyped, std::vector<TensorType> inputs) {
  absl::StatusOr<Program> p = AllocateVariables(testing::Typed(std::move(untyped), inputs));
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  EXPECT_EQ(p->stage, Stage::kAllocated);
  EXPECT_TRUE(VerifyProgram(*p).ok()) << VerifyProgram(*p);
  return *std::move(p);
}

std::vector<std::string> FullVariables(const Program& p) {
  std::vector<std::string> out;
  for (const Variable& v : p.module.variables) {
    if (v.storage == kFull) {
      out.push_back(p.module.function(v.function).name + "." + v.name);
    }
  }
  return out;
}

TEST(AllocateVariablesTest, Fibonacci) {
  Program p = Allocate(testing::MakeFibonacciProgram(), {kI64});
  // The whole text: tests/passes/text/allocate_variables_fib.ir (text_test.cc).
  // n is needed after the first recursive call (for n - 2), which may write
  // n; f1 is needed after the second call, which may write f1.
  EXPECT_EQ(StorageOf(p, "fibonacci", "n"), kFull);
  EXPECT_EQ(StorageOf(p, "fibonacci", "f1"), kFull);
  // Used within one block, not across a call: temporaries.
  EXPECT_EQ(StorageOf(p, "fibonacci", "cond"), kTemp);
  EXPECT_EQ(StorageOf(p, "fibonacci", "n_1"), kTemp);
  EXPECT_EQ(StorageOf(p, "fibonacci", "n_2"), kTemp);
  EXPECT_EQ(StorageOf(p, "fibonacci", "f2"), kTemp);
  // one crosses from entry into recurse, but no call while it is live.
  EXPECT_EQ(StorageOf(p, "fibonacci", "one"), kRegister);
  // Results are read by the caller: never temp or null.
  EXPECT_EQ(StorageOf(p, "fibonacci", "ans"), kRegister);
  // The entry's params and results are at least registers.
  EXPECT_EQ(StorageOf(p, "main", "n"), kRegister);
  EXPECT_EQ(StorageOf(p, "main", "r"), kRegister);
  EXPECT_EQ(FullVariables(p), (std::vector<std::string>{"fibonacci.n", "fibonacci.f1"}));
}

TEST(AllocateVariablesTest, CollatzHasNoCallsSoNothingIsFull) {
  Program p = Allocate(testing::MakeCollatzProgram(), {kI64});
  // The whole text: tests/passes/text/allocate_variables_collatz.ir (text_test.cc).
  EXPECT_TRUE(FullVariables(p).empty());
  // Loop-carried: registers. Used inside one block: temporaries.
  EXPECT_EQ(StorageOf(p, "collatz", "x"), kRegister);
  EXPECT_EQ(StorageOf(p, "collatz", "steps"), kRegister);
  EXPECT_EQ(StorageOf(p, "collatz", "two"), kRegister);  // body -> even
  EXPECT_EQ(StorageOf(p, "collatz", "rem"), kTemp);
  EXPECT_EQ(StorageOf(p, "collatz", "half"), kTemp);
}

// is_even(n) = n == 0 ? true : is_odd(n - 1) and back: every call is a tail
// call, so when a call is made nothing of the caller is needed afterwards
// (only the result, which the call itself writes). Mutual recursion alone
// does not make anything Full.
TEST(AllocateVariablesTest, TailMutualRecursionNeedsNoStacks) {
  Program p = Allocate(testing::MakeEvenOddProgram(), {kI64});
  // The whole text: tests/passes/text/allocate_variables_even_odd.ir (text_test.cc).
  EXPECT_TRUE(FullVariables(p).empty());
  EXPECT_EQ(StorageOf(p, "is_even", "n"), kRegister);
  EXPECT_EQ(StorageOf(p, "is_odd", "n"), kRegister);
  EXPECT_EQ(StorageOf(p, "is_even", "m"), kTemp);
}

// Now is_even reads n after calling is_odd. is_odd never writes is_even's n
// itself, but it calls is_even, which does (the call copies its argument
// into n): is_even.n must be Full. Nothing of is_odd is live across its
// call, so is_odd still needs no stack.
TEST(AllocateVariablesTest, MutualRecursionThroughTheMayWriteClosure) {
  Program p = Allocate(testing::MakeEvenOddNonTailProgram(), {kI64});
  EXPECT_EQ(FullVariables(p), std::vector<std::string>{"is_even.n"});
  EXPECT_EQ(StorageOf(p, "is_odd", "n"), kRegister);
  EXPECT_EQ(StorageOf(p, "is_even", "t"), kTemp);
}

// scale(k, n - 1) passes k through unchanged, so no call writes k although
// it is live across one: a Register, written once by the outermost call.
// n is not read after the call, so nothing is Full.
TEST(AllocateVariablesTest, ParamPassedThroughEveryRecursiveCallNeedsNoStack) {
  Program p = Allocate(testing::MakeScaleProgram(), {kI64, kI64});
  EXPECT_EQ(StorageOf(p, "scale", "k"), kRegister);
  EXPECT_TRUE(FullVariables(p).empty());
}

// The same recursion through a second function: scale_b's call copies its
// own k into scale_a.k, a write while scale_a's k is live, so it is Full.
TEST(AllocateVariablesTest, ParamPassedThroughAnotherFunctionIsFull) {
  Program p = Allocate(testing::MakeScaleMutualProgram(), {kI64, kI64});
  EXPECT_EQ(FullVariables(p), std::vector<std::string>{"scale_a.k"});
}

// accumulate(x, n - 1) passes x through, but the body then writes x: the
// call may write x (through the recursive activation's write), so Full.
TEST(AllocateVariablesTest, PassedThroughParamThatIsAlsoWrittenIsFull) {
  Program p = Allocate(testing::MakeAccumulateProgram(), {kI64, kI64});
  EXPECT_EQ(StorageOf(p, "accumulate", "x"), kFull);
}

TEST(AllocateVariablesTest, NullForValuesNeverRead) {
  // main(a, b) -> r = g(a, b); g(x, y) -> r = copy(x); w = copy(x) unused.
  Program p;
  testing::FunctionBuilder main_fn(p, "main", "null.cc", 1);
  testing::FunctionBuilder g(p, "g", "null.cc", 5);
  p.entry = main_fn.id();
  VarId a = main_fn.Param("a");
  VarId b = main_fn.Param("b");
  VarId r = main_fn.Result("r");
  BlockId mb = main_fn.Block("entry");
  main_fn.Call(mb, 2, g.id(), {a, b}, {r});
  main_fn.Return(mb, 3);
  VarId x = g.Param("x");
  g.Param("y");
  VarId gr = g.Result("r");
  VarId w = g.Var("w");
  BlockId gb = g.Block("entry");
  g.Prim(gb, 6, Primitive::kCopy, {x}, gr);
  g.Prim(gb, 7, Primitive::kCopy, {x}, w);
  g.Return(gb, 8);
  Program allocated = Allocate(p, {kI64, kI64});
  EXPECT_EQ(StorageOf(allocated, "g", "y"), kNull);  // never read
  EXPECT_EQ(StorageOf(allocated, "g", "w"), kNull);  // written, never read
  EXPECT_EQ(StorageOf(allocated, "g", "x"), kRegister);
  EXPECT_EQ(StorageOf(allocated, "main", "b"), kRegister);  // entry param
}

TEST(AllocateVariablesTest, RejectsMaybeUnassignedReads) {
  // f(n): if n > 0 { x = n }; r = x.
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
  absl::StatusOr<Program> result = AllocateVariables(testing::Typed(p, {kI64}));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("function 'f', block ^2 (join): variable 'x' may be read "
                                   "before it is assigned (read at undef.cc:4)"));
}

TEST(AllocateVariablesTest, RejectsUntypedPrograms) {
  absl::StatusOr<Program> result = AllocateVariables(testing::MakeFibonacciProgram());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("run infer_types first"));
}

}  // namespace
}  // namespace autobatch
