// Tests for coalesce_copies (passes/coalesce_copies.h).
#include "passes/coalesce_copies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "ir/testing/call_trees.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "passes/fuse_pop_push.h"
#include "passes/pipeline.h"
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

PrimOp MakePrim(Primitive op, std::vector<VarId> in, VarId out) {
  PrimOp o;
  o.prim = op;
  o.inputs = std::move(in);
  o.outputs = {out};
  return o;
}

// The lowered accumulate program with y made a temporary and one more block
// (IndirectGoto), "handmade", for op sequences built by hand.
struct Handmade {
  Handmade() {
    p.module.var(y).storage = StorageClass::kTemporary;
    Block block;
    block.label = "handmade";
    block.terminator = IndirectGoto{};
    p.module.functions[0].blocks.push_back(block);
  }
  std::vector<Op>& ops() { return p.module.functions[0].blocks.back().ops; }
  // The handmade block's ops after coalescing.
  std::vector<Op> Coalesced(ForwardCopies forward) const {
    return testing::Checked(CoalesceCopies(p, forward), "coalesce_copies")
        .module.functions[0]
        .blocks.back()
        .ops;
  }

  Program p = testing::Lowered(testing::MakeAccumulateProgram(), {kI64, kI64});
  VarId x = FindVar(p, "accumulate", "x");
  VarId n = FindVar(p, "accumulate", "n");
  VarId r = FindVar(p, "accumulate", "r");
  VarId y = FindVar(p, "accumulate", "y");
};

TEST(CoalesceCopiesTest, FibonacciWritesNDirectly) {
  Program fused = Fused(testing::Lowered(testing::MakeFibonacciProgram(), {kI64}));
  Program p = Coalesce(fused);
  // The whole text: tests/passes/text/coalesce_copies_fib.ir (text_test.cc).
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
  Handmade h;
  const VarId x = h.x, n = h.n, r = h.r, y = h.y;
  h.ops() = {MakePrim(Primitive::kAdd, {x, n}, y),  // y = x + n
             MakePrim(Primitive::kCopy, {x}, r),    // r = x
             MakePrim(Primitive::kCopy, {y}, x)};   // x = y
  // Forward would make the add write x, but "r = x" reads x in between (it
  // needs the old value): the block stays as it was.
  ASSERT_EQ(h.Coalesced(ForwardCopies::kOnlyRead).size(), 3u);

  // Without the read of x in between, the add writes x directly.
  h.ops()[1] = MakePrim(Primitive::kCopy, {n}, r);
  const std::vector<Op> b2 = h.Coalesced(ForwardCopies::kOnlyRead);
  ASSERT_EQ(b2.size(), 2u);
  EXPECT_EQ(std::get<PrimOp>(b2[0]).outputs, std::vector<VarId>{x});

  // Backward: "y = copy n; r = add y, y" reads n directly, but not when n is
  // written between the copy and the read.
  h.ops() = {MakePrim(Primitive::kCopy, {n}, y), MakePrim(Primitive::kAdd, {y, y}, r)};
  const std::vector<Op> b3 = h.Coalesced(ForwardCopies::kOnlyRead);
  ASSERT_EQ(b3.size(), 1u);
  EXPECT_EQ(std::get<PrimOp>(b3[0]).inputs, (std::vector<VarId>{n, n}));
  h.ops() = {MakePrim(Primitive::kCopy, {n}, y), MakePrim(Primitive::kCopy, {x}, n),
             MakePrim(Primitive::kAdd, {y, y}, r)};
  EXPECT_EQ(h.Coalesced(ForwardCopies::kOnlyRead).size(), 3u);
}

// ForwardCopies::kAnyReads: a temporary read elsewhere too is folded into the
// copy's destination, which every read of it then reads; kOnlyRead leaves it.
TEST(CoalesceCopiesTest, AnyReadsFoldsTemporariesReadElsewhereToo) {
  Handmade h;
  const VarId x = h.x, n = h.n, r = h.r, y = h.y;
  const std::vector<Op> block = {
      MakePrim(Primitive::kAdd, {n, n}, y),   // y = n + n
      MakePrim(Primitive::kAdd, {y, n}, r),   // r = y + n   (a read before the copy)
      MakePrim(Primitive::kCopy, {y}, x),     // x = y
      MakePrim(Primitive::kAdd, {y, x}, r)};  // r = y + x   (a read after it)
  h.ops() = block;
  EXPECT_EQ(h.Coalesced(ForwardCopies::kOnlyRead).size(), 4u);
  const std::vector<Op> folded = h.Coalesced(ForwardCopies::kAnyReads);
  ASSERT_EQ(folded.size(), 3u);
  EXPECT_EQ(std::get<PrimOp>(folded[0]).outputs, std::vector<VarId>{x});
  EXPECT_EQ(std::get<PrimOp>(folded[1]).inputs, (std::vector<VarId>{x, n}));
  EXPECT_EQ(std::get<PrimOp>(folded[2]).inputs, (std::vector<VarId>{x, x}));

  // x written after the copy, before y's last read: that read needs y's
  // value, which x no longer holds.
  h.ops() = {MakePrim(Primitive::kAdd, {n, n}, y), MakePrim(Primitive::kCopy, {y}, x),
             MakePrim(Primitive::kAdd, {n, r}, x), MakePrim(Primitive::kAdd, {y, n}, r)};
  EXPECT_EQ(h.Coalesced(ForwardCopies::kAnyReads).size(), 4u);
  // The op of the last read may write x itself (ops read before they write).
  h.ops() = {MakePrim(Primitive::kAdd, {n, n}, y), MakePrim(Primitive::kCopy, {y}, x),
             MakePrim(Primitive::kAdd, {y, n}, x)};
  const std::vector<Op> last = h.Coalesced(ForwardCopies::kAnyReads);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(std::get<PrimOp>(last[1]).inputs, (std::vector<VarId>{x, n}));
  // A Null destination drops what it is given, so y's other reads could not
  // read it.
  const VarId dropped(static_cast<int32_t>(h.p.module.variables.size()));
  h.p.module.variables.push_back(
      {"dropped", h.p.module.var(x).function, h.p.module.var(x).type, StorageClass::kNull});
  h.ops() = {MakePrim(Primitive::kAdd, {n, n}, y), MakePrim(Primitive::kCopy, {y}, dropped),
             MakePrim(Primitive::kAdd, {y, n}, r)};
  EXPECT_EQ(h.Coalesced(ForwardCopies::kAnyReads).size(), 3u);
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

// A deadline that has passed stops the sweeps at their first reading of
// the clock (after 1,024 ops swept; kPassOpWork): a chain of 1,000 calls
// lowered without coalescing is one block of over 2,000 ops.
TEST(CoalesceCopiesTest, StopsOnceItsDeadlinePasses) {
  PipelineOptions uncoalesced;
  uncoalesced.coalesce_copies = false;
  absl::StatusOr<Program> lowered = LowerProgram(testing::CallChain(1000), {kI64}, uncoalesced);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  for (ForwardCopies forward : {ForwardCopies::kOnlyRead, ForwardCopies::kAnyReads}) {
    absl::StatusOr<Program> stopped = CoalesceCopies(*lowered, forward, testing::PassedDeadline());
    EXPECT_EQ(stopped.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_EQ(stopped.status().message(),
              absl::StrCat("pass ",
                           forward == ForwardCopies::kAnyReads ? "coalesce_copies(any_reads)"
                                                               : "coalesce_copies",
                           " was stopped by the compile's time budget"));
    EXPECT_EQ(*CoalesceCopies(*lowered, forward, Deadline::In(1e6)),
              *CoalesceCopies(*lowered, forward));
  }
}

}  // namespace
}  // namespace autobatch
