// Program inputs (Context::AddProgramInput): uniform values any function may
// read, through calls, recursion, inlining and differentiation, with the same
// bits on every executor.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/context.h"
#include "tests/frontend/test_util.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

using testing::Executor;

// Every executor, plus the stack VM gathering every block's lanes (compact).
std::vector<Executor> Executors() {
  std::vector<Executor> out = testing::EveryExecutor();
  out.push_back({"stack/compact", {.vm = Vm::kStack, .dense_fraction = 2.0,
                                   .dense_fraction_heavy = 2.0,
                                   .time_dense_or_compact = false}});
  return out;
}

std::vector<double> Iota(int64_t n, double scale) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(scale * static_cast<double>(i % 11) - 1.5);
  return v;
}

// entry(n, x): a recursion of depth n whose every level reads w in a callee:
// depth(n, x) = n > 0 ? dot(w, x) + depth(n - 1, x * 0.5) : 0.
TEST(ProgramInputTest, AnyFunctionReadsItThroughCallsAndRecursion) {
  Context ctx;
  ProgramInput w = ctx.AddProgramInput("w", TensorType{DType::kF64, {3}});
  BatchFunction leaf = ctx.Batch("leaf")([&](Builder&, Value x) { return dot(w(), x); });
  BatchFunction depth = ctx.Declare("depth");
  ctx.Batch(depth)([&](Builder& b, Value n, Value x) {
    Var r = b.Local("r");
    b.If(n > int64_t{0}).Then([&] { r = leaf(x) + depth(n - int64_t{1}, x * 0.5); }).Else([&] {
      r = 0.0;
    });
    return Value(r);
  });
  BatchFunction entry = ctx.Batch("entry")([&](Builder&, Value n, Value x) { return depth(n, x); });

  absl::StatusOr<Program> program = ctx.Program(entry);
  ASSERT_TRUE(program.ok()) << program.status();
  const Function& fn = program->module.function(program->entry);
  ASSERT_EQ(fn.params.size(), 3u);  // n, x, then w
  EXPECT_EQ(program->module.var(fn.params[2]).name, "w");
  EXPECT_TRUE(program->module.var(fn.params[2]).uniform);
  EXPECT_TRUE(CollectVerifierErrors(*program).empty()) << PrintProgram(*program);
  // The text form names w in the other functions as the entry's (%w@entry)
  // and parses back to the same program.
  const std::string text = PrintProgram(*program);
  EXPECT_THAT(text, HasSubstr("%w@entry"));
  absl::StatusOr<Program> parsed = ParseProgram(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(PrintProgram(*parsed), text);
  absl::StatusOr<Program> loaded = LoadProgramJson(DumpProgramJson(*program));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(PrintProgram(*loaded), text);

  const std::vector<double> weights = {0.25, -2.0, 3.5};
  for (int64_t lanes : {1, 7, 64}) {
    std::vector<int64_t> ns;
    for (int64_t l = 0; l < lanes; ++l) ns.push_back(l % 5);
    const std::vector<double> xs = Iota(3 * lanes, 0.75);
    std::vector<double> expected;
    for (int64_t l = 0; l < lanes; ++l) {
      // r_k = dot(w, x 2^-k) + r_{k+1}, summed on the way back up.
      double r = 0;
      for (int64_t k = ns[l] - 1; k >= 0; --k) {
        const double s = std::ldexp(1.0, -static_cast<int>(k));
        r = (weights[0] * (xs[3 * l] * s) + weights[1] * (xs[3 * l + 1] * s)) +
            weights[2] * (xs[3 * l + 2] * s) + r;
      }
      expected.push_back(r);
    }
    for (const Executor& e : Executors()) {
      absl::StatusOr<std::vector<Tensor>> out =
          entry.Run({*Tensor::FromVector<int64_t>(ns), *Tensor::FromVector<double>(xs, {3}),
                     *Tensor::FromVector<double>(weights, {3})},
                    e.options);
      ASSERT_TRUE(out.ok()) << e.name << ": " << out.status();
      std::vector<double> got = (*out)[0].ToVector<double>();
      ASSERT_EQ(got.size(), expected.size());
      for (size_t l = 0; l < got.size(); ++l) {
        EXPECT_NEAR(got[l], expected[l], 1e-12 * (1 + std::abs(expected[l])))
            << e.name << " lane " << l;
      }
    }
  }
}

// The gradient of a log density that reads data in a callee (inlined before
// differentiation): d/dq sum(y * q^2) = 2 y q, the data passing no gradient.
TEST(ProgramInputTest, GradientsTreatItAsData) {
  Context ctx;
  ProgramInput y = ctx.AddProgramInput("y", TensorType{DType::kF64, {4}});
  BatchFunction term = ctx.Batch("term")([&](Builder&, Value q) { return y() * (q * q); });
  BatchFunction density =
      ctx.Batch("density")([&](Builder&, Value q) { return reduce_sum(term(q)); });
  BatchFunction grad = ctx.Gradient(density);
  BatchFunction entry = ctx.Batch("entry")([&](Builder&, Value q) {
    auto [value, g] = grad(q).Get<2>();
    return std::make_tuple(value, g);
  });
  const std::vector<double> data = {1.0, -0.5, 2.0, 0.25};
  const int64_t lanes = 9;
  const std::vector<double> qs = Iota(4 * lanes, 0.5);
  std::vector<std::vector<double>> results;
  for (const Executor& e : Executors()) {
    absl::StatusOr<std::vector<Tensor>> out = entry.Run(
        {*Tensor::FromVector<double>(qs, {4}), *Tensor::FromVector<double>(data, {4})}, e.options);
    ASSERT_TRUE(out.ok()) << e.name << ": " << out.status();
    const std::vector<double> value = (*out)[0].ToVector<double>();
    const std::vector<double> g = (*out)[1].ToVector<double>();
    for (int64_t l = 0; l < lanes; ++l) {
      double v = 0;
      for (int j = 0; j < 4; ++j) {
        const double q = qs[4 * l + j];
        v += data[j] * (q * q);
        EXPECT_DOUBLE_EQ(g[4 * l + j], 2 * data[j] * q) << e.name << " lane " << l;
      }
      EXPECT_NEAR(value[l], v, 1e-12 * (1 + std::abs(v))) << e.name;
    }
    std::vector<double> all = value;
    all.insert(all.end(), g.begin(), g.end());
    results.push_back(all);
  }
  for (size_t k = 1; k < results.size(); ++k) {
    EXPECT_EQ(results[k], results[0]) << Executors()[k].name << " differs in bits";
  }
}

TEST(ProgramInputTest, ItIsReadOnlyAndTheEntryIsNotCalled) {
  Context ctx;
  ProgramInput w = ctx.AddProgramInput("w", TensorType{DType::kF64, {}});
  BatchFunction entry = ctx.Declare("entry");
  BatchFunction helper = ctx.Batch("helper")([&](Builder&, Value x) { return entry(x); });
  ctx.Batch(entry)([&](Builder&, Value x) { return x * w(); });
  absl::StatusOr<Program> called = ctx.Program(helper);
  ASSERT_TRUE(called.ok()) << called.status();  // entry is a callee here: no inputs
  absl::StatusOr<Program> bad = ctx.Program(entry);
  ASSERT_TRUE(bad.ok()) << bad.status();  // nothing reachable from entry calls it
  Context recursive;
  ProgramInput v = recursive.AddProgramInput("v", TensorType{DType::kF64, {}});
  BatchFunction self = recursive.Declare("self");
  recursive.Batch(self)([&](Builder& b, Value n) {
    Var r = b.Local("r");
    b.If(n > 0.0).Then([&] { r = self(n - v()); }).Else([&] { r = n; });
    return Value(r);
  });
  absl::StatusOr<Program> rec = recursive.Program(self);
  ASSERT_FALSE(rec.ok());
  EXPECT_THAT(rec.status().message(),
              HasSubstr("function 'self' calls 'self', the entry of this program; the "
                        "Context's program inputs (v, ...: AddProgramInput) are parameters "
                        "of the entry, which therefore cannot be called"));

  Context dup;
  dup.AddProgramInput("d", TensorType{DType::kF64, {}});
  dup.AddProgramInput("d", TensorType{DType::kI64, {}});
  BatchFunction f = dup.Batch("f")([&](Builder&, Value x) { return x; });
  absl::StatusOr<Program> dup_program = dup.Program(f);
  ASSERT_FALSE(dup_program.ok());
  EXPECT_THAT(dup_program.status().message(),
              HasSubstr("AddProgramInput('d'): a program input of that name was declared at "));
}

// The verifier's R2 exception covers reads only: another function writing
// an entry input, or an entry input read where it is not an input.
TEST(ProgramInputTest, VerifierAllowsOnlyReadsOfEntryInputs) {
  Context ctx;
  ProgramInput w = ctx.AddProgramInput("w", TensorType{DType::kF64, {}});
  BatchFunction leaf = ctx.Batch("leaf")([&](Builder&, Value x) { return x + w(); });
  BatchFunction entry = ctx.Batch("entry")([&](Builder&, Value x) { return leaf(x); });
  absl::StatusOr<Program> program = ctx.Program(entry);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_TRUE(CollectVerifierErrors(*program).empty());
  // Make leaf write w: U2 (inputs are read-only) names it.
  Program broken = *program;
  const VarId w_var = broken.module.function(broken.entry).params.back();
  for (Function& fn : broken.module.functions) {
    if (fn.name != "leaf") continue;
    for (Block& block : fn.blocks) {
      for (Op& op : block.ops) {
        if (auto* prim = std::get_if<PrimOp>(&op)) prim->outputs[0] = w_var;
      }
    }
  }
  std::vector<VerifierError> errors = CollectVerifierErrors(broken);
  ASSERT_FALSE(errors.empty());
  std::string all;
  for (const VerifierError& e : errors) all += e.ToString() + "\n";
  EXPECT_THAT(all, HasSubstr("belongs to function"));
}

// Context::Import: a program's functions registered as if written here; its
// entry's uniform inputs become program inputs of the importing Context.
TEST(ProgramInputTest, ImportedProgramsRunAndReadTheirInputs) {
  Context source;
  ProgramInput w = source.AddProgramInput("w", TensorType{DType::kF64, {}});
  BatchFunction scale = source.Batch("scale")([&](Builder&, Value x) { return x * w(); });
  BatchFunction f = source.Batch("f")([&](Builder&, Value x) { return scale(x) + 1.0; });
  absl::StatusOr<Program> program = source.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<Program> loaded = LoadProgramJson(DumpProgramJson(*program));
  ASSERT_TRUE(loaded.ok()) << loaded.status();

  Context ctx;
  ProgramInput v = ctx.AddProgramInput("v", TensorType{DType::kF64, {}});
  const std::vector<ProgramInput> inputs = {v};
  absl::StatusOr<BatchFunction> imported = ctx.Import(*loaded, inputs);
  ASSERT_TRUE(imported.ok()) << imported.status();
  BatchFunction entry = ctx.Batch("main")([&](Builder&, Value x) { return (*imported)(x)*2.0; });
  for (const Executor& e : Executors()) {
    absl::StatusOr<std::vector<Tensor>> out =
        entry.Run({*Tensor::FromVector<double>({1, 2, 3}), *Tensor::FromVector<double>({0.5}, {})},
                  e.options);
    ASSERT_TRUE(out.ok()) << e.name << ": " << out.status();
    EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{3, 4, 5})) << e.name;
  }

  // Mistakes: a typed program, an input that is not uniform, a gradient stub.
  absl::StatusOr<Program> typed =
      CompileProgram(*loaded, {Scalar(DType::kF64), Scalar(DType::kF64)});
  ASSERT_TRUE(typed.ok()) << typed.status();
  Context c1;
  ProgramInput u1 = c1.AddProgramInput("u", TensorType{DType::kF64, {}});
  const std::vector<ProgramInput> i1 = {u1};
  absl::StatusOr<BatchFunction> bad = c1.Import(*typed, i1);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("import an untyped program"));
  Context c2;
  ProgramInput u2 = c2.AddProgramInput("u", TensorType{DType::kF64, {}});
  const std::vector<ProgramInput> two = {u2, u2};
  bad = c2.Import(*loaded, two);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("parameter 'p0' of the entry 'f' stands for program input 'u' but is "
                        "not uniform"));
  Context c3;
  BatchFunction g = c3.Batch("g")([&](Builder&, Value x) { return x * x; });
  BatchFunction dg = c3.Gradient(g);
  BatchFunction h = c3.Batch("h")([&](Builder&, Value x) {
    auto [value, d] = dg(x).Get<2>();
    return value + d;
  });
  absl::StatusOr<Program> with_stub = c3.Program(h);
  ASSERT_TRUE(with_stub.ok()) << with_stub.status();
  Context c4;
  bad = c4.Import(*with_stub, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("is a gradient stub; import the primal"));
}

}  // namespace
}  // namespace autobatch
