// Tests for propagate_copies (passes/propagate_copies.h).
#include "passes/propagate_copies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/passes/same_bits.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::BlockText;
using Lines = std::vector<std::string>;

Program Propagate(const Program& program) {
  return testing::Checked(PropagateCopies(program), "propagate_copies");
}

// f(x) -> r: `copied = copy x; r = mul copied, copied`.
Program MakeSquare(const std::string& copied) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), s = fn.Var(copied), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kCopy, {x}, s);
  fn.Prim(entry, 3, Primitive::kMul, {s, s}, r);
  fn.Return(entry, 4);
  return program;
}

TEST(PropagateCopiesTest, PropagatesAGeneratedCopyToReadsInTheSameBlock) {
  for (const char* generated : {"t0", "t12", "l3"}) {
    EXPECT_EQ(BlockText(Propagate(MakeSquare(generated)), "f", 0),
              (Lines{"%r: ? full = mul %x, %x", "return"}))
        << generated;
  }
}

TEST(PropagateCopiesTest, NamedVariablesAreNotPropagatedAway) {
  // A name the user gave stays visible in the IR and in later errors.
  for (const char* named : {"s", "t", "t01", "total", "l"}) {
    const Program program = MakeSquare(named);
    EXPECT_EQ(Propagate(program), program) << named;
  }
}

TEST(PropagateCopiesTest, KeepsASnapshotWhoseSourceChangesBeforeItsRead) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), s = fn.Var("t0"), t = fn.Var("t1"), r = fn.Result("r");
  fn.function().results.push_back(x);
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kCopy, {x}, s);  // s = x (snapshot)
  fn.Prim(entry, 3, Primitive::kNeg, {x}, t);
  fn.Prim(entry, 4, Primitive::kCopy, {t}, x);  // x changes
  fn.Prim(entry, 5, Primitive::kAbs, {s}, r);   // reads the snapshot
  fn.Return(entry, 6);
  EXPECT_EQ(Propagate(program), program);
}

TEST(PropagateCopiesTest, PropagatesIntoTheBranchCondition) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId c = fn.Param("c"), t = fn.Var("t0"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  BlockId yes = fn.Block("yes");
  BlockId no = fn.Block("no");
  fn.Prim(entry, 2, Primitive::kCopy, {c}, t);
  fn.Branch(entry, 3, t, yes, no);
  fn.Prim(yes, 4, Primitive::kCopy, {c}, r);
  fn.Return(yes, 5);
  fn.Prim(no, 6, Primitive::kCopy, {c}, r);
  fn.Return(no, 7);
  EXPECT_EQ(BlockText(Propagate(program), "f", 0), (Lines{"branch %c, ^1, ^2"}));
}

TEST(PropagateCopiesTest, DoesNotPropagateACopyReadInAnotherBlock) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), t = fn.Var("t0"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  BlockId next = fn.Block("next");
  fn.Prim(entry, 2, Primitive::kCopy, {x}, t);
  fn.Goto(entry, 3, next);
  fn.Prim(next, 4, Primitive::kNeg, {t}, r);
  fn.Return(next, 5);
  EXPECT_EQ(Propagate(program), program);
}

TEST(PropagateCopiesTest, RefusesALoweredProgram) {
  Program program = testing::Lowered(testing::MakeCollatzProgram(), {Scalar(DType::kI64)});
  absl::StatusOr<Program> propagated = PropagateCopies(program);
  ASSERT_FALSE(propagated.ok());
  EXPECT_EQ(propagated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(propagated.status().message()),
              ::testing::StartsWith("propagate_copies needs a program at stage untyped or "
                                    "typed, got stage lowered"));
}

// The text cases (tests/passes/text/propagate_copies_*.ir): the same bits
// before and after; a copy of a uniform value read by a Branch stays (U4).
TEST(PropagateCopiesTest, TextCasesKeepTheBits) {
  testing::ExpectTextCasesKeepTheBits("propagate_copies");
}

}  // namespace
}  // namespace autobatch
