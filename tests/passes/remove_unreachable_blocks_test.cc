// Tests for remove_unreachable_blocks (passes/remove_unreachable_blocks.h).
#include "passes/remove_unreachable_blocks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::BlockText;
using Lines = std::vector<std::string>;

TEST(RemoveUnreachableBlocksTest, DropsBlocksNoPathReachesAndRenumbers) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  BlockId orphan = fn.Block("orphan");
  BlockId exit = fn.Block("exit");
  fn.Goto(entry, 2, exit);
  fn.Prim(orphan, 3, Primitive::kNeg, {x}, r);
  fn.Goto(orphan, 4, exit);
  fn.Prim(exit, 5, Primitive::kCopy, {x}, r);
  fn.Return(exit, 6);
  const Program kept =
      testing::Checked(RemoveUnreachableBlocks(program), "remove_unreachable_blocks");
  ASSERT_EQ(testing::FindFunction(kept, "f").blocks.size(), 2u);
  EXPECT_EQ(BlockText(kept, "f", 0), (Lines{"goto ^1"}));
  EXPECT_EQ(testing::FindFunction(kept, "f").blocks[1].label, "exit");
  // Nothing more to drop.
  EXPECT_EQ(testing::Checked(RemoveUnreachableBlocks(kept), "remove_unreachable_blocks"), kept);
}

}  // namespace
}  // namespace autobatch
