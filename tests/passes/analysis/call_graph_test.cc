// Tests for the call graph and the "may write" closure (passes/analysis/call_graph.h).
#include "passes/analysis/call_graph.h"

#include <gtest/gtest.h>

#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::FindVar;

TEST(CallGraphTest, CalleesAndReachability) {
  Program p = testing::MakeEvenOddProgram();
  const FunctionId main = *p.module.FindFunction("main");
  const FunctionId even = *p.module.FindFunction("is_even");
  const FunctionId odd = *p.module.FindFunction("is_odd");
  std::vector<std::vector<FunctionId>> callees = Callees(p.module);
  EXPECT_EQ(callees[main.value], std::vector<FunctionId>{even});
  EXPECT_EQ(callees[even.value], std::vector<FunctionId>{odd});
  EXPECT_EQ(callees[odd.value], std::vector<FunctionId>{even});
  EXPECT_EQ(ReachableFunctions(p.module, main), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(ReachableFunctions(p.module, odd), (std::vector<bool>{false, true, true}));
}

TEST(CallGraphTest, SelfRecursionMayWriteItsOwnParams) {
  Program p = testing::MakeFibonacciProgram();
  const FunctionId fib = *p.module.FindFunction("fibonacci");
  const FunctionId main = *p.module.FindFunction("main");
  std::vector<VarSet> may_write = CallMayWrite(p.module);
  // A call to fibonacci copies its argument into n and runs fibonacci's ops.
  for (const char* name : {"n", "ans", "f1", "cond"}) {
    EXPECT_TRUE(may_write[fib.value].contains(FindVar(p, "fibonacci", name))) << name;
  }
  // Nobody calls main: a call to fibonacci never writes main's variables.
  EXPECT_FALSE(may_write[fib.value].contains(FindVar(p, "main", "n")));
  EXPECT_FALSE(may_write[fib.value].contains(FindVar(p, "main", "r")));
  // main writes r (call result) and its param n (a call to main copies it).
  EXPECT_TRUE(may_write[main.value].contains(FindVar(p, "main", "r")));
  EXPECT_TRUE(may_write[main.value].contains(FindVar(p, "fibonacci", "f1")));
}

TEST(CallGraphTest, MutualRecursionClosesOverBothFunctions) {
  Program p = testing::MakeEvenOddProgram();
  const FunctionId odd = *p.module.FindFunction("is_odd");
  std::vector<VarSet> may_write = CallMayWrite(p.module);
  // is_odd never writes is_even's n itself, but its call to is_even does.
  EXPECT_TRUE(may_write[odd.value].contains(FindVar(p, "is_even", "n")));
  EXPECT_TRUE(may_write[odd.value].contains(FindVar(p, "is_even", "m")));
  EXPECT_TRUE(may_write[odd.value].contains(FindVar(p, "is_odd", "n")));
  EXPECT_FALSE(may_write[odd.value].contains(FindVar(p, "main", "r")));
}

// A gradient stub calls its primal: reachability and pruning see it.
TEST(CallGraphTest, AGradientStubCallsItsPrimal) {
  Program p = testing::MakeGradientStubCallerProgram();
  const FunctionId main = *p.module.FindFunction("main");
  const FunctionId grad = *p.module.FindFunction("grad_f");
  const FunctionId f = *p.module.FindFunction("f");
  std::vector<std::vector<FunctionId>> callees = Callees(p.module);
  EXPECT_EQ(callees[main.value], std::vector<FunctionId>{grad});
  EXPECT_EQ(callees[grad.value], std::vector<FunctionId>{f});
  EXPECT_EQ(ReachableFunctions(p.module, main), (std::vector<bool>{true, false, true, true}));
  // Pruning drops `unused` (function 1), so the stub's primal moves from 3 to 2.
  Program pruned = PruneUnreachable(p);
  ASSERT_EQ(pruned.module.functions.size(), 3u);
  const Function& stub = testing::FindFunction(pruned, "grad_f");
  ASSERT_TRUE(stub.gradient_of.has_value());
  EXPECT_EQ(stub.gradient_of->function, *pruned.module.FindFunction("f"));
  EXPECT_EQ(stub.gradient_of->function, FunctionId(2));
  EXPECT_EQ(stub.gradient_of->wrt, std::vector<int32_t>{1});
  EXPECT_TRUE(VerifyProgram(pruned).ok()) << VerifyProgram(pruned);
  // A call to the stub may write what its primal writes.
  std::vector<VarSet> may_write = CallMayWrite(p.module);
  EXPECT_TRUE(may_write[grad.value].contains(FindVar(p, "f", "ab")));
}

}  // namespace
}  // namespace autobatch
