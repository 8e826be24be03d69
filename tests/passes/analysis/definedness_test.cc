// Tests for the definedness check (passes/analysis/definedness.h).
#include "passes/analysis/definedness.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/testing/fib_program.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

TEST(DefinednessTest, AcceptsPrograms) {
  for (Program p : {testing::MakeFibonacciProgram(), testing::MakeCollatzProgram(),
                    testing::MakeEvenOddProgram(), testing::MakeLoopToEntryProgram(),
                    testing::MakeEdgeProgram()}) {
    EXPECT_TRUE(CheckDefinedBeforeUse(p).ok()) << CheckDefinedBeforeUse(p);
  }
}

// f(n): if n > 0 { x = n } ; r = x + n  -- x unassigned when n <= 0.
Program AssignedOnOnePath() {
  Program p;
  testing::FunctionBuilder fn(p, "f", "maybe.cc", 1);
  p.entry = fn.id();
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId x = fn.Var("x");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  BlockId entry = fn.Block("entry");
  BlockId then = fn.Block("then");
  BlockId join = fn.Block("join");
  fn.Fill(entry, 2, n, 0, zero);
  fn.Prim(entry, 2, Primitive::kGt, {n, zero}, c);
  fn.Branch(entry, 2, c, then, join);
  fn.Prim(then, 3, Primitive::kCopy, {n}, x);
  fn.Goto(then, 3, join);
  fn.Prim(join, 4, Primitive::kAdd, {x, n}, r);
  fn.Return(join, 5);
  return p;
}

TEST(DefinednessTest, RejectsAVariableAssignedOnOnePathOnly) {
  absl::Status status = CheckDefinedBeforeUse(AssignedOnOnePath());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            "function 'f', block ^2 (join): variable 'x' may be read before it is "
            "assigned (read at maybe.cc:4): some path from the start of 'f' reaches this "
            "read without assigning 'x'; assign it on every path before the read (e.g. "
            "initialize it before the If or loop)");
}

TEST(DefinednessTest, RejectsAResultNotAssignedOnEveryPath) {
  // g(n) -> r: if n > 0 { r = n }; return.
  Program p;
  testing::FunctionBuilder fn(p, "g", "res.cc", 1);
  p.entry = fn.id();
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  BlockId entry = fn.Block("entry");
  BlockId then = fn.Block("then");
  BlockId exit = fn.Block("exit");
  fn.Fill(entry, 2, n, 0, zero);
  fn.Prim(entry, 2, Primitive::kGt, {n, zero}, c);
  fn.Branch(entry, 2, c, then, exit);
  fn.Prim(then, 3, Primitive::kCopy, {n}, r);
  fn.Goto(then, 3, exit);
  fn.Return(exit, 4);
  absl::Status status = CheckDefinedBeforeUse(p);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'g', block ^2 (exit): variable 'r' may be read before it "
                        "is assigned (returned as a result at res.cc:4)"));
}

TEST(DefinednessTest, UnreachableBlocksAreNotChecked) {
  Program p = AssignedOnOnePath();
  // Make `join` unreachable: the entry now always goes to a fresh block.
  Function& f = p.module.functions[0];
  Block done;
  done.label = "done";
  done.ops.push_back(PrimOp{Primitive::kCopy, {f.params[0]}, {f.results[0]}, {}, {}, {}});
  done.terminator = Return{};
  f.blocks.push_back(done);
  f.blocks[0].terminator = Goto{BlockId(3)};
  EXPECT_TRUE(CheckDefinedBeforeUse(p).ok());
}

}  // namespace
}  // namespace autobatch
