// Tests for coalesce_copies (passes/coalesce_copies.h).
#include "passes/coalesce_copies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "passes/fuse_pop_push.h"
#include "tests/passes/golden.h"
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

Program Coalesce(const Program& lowered) {
  return testing::Checked(CoalesceCopies(lowered), "coalesce_copies");
}
Program Fused(const Program& lowered) {
  return testing::Checked(FusePopPush(lowered), "fuse_pop_push");
}
int CountCopies(const Program& p) {
  return testing::CountOps(p, [](const Op& op) {
    const auto* prim = std::get_if<PrimOp>(&op);
    return prim != nullptr && prim->prim == Primitive::kCopy;
  });
}

TEST(CoalesceCopiesTest, FibonacciWritesNDirectly) {
  Program fused = Fused(testing::Lowered(testing::MakeFibonacciProgram(), {kI64}));
  Program p = Coalesce(fused);
  EXPECT_TRUE(testing::MatchesGolden(PrintProgram(p), "coalesce_copies_fib"));
  // Forward rule: "n_2 = sub n, two; n = copy n_2 in_place(n)" became one op
  // that keeps the in-place mark.
  EXPECT_EQ(BlockText(p, "fibonacci", FindBlock(p, "fibonacci", "recurse.ret1")),
            (Lines{"%f1: i64 full = copy %ans",
                   "%two: i64 temp = fill_like %n {literal = i64 2}",
                   "%n: i64 full = sub %n, %two in_place(%n)", "push_goto @fibonacci, ^3"}));
  EXPECT_LT(CountCopies(p), CountCopies(fused));
  std::vector<testing::Values> inputs;
  for (int n = 0; n <= 12; ++n) inputs.push_back({static_cast<double>(n)});
  EXPECT_TRUE(testing::AgreesWithReference(
      testing::Allocated(testing::MakeFibonacciProgram(), {kI64}), p, inputs));
}

TEST(CoalesceCopiesTest, SamplesStillAgreeWithTheReference) {
  for (auto make : {testing::MakeEvenOddProgram, testing::MakeEvenOddNonTailProgram,
                    testing::MakeAccumulateProgram, testing::MakeSwapProgram}) {
    Program untyped = make();
    std::vector<TensorType> types(untyped.entry_function().params.size(), kI64);
    Program fused = Fused(testing::Lowered(untyped, types));
    Program p = Coalesce(fused);
    EXPECT_LE(CountCopies(p), CountCopies(fused));
    const std::vector<testing::Values> inputs = testing::SmallLaneInputs(types.size());
    EXPECT_TRUE(testing::AgreesWithReference(testing::Allocated(untyped, types), p, inputs))
        << PrintProgram(p);
  }
}

// A block built by hand exercising each rule and each reason not to apply it.
TEST(CoalesceCopiesTest, AppliesOnlyWhereNothingTouchesTheVariableInBetween) {
  Program p = testing::Lowered(testing::MakeAccumulateProgram(), {kI64, kI64});
  Function& f = p.module.functions[0];
  const VarId x = FindVar(p, "accumulate", "x");
  const VarId n = FindVar(p, "accumulate", "n");
  const VarId r = FindVar(p, "accumulate", "r");
  const VarId y = FindVar(p, "accumulate", "y");
  p.module.var(y).storage = StorageClass::kTemporary;
  auto prim = [](Primitive op, std::vector<VarId> in, VarId out) {
    PrimOp o;
    o.prim = op;
    o.inputs = std::move(in);
    o.outputs = {out};
    return o;
  };
  Block block;
  block.label = "handmade";
  block.ops.push_back(prim(Primitive::kAdd, {x, n}, y));  // y = x + n
  block.ops.push_back(prim(Primitive::kCopy, {x}, r));    // r = x
  block.ops.push_back(prim(Primitive::kCopy, {y}, x));    // x = y
  block.terminator = IndirectGoto{};
  f.blocks.push_back(block);
  Program out = Coalesce(p);
  const Block& b = out.module.functions[0].blocks.back();
  // Forward would make the add write x, but "r = x" reads x in between (it
  // needs the old value): the block stays as it was.
  ASSERT_EQ(b.ops.size(), 3u);

  // Without the read of x in between, the add writes x directly.
  f.blocks.back().ops[1] = prim(Primitive::kCopy, {n}, r);
  out = Coalesce(p);
  const Block& b2 = out.module.functions[0].blocks.back();
  ASSERT_EQ(b2.ops.size(), 2u);
  EXPECT_EQ(std::get<PrimOp>(b2.ops[0]).outputs, std::vector<VarId>{x});

  // Backward: "y = copy n; r = add y, y" reads n directly, but not when n is
  // written between the copy and the read.
  f.blocks.back().ops = {prim(Primitive::kCopy, {n}, y), prim(Primitive::kAdd, {y, y}, r)};
  out = Coalesce(p);
  const Block& b3 = out.module.functions[0].blocks.back();
  ASSERT_EQ(b3.ops.size(), 1u);
  EXPECT_EQ(std::get<PrimOp>(b3.ops[0]).inputs, (std::vector<VarId>{n, n}));
  f.blocks.back().ops = {prim(Primitive::kCopy, {n}, y), prim(Primitive::kCopy, {x}, n),
                         prim(Primitive::kAdd, {y, y}, r)};
  EXPECT_EQ(Coalesce(p).module.functions[0].blocks.back().ops.size(), 3u);
}

TEST(CoalesceCopiesTest, IsIdempotentAndRejectsUnloweredPrograms) {
  Program once = Coalesce(Fused(testing::Lowered(testing::MakeCollatzProgram(), {kI64})));
  EXPECT_EQ(Coalesce(once), once);
  absl::StatusOr<Program> result =
      CoalesceCopies(testing::Allocated(testing::MakeFibonacciProgram(), {kI64}));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("run lower_calls first"));
}

}  // namespace
}  // namespace autobatch
