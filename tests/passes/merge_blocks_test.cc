// Tests for merge_blocks (passes/merge_blocks.h).
#include "passes/merge_blocks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::BlockText;
using Lines = std::vector<std::string>;

Program Merge(const Program& program) {
  return testing::Checked(MergeBlocks(program), "merge_blocks");
}

TEST(MergeBlocksTest, AGotoChainWithSinglePredecessorsCollapsesIntoTheEntry) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId y = fn.Param("y"), z = fn.Result("z");
  BlockId entry = fn.Block("entry");
  BlockId a = fn.Block("a");
  BlockId b = fn.Block("b");
  fn.Goto(entry, 2, a);
  fn.Prim(a, 3, Primitive::kNeg, {y}, z);
  fn.Goto(a, 4, b);
  fn.Return(b, 5);
  const Program merged = Merge(program);
  ASSERT_EQ(testing::FindFunction(merged, "f").blocks.size(), 1u);
  EXPECT_EQ(BlockText(merged, "f", 0), (Lines{"%z: ? full = neg %y", "return"}));
  EXPECT_EQ(testing::FindFunction(merged, "f").blocks[0].label, "entry");
  EXPECT_EQ(testing::FindFunction(merged, "f").blocks[0].loc.line, 5);  // the Return's
}

TEST(MergeBlocksTest, KeepsJoinsAndTheEntry) {
  // ^0: branch c, ^1, ^2;  ^1: goto ^3;  ^2: r = neg x; goto ^3;  ^3: goto ^0
  // ^3 has two predecessors, and ^0 is the entry: nothing merges.
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId c = fn.Param("c"), x = fn.Param("x"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  BlockId one = fn.Block("one");
  BlockId two = fn.Block("two");
  BlockId join = fn.Block("join");
  fn.Prim(entry, 2, Primitive::kCopy, {x}, r);
  fn.Branch(entry, 3, c, one, two);
  fn.Goto(one, 4, join);
  fn.Prim(two, 5, Primitive::kNeg, {x}, r);
  fn.Goto(two, 6, join);
  fn.Goto(join, 7, entry);
  EXPECT_EQ(Merge(program), program);
}

TEST(MergeBlocksTest, RefusesALoweredProgram) {
  absl::StatusOr<Program> merged =
      MergeBlocks(testing::Lowered(testing::MakeCollatzProgram(), {Scalar(DType::kI64)}));
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(),
            "merge_blocks needs a program at stage untyped or typed or allocated, got stage "
            "lowered: it runs before lower_calls");
}

}  // namespace
}  // namespace autobatch
