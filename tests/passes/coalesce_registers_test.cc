// Tests for coalesce_registers (passes/coalesce_registers.h).
#include "passes/coalesce_registers.h"

#include <algorithm>
#include <iterator>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "passes/coalesce_copies.h"
#include "passes/fuse_pop_push.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

const TensorType kI64 = Scalar(DType::kI64);

// The pipeline up to (not including) coalesce_registers.
Program Prepared(Program untyped, std::vector<TensorType> types) {
  Program lowered = testing::Lowered(std::move(untyped), std::move(types));
  Program fused = testing::Checked(FusePopPush(lowered), "fuse_pop_push");
  return testing::Checked(CoalesceCopies(fused), "coalesce_copies");
}
Program Coalesce(const Program& prepared) {
  return testing::Checked(CoalesceRegisters(prepared), "coalesce_registers");
}
bool IsCopy(const Op& op) {
  const auto* prim = std::get_if<PrimOp>(&op);
  return prim != nullptr && prim->prim == Primitive::kCopy;
}
int CountCopies(const Program& p) { return testing::CountOps(p, IsCopy); }

// tree(depth, x) -> (lo, hi): depth <= 0 ? (x, x + 1) : { (lo, h1) =
// tree(depth - 1, x); (l2, hi) = tree(depth - 1, h1) }; = (x, x + 2^depth).
// The shape of NUTS' build_tree: a self-recursive function whose results
// come back through its own result variables, are saved in locals, passed
// on to the second call and returned. Entry main(depth, x) -> (lo, hi).
Program MakeTreeProgram() {
  Program program;
  testing::FunctionBuilder main_fn(program, "main", "tree.cc", 1);
  testing::FunctionBuilder fn(program, "tree", "tree.cc", 5);
  program.entry = main_fn.id();
  {
    VarId depth = main_fn.Param("depth");
    VarId x = main_fn.Param("x");
    VarId lo = main_fn.Result("lo");
    VarId hi = main_fn.Result("hi");
    BlockId entry = main_fn.Block("entry");
    main_fn.Call(entry, 2, fn.id(), {depth, x}, {lo, hi});
    main_fn.Return(entry, 3);
  }
  VarId depth = fn.Param("depth");
  VarId x = fn.Param("x");
  VarId lo = fn.Result("lo");
  VarId hi = fn.Result("hi");
  VarId zero = fn.Var("zero"), c = fn.Var("c"), one = fn.Var("one"), d1 = fn.Var("d1");
  VarId lo1 = fn.Var("lo1"), h1 = fn.Var("h1"), l2 = fn.Var("l2"), h2 = fn.Var("h2");
  BlockId entry = fn.Block("entry");
  BlockId base = fn.Block("base");
  BlockId rec = fn.Block("recurse");
  BlockId done = fn.Block("done");
  fn.Fill(entry, 6, depth, 0, zero);
  fn.Prim(entry, 6, Primitive::kLe, {depth, zero}, c);
  fn.Branch(entry, 6, c, base, rec);
  fn.Prim(base, 7, Primitive::kCopy, {x}, lo);
  fn.Fill(base, 7, x, 1, one);
  fn.Prim(base, 7, Primitive::kAdd, {x, one}, hi);
  fn.Goto(base, 7, done);
  fn.Fill(rec, 8, depth, 1, one);
  fn.Prim(rec, 8, Primitive::kSub, {depth, one}, d1);
  fn.Call(rec, 9, fn.id(), {d1, x}, {lo1, h1});
  fn.Call(rec, 10, fn.id(), {d1, h1}, {l2, h2});
  fn.Prim(rec, 11, Primitive::kCopy, {lo1}, lo);
  fn.Prim(rec, 11, Primitive::kCopy, {h2}, hi);
  fn.Goto(rec, 11, done);
  fn.Return(done, 12);
  return program;
}

std::vector<testing::Values> TreeInputs() {
  std::vector<testing::Values> inputs;
  for (int depth = 0; depth <= 4; ++depth) {
    for (int x : {-3, 0, 7}) inputs.push_back({static_cast<double>(depth), static_cast<double>(x)});
  }
  return inputs;
}

TEST(CoalesceRegistersTest, TreeLosesTheResultRoundTrips) {
  const std::vector<TensorType> types = {kI64, kI64};
  Program prepared = Prepared(MakeTreeProgram(), types);
  Program p = Coalesce(prepared);
  // The whole text: tests/passes/text/coalesce_registers_tree.ir (text_test.cc).
  EXPECT_LT(CountCopies(p), CountCopies(prepared)) << PrintProgram(p);
  testing::StackRun before, after;
  ASSERT_TRUE(testing::AgreesWithReference(testing::Allocated(MakeTreeProgram(), types),
                                           prepared, TreeInputs(), &before));
  ASSERT_TRUE(testing::AgreesWithReference(testing::Allocated(MakeTreeProgram(), types), p,
                                           TreeInputs(), &after));
  // Same schedule: the pass removes ops, never blocks.
  EXPECT_EQ(after.block_executions, before.block_executions);
}

// Every copy left joins variables the pass may not merge: another
// function's, a Full or Temporary one, another type, or two that interfere.
TEST(CoalesceRegistersTest, MergesOnlyRegistersOfOneFunction) {
  const std::vector<TensorType> types = {kI64, kI64};
  Program p = Coalesce(Prepared(MakeTreeProgram(), types));
  int same_function_register_copies = 0;
  for (const Function& fn : p.module.functions) {
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) {
        if (!IsCopy(op)) continue;
        const PrimOp& copy = std::get<PrimOp>(op);
        const Variable& s = p.module.var(copy.inputs[0]);
        const Variable& d = p.module.var(copy.outputs[0]);
        EXPECT_NE(copy.inputs[0], copy.outputs[0]) << "a trivial copy was left";
        if (s.function == d.function && s.storage == StorageClass::kRegister &&
            d.storage == StorageClass::kRegister) {
          ++same_function_register_copies;
        }
      }
    }
  }
  // In tree, "h1 = copy hi" and "hi = copy h2" are merged away, and so is
  // "lo = copy x" (base): the param x and the result lo become one variable.
  // The one left, "x = copy hi" (the second call's argument), joins two
  // that interfere: hi = add x, one writes hi where x, now also the result
  // lo, is live.
  EXPECT_EQ(same_function_register_copies, 1) << PrintProgram(p);
}

// A class may hold a param and a result of one function (the copy between
// them goes, as NUTS's leaf passing its start on as its end), but never two
// params, two results, or the entry's param and result: those are the
// program's inputs and outputs.
TEST(CoalesceRegistersTest, MergesAParamWithAResultExceptInTheEntry) {
  const std::vector<TensorType> types = {kI64, kI64};
  Program p = Coalesce(Prepared(MakeTreeProgram(), types));
  for (const Function& fn : p.module.functions) {
    std::vector<VarId> params = fn.params, results = fn.results;
    std::sort(params.begin(), params.end());
    std::sort(results.begin(), results.end());
    EXPECT_EQ(std::adjacent_find(params.begin(), params.end()), params.end()) << fn.name;
    EXPECT_EQ(std::adjacent_find(results.begin(), results.end()), results.end()) << fn.name;
    std::vector<VarId> shared;
    std::set_intersection(params.begin(), params.end(), results.begin(), results.end(),
                          std::back_inserter(shared));
    if (fn.name == "tree") {
      EXPECT_EQ(shared, std::vector<VarId>{fn.params[1]}) << PrintProgram(p);  // x and lo
    } else {
      EXPECT_TRUE(shared.empty()) << fn.name << "\n" << PrintProgram(p);
    }
  }
  // main(x) -> y: y = copy x stays.
  Program identity;
  testing::FunctionBuilder main_fn(identity, "main", "identity.cc", 1);
  identity.entry = main_fn.id();
  const VarId x = main_fn.Param("x");
  const VarId y = main_fn.Result("y");
  const BlockId entry = main_fn.Block("entry");
  main_fn.Prim(entry, 2, Primitive::kCopy, {x}, y);
  main_fn.Return(entry, 3);
  Program q = Coalesce(Prepared(identity, {kI64}));
  EXPECT_EQ(CountCopies(q), 1) << PrintProgram(q);
  EXPECT_NE(q.entry_function().params[0], q.entry_function().results[0]);
}

// A self-call that passes a param that stays live pushes a copy of it
// ("%n: full = copy %n" style); that copy is not a no-op and must stay.
TEST(CoalesceRegistersTest, KeepsFullSelfCopies) {
  for (auto make : {testing::MakeFibonacciProgram, testing::MakeAccumulateProgram,
                    testing::MakeSwapProgram, testing::MakeEvenOddNonTailProgram,
                    testing::MakeEdgeProgram}) {
    Program untyped = make();
    std::vector<TensorType> types(untyped.entry_function().params.size(), kI64);
    Program prepared = Prepared(untyped, types);
    Program p = Coalesce(prepared);
    const int full_copies = testing::CountOps(p, [&](const Op& op) {
      return IsCopy(op) &&
             p.module.var(std::get<PrimOp>(op).outputs[0]).storage == StorageClass::kFull;
    });
    const int full_copies_before = testing::CountOps(prepared, [&](const Op& op) {
      return IsCopy(op) && prepared.module.var(std::get<PrimOp>(op).outputs[0]).storage ==
                               StorageClass::kFull;
    });
    EXPECT_EQ(full_copies, full_copies_before) << PrintProgram(p);
    const std::vector<testing::Values> inputs = testing::SmallLaneInputs(types.size());
    EXPECT_TRUE(testing::AgreesWithReference(testing::Allocated(untyped, types), p, inputs))
        << PrintProgram(p);
  }
}

TEST(CoalesceRegistersTest, RejectsUnloweredPrograms) {
  absl::StatusOr<Program> p =
      CoalesceRegisters(testing::Allocated(MakeTreeProgram(), {kI64, kI64}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), ::testing::HasSubstr("run lower_calls first"));
}

}  // namespace
}  // namespace autobatch
