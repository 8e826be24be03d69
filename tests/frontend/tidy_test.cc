// Tests of the frontend's IR tidying (frontend/tidy.h): each rewrite on a
// hand-built function, and tidied programs computing what untidied ones do.
#include "frontend/tidy.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/context.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/frontend/test_util.h"

namespace autobatch {
namespace {

using testing::DryRun;

// A one-function module under construction.
class Fn {
 public:
  Fn() {
    Function f;
    f.name = "f";
    f.blocks.push_back(Block{"entry", {}, Return{}, {}});
    module.AddFunction(std::move(f));
  }
  VarId Var(const std::string& name) {
    return module.AddVariable(Variable{name, FunctionId(0), std::nullopt, StorageClass::kFull});
  }
  Function& f() { return module.functions[0]; }
  int AddBlock(const std::string& label, Terminator t) {
    f().blocks.push_back(Block{label, {}, std::move(t), {}});
    return static_cast<int>(f().blocks.size() - 1);
  }
  void Prim(int block, Primitive p, std::vector<VarId> in, VarId out) {
    Attributes attrs;
    if (p == Primitive::kFillLike || p == Primitive::kConstant) attrs.literal = Literal::I64(1);
    f().blocks[block].ops.push_back(PrimOp{p, std::move(in), {out}, attrs, {}, {}});
  }
  std::string Text() { return PrintFunction(module, FunctionId(0)); }
  int NumOps(int block = 0) { return static_cast<int>(f().blocks[block].ops.size()); }
  Module module;
};

TEST(TidyTest, ForwardsACopyIntoTheOpThatComputedItsSource) {
  Fn fn;
  VarId x = fn.Var("x"), t = fn.Var("t"), r = fn.Var("r");
  fn.f().params = {x};
  fn.f().results = {r};
  fn.Prim(0, Primitive::kNeg, {x}, t);
  fn.Prim(0, Primitive::kCopy, {t}, r);
  TidyModule(fn.module);
  ASSERT_EQ(fn.NumOps(), 1) << fn.Text();
  const PrimOp& op = std::get<PrimOp>(fn.f().blocks[0].ops[0]);
  EXPECT_EQ(op.prim, Primitive::kNeg);
  EXPECT_EQ(op.outputs, std::vector<VarId>{r});
}

TEST(TidyTest, DoesNotForwardIntoAnOpReadingTheDestination) {
  // x = add(x, one) must keep its temporary: an op may not write what it reads.
  Fn fn;
  VarId x = fn.Var("x"), one = fn.Var("one"), t = fn.Var("t");
  fn.f().params = {x};
  fn.f().results = {x};
  fn.Prim(0, Primitive::kFillLike, {x}, one);
  fn.Prim(0, Primitive::kAdd, {x, one}, t);
  fn.Prim(0, Primitive::kCopy, {t}, x);
  TidyModule(fn.module);
  EXPECT_EQ(fn.NumOps(), 3) << fn.Text();
}

TEST(TidyTest, DoesNotForwardAcrossAReadOfTheDestination) {
  Fn fn;
  VarId x = fn.Var("x"), t = fn.Var("t"), y = fn.Var("y"), u = fn.Var("u");
  fn.f().params = {x, y};
  fn.f().results = {y, u};
  fn.Prim(0, Primitive::kNeg, {x}, t);
  fn.Prim(0, Primitive::kAbs, {y}, u);  // reads y before y = t
  fn.Prim(0, Primitive::kCopy, {t}, y);
  TidyModule(fn.module);
  EXPECT_EQ(fn.NumOps(), 3) << fn.Text();
}

TEST(TidyTest, PropagatesACopyToReadsInTheSameBlock) {
  Fn fn;
  VarId x = fn.Var("x"), s = fn.Var("s"), r = fn.Var("r");
  fn.f().params = {x};
  fn.f().results = {r};
  fn.Prim(0, Primitive::kCopy, {x}, s);
  fn.Prim(0, Primitive::kMul, {s, s}, r);
  TidyModule(fn.module);
  ASSERT_EQ(fn.NumOps(), 1) << fn.Text();
  EXPECT_EQ(std::get<PrimOp>(fn.f().blocks[0].ops[0]).inputs, (std::vector<VarId>{x, x}));
}

TEST(TidyTest, KeepsASnapshotWhoseSourceChangesBeforeItsRead) {
  Fn fn;
  VarId x = fn.Var("x"), s = fn.Var("s"), r = fn.Var("r"), t = fn.Var("t");
  fn.f().params = {x};
  fn.f().results = {r, x};
  fn.Prim(0, Primitive::kCopy, {x}, s);    // s = x (snapshot)
  fn.Prim(0, Primitive::kNeg, {x}, t);
  fn.Prim(0, Primitive::kCopy, {t}, x);    // x changes
  fn.Prim(0, Primitive::kAbs, {s}, r);     // reads the snapshot
  TidyModule(fn.module);
  std::string text = fn.Text();
  EXPECT_THAT(text, ::testing::HasSubstr("%s: ? = copy %x")) << text;
}

TEST(TidyTest, PreservedVariablesAreNotPropagatedAway) {
  Fn fn;
  VarId x = fn.Var("x"), named = fn.Var("named"), r = fn.Var("r");
  fn.f().params = {x};
  fn.f().results = {r};
  fn.Prim(0, Primitive::kCopy, {x}, named);
  fn.Prim(0, Primitive::kNeg, {named}, r);
  std::vector<bool> preserve(fn.module.variables.size(), false);
  preserve[named.value] = true;
  TidyModule(fn.module, preserve);
  EXPECT_EQ(fn.NumOps(), 2) << fn.Text();
}

TEST(TidyTest, RemovesDeadOpsButKeepsCallsAndKernels) {
  Fn fn;
  VarId x = fn.Var("x"), dead = fn.Var("dead"), k = fn.Var("k");
  fn.f().params = {x};
  fn.f().results = {x};
  fn.Prim(0, Primitive::kExp, {x}, dead);
  fn.Prim(0, Primitive::kUserKernel, {x}, k);
  TidyModule(fn.module);
  ASSERT_EQ(fn.NumOps(), 1) << fn.Text();
  EXPECT_EQ(std::get<PrimOp>(fn.f().blocks[0].ops[0]).prim, Primitive::kUserKernel);
}

TEST(TidyTest, ThreadsJumpsAndMergesBlocks) {
  Fn fn;
  VarId c = fn.Var("c"), x = fn.Var("x"), r = fn.Var("r");
  fn.f().params = {c, x};
  fn.f().results = {r};
  // ^0: branch c, ^1, ^2;  ^1: goto ^3 (empty);  ^2: r = neg x; goto ^3;  ^3: return
  fn.f().blocks[0].terminator = Branch{c, BlockId(1), BlockId(2)};
  fn.AddBlock("empty", Goto{BlockId(3)});
  int two = fn.AddBlock("work", Goto{BlockId(3)});
  fn.AddBlock("exit", Return{});
  fn.Prim(two, Primitive::kNeg, {x}, r);
  fn.Prim(0, Primitive::kCopy, {x}, r);
  TidyModule(fn.module);
  // The empty block is threaded away; nothing else can merge (^3 has 2 preds).
  ASSERT_EQ(fn.f().blocks.size(), 3u) << fn.Text();
  const Branch& b = std::get<Branch>(fn.f().blocks[0].terminator);
  EXPECT_EQ(fn.f().blocks[b.then_block.value].label, "exit");
  EXPECT_EQ(fn.f().blocks[b.else_block.value].label, "work");

  // A goto chain with single predecessors collapses into the entry block.
  Fn chain;
  VarId y = chain.Var("y"), z = chain.Var("z");
  chain.f().params = {y};
  chain.f().results = {z};
  chain.f().blocks[0].terminator = Goto{BlockId(1)};
  int one = chain.AddBlock("a", Goto{BlockId(2)});
  chain.AddBlock("b", Return{});
  chain.Prim(one, Primitive::kNeg, {y}, z);
  TidyModule(chain.module);
  ASSERT_EQ(chain.f().blocks.size(), 1u) << chain.Text();
  EXPECT_TRUE(std::holds_alternative<Return>(chain.f().blocks[0].terminator));
  EXPECT_EQ(chain.NumOps(), 1);
}

// The same functions with and without tidying compute the same values.
void DefineSamples(Context& ctx, BatchFunction* fib, BatchFunction* loop) {
  *fib = ctx.Declare("fib");
  BatchFunction f = *fib;
  ctx.Batch(f)([f](Builder& b, Value n) {
    Var ans = b.Local("ans");
    b.If(n > 1).Then([&] { ans = f(n - 1) + f(n - 2); }).Else([&] { ans = 1; });
    return ans;
  });
  *loop = ctx.Batch("loop")([](Builder& b, Value n) {
    Var a = b.Local("a", 0), c = b.Local("c", 1), i = b.Local("i", 0);
    b.While([&] { return i < n; }).Do([&] {
      Value old = a;
      a = c;
      c = old + c;
      b.If(a > 100).Then([&] { b.Break(); });
      i += 1;
    });
    Tie(a, c) = Tie(c, a);
    return a - c;
  });
}

TEST(TidyTest, TidiedProgramsComputeTheSameAsUntidied) {
  Context tidy_ctx, raw_ctx({.tidy = false});
  BatchFunction fib1, loop1, fib2, loop2;
  DefineSamples(tidy_ctx, &fib1, &loop1);
  DefineSamples(raw_ctx, &fib2, &loop2);
  for (auto [tidied, raw] : {std::pair{fib1, fib2}, std::pair{loop1, loop2}}) {
    absl::StatusOr<Program> a = tidy_ctx.Program(tidied);
    absl::StatusOr<Program> b = raw_ctx.Program(raw);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(VerifyProgram(*a).ok()) << VerifyProgram(*a);
    EXPECT_TRUE(VerifyProgram(*b).ok()) << VerifyProgram(*b);
    int ops_a = 0, ops_b = 0;
    for (const Block& blk : a->entry_function().blocks) ops_a += static_cast<int>(blk.ops.size());
    for (const Block& blk : b->entry_function().blocks) ops_b += static_cast<int>(blk.ops.size());
    EXPECT_LT(ops_a, ops_b) << PrintProgram(*a) << PrintProgram(*b);
    EXPECT_LE(a->entry_function().blocks.size(), b->entry_function().blocks.size());
    std::vector<int64_t> n;
    for (int64_t i = -1; i <= 15; ++i) n.push_back(i);
    absl::StatusOr<std::vector<int64_t>> ra = DryRun<int64_t, int64_t>(tidied, {n});
    absl::StatusOr<std::vector<int64_t>> rb = DryRun<int64_t, int64_t>(raw, {n});
    ASSERT_TRUE(ra.ok()) << ra.status();
    ASSERT_TRUE(rb.ok()) << rb.status();
    EXPECT_EQ(*ra, *rb);
  }
  // Spot checks of the loop against C++.
  auto reference = [](int64_t n) {
    int64_t a = 0, c = 1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t old = a;
      a = c;
      c = old + c;
      if (a > 100) break;
    }
    return c - a;
  };
  absl::StatusOr<std::vector<int64_t>> r = DryRun<int64_t, int64_t>(loop1, {{0, 3, 12, 30}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<int64_t>{reference(0), reference(3), reference(12), reference(30)}));
}

}  // namespace
}  // namespace autobatch
