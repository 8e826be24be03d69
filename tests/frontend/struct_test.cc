// Tests of tuples and structs (flattened to several IR variables), and of
// statements that read and write the same variable.
#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/context.h"
#include "support/overloaded.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/frontend/test_util.h"

namespace autobatch {

// A leapfrog-like state: three tensors flattened to three variables.
struct TreeState {
  Value q, p, logw;
};
AUTOBATCH_STRUCT(TreeState, q, p, logw)

// The same, mutable (Var fields): assignable in branches and loops.
struct MutableState {
  Var q, p;
};
AUTOBATCH_STRUCT(MutableState, q, p)

struct Nested {
  TreeState state;
  std::array<Value, 2> extra;
  Value count;
};
AUTOBATCH_STRUCT(Nested, state, extra, count)

namespace {

using ::testing::ElementsAre;
using testing::DryRun;

std::vector<std::string> Names(const Program& p, const std::vector<VarId>& vars) {
  std::vector<std::string> out;
  for (VarId v : vars) out.push_back(p.module.var(v).name);
  return out;
}

// No PrimOp or CallOp writes a variable it reads (the frontend adds
// temporaries for `x = x + 1`).
void ExpectNoOpReadsWhatItWrites(const Program& p) {
  for (const Function& f : p.module.functions) {
    for (const Block& b : f.blocks) {
      for (const Op& op : b.ops) {
        for (VarId w : OpWrites(op)) {
          for (VarId r : OpReads(op)) {
            EXPECT_NE(w, r) << PrintOp(p.module, op);
          }
        }
      }
    }
  }
}

TEST(StructTest, StructsAreFlattenedParamsAndResults) {
  Context ctx;
  BatchFunction step = ctx.Batch("step", {.param_names = {"s", "eps"}})(
      [](TreeState s, Value eps) { return TreeState{s.q + eps * s.p, s.p, s.logw - 1.0}; });
  BatchFunction main = ctx.Batch("main")([&](Value q, Value p) {
    TreeState s{q, p, q * 0.0};
    TreeState t = step(s, 0.5);  // a call's results as a struct
    TreeState u = step(t, 0.5).As<TreeState>();
    return u;
  });
  absl::StatusOr<Program> program = ctx.Program(main);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  const Function& f = program->module.function(*program->module.FindFunction("step"));
  EXPECT_THAT(Names(*program, f.params), ElementsAre("s.q", "s.p", "s.logw", "eps"));
  EXPECT_EQ(f.results.size(), 3u);
  EXPECT_EQ(program->entry_function().results.size(), 3u);
  std::vector<Tensor> in = {*Tensor::FromVector<double>({1.0, 2.0}),
                            *Tensor::FromVector<double>({4.0, -2.0})};
  absl::StatusOr<std::vector<Tensor>> out = main.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{5.0, 0.0}));
  EXPECT_EQ((*out)[1].ToVector<double>(), (std::vector<double>{4.0, -2.0}));
  EXPECT_EQ((*out)[2].ToVector<double>(), (std::vector<double>{-2.0, -2.0}));
}

TEST(StructTest, NestedStructsTuplesAndArrays) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"n", "pair"}})(
      [](Nested n, std::tuple<Value, Value> pair) {
        auto [a, b] = pair;
        Nested out = n;
        out.count = n.count + a * b;
        out.extra = {n.extra[1], n.extra[0]};
        return std::make_tuple(out, a - b);
      });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  const Function& fn = program->entry_function();
  EXPECT_THAT(Names(*program, fn.params),
              ElementsAre("n.state.q", "n.state.p", "n.state.logw", "n.extra.0", "n.extra.1",
                          "n.count", "pair.0", "pair.1"));
  EXPECT_EQ(fn.results.size(), 7u);
  std::vector<Tensor> in;
  for (int i = 0; i < 8; ++i) in.push_back(*Tensor::FromVector<int64_t>({i, 10 * i}));
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 7u);
  EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ((*out)[3].ToVector<int64_t>(), (std::vector<int64_t>{4, 40}));   // swapped extra
  EXPECT_EQ((*out)[4].ToVector<int64_t>(), (std::vector<int64_t>{3, 30}));
  EXPECT_EQ((*out)[5].ToVector<int64_t>(), (std::vector<int64_t>{5 + 42, 50 + 4200}));
  EXPECT_EQ((*out)[6].ToVector<int64_t>(), (std::vector<int64_t>{-1, -10}));
}

TEST(StructTest, MutableStructsInLoopsAndBranches) {
  Context ctx;
  // n steps of (q, p) -> (q + p, p - q), skipping odd steps' update of p.
  BatchFunction f = ctx.Batch("f")([](Builder& b, Value q0, Value p0, Value n) {
    MutableState s{Var(q0), Var(p0)};
    Var i = b.Local("i", 0);
    b.While([&] { return i < n; }).Do([&] {
      MutableState old = s;  // a snapshot: new locals
      s.q = old.q + old.p;
      b.If(i % 2 == 0).Then([&] { s.p = old.p - old.q; });
      i += 1;
    });
    return s;
  });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  ExpectNoOpReadsWhatItWrites(*program);
  auto reference = [](int64_t q, int64_t p, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t oq = q, op = p;
      q = oq + op;
      if (i % 2 == 0) p = op - oq;
    }
    return std::pair{q, p};
  };
  std::vector<int64_t> q = {1, 2, 3, 0}, p = {1, -1, 5, 7}, n = {0, 1, 5, 8};
  std::vector<Tensor> in = {*Tensor::FromVector(q), *Tensor::FromVector(p), *Tensor::FromVector(n)};
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < q.size(); ++i) {
    auto [rq, rp] = reference(q[i], p[i], n[i]);
    EXPECT_EQ((*out)[0].ToVector<int64_t>()[i], rq) << i;
    EXPECT_EQ((*out)[1].ToVector<int64_t>()[i], rp) << i;
  }
}

TEST(StructTest, ReadingAndWritingTheSameVariableInOneStatement) {
  Context ctx;
  BatchFunction f2 = ctx.Batch("f2")([](Value a, Value b) {
    return std::tuple<Value, Value>{a * 10 + b, a - b};
  });
  BatchFunction g = ctx.Batch("g")([&](Builder& bld, Value x, Value y) {
    Var a = bld.Local("a", x);
    Var b = bld.Local("b", y);
    a = a + 1;                 // x = x + 1
    Tie(a, b) = f2(b, a);      // (a, b) = f(b, a)
    Tie(a, b) = Tie(b, a);     // swap
    Var c = bld.Local("c", a);
    c = c * c - c;             // c read three times, written once
    return std::tuple<Var, Var, Var>{std::move(a), std::move(b), std::move(c)};
  });
  absl::StatusOr<Program> program = ctx.Program(g);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  ExpectNoOpReadsWhatItWrites(*program);
  // x=3, y=5: a=4; (a, b) = (5*10+4, 5-4) = (54, 1); swap: (1, 54); c = 1*1-1 = 0.
  // x=-2, y=7: a=-1; (a, b) = (70-1, 8) = (69, 8); swap: (8, 69); c = 56.
  std::vector<Tensor> in = {*Tensor::FromVector<int64_t>({3, -2}),
                            *Tensor::FromVector<int64_t>({5, 7})};
  absl::StatusOr<std::vector<Tensor>> out = g.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{1, 8}));
  EXPECT_EQ((*out)[1].ToVector<int64_t>(), (std::vector<int64_t>{54, 69}));
  EXPECT_EQ((*out)[2].ToVector<int64_t>(), (std::vector<int64_t>{0, 56}));
}

TEST(StructTest, ValueSnapshotsOfVarsDoNotChange) {
  Context ctx;
  BatchFunction f = ctx.Batch("f")([](Builder& b, Value x) {
    Var v = b.Local("v", x);
    Value before = v;  // a snapshot
    v = v + 100;
    b.If(x > 0).Then([&] { v = v + 1; });
    return std::tuple<Value, Value>{before, v};
  });
  std::vector<Tensor> in = {*Tensor::FromVector<int64_t>({1, -1})};
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ((*out)[1].ToVector<int64_t>(), (std::vector<int64_t>{102, 99}));
}

TEST(StructTest, VarParamsAreMutable) {
  Context ctx;
  BatchFunction countdown = ctx.Batch("countdown")([](Builder& b, Var n) {
    Var steps = b.Local("steps", 0);
    b.While([&] { return n > 0; }).Do([&] {
      n -= 3;
      steps += 1;
    });
    return steps;
  });
  absl::StatusOr<std::vector<int64_t>> out =
      DryRun<int64_t, int64_t>(countdown, {{0, 1, 3, 4, 10}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<int64_t>{0, 1, 1, 2, 4}));
}

}  // namespace
}  // namespace autobatch
