// Tests for fuse_pop_push (passes/fuse_pop_push.h).
#include "passes/fuse_pop_push.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using Lines = std::vector<std::string>;
using testing::BlockText;
using testing::FindBlock;
using testing::FindVar;

const TensorType kI64 = Scalar(DType::kI64);

Program Fuse(const Program& lowered) {
  absl::StatusOr<Program> p = FusePopPush(lowered);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  EXPECT_TRUE(VerifyProgram(*p).ok()) << VerifyProgram(*p);
  return *std::move(p);
}

int CountPops(const Program& p) {
  int n = 0;
  for (const Function& f : p.module.functions) {
    for (const Block& b : f.blocks) {
      for (const Op& op : b.ops) {
        if (const auto* pop = std::get_if<PopOp>(&op)) n += static_cast<int>(pop->vars.size());
      }
    }
  }
  return n;
}

TEST(FusePopPushTest, FibonacciOverwritesNInPlace) {
  Program lowered = testing::Lowered(testing::MakeFibonacciProgram(), {kI64});
  Program p = Fuse(lowered);
  // The whole text: tests/passes/text/fuse_pop_push_fib.ir (text_test.cc).
  // "pop n; n = copy n_2" became one in-place write.
  EXPECT_EQ(BlockText(p, "fibonacci", FindBlock(p, "fibonacci", "recurse.ret1")),
            (Lines{"%f1: i64 full = copy %ans",
                   "%two: i64 temp = fill_like %n {literal = i64 2}",
                   "%n_2: i64 temp = sub %n, %two", "%n: i64 full = copy %n_2 in_place(%n)",
                   "push_goto @fibonacci, ^3"}));
  EXPECT_EQ(CountPops(p), CountPops(lowered) - 1);
  // Pops not followed by a write of the same variable stay.
  EXPECT_EQ(BlockText(p, "fibonacci", FindBlock(p, "fibonacci", "base"))[1], "pop %n");
  std::vector<testing::Values> inputs;
  for (int n = 0; n <= 12; ++n) inputs.push_back({static_cast<double>(n)});
  EXPECT_TRUE(testing::AgreesWithReference(
      testing::Allocated(testing::MakeFibonacciProgram(), {kI64}), p, inputs));
}

// A lowered block built by hand: pop a, b; c = copy(x); b = copy(c);
// a = add(a?) ... exercising each rule.
TEST(FusePopPushTest, FusesOnlyTheFirstMentionWhenItIsAPureWrite) {
  Program p = testing::Lowered(testing::MakeAccumulateProgram(), {kI64, kI64});
  Function& f = p.module.functions[0];
  const VarId x = FindVar(p, "accumulate", "x");
  const VarId n = FindVar(p, "accumulate", "n");
  const VarId r = FindVar(p, "accumulate", "r");
  const VarId y = FindVar(p, "accumulate", "y");
  p.module.var(n).storage = StorageClass::kFull;
  p.module.var(r).storage = StorageClass::kFull;
  Block block;
  block.label = "handmade";
  block.ops.push_back(PopOp{{x, n, r}, {}});
  block.ops.push_back(PrimOp{Primitive::kCopy, {y}, {r}, {}, {}, {}});  // pure write of r
  block.ops.push_back(PrimOp{Primitive::kCopy, {x}, {y}, {}, {}, {}});   // reads x (popped)
  block.ops.push_back(PrimOp{Primitive::kCopy, {y}, {x}, {}, {}, {}});   // x: not first mention
  block.ops.push_back(PrimOp{Primitive::kCopy, {y}, {y}, {}, {}, {}});
  block.terminator = IndirectGoto{};
  f.blocks.push_back(block);
  absl::StatusOr<Program> fused = FusePopPush(p);
  ASSERT_TRUE(fused.ok()) << fused.status();
  const Block& out = fused->module.functions[0].blocks.back();
  ASSERT_EQ(out.ops.size(), 5u);
  EXPECT_EQ(std::get<PopOp>(out.ops[0]).vars, (std::vector<VarId>{x, n}));
  EXPECT_EQ(std::get<PrimOp>(out.ops[1]).in_place, std::vector<VarId>{r});
  EXPECT_TRUE(std::get<PrimOp>(out.ops[3]).in_place.empty());
}

TEST(FusePopPushTest, DropsEmptyPopsAndIsIdempotent) {
  Program lowered = testing::Lowered(testing::MakeAccumulateProgram(), {kI64, kI64});
  Program once = Fuse(lowered);
  EXPECT_EQ(BlockText(once, "accumulate", FindBlock(once, "accumulate", "recurse.ret1")),
            (Lines{"%y: i64 temp = copy %r", "%x.new: i64 temp = add %x, %y",
                   "%x: i64 full = copy %x.new in_place(%x)", "%r: i64 register = copy %x",
                   "pop %x", "indirect_goto"}));
  EXPECT_EQ(Fuse(once), once);
}

TEST(FusePopPushTest, RejectsUnloweredPrograms) {
  absl::StatusOr<Program> result =
      FusePopPush(testing::Allocated(testing::MakeFibonacciProgram(), {kI64}));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("run lower_calls first"));
}

}  // namespace
}  // namespace autobatch
