// Tests for live-variable analysis (passes/analysis/liveness.h).
#include "passes/analysis/liveness.h"

#include <gtest/gtest.h>

#include "ir/testing/fib_program.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::FindBlock;
using testing::FindVar;

const TensorType kI64 = Scalar(DType::kI64);

// Names of the variables in `set`, for readable expectations.
std::vector<std::string> Names(const Program& p, const VarSet& set) {
  std::vector<std::string> out;
  for (VarId v : set.Vars()) out.push_back(p.module.var(v).name);
  std::sort(out.begin(), out.end());
  return out;
}

using Strings = std::vector<std::string>;

TEST(VarSetTest, SetAlgebra) {
  VarSet a(100), b(100);
  a.insert(VarId(3));
  a.insert(VarId(70));
  b.insert(VarId(70));
  b.insert(VarId(99));
  EXPECT_TRUE(a.contains(VarId(70)));
  EXPECT_FALSE(a.contains(VarId(99)));
  EXPECT_FALSE(a.contains(VarId(5000)));  // beyond the size: absent
  VarSet u = a;
  EXPECT_TRUE(u.UnionWith(b));
  EXPECT_FALSE(u.UnionWith(b));  // nothing new
  EXPECT_EQ(u.Vars(), (std::vector<VarId>{VarId(3), VarId(70), VarId(99)}));
  VarSet i = a;
  i.IntersectWith(b);
  EXPECT_EQ(i.Vars(), std::vector<VarId>{VarId(70)});
  VarSet d = a;
  d.Subtract(b);
  EXPECT_EQ(d.Vars(), std::vector<VarId>{VarId(3)});
  EXPECT_EQ(u.size(), 3u);
  d.erase(VarId(3));
  EXPECT_TRUE(d.empty());
  VarSet grown(1);
  grown.insert(VarId(200));  // inserting past the size grows the set
  EXPECT_TRUE(grown.contains(VarId(200)));
}

TEST(LivenessTest, FibonacciLiveAcrossCalls) {
  Program p = testing::Typed(testing::MakeFibonacciProgram(), {kI64});
  const FunctionId fib = *p.module.FindFunction("fibonacci");
  FunctionLiveness live = ComputeLiveness(p, fib);
  const int entry = FindBlock(p, "fibonacci", "entry");
  const int recurse = FindBlock(p, "fibonacci", "recurse");
  const int base = FindBlock(p, "fibonacci", "base");
  const int exit = FindBlock(p, "fibonacci", "exit");
  EXPECT_EQ(Names(p, live.blocks[entry].live_in), Strings{"n"});
  EXPECT_EQ(Names(p, live.blocks[recurse].live_in), (Strings{"n", "one"}));
  EXPECT_EQ(Names(p, live.blocks[base].live_in), Strings{"n"});
  // Non-SSA: ans is written in both branches and read by the Return.
  EXPECT_EQ(Names(p, live.blocks[exit].live_in), Strings{"ans"});
  EXPECT_EQ(Names(p, live.blocks[recurse].live_out), Strings{"ans"});
  // The branch reads cond: live before the terminator, not after it.
  EXPECT_EQ(Names(p, live.blocks[entry].live_before_terminator),
            (Strings{"cond", "n", "one"}));
  EXPECT_EQ(Names(p, live.blocks[entry].live_out), (Strings{"n", "one"}));

  std::vector<CallLiveness> calls = LiveAcrossCalls(p, fib, live);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].block.value, recurse);
  EXPECT_EQ(Names(p, calls[0].live_across), Strings{"n"});   // needed for n - 2
  EXPECT_EQ(Names(p, calls[1].live_across), Strings{"f1"});  // needed for the sum
}

TEST(LivenessTest, LoopCarriesVariablesAroundTheBackEdge) {
  Program p = testing::Typed(testing::MakeCollatzProgram(), {kI64});
  FunctionLiveness live = ComputeLiveness(p, p.entry);
  const int header = FindBlock(p, "collatz", "header");
  const int latch = FindBlock(p, "collatz", "latch");
  const int even = FindBlock(p, "collatz", "even");
  EXPECT_EQ(Names(p, live.blocks[header].live_in), (Strings{"one", "steps", "x"}));
  EXPECT_EQ(Names(p, live.blocks[latch].live_out), (Strings{"one", "steps", "x"}));
  // x is overwritten in `even` after its last read: dead between.
  const BlockLiveness& e = live.blocks[even];
  ASSERT_EQ(e.live_after_op.size(), 2u);
  EXPECT_EQ(Names(p, e.live_after_op[0]), (Strings{"half", "one", "steps"}));
  EXPECT_EQ(Names(p, e.live_after_op[1]), (Strings{"one", "steps", "x"}));
  EXPECT_EQ(Names(p, live.blocks[0].live_in), Strings{"n"});
}

TEST(LivenessTest, TerminatorReads) {
  Program p = testing::Typed(testing::MakeFibonacciProgram(), {kI64});
  const FunctionId fib = *p.module.FindFunction("fibonacci");
  const VarId ans = FindVar(p, "fibonacci", "ans");
  EXPECT_EQ(TerminatorReads(p, fib, Return{}), std::vector<VarId>{ans});
  EXPECT_EQ(TerminatorReads(p, fib, IndirectGoto{}), std::vector<VarId>{ans});
  EXPECT_TRUE(TerminatorReads(p, fib, Goto{BlockId(1)}).empty());
  // Halt reads the ENTRY's results wherever it is (they are the outputs).
  EXPECT_EQ(TerminatorReads(p, p.entry, Halt{}), p.entry_function().results);
  EXPECT_EQ(TerminatorReads(p, fib, Halt{}), p.entry_function().results);
}

}  // namespace
}  // namespace autobatch
