// Tests for fold_copies (passes/fold_copies.h).
#include "passes/fold_copies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::BlockText;
using Lines = std::vector<std::string>;

Program Fold(const Program& program) {
  return testing::Checked(FoldCopies(program), "fold_copies");
}

TEST(FoldCopiesTest, FoldsACopyIntoTheOpThatComputedItsSource) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), t = fn.Var("t"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kNeg, {x}, t);
  fn.Prim(entry, 3, Primitive::kCopy, {t}, r);
  fn.Return(entry, 4);
  EXPECT_EQ(BlockText(Fold(program), "f", 0), (Lines{"%r: ? full = neg %x", "return"}));
}

TEST(FoldCopiesTest, FoldsIntoACallsResult) {
  Program program;
  testing::FunctionBuilder g(program, "g", "g.cc", 1);
  VarId gx = g.Param("x"), gr = g.Result("r");
  BlockId g_entry = g.Block("entry");
  g.Prim(g_entry, 2, Primitive::kCopy, {gx}, gr);
  g.Return(g_entry, 3);
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), t = fn.Var("t"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  fn.Call(entry, 2, g.id(), {x}, {t});
  fn.Prim(entry, 3, Primitive::kCopy, {t}, r);
  fn.Return(entry, 4);
  EXPECT_EQ(BlockText(Fold(program), "f", 0), (Lines{"%r: ? full = call @g(%x)", "return"}));
}

TEST(FoldCopiesTest, DoesNotFoldIntoAnOpReadingTheDestination) {
  // x = add(x, one) must keep its temporary: an op may not write what it reads.
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), one = fn.Var("one"), t = fn.Var("t");
  fn.function().results = {x};
  BlockId entry = fn.Block("entry");
  fn.Fill(entry, 2, x, 1, one);
  fn.Prim(entry, 3, Primitive::kAdd, {x, one}, t);
  fn.Prim(entry, 4, Primitive::kCopy, {t}, x);
  fn.Return(entry, 5);
  EXPECT_EQ(Fold(program), program);
}

TEST(FoldCopiesTest, DoesNotFoldAcrossAReadOfTheDestination) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), y = fn.Param("y"), t = fn.Var("t"), u = fn.Var("u");
  fn.function().results = {y, u};
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kNeg, {x}, t);
  fn.Prim(entry, 3, Primitive::kAbs, {y}, u);  // reads y before y = t
  fn.Prim(entry, 4, Primitive::kCopy, {t}, y);
  fn.Return(entry, 5);
  EXPECT_EQ(Fold(program), program);
}

TEST(FoldCopiesTest, DoesNotFoldASourceReadElsewhere) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), t = fn.Var("t"), r = fn.Result("r"), s = fn.Result("s");
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kNeg, {x}, t);
  fn.Prim(entry, 3, Primitive::kCopy, {t}, r);
  fn.Prim(entry, 4, Primitive::kAbs, {t}, s);
  fn.Return(entry, 5);
  EXPECT_EQ(Fold(program), program);
}

TEST(FoldCopiesTest, RefusesAnAllocatedProgram) {
  Program program = testing::Allocated(testing::MakeCollatzProgram(), {Scalar(DType::kI64)});
  absl::StatusOr<Program> folded = FoldCopies(program);
  ASSERT_FALSE(folded.ok());
  EXPECT_EQ(folded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(folded.status().message(),
            "fold_copies needs a program at stage untyped or typed, got stage allocated: it "
            "runs before allocate_variables");
}

}  // namespace
}  // namespace autobatch
