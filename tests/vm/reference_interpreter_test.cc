// Tests of the reference interpreter (vm/reference_interpreter.h): every
// primitive, calls and recursion, limits, and clean errors on bad programs.
#include "vm/reference_interpreter.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/random.h"
#include "ir/testing/fib_program.h"
#include "passes/infer_types.h"

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& s) {
  return s.ok() ? std::string() : std::string(s.status().message());
}

template <typename T>
Tensor Lane(std::vector<T> values, std::vector<int64_t> shape = {}) {
  absl::StatusOr<Tensor> t = Tensor::FromVector(values, shape);
  AB_CHECK(t.ok());
  return *std::move(t);
}

// Builds small programs by hand.
class ProgramBuilder {
 public:
  FunctionId AddFunction(const std::string& name) {
    Function f;
    f.name = name;
    return program.module.AddFunction(std::move(f));
  }
  VarId Var(FunctionId f, const std::string& name, std::optional<TensorType> type = {}) {
    return program.module.AddVariable(Variable{name, f, type, StorageClass::kFull});
  }
  int AddBlock(FunctionId f, const std::string& label, Terminator t = Return{}) {
    Function& fn = program.module.function(f);
    fn.blocks.push_back(Block{label, {}, std::move(t), SourceLoc{"prog.cc", 1}});
    return static_cast<int>(fn.blocks.size() - 1);
  }
  void Prim(FunctionId f, int block, Primitive p, std::vector<VarId> in, std::vector<VarId> out,
            Attributes attrs = {}, int line = 7) {
    program.module.function(f).blocks[block].ops.push_back(
        PrimOp{p, std::move(in), std::move(out), std::move(attrs), SourceLoc{"prog.cc", line}, {}});
  }
  void Call(FunctionId f, int block, FunctionId callee, std::vector<VarId> args,
            std::vector<VarId> results) {
    program.module.function(f).blocks[block].ops.push_back(
        CallOp{callee, std::move(args), std::move(results), SourceLoc{"prog.cc", 9}});
  }
  Program program;
};

Attributes LiteralAttr(Literal l) {
  Attributes a;
  a.literal = std::move(l);
  return a;
}

// --- every primitive ----------------------------------------------------------

struct PrimCase {
  std::string name;
  Primitive prim;
  std::vector<Tensor> inputs;
  Attributes attrs;
  Tensor expected;
};

std::vector<PrimCase> AllCases() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto attrs_ints = [](std::vector<int64_t> ints) {
    Attributes a;
    a.ints = std::move(ints);
    return a;
  };
  Attributes cast_i64;
  cast_i64.dtype = DType::kI64;
  Attributes matrix;
  matrix.matrix = std::make_shared<const DenseMatrix>(DenseMatrix{2, 3, {1, 2, 3, 4, 5, 6}});
  Attributes random = attrs_ints({3});
  Attributes scatter = attrs_ints({2});
  const uint64_t key = 42, counter = 7;
  return {
      {"constant", Primitive::kConstant, {}, LiteralAttr(Literal::F64(2.5)), Lane<double>({2.5})},
      {"fill_like", Primitive::kFillLike, {Lane<int64_t>({1, 2, 3}, {3})},
       LiteralAttr(Literal::F64(7.0)), Lane<int64_t>({7, 7, 7}, {3})},
      {"copy", Primitive::kCopy, {Lane<double>({1.5})}, {}, Lane<double>({1.5})},
      {"select", Primitive::kSelect, {Lane<bool>({false}), Lane<double>({1.0}), Lane<double>({2.0})},
       {}, Lane<double>({2.0})},
      {"cast", Primitive::kCast, {Lane<double>({-3.7})}, cast_i64, Lane<int64_t>({-3})},
      {"broadcast", Primitive::kBroadcast, {Lane<double>({2.0})}, attrs_ints({3}),
       Lane<double>({2, 2, 2}, {3})},
      {"slice", Primitive::kSlice, {Lane<double>({1, 2, 3, 4}, {4})}, attrs_ints({1, 2}),
       Lane<double>({2, 3}, {2})},
      {"concat", Primitive::kConcat, {Lane<double>({1}), Lane<double>({2, 3}, {2})}, {},
       Lane<double>({1, 2, 3}, {3})},
      {"add", Primitive::kAdd, {Lane<int64_t>({2}), Lane<int64_t>({3})}, {}, Lane<int64_t>({5})},
      {"sub", Primitive::kSub, {Lane<int64_t>({2}), Lane<int64_t>({3})}, {}, Lane<int64_t>({-1})},
      {"mul", Primitive::kMul, {Lane<double>({2, 3}, {2}), Lane<double>({4})}, {},
       Lane<double>({8, 12}, {2})},
      {"div", Primitive::kDiv, {Lane<int64_t>({-7}), Lane<int64_t>({2})}, {}, Lane<int64_t>({-3})},
      {"mod", Primitive::kMod, {Lane<int64_t>({-7}), Lane<int64_t>({2})}, {}, Lane<int64_t>({-1})},
      {"min", Primitive::kMin, {Lane<double>({1.0}), Lane<double>({nan})}, {}, Lane<double>({nan})},
      {"max", Primitive::kMax, {Lane<int32_t>({-1}), Lane<int32_t>({4})}, {}, Lane<int32_t>({4})},
      {"neg", Primitive::kNeg, {Lane<int64_t>({5})}, {}, Lane<int64_t>({-5})},
      {"abs", Primitive::kAbs, {Lane<double>({-4.5})}, {}, Lane<double>({4.5})},
      {"exp", Primitive::kExp, {Lane<double>({0.0})}, {}, Lane<double>({1.0})},
      {"log", Primitive::kLog, {Lane<double>({1.0})}, {}, Lane<double>({0.0})},
      {"log1p", Primitive::kLog1p, {Lane<double>({0.0})}, {}, Lane<double>({0.0})},
      {"expm1", Primitive::kExpm1, {Lane<double>({0.0})}, {}, Lane<double>({0.0})},
      {"sqrt", Primitive::kSqrt, {Lane<double>({9.0})}, {}, Lane<double>({3.0})},
      {"tanh", Primitive::kTanh, {Lane<double>({0.0})}, {}, Lane<double>({0.0})},
      {"floor", Primitive::kFloor, {Lane<double>({-1.5})}, {}, Lane<double>({-2.0})},
      {"pow", Primitive::kPow, {Lane<double>({2.0}), Lane<double>({10.0})}, {},
       Lane<double>({1024.0})},
      {"sin", Primitive::kSin, {Lane<double>({0.0})}, {}, Lane<double>({0.0})},
      {"cos", Primitive::kCos, {Lane<double>({0.0})}, {}, Lane<double>({1.0})},
      {"atan", Primitive::kAtan, {Lane<double>({0.0})}, {}, Lane<double>({0.0})},
      {"lgamma", Primitive::kLgamma, {Lane<double>({1.0})}, {}, Lane<double>({0.0})},
      {"erfc", Primitive::kErfc, {Lane<double>({0.0})}, {}, Lane<double>({1.0})},
      {"digamma", Primitive::kDigamma, {Lane<double>({0.0})}, {},
       Lane<double>({-std::numeric_limits<double>::infinity()})},
      {"trigamma", Primitive::kTrigamma, {Lane<double>({0.0})}, {},
       Lane<double>({std::numeric_limits<double>::infinity()})},
      {"log1p_exp", Primitive::kLog1pExp, {Lane<double>({1e300})}, {}, Lane<double>({1e300})},
      {"logistic", Primitive::kLogistic, {Lane<double>({0.0})}, {}, Lane<double>({0.5})},
      {"lt", Primitive::kLt, {Lane<int64_t>({1}), Lane<int64_t>({2})}, {}, Lane<bool>({true})},
      {"le", Primitive::kLe, {Lane<int64_t>({2}), Lane<int64_t>({2})}, {}, Lane<bool>({true})},
      {"gt", Primitive::kGt, {Lane<int64_t>({1}), Lane<int64_t>({2})}, {}, Lane<bool>({false})},
      {"ge", Primitive::kGe, {Lane<double>({1}), Lane<double>({nan})}, {}, Lane<bool>({false})},
      {"eq", Primitive::kEq, {Lane<double>({nan}), Lane<double>({nan})}, {}, Lane<bool>({false})},
      {"ne", Primitive::kNe, {Lane<int64_t>({2}), Lane<int64_t>({2})}, {}, Lane<bool>({false})},
      {"and", Primitive::kAnd, {Lane<bool>({true}), Lane<bool>({false})}, {}, Lane<bool>({false})},
      {"or", Primitive::kOr, {Lane<bool>({true}), Lane<bool>({false})}, {}, Lane<bool>({true})},
      {"not", Primitive::kNot, {Lane<bool>({true})}, {}, Lane<bool>({false})},
      {"reduce_sum", Primitive::kReduceSum, {Lane<double>({1, 2, 3}, {3})}, {}, Lane<double>({6})},
      {"dot", Primitive::kDot, {Lane<int64_t>({1, 2, 3}, {3}), Lane<int64_t>({4, 5, 6}, {3})}, {},
       Lane<int64_t>({32})},
      {"squared_norm", Primitive::kSquaredNorm, {Lane<double>({3, 4}, {2})}, {},
       Lane<double>({25})},
      {"log_sum_exp", Primitive::kLogSumExp,
       {Lane<double>({-std::numeric_limits<double>::infinity(), 1.0}, {2})}, {},
       Lane<double>({1.0})},
      {"matvec", Primitive::kMatVec, {Lane<double>({1, 1, 1}, {3})}, matrix,
       Lane<double>({6, 15}, {2})},
      {"matvec_batched", Primitive::kMatVecBatched, {Lane<double>({1, 0, 2}, {3})}, matrix,
       Lane<double>({7, 16}, {2})},
      {"gather", Primitive::kGather, {Lane<double>({5, 6, 7}, {3}), Lane<int64_t>({2, -1, 9, 1}, {4})},
       {}, Lane<double>({7, 5, 7, 6}, {4})},
      {"scatter_add", Primitive::kScatterAdd,
       {Lane<double>({1, 2, 4}, {3}), Lane<int64_t>({1, 1, 0}, {3})}, scatter,
       Lane<double>({4, 3}, {2})},
      {"matvec_input", Primitive::kMatVecInput,
       {Lane<double>({1, 2, 3, 4, 5, 6}, {2, 3}), Lane<double>({1, 1, 1}, {3})}, {},
       Lane<double>({6, 15}, {2})},
      {"matvec_t_input", Primitive::kMatVecTInput,
       {Lane<double>({1, 2, 3, 4, 5, 6}, {2, 3}), Lane<double>({1, -1}, {2})}, {},
       Lane<double>({-3, -3, -3}, {3})},
      // eta = 0 in both rows: y = 2 is outside the support; logistic(0) = 0.5.
      {"bernoulli_logit_glm", Primitive::kBernoulliLogitGlm,
       {Lane<double>({2, 4}, {2, 1}), Lane<int64_t>({2, 0}, {2}), Lane<double>({0}),
        Lane<double>({0}, {1})},
       {}, Lane<double>({-std::numeric_limits<double>::infinity()})},
      {"bernoulli_logit_glm_grad", Primitive::kBernoulliLogitGlmGrad,
       {Lane<double>({2, 4}, {2, 1}), Lane<int64_t>({1, 0}, {2}), Lane<double>({0}),
        Lane<double>({0}, {1})},
       {}, Lane<double>({0, 2 * 0.5 - 4 * 0.5}, {2})},
      // Row 0 (y = 2) gives -inf and a zero residual, row 1 -logistic(0).
      {"bernoulli_logit_glm_value_grad", Primitive::kBernoulliLogitGlmValueGrad,
       {Lane<double>({2, 4}, {2, 1}), Lane<int64_t>({2, 0}, {2}), Lane<double>({0}),
        Lane<double>({0}, {1})},
       {}, Lane<double>({-std::numeric_limits<double>::infinity(), -0.5, 4 * -0.5}, {3})},
      {"random_uniform", Primitive::kRandomUniform, {Lane<uint64_t>({key}), Lane<uint64_t>({counter})},
       random,
       Lane<double>({PhiloxUniform(key, counter, 0), PhiloxUniform(key, counter, 1),
                     PhiloxUniform(key, counter, 2)},
                    {3})},
      {"random_normal", Primitive::kRandomNormal, {Lane<uint64_t>({key}), Lane<uint64_t>({counter})},
       random,
       Lane<double>({PhiloxNormal(key, counter, 0), PhiloxNormal(key, counter, 1),
                     PhiloxNormal(key, counter, 2)},
                    {3})},
  };
}

bool SameBits(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type() || a.batch() != b.batch()) return false;
  if (a.dtype() == DType::kF64) {
    // NaN == NaN here; otherwise exact.
    std::vector<double> x = a.ToVector<double>(), y = b.ToVector<double>();
    for (size_t i = 0; i < x.size(); ++i) {
      if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
    }
    return true;
  }
  return a == b;
}

TEST(ReferenceInterpreterTest, EveryPrimitive) {
  std::set<Primitive> covered;
  for (const PrimCase& c : AllCases()) {
    SCOPED_TRACE(c.name);
    covered.insert(c.prim);
    ProgramBuilder b;
    FunctionId f = b.AddFunction("main");
    std::vector<VarId> params;
    for (size_t i = 0; i < c.inputs.size(); ++i) params.push_back(b.Var(f, "in" + std::to_string(i)));
    VarId out = b.Var(f, "out");
    b.program.module.function(f).params = params;
    b.program.module.function(f).results = {out};
    b.program.entry = f;
    int block = b.AddBlock(f, "entry");
    b.Prim(f, block, c.prim, params, {out}, c.attrs);
    absl::StatusOr<std::vector<LaneValue>> r = RunReference(b.program, c.inputs, nullptr);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->size(), 1u);
    EXPECT_TRUE(SameBits((*r)[0], c.expected))
        << (*r)[0].type().ToString() << " vs " << c.expected.type().ToString();
  }
  for (const PrimitiveInfo& info : AllPrimitives()) {
    EXPECT_TRUE(covered.contains(*PrimitiveFromName(info.name))) << "no case for " << info.name;
  }
}

// --- programs -------------------------------------------------------------------

int64_t Fib(int64_t n) { return n > 1 ? Fib(n - 1) + Fib(n - 2) : 1; }

TEST(ReferenceInterpreterTest, FibonacciUntypedAndTyped) {
  Program untyped = testing::MakeFibonacciProgram();
  absl::StatusOr<Program> typed = InferTypes(untyped, std::vector<TensorType>{Scalar(DType::kI64)});
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<ReferenceInterpreter> a = ReferenceInterpreter::Create(untyped, nullptr);
  absl::StatusOr<ReferenceInterpreter> b = ReferenceInterpreter::Create(*typed, nullptr);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  for (int64_t n = -3; n <= 20; ++n) {
    absl::StatusOr<std::vector<LaneValue>> ra = a->Run({Lane<int64_t>({n})});
    absl::StatusOr<std::vector<LaneValue>> rb = b->Run({Lane<int64_t>({n})});
    ASSERT_TRUE(ra.ok()) << ra.status();
    ASSERT_TRUE(rb.ok()) << rb.status();
    EXPECT_EQ((*ra)[0].ToVector<int64_t>()[0], Fib(n));
    EXPECT_EQ((*ra)[0], (*rb)[0]);
  }
  // Dynamically typed: the untyped program runs on f64 too.
  absl::StatusOr<std::vector<LaneValue>> f = a->Run({Lane<double>({10.0})});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].ToVector<double>()[0], 89.0);
  // The typed one rejects it: its variables are declared i64.
  absl::StatusOr<std::vector<LaneValue>> g = b->Run({Lane<double>({10.0})});
  EXPECT_THAT(ErrorOf(g), AllOf(HasSubstr("declared i64"), HasSubstr("type f64")));
}

TEST(ReferenceInterpreterTest, BatchRunsLaneByLane) {
  Program p = testing::MakeFibonacciProgram();
  absl::StatusOr<std::vector<Tensor>> out =
      RunReferenceBatch(p, {Lane<int64_t>({0, 1, 2, 10, 5})}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 89, 8}));
  // Zero lanes: the untyped program cannot say its output type...
  absl::StatusOr<std::vector<Tensor>> zero =
      RunReferenceBatch(p, {Tensor(Scalar(DType::kI64), 0)}, nullptr);
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ErrorOf(zero), HasSubstr("infer_types"));
  // ... the typed one can.
  absl::StatusOr<Program> typed = InferTypes(p, std::vector<TensorType>{Scalar(DType::kI64)});
  ASSERT_TRUE(typed.ok());
  zero = RunReferenceBatch(*typed, {Tensor(Scalar(DType::kI64), 0)}, nullptr);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ((*zero)[0].batch(), 0);
  EXPECT_EQ((*zero)[0].type(), Scalar(DType::kI64));
  // Lane errors say which lane.
  absl::StatusOr<std::vector<Tensor>> deep =
      RunReferenceBatch(p, {Lane<int64_t>({3, 40})}, nullptr, {.max_depth = 20});
  EXPECT_THAT(ErrorOf(deep), HasSubstr("lane 1: recursion depth limit of 20"));
}

TEST(ReferenceInterpreterTest, SpecialConstantsAndAUserKernel) {
  Program p = testing::MakeProgramWithSpecialConstants();
  KernelRegistry kernels;
  ASSERT_TRUE(kernels
                  .Register("scale", p.module.kernels.at("scale"),
                            [](const KernelCall& call) {
                              const double* v = reinterpret_cast<const double*>(call.inputs[0].data);
                              const double* s = reinterpret_cast<const double*>(call.inputs[1].data);
                              double* o = reinterpret_cast<double*>(call.outputs[0].data);
                              for (int i = 0; i < 3; ++i) o[i] = v[i] * (*s * 1e300 * 1e10);
                              return absl::OkStatus();
                            })
                  .ok());
  absl::StatusOr<std::vector<LaneValue>> r =
      RunReference(p, {Lane<double>({1, 2, 4}, {3})}, &kernels);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 5u);
  std::vector<double> specials = (*r)[0].ToVector<double>();
  EXPECT_TRUE(std::isnan(specials[0]));
  EXPECT_EQ(specials[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(specials[2], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(specials[3] == 0 && std::signbit(specials[3]));
  EXPECT_EQ(specials[4], 1e-310);
  EXPECT_EQ((*r)[1].ToVector<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ((*r)[2].ToVector<int64_t>(), (std::vector<int64_t>{1, -2, 0}));
  EXPECT_EQ((*r)[3].ToVector<double>(), (std::vector<double>{2 + 1 * 1 + 2 * 2 + 3 * 4,
                                                             4 + 4 * 1 + 5 * 2 + 6.5 * 4}));
  EXPECT_EQ((*r)[4].type(), Vector(DType::kF64, 3));
}

TEST(ReferenceInterpreterTest, LoweredProgramsAreRejected) {
  absl::StatusOr<ReferenceInterpreter> r =
      ReferenceInterpreter::Create(testing::MakeSmallLoweredProgram(), nullptr);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorOf(r), HasSubstr("lowered"));
}

// f(n) = n <= 0 ? 0 : f(n - 1) + 1, with a `stop` to make it infinite.
Program CountDown(bool infinite) {
  ProgramBuilder b;
  FunctionId f = b.AddFunction("count");
  VarId n = b.Var(f, "n"), r = b.Var(f, "r"), zero = b.Var(f, "zero"), c = b.Var(f, "c");
  VarId one = b.Var(f, "one"), m = b.Var(f, "m"), s = b.Var(f, "s");
  b.program.module.function(f).params = {n};
  b.program.module.function(f).results = {r};
  b.program.entry = f;
  int entry = b.AddBlock(f, "entry", Branch{c, BlockId(1), BlockId(2)});
  int base = b.AddBlock(f, "base", Return{});
  int rec = b.AddBlock(f, "recurse", Return{});
  b.Prim(f, entry, Primitive::kFillLike, {n}, {zero}, LiteralAttr(Literal::I64(0)));
  b.Prim(f, entry, Primitive::kLe, {n, zero}, {c});
  b.Prim(f, base, Primitive::kCopy, {zero}, {r});
  b.Prim(f, rec, Primitive::kFillLike, {n}, {one}, LiteralAttr(Literal::I64(infinite ? 0 : 1)));
  b.Prim(f, rec, Primitive::kSub, {n, one}, {m});
  b.Call(f, rec, f, {m}, {s});
  b.Prim(f, rec, Primitive::kAdd, {s, one}, {r});
  return b.program;
}

TEST(ReferenceInterpreterTest, DeepRecursionUsesNoHostStack) {
  // Activations live on the heap: depth is bounded by max_depth only.
  Program p = CountDown(/*infinite=*/false);
  absl::StatusOr<std::vector<LaneValue>> r =
      RunReference(p, {Lane<int64_t>({50000})}, nullptr, {.max_depth = 60000});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToVector<int64_t>()[0], 50000);
}

TEST(ReferenceInterpreterTest, RecursionDepthLimitIsACleanError) {
  Program p = CountDown(/*infinite=*/true);
  absl::StatusOr<std::vector<LaneValue>> r = RunReference(p, {Lane<int64_t>({5})}, nullptr);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(ErrorOf(r), AllOf(HasSubstr("recursion depth limit of 10000"),
                                HasSubstr("call of 'count'"), HasSubstr("block ^2 (recurse)"),
                                HasSubstr("prog.cc:9")));
  r = RunReference(p, {Lane<int64_t>({5})}, nullptr, {.max_depth = 3});
  EXPECT_THAT(ErrorOf(r), HasSubstr("limit of 3 "));
}

TEST(ReferenceInterpreterTest, StepBudgetStopsInfiniteLoops) {
  ProgramBuilder b;
  FunctionId f = b.AddFunction("spin");
  VarId x = b.Var(f, "x"), t = b.Var(f, "t");
  b.program.module.function(f).params = {x};
  b.program.module.function(f).results = {x};
  b.program.entry = f;
  b.AddBlock(f, "entry", Goto{BlockId(1)});
  b.AddBlock(f, "loop", Branch{t, BlockId(1), BlockId(2)});
  b.AddBlock(f, "exit", Return{});
  b.Prim(f, 1, Primitive::kConstant, {}, {t}, LiteralAttr(Literal::Bool(true)));
  absl::StatusOr<std::vector<LaneValue>> r =
      RunReference(b.program, {Lane<int64_t>({1})}, nullptr, {.max_steps = 5000});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(ErrorOf(r), AllOf(HasSubstr("step budget exhausted: 5000 blocks"),
                                HasSubstr("function 'spin', block ^1 (loop)")));
  r = RunReference(b.program, {Lane<int64_t>({1})}, nullptr,
                   {.max_steps = 0, .deadline = std::chrono::steady_clock::now()});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(ReferenceInterpreterTest, ReadingAnUndefinedVariable) {
  ProgramBuilder b;
  FunctionId f = b.AddFunction("f");
  VarId x = b.Var(f, "x"), never = b.Var(f, "never"), r = b.Var(f, "r");
  b.program.module.function(f).params = {x};
  b.program.module.function(f).results = {r};
  b.program.entry = f;
  b.AddBlock(f, "entry", Return{});
  b.Prim(f, 0, Primitive::kAdd, {x, never}, {r}, {}, 33);
  absl::StatusOr<std::vector<LaneValue>> out = RunReference(b.program, {Lane<int64_t>({1})}, nullptr);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorOf(out), AllOf(HasSubstr("function 'f'"), HasSubstr("block ^0 (entry)"),
                                  HasSubstr("op 0 (prog.cc:33)"), HasSubstr("variable 'never'")));
  // A result never written is reported at the return.
  b.program.module.function(f).blocks[0].ops.clear();
  out = RunReference(b.program, {Lane<int64_t>({1})}, nullptr);
  EXPECT_THAT(ErrorOf(out), HasSubstr("returns without writing its result 'r'"));
}

TEST(ReferenceInterpreterTest, BadProgramsAndInputsAreErrorsNotCrashes) {
  Program fib = testing::MakeFibonacciProgram();
  EXPECT_THAT(ErrorOf(RunReference(fib, {}, nullptr)), HasSubstr("takes 1 input(s) but 0"));
  EXPECT_THAT(ErrorOf(RunReference(fib, {Lane<int64_t>({1, 2})}, nullptr)),
              HasSubstr("batch size 2"));
  {
    Program p = fib;
    p.entry = FunctionId(9);
    EXPECT_THAT(ErrorOf(RunReference(p, {Lane<int64_t>({1})}, nullptr)), HasSubstr("entry"));
  }
  {
    Program p = fib;
    std::get<PrimOp>(p.module.functions[1].blocks[0].ops[0]).inputs[0] = VarId(999);
    EXPECT_THAT(ErrorOf(RunReference(p, {Lane<int64_t>({1})}, nullptr)),
                HasSubstr("variable index 999 does not exist"));
  }
  {
    Program p = fib;
    std::get<Branch>(p.module.functions[1].blocks[0].terminator).else_block = BlockId(17);
    EXPECT_THAT(ErrorOf(RunReference(p, {Lane<int64_t>({1})}, nullptr)),
                HasSubstr("block index 17 does not exist"));
  }
  {
    Program p = fib;
    std::get<CallOp>(p.module.functions[0].blocks[0].ops[0]).args.push_back(
        p.module.functions[0].params[0]);
    EXPECT_THAT(ErrorOf(RunReference(p, {Lane<int64_t>({1})}, nullptr)), HasSubstr("passes 2 args"));
  }
  {
    // A variable of main used in fibonacci.
    Program p = fib;
    std::get<PrimOp>(p.module.functions[1].blocks[0].ops[0]).inputs[0] = p.module.functions[0].params[0];
    EXPECT_THAT(ErrorOf(RunReference(p, {Lane<int64_t>({1})}, nullptr)),
                HasSubstr("belongs to another function"));
  }
  {
    // Branching on an i64.
    Program p = fib;
    Branch& br = std::get<Branch>(p.module.functions[1].blocks[0].terminator);
    br.cond = p.module.functions[1].params[0];
    EXPECT_THAT(ErrorOf(RunReference(p, {Lane<int64_t>({1})}, nullptr)),
                HasSubstr("must be a bool scalar"));
  }
  {
    // An ill-typed op is an error from the type rules, with the location.
    ProgramBuilder b;
    FunctionId f = b.AddFunction("mixed");
    VarId x = b.Var(f, "x"), y = b.Var(f, "y"), r = b.Var(f, "r");
    b.program.module.function(f).params = {x, y};
    b.program.module.function(f).results = {r};
    b.program.entry = f;
    b.AddBlock(f, "entry", Return{});
    b.Prim(f, 0, Primitive::kAdd, {x, y}, {r}, {}, 21);
    absl::StatusOr<std::vector<LaneValue>> out =
        RunReference(b.program, {Lane<int64_t>({1}), Lane<double>({1.0})}, nullptr);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(ErrorOf(out), AllOf(HasSubstr("function 'mixed'"), HasSubstr("prog.cc:21")));
  }
}

// A program that skipped the differentiate pass: untyped or typed, the
// stub is refused by name before anything runs.
TEST(ReferenceInterpreterTest, GradientStubIsAClearError) {
  const std::string expected =
      "function 'grad_f' is a gradient stub of 'f'; run the differentiate pass "
      "(CompileProgram/LowerProgram do)";
  Program untyped = testing::MakeGradientStubProgram();
  absl::StatusOr<ReferenceInterpreter> created = ReferenceInterpreter::Create(untyped, nullptr);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(created.status().message(), expected);
  absl::StatusOr<Program> typed =
      InferTypes(untyped, {{Scalar(DType::kF64), Scalar(DType::kF64)}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(ErrorOf(RunReference(*typed, {Lane<double>({1.0}), Lane<double>({2.0})}, nullptr)),
            expected);
}

TEST(ReferenceInterpreterTest, HaltEndsTheLaneWithTheEntrysResults) {
  ProgramBuilder b;
  FunctionId f = b.AddFunction("f");
  VarId x = b.Var(f, "x"), r = b.Var(f, "r");
  b.program.module.function(f).params = {x};
  b.program.module.function(f).results = {r};
  b.program.entry = f;
  b.AddBlock(f, "entry", Halt{});
  b.Prim(f, 0, Primitive::kNeg, {x}, {r});
  absl::StatusOr<std::vector<LaneValue>> out = RunReference(b.program, {Lane<int64_t>({4})}, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<int64_t>()[0], -4);
}

}  // namespace
}  // namespace autobatch
