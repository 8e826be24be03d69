// Tests for fold_branches (passes/fold_branches.h).
#include "passes/fold_branches.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::BlockText;
using Lines = std::vector<std::string>;

TEST(FoldBranchesTest, ABranchToOneBlockTwiceBecomesAGoto) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId c = fn.Param("c"), d = fn.Param("d");
  fn.function().results = {c};
  BlockId entry = fn.Block("entry");
  BlockId both = fn.Block("both");
  BlockId yes = fn.Block("yes");
  fn.Branch(entry, 2, c, both, both);
  fn.Branch(both, 3, d, yes, both);
  fn.Return(yes, 4);
  const Program folded = testing::Checked(FoldBranches(program), "fold_branches");
  EXPECT_EQ(BlockText(folded, "f", 0), (Lines{"goto ^1"}));
  EXPECT_EQ(BlockText(folded, "f", 1), (Lines{"branch %d, ^2, ^1"}));
}

}  // namespace
}  // namespace autobatch
