// Tests of the frontend's operators and primitive functions (frontend/value.h)
// against the primitive table (ir/primitives.def).
#include "frontend/value.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include "frontend/context.h"
#include "ir/primitives.h"

namespace autobatch {
namespace {
// The primitive a body builds: its last PrimOp other than a copy (the
// frontend's raw program copies the result into the function's result
// variable; the tidy passes remove such copies later), or copy if that is
// all it holds.
std::optional<Primitive> LastPrimitive(const std::function<Value(Value, Value, Value)>& build) {
  Context ctx;
  BatchFunction f = ctx.Batch("f")([&](Value a, Value b, Value c) { return build(a, b, c); });
  absl::StatusOr<Program> program = ctx.Program(f);
  if (!program.ok()) return std::nullopt;
  std::optional<Primitive> last;
  for (const Block& block : program->entry_function().blocks) {
    for (const Op& op : block.ops) {
      const auto* prim = std::get_if<PrimOp>(&op);
      if (prim == nullptr) continue;
      if (prim->prim != Primitive::kCopy || !last.has_value()) last = prim->prim;
    }
  }
  return last;
}

// Every primitive has a frontend function (frontend/value.h), and the
// primitive table's operator column names the C++ operator that builds it
// too: a new primitive without them fails here.
TEST(ValueTest, EveryPrimitiveHasAFrontendFunctionAndTheTablesOperator) {
  using Build = std::function<Value(Value, Value, Value)>;
  const auto m = std::make_shared<const DenseMatrix>(DenseMatrix{1, 1, {2.0}});
  const std::map<Primitive, Build> functions = {
      {Primitive::kConstant, [](Value, Value, Value) { return constant(Literal::F64(1)); }},
      {Primitive::kFillLike, [](Value a, Value, Value) { return fill_like(a, 0.0); }},
      {Primitive::kCopy, [](Value a, Value, Value) { return copy(a); }},
      {Primitive::kSelect, [](Value a, Value b, Value c) { return select(a, b, c); }},
      {Primitive::kCast, [](Value a, Value, Value) { return cast(a, DType::kF32); }},
      {Primitive::kBroadcast, [](Value a, Value, Value) { return broadcast(a, {2}); }},
      {Primitive::kSlice, [](Value a, Value, Value) { return slice(a, 0, 1); }},
      {Primitive::kConcat, [](Value a, Value b, Value) { return concat({a, b}); }},
      {Primitive::kAdd, [](Value a, Value b, Value) { return add(a, b); }},
      {Primitive::kSub, [](Value a, Value b, Value) { return sub(a, b); }},
      {Primitive::kMul, [](Value a, Value b, Value) { return mul(a, b); }},
      {Primitive::kDiv, [](Value a, Value b, Value) { return div(a, b); }},
      {Primitive::kMod, [](Value a, Value b, Value) { return mod(a, b); }},
      {Primitive::kMin, [](Value a, Value b, Value) { return min(a, b); }},
      {Primitive::kMax, [](Value a, Value b, Value) { return max(a, b); }},
      {Primitive::kNeg, [](Value a, Value, Value) { return neg(a); }},
      {Primitive::kAbs, [](Value a, Value, Value) { return abs(a); }},
      {Primitive::kExp, [](Value a, Value, Value) { return exp(a); }},
      {Primitive::kLog, [](Value a, Value, Value) { return log(a); }},
      {Primitive::kLog1p, [](Value a, Value, Value) { return log1p(a); }},
      {Primitive::kExpm1, [](Value a, Value, Value) { return expm1(a); }},
      {Primitive::kSqrt, [](Value a, Value, Value) { return sqrt(a); }},
      {Primitive::kTanh, [](Value a, Value, Value) { return tanh(a); }},
      {Primitive::kFloor, [](Value a, Value, Value) { return floor(a); }},
      {Primitive::kPow, [](Value a, Value b, Value) { return pow(a, b); }},
      {Primitive::kSin, [](Value a, Value, Value) { return sin(a); }},
      {Primitive::kCos, [](Value a, Value, Value) { return cos(a); }},
      {Primitive::kAtan, [](Value a, Value, Value) { return atan(a); }},
      {Primitive::kLgamma, [](Value a, Value, Value) { return lgamma(a); }},
      {Primitive::kErfc, [](Value a, Value, Value) { return erfc(a); }},
      {Primitive::kDigamma, [](Value a, Value, Value) { return digamma(a); }},
      {Primitive::kTrigamma, [](Value a, Value, Value) { return trigamma(a); }},
      {Primitive::kLog1pExp, [](Value a, Value, Value) { return log1p_exp(a); }},
      {Primitive::kLogistic, [](Value a, Value, Value) { return logistic(a); }},
      {Primitive::kLt, [](Value a, Value b, Value) { return lt(a, b); }},
      {Primitive::kLe, [](Value a, Value b, Value) { return le(a, b); }},
      {Primitive::kGt, [](Value a, Value b, Value) { return gt(a, b); }},
      {Primitive::kGe, [](Value a, Value b, Value) { return ge(a, b); }},
      {Primitive::kEq, [](Value a, Value b, Value) { return eq(a, b); }},
      {Primitive::kNe, [](Value a, Value b, Value) { return ne(a, b); }},
      {Primitive::kAnd, [](Value a, Value b, Value) { return logical_and(a, b); }},
      {Primitive::kOr, [](Value a, Value b, Value) { return logical_or(a, b); }},
      {Primitive::kNot, [](Value a, Value, Value) { return logical_not(a); }},
      {Primitive::kReduceSum, [](Value a, Value, Value) { return reduce_sum(a); }},
      {Primitive::kDot, [](Value a, Value b, Value) { return dot(a, b); }},
      {Primitive::kSquaredNorm, [](Value a, Value, Value) { return squared_norm(a); }},
      {Primitive::kLogSumExp, [](Value a, Value, Value) { return log_sum_exp(a); }},
      {Primitive::kMatVec, [m](Value a, Value, Value) { return matvec(m, a); }},
      {Primitive::kMatVecBatched, [m](Value a, Value, Value) { return matvec_batched(m, a); }},
      {Primitive::kGather, [](Value a, Value b, Value) { return gather(a, b); }},
      {Primitive::kScatterAdd, [](Value a, Value b, Value) { return scatter_add(a, b, 4); }},
      {Primitive::kMatVecInput, [](Value a, Value b, Value) { return matvec_input(a, b); }},
      {Primitive::kMatVecTInput, [](Value a, Value b, Value) { return matvec_t_input(a, b); }},
      {Primitive::kBernoulliLogitGlm,
       [](Value a, Value b, Value c) { return bernoulli_logit_glm(a, b, c, c); }},
      {Primitive::kBernoulliLogitGlmGrad,
       [](Value a, Value b, Value c) { return bernoulli_logit_glm_grad(a, b, c, c); }},
      {Primitive::kBernoulliLogitGlmValueGrad,
       [](Value a, Value b, Value c) { return bernoulli_logit_glm_value_grad(a, b, c, c); }},
      {Primitive::kRandomUniform,
       [](Value a, Value b, Value) { return random_uniform(a, b, {2}); }},
      {Primitive::kRandomNormal,
       [](Value a, Value b, Value) { return random_normal(a, b, {2}); }},
  };
  // Every operator frontend/value.h defines, by spelling and arity.
  const std::map<std::pair<std::string, int>, Build> operators = {
      {{"+", 2}, [](Value a, Value b, Value) { return a + b; }},
      {{"-", 2}, [](Value a, Value b, Value) { return a - b; }},
      {{"*", 2}, [](Value a, Value b, Value) { return a * b; }},
      {{"/", 2}, [](Value a, Value b, Value) { return a / b; }},
      {{"%", 2}, [](Value a, Value b, Value) { return a % b; }},
      {{"-", 1}, [](Value a, Value, Value) { return -a; }},
      {{"<", 2}, [](Value a, Value b, Value) { return a < b; }},
      {{"<=", 2}, [](Value a, Value b, Value) { return a <= b; }},
      {{">", 2}, [](Value a, Value b, Value) { return a > b; }},
      {{">=", 2}, [](Value a, Value b, Value) { return a >= b; }},
      {{"==", 2}, [](Value a, Value b, Value) { return a == b; }},
      {{"!=", 2}, [](Value a, Value b, Value) { return a != b; }},
      {{"&&", 2}, [](Value a, Value b, Value) { return a && b; }},
      {{"||", 2}, [](Value a, Value b, Value) { return a || b; }},
      {{"!", 1}, [](Value a, Value, Value) { return !a; }},
  };
  int operators_in_table = 0;
  for (int i = 0; i < NumBuiltinPrimitives(); ++i) {
    const Primitive prim = static_cast<Primitive>(i);
    const std::string name(PrimitiveName(prim));
    auto function = functions.find(prim);
    if (function == functions.end()) {
      ADD_FAILURE() << name << " has no frontend function (frontend/value.h)";
    } else {
      EXPECT_EQ(LastPrimitive(function->second), prim) << name;
    }
    const std::string op(Info(prim).op);
    if (op.empty()) continue;
    ++operators_in_table;
    auto built = operators.find({op, Info(prim).num_inputs});
    if (built == operators.end()) {
      ADD_FAILURE() << name << ": the table's operator " << op << " is not defined";
    } else {
      EXPECT_EQ(LastPrimitive(built->second), prim) << name << " and operator " << op;
    }
  }
  EXPECT_EQ(operators_in_table, static_cast<int>(operators.size()))
      << "an operator of frontend/value.h is missing from ir/primitives.def";
}

// The binary log_sum_exp (Stan's log_sum_exp(a, b)), elementwise: equal to
// log(e^a + e^b) where that is representable, and finite where e^a
// overflows.
TEST(ValueTest, BinaryLogSumExpIsLogOfSumsAndNeverOverflows) {
  Context ctx;
  BatchFunction f = ctx.Batch("f")([](Value a, Value b) { return log_sum_exp(a, b); });
  const std::vector<double> a = {0, 3, -2, 1000, -1000, 1e-300, 700};
  const std::vector<double> b = {0, -2, 3, 1000, 0, -5, 710};
  absl::StatusOr<std::vector<Tensor>> out =
      f.Run({*Tensor::FromVector(a), *Tensor::FromVector(b)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = (*out)[0].ToVector<double>();
  ASSERT_EQ(got.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double m = std::max(a[i], b[i]);
    // log(e^a + e^b) = m + log(e^(a-m) + e^(b-m)), exact enough in long double.
    const long double expected =
        m + std::log(std::exp(static_cast<long double>(a[i] - m)) +
                     std::exp(static_cast<long double>(b[i] - m)));
    EXPECT_NEAR(got[i], static_cast<double>(expected), 4e-16 * std::max(1.0, std::abs(m)))
        << "a " << a[i] << " b " << b[i];
  }
  EXPECT_EQ(got[3], 1000 + std::log(2.0));  // e^1000 overflows a double
}

}  // namespace
}  // namespace autobatch
