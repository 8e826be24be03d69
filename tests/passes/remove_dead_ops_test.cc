// Tests for remove_dead_ops (passes/remove_dead_ops.h).
#include "passes/remove_dead_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/passes/same_bits.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::BlockText;
using Lines = std::vector<std::string>;

Program RemoveDead(const Program& program) {
  return testing::Checked(RemoveDeadOps(program), "remove_dead_ops");
}

TEST(RemoveDeadOpsTest, RemovesUnreadOpsButKeepsCallsAndKernels) {
  Program program;
  testing::FunctionBuilder g(program, "g", "g.cc", 1);
  VarId gx = g.Param("x");
  g.function().results = {gx};
  g.Return(g.Block("entry"), 2);
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), dead = fn.Var("dead"), k = fn.Var("k"), c = fn.Var("c");
  fn.function().results = {x};
  program.module.kernels["record"] = KernelSignature{{Scalar(DType::kI64)},
                                                     {Scalar(DType::kI64)}};
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kExp, {x}, dead);
  Attributes kernel;
  kernel.kernel = "record";
  fn.Prim(entry, 3, Primitive::kUserKernel, {x}, k, kernel);
  fn.Call(entry, 4, g.id(), {x}, {c});
  fn.Prim(entry, 5, Primitive::kCopy, {x}, x);  // x = copy x
  fn.Return(entry, 6);
  EXPECT_EQ(BlockText(RemoveDead(program), "f", 0),
            (Lines{"%k: ? full = kernel %x {kernel = \"record\"}", "%c: ? full = call @g(%x)",
                   "return"}));
}

TEST(RemoveDeadOpsTest, OneSweepLeavesWhatOnlyFedRemovedOps) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), a = fn.Var("a"), b = fn.Var("b");
  fn.function().results = {x};
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kNeg, {x}, a);
  fn.Prim(entry, 3, Primitive::kAbs, {a}, b);
  fn.Return(entry, 4);
  const Program once = RemoveDead(program);
  EXPECT_EQ(BlockText(once, "f", 0), (Lines{"%a: ? full = neg %x", "return"}));
  EXPECT_EQ(BlockText(RemoveDead(once), "f", 0), (Lines{"return"}));
}

TEST(RemoveDeadOpsTest, KeepsWritesOfResultsAndReadValues) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), a = fn.Var("a"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kNeg, {x}, a);
  fn.Prim(entry, 3, Primitive::kAbs, {a}, r);
  fn.Return(entry, 4);
  EXPECT_EQ(RemoveDead(program), program);
}

TEST(RemoveDeadOpsTest, RefusesAnAllocatedProgram) {
  absl::StatusOr<Program> removed = RemoveDeadOps(
      testing::Allocated(testing::MakeCollatzProgram(), {Scalar(DType::kI64)}));
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(removed.status().message()),
              ::testing::StartsWith("remove_dead_ops needs a program at stage untyped or typed"));
}

// The text cases (tests/passes/text/remove_dead_ops_*.ir): the same bits
// before and after, and a dead uniform op's variable loses its flag (the
// case's output verifies: U3 wants one write).
TEST(RemoveDeadOpsTest, TextCasesKeepTheBits) {
  testing::ExpectTextCasesKeepTheBits("remove_dead_ops");
}

}  // namespace
}  // namespace autobatch
