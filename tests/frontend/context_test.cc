// Tests of Context, BatchFunction and Builder: registration, control flow,
// the IR they build, and dry runs.
#include "frontend/context.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/json.h"
#include "support/overloaded.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/frontend/test_util.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using testing::DryRun;
using testing::ErrorOf;
using testing::MatchesGolden;

int64_t Fib(int64_t n) { return n > 1 ? Fib(n - 1) + Fib(n - 2) : 1; }

// Every op of `f` and what it is.
std::vector<const Op*> OpsOf(const Program& p, const std::string& function) {
  std::vector<const Op*> ops;
  const Function& f = p.module.function(*p.module.FindFunction(function));
  for (const Block& b : f.blocks) {
    for (const Op& op : b.ops) ops.push_back(&op);
  }
  return ops;
}

int CountPrims(const Program& p, const std::string& function, Primitive prim) {
  int n = 0;
  for (const Op* op : OpsOf(p, function)) {
    if (const PrimOp* o = std::get_if<PrimOp>(op); o != nullptr && o->prim == prim) ++n;
  }
  return n;
}

int CountCalls(const Program& p, const std::string& function, const std::string& callee) {
  int n = 0;
  for (const Op* op : OpsOf(p, function)) {
    if (const CallOp* c = std::get_if<CallOp>(op);
        c != nullptr && p.module.function(c->callee).name == callee) {
      ++n;
    }
  }
  return n;
}

BatchFunction DefineFib(Context& ctx) {
  BatchFunction fib = ctx.Declare("fibonacci", {.param_names = {"n"}});
  ctx.Batch(fib)([fib](Builder& b, Value n) {
    Var ans = b.Local("ans");
    b.If(n > 1).Then([&] { ans = fib(n - 1) + fib(n - 2); }).Else([&] { ans = 1; });
    return ans;
  });
  return fib;
}

TEST(ContextTest, FibonacciProgramIsVerifiedAndReadable) {
  Context ctx;
  BatchFunction fib = DefineFib(ctx);
  absl::StatusOr<Program> program = ctx.Program(fib);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  EXPECT_TRUE(MatchesGolden(PrintProgram(*program), "fibonacci"));
  EXPECT_TRUE(MatchesGolden(PrintProgram(*program, {.locations = true}), "fibonacci_locations"));

  // The structure the golden shows, asserted independently.
  EXPECT_EQ(program->stage, Stage::kUntyped);
  ASSERT_EQ(program->module.functions.size(), 1u);
  const Function& f = program->entry_function();
  EXPECT_EQ(f.name, "fibonacci");
  ASSERT_EQ(f.params.size(), 1u);
  EXPECT_EQ(program->module.var(f.params[0]).name, "n");
  EXPECT_EQ(f.results.size(), 1u);
  EXPECT_EQ(CountCalls(*program, "fibonacci", "fibonacci"), 2);
  EXPECT_EQ(CountPrims(*program, "fibonacci", Primitive::kAdd), 1);
  EXPECT_EQ(CountPrims(*program, "fibonacci", Primitive::kGt), 1);
  // `n - 1`, `n - 2` and `n > 1` take n's dtype; `ans = 1` is an i64 constant.
  EXPECT_EQ(CountPrims(*program, "fibonacci", Primitive::kFillLike), 3);
  EXPECT_EQ(CountPrims(*program, "fibonacci", Primitive::kConstant), 1);
  for (const Op* op : OpsOf(*program, "fibonacci")) {
    if (const PrimOp* o = std::get_if<PrimOp>(op); o && o->prim == Primitive::kConstant) {
      EXPECT_EQ(*o->attrs.literal, Literal::I64(1));
    }
  }
  // One variable `ans`, written on both paths (not SSA).
  int ans_vars = 0;
  for (const Variable& v : program->module.variables) ans_vars += v.name == "ans";
  EXPECT_EQ(ans_vars, 1);
  // Every op and terminator points at this file.
  for (const Block& b : f.blocks) {
    for (const Op& op : b.ops) {
      EXPECT_EQ(LocOf(op).file, "context_test.cc");
      EXPECT_GT(LocOf(op).line, 0);
    }
    EXPECT_EQ(b.loc.file, "context_test.cc");
  }
  EXPECT_EQ(f.loc.file, "context_test.cc");
}

TEST(ContextTest, FibonacciDryRunMatchesCpp) {
  Context ctx;
  BatchFunction fib = DefineFib(ctx);
  std::vector<int64_t> n;
  for (int64_t i = 0; i <= 18; ++i) n.push_back(i);
  std::reverse(n.begin() + 5, n.end());
  absl::StatusOr<std::vector<int64_t>> out = DryRun<int64_t, int64_t>(fib, {n});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), n.size());
  for (size_t i = 0; i < n.size(); ++i) EXPECT_EQ((*out)[i], Fib(n[i])) << "n = " << n[i];
}

TEST(ContextTest, BatchSizesZeroAndOne) {
  Context ctx;
  BatchFunction fib = DefineFib(ctx);
  absl::StatusOr<std::vector<int64_t>> one = DryRun<int64_t, int64_t>(fib, {{10}});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, std::vector<int64_t>{89});
  absl::StatusOr<std::vector<Tensor>> zero =
      fib.Run({Tensor(Scalar(DType::kI64), 0)}, {.dry_run = true});
  ASSERT_TRUE(zero.ok()) << zero.status();
  ASSERT_EQ(zero->size(), 1u);
  EXPECT_EQ((*zero)[0].batch(), 0);
  EXPECT_EQ((*zero)[0].type(), Scalar(DType::kI64));
  // The single-tensor convenience call.
  absl::StatusOr<Tensor> t = fib(*Tensor::FromVector<int64_t>({3, 4}), {.dry_run = true});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToVector<int64_t>(), (std::vector<int64_t>{3, 5}));
}

TEST(ContextTest, MutualRecursionCallsHandlesBeforeTheirBodies) {
  Context ctx;
  BatchFunction is_even = ctx.Declare("is_even");
  BatchFunction is_odd = ctx.Declare("is_odd");
  // is_even's body calls is_odd, whose body does not exist yet.
  ctx.Batch(is_even)([&](Builder& b, Value n) {
    Var r = b.Local("r");
    b.If(n == 0).Then([&] { r = true; }).Else([&] { r = is_odd(n - 1); });
    return r;
  });
  ctx.Batch(is_odd)([&](Builder& b, Value n) {
    Var r = b.Local("r");
    b.If(n == 0).Then([&] { r = false; }).Else([&] { r = is_even(n - 1); });
    return r;
  });
  absl::StatusOr<Program> program = ctx.Program(is_odd);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  EXPECT_EQ(program->entry_function().name, "is_odd");
  EXPECT_EQ(program->module.functions.size(), 2u);
  EXPECT_EQ(CountCalls(*program, "is_even", "is_odd"), 1);
  EXPECT_EQ(CountCalls(*program, "is_odd", "is_even"), 1);
  std::vector<int64_t> n = {0, 1, 2, 3, 10, 25, 64, 99};
  absl::StatusOr<std::vector<bool>> even = DryRun<bool, int64_t>(is_even, {n});
  absl::StatusOr<std::vector<bool>> odd = DryRun<bool, int64_t>(is_odd, {n});
  ASSERT_TRUE(even.ok()) << even.status();
  ASSERT_TRUE(odd.ok()) << odd.status();
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ((*even)[i], n[i] % 2 == 0) << n[i];
    EXPECT_EQ((*odd)[i], n[i] % 2 == 1) << n[i];
  }
}

TEST(ContextTest, WhileIsARealLoop) {
  Context ctx;
  // sum of 1..n by a loop.
  BatchFunction sum = ctx.Batch("sum_to", {.param_names = {"n"}})([](Builder& b, Value n) {
    Var i = b.Local("i", 1);
    Var total = b.Local("total", 0);
    b.While([&] { return i <= n; }).Do([&] {
      total = total + i;
      i = i + 1;
    });
    return total;
  });
  absl::StatusOr<Program> program = ctx.Program(sum);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  EXPECT_TRUE(MatchesGolden(PrintProgram(*program), "sum_to"));
  // No recursion: no call at all, and a backward edge in the CFG.
  EXPECT_EQ(CountCalls(*program, "sum_to", "sum_to"), 0);
  const Function& f = program->entry_function();
  bool back_edge = false;
  for (size_t b = 0; b < f.blocks.size(); ++b) {
    for (BlockId s : Successors(f.blocks[b].terminator)) {
      back_edge |= s.value <= static_cast<int32_t>(b);
    }
  }
  EXPECT_TRUE(back_edge);
  std::vector<int64_t> n = {0, 1, 2, 10, 100, 1000, -5};
  absl::StatusOr<std::vector<int64_t>> out = DryRun<int64_t, int64_t>(sum, {n});
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ((*out)[i], n[i] > 0 ? n[i] * (n[i] + 1) / 2 : 0);
  }
  // Deep loops do not recurse: far more iterations than any depth limit.
  absl::StatusOr<std::vector<int64_t>> big =
      DryRun<int64_t, int64_t>(sum, {{100000}}, {.max_stack_depth = 2});
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ((*big)[0], int64_t{100000} * 100001 / 2);
}

TEST(ContextTest, BreakAndContinue) {
  Context ctx;
  // Sum of the odd i in [0, n) until i reaches `stop`.
  BatchFunction f = ctx.Batch("odd_sum")([](Builder& b, Value n, Value stop) {
    Var i = b.Local("i", 0);
    Var total = b.Local("total", 0);
    b.While([&] { return i < n; }).Do([&] {
      i = i + 1;
      b.If(i - 1 == stop).Then([&] { b.Break(); });
      b.If((i - 1) % 2 == 0).Then([&] { b.Continue(); });
      total = total + (i - 1);
    });
    return total;
  });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  auto reference = [](int64_t n, int64_t stop) {
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i == stop) break;
      if (i % 2 == 0) continue;
      total += i;
    }
    return total;
  };
  std::vector<int64_t> n = {0, 5, 10, 10, 20, 7};
  std::vector<int64_t> stop = {3, 100, 5, 0, 13, 7};
  absl::StatusOr<std::vector<int64_t>> out = DryRun<int64_t, int64_t>(f, {n, stop});
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < n.size(); ++i) EXPECT_EQ((*out)[i], reference(n[i], stop[i]));
}

TEST(ContextTest, ElseIfChainsAndEarlyReturn) {
  Context ctx;
  BatchFunction sign = ctx.Batch("sign")([](Builder& b, Value x) {
    Var s = b.Local("s");
    b.If(x < 0).Then([&] { s = -1; }).ElseIf(x == 0).Then([&] { s = 0; }).Else([&] { s = 1; });
    return s;
  });
  BatchFunction clamp = ctx.Batch("clamp")([](Builder& b, Value x) {
    b.If(x > 10).Then([&] { b.Return(10); });
    b.If(x < -10).Then([&] { b.Return(-10); });
    return x;
  });
  std::vector<int64_t> x = {-20, -10, -1, 0, 1, 9, 10, 11, 500};
  absl::StatusOr<std::vector<int64_t>> s = DryRun<int64_t, int64_t>(sign, {x});
  absl::StatusOr<std::vector<int64_t>> c = DryRun<int64_t, int64_t>(clamp, {x});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(c.ok()) << c.status();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ((*s)[i], x[i] < 0 ? -1 : x[i] == 0 ? 0 : 1);
    EXPECT_EQ((*c)[i], std::clamp<int64_t>(x[i], -10, 10));
  }
  absl::StatusOr<Module> module = ctx.Module();
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(module->functions.size(), 2u);
}

TEST(ContextTest, SeveralArgumentsAndResults) {
  Context ctx;
  BatchFunction divmod = ctx.Batch("divmod", {.param_names = {"a", "b"}})(
      [](Value a, Value b) { return std::tuple<Value, Value>{a / b, a % b}; });
  BatchFunction main = ctx.Batch("main")([&](Builder& b, Value x, Value y) {
    auto [q, r] = divmod(x, y).Get<2>();
    b.Return(q * 100 + r, q, r);
  });
  absl::StatusOr<Program> program = ctx.Program(main);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  const Function& dm = program->module.function(*program->module.FindFunction("divmod"));
  EXPECT_EQ(dm.params.size(), 2u);
  EXPECT_EQ(dm.results.size(), 2u);
  EXPECT_EQ(program->entry_function().results.size(), 3u);
  std::vector<Tensor> inputs = {*Tensor::FromVector<int64_t>({17, 9, -7, 5}),
                                *Tensor::FromVector<int64_t>({5, 3, 2, 0})};
  absl::StatusOr<std::vector<Tensor>> out = main.Run(inputs, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[1].ToVector<int64_t>(), (std::vector<int64_t>{3, 3, -3, 0}));
  EXPECT_EQ((*out)[2].ToVector<int64_t>(), (std::vector<int64_t>{2, 0, -1, 5}));  // x % 0 = x
  EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{302, 300, -301, 5}));
}

TEST(ContextTest, LiteralsTakeTheOtherOperandsDtype) {
  Context ctx;
  BatchFunction f = ctx.Batch("f")([](Builder& b, Value x) {
    Var c_int = b.Local("c_int");
    Var c_float = b.Local("c_float");
    Var c_bool = b.Local("c_bool");
    c_int = 7;
    c_float = 2.5;
    c_bool = true;
    return std::tuple<Value, Value, Value, Value, Value, Value>{
        x * 0.5, 3 - x, c_int, c_float, c_bool, select(x > 0, x, 0)};
  });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<Literal> constants, fills;
  for (const Op* op : OpsOf(*program, "f")) {
    const PrimOp* o = std::get_if<PrimOp>(op);
    if (o && o->prim == Primitive::kConstant) constants.push_back(*o->attrs.literal);
    if (o && o->prim == Primitive::kFillLike) fills.push_back(*o->attrs.literal);
  }
  EXPECT_THAT(constants, ::testing::UnorderedElementsAre(Literal::I64(7), Literal::F64(2.5),
                                                          Literal::Bool(true)));
  // x * 0.5, 3 - x, x > 0 and select's 0 all fill like x.
  EXPECT_THAT(fills, ::testing::UnorderedElementsAre(Literal::F64(0.5), Literal::I64(3),
                                                      Literal::I64(0), Literal::I64(0)));
  std::vector<Tensor> in = {*Tensor::FromVector<double>({-2.0, 4.0})};
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{-1.0, 2.0}));
  EXPECT_EQ((*out)[1].ToVector<double>(), (std::vector<double>{5.0, -1.0}));
  EXPECT_EQ((*out)[2].ToVector<int64_t>(), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ((*out)[3].ToVector<double>(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ((*out)[4].ToVector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ((*out)[5].ToVector<double>(), (std::vector<double>{0.0, 4.0}));
}

TEST(ContextTest, PrimitivesAsFreeFunctions) {
  Context ctx;
  BatchFunction f = ctx.Batch("math")([](Value x, Value y) {
    Value v = concat({x, y, 1.0});
    return std::tuple<Value, Value, Value, Value, Value, Value, Value>{
        exp(log(x)), sqrt(x * x), max(x, y) - min(x, y), pow(x, 2.0),
        cast(floor(x), DType::kI64), reduce_sum(v), slice(broadcast(y, {3}), 1, 2)};
  });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  std::vector<Tensor> in = {*Tensor::FromVector<double>({2.5, 4.0}),
                            *Tensor::FromVector<double>({1.0, 6.0})};
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> e = (*out)[0].ToVector<double>();
  EXPECT_NEAR(e[0], 2.5, 1e-12);
  EXPECT_NEAR(e[1], 4.0, 1e-12);
  EXPECT_EQ((*out)[1].ToVector<double>(), (std::vector<double>{2.5, 4.0}));
  EXPECT_EQ((*out)[2].ToVector<double>(), (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ((*out)[3].ToVector<double>(), (std::vector<double>{6.25, 16.0}));
  EXPECT_EQ((*out)[4].ToVector<int64_t>(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ((*out)[5].ToVector<double>(), (std::vector<double>{4.5, 11.0}));
  EXPECT_EQ((*out)[6].type(), Vector(DType::kF64, 2));
  EXPECT_EQ((*out)[6].ToVector<double>(), (std::vector<double>{1.0, 1.0, 6.0, 6.0}));
}

TEST(ContextTest, BodiesAreBuiltLazilySoLambdasMayCaptureLaterHandles) {
  Context ctx;
  BatchFunction twice;  // assigned below, after the body that calls it
  int builds = 0;
  BatchFunction quad = ctx.Batch("quad")([&](Value x) {
    ++builds;
    return twice(twice(x));
  });
  twice = ctx.Batch("twice")([&](Value x) {
    ++builds;
    return x + x;
  });
  EXPECT_EQ(builds, 0);
  absl::StatusOr<std::vector<int64_t>> out = DryRun<int64_t, int64_t>(quad, {{1, 5}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<int64_t>{4, 20}));
  EXPECT_EQ(builds, 2);
  // Built once: asking again rebuilds nothing.
  ASSERT_TRUE(ctx.Module().ok());
  ASSERT_TRUE(ctx.Program(twice).ok());
  EXPECT_EQ(builds, 2);
}

TEST(ContextTest, ProgramKeepsOnlyReachableFunctionsAndModuleKeepsAll) {
  Context ctx;
  BatchFunction unused = ctx.Batch("unused")([](Value x) { return x; });
  BatchFunction leaf = ctx.Batch("leaf")([](Value x) { return x + 1; });
  BatchFunction main = ctx.Batch("main")([&](Value x) { return leaf(x); });
  absl::StatusOr<Program> program = ctx.Program(main);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->module.functions.size(), 2u);
  EXPECT_EQ(program->module.functions[0].name, "leaf");  // registration order
  EXPECT_EQ(program->module.functions[1].name, "main");
  EXPECT_EQ(program->entry.value, 1);
  for (const Variable& v : program->module.variables) {
    EXPECT_LT(v.function.value, 2) << v.name;
  }
  // Only leaf's and main's variables: x and a result each, plus leaf's x + 1.
  EXPECT_LE(program->module.variables.size(), 5u);
  absl::StatusOr<Module> module = ctx.Module();
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(module->functions.size(), 3u);
  (void)unused;
}

TEST(ContextTest, JsonRoundTripOfTheFrontendsIr) {
  Context ctx;
  BatchFunction fib = DefineFib(ctx);
  BatchFunction main = ctx.Batch("main")([&](Value n) { return fib(n) * 2; });
  absl::StatusOr<Program> program = ctx.Program(main);
  ASSERT_TRUE(program.ok()) << program.status();
  std::string json = DumpProgramJson(*program);
  absl::StatusOr<Program> loaded = LoadProgramJson(json);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, *program);
  EXPECT_TRUE(VerifyProgram(*loaded).ok());
  EXPECT_THAT(json, HasSubstr("\"context_test.cc\""));
}

TEST(ContextTest, VariableNamesAreReadableAndUniquePerFunction) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}, .result_names = {"out"}})(
      [](Builder& b, Value x) {
        Var a = b.Local("acc");
        Var a2 = b.Local("acc");  // same name: made unique
        Var unnamed;
        a = x + 1;
        a2 = a * 2;
        unnamed = a2 - x;
        b.If(unnamed > 0).Then([&] { unnamed = 0; });
        return unnamed;
      });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<std::string> names;
  for (const Variable& v : program->module.variables) names.push_back(v.name);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"x", "out", "acc", "acc_1", "l0"}));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

TEST(ContextTest, RunChecksItsInputs) {
  Context ctx;
  BatchFunction add = ctx.Batch("add", {.param_names = {"x", "y"},
                                        .signature = Signature{{Scalar(DType::kF64), Scalar(DType::kF64)},
                                                               {Scalar(DType::kF64)}}})(
      [](Value x, Value y) { return x + y; });
  Tensor x = *Tensor::FromVector<double>({1, 2, 3});
  Tensor y = *Tensor::FromVector<double>({1, 2});
  Tensor yi = *Tensor::FromVector<int64_t>({1, 2, 3});

  absl::StatusOr<std::vector<Tensor>> r = add.Run({x}, {.dry_run = true});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorOf(r), HasSubstr("'add' takes 2 input(s) (x, y) but 1 were given"));

  r = add.Run({x, yi}, {.dry_run = true});
  EXPECT_THAT(ErrorOf(r), HasSubstr("input 1 (parameter 'y' of 'add') has type i64"));
  EXPECT_THAT(ErrorOf(r), HasSubstr("declared f64"));

  r = add.Run({x, y}, {.dry_run = true});
  EXPECT_THAT(ErrorOf(r), HasSubstr("input 1 (parameter 'y') has batch size 2"));
  EXPECT_THAT(ErrorOf(r), HasSubstr("parameter 'x') has batch size 3"));

  for (Vm vm : {Vm::kStack, Vm::kStackless}) {
    r = add.Run({x, x}, {.vm = vm});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].ToVector<double>(), (std::vector<double>{2, 4, 6}));
  }

  r = add.Run({x, x}, {.dry_run = true});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToVector<double>(), (std::vector<double>{2, 4, 6}));

  BatchFunction unregistered;
  EXPECT_THAT(ErrorOf(unregistered.Run({x}, {.dry_run = true})), HasSubstr("never registered"));
}

TEST(ContextTest, SignatureTypesTheParamsAndResults) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.signature = Signature{{Vector(DType::kF64, 3)},
                                                           {Scalar(DType::kF64)}}})(
      [](Value v) { return reduce_sum(v); });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  const Function& fn = program->entry_function();
  ASSERT_TRUE(fn.signature.has_value());
  EXPECT_EQ(program->module.var(fn.params[0]).type, Vector(DType::kF64, 3));
  EXPECT_EQ(program->module.var(fn.results[0]).type, Scalar(DType::kF64));
  absl::StatusOr<std::vector<Tensor>> out =
      f.Run({*Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, {3})}, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{6, 15}));
}

TEST(ContextTest, DryRunLimitsComeFromCallOptions) {
  Context ctx;
  BatchFunction fib = DefineFib(ctx);
  absl::StatusOr<std::vector<int64_t>> deep =
      DryRun<int64_t, int64_t>(fib, {{1, 30}}, {.max_stack_depth = 10});
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(ErrorOf(deep), HasSubstr("lane 1: recursion depth limit of 10"));
  absl::StatusOr<std::vector<int64_t>> long_run =
      DryRun<int64_t, int64_t>(fib, {{25}}, {.max_steps = 1000});
  EXPECT_EQ(long_run.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(ErrorOf(long_run), HasSubstr("step budget exhausted"));

  BatchFunction forever = ctx.Batch("forever")([](Builder& b, Value x) {
    Var y = b.Local("y", x);
    b.While([] { return true; }).Do([&] { y = y + 1; });
    return y;
  });
  absl::StatusOr<std::vector<int64_t>> r =
      DryRun<int64_t, int64_t>(forever, {{0}}, {.max_steps = 10000});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  r = DryRun<int64_t, int64_t>(forever, {{0}}, {.max_steps = 0, .timeout_seconds = 0.05});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace autobatch
