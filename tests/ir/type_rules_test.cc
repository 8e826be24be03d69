// Tests of InferPrimitiveType: a passing and a failing case for every rule.
#include "ir/type_rules.h"

#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TensorType T(std::string_view text) {
  std::optional<TensorType> t = ParseTensorType(text);
  EXPECT_TRUE(t.has_value()) << text;
  return t.value_or(TensorType{});
}

const std::map<std::string, KernelSignature> kNoKernels;

// Infers `prim` over `inputs` with one output, at "rules.cc:7".
absl::StatusOr<std::vector<TensorType>> Infer(
    Primitive prim, std::vector<TensorType> inputs, Attributes attrs = {},
    int num_outputs = 1,
    const std::map<std::string, KernelSignature>& kernels = kNoKernels) {
  PrimOp op;
  op.prim = prim;
  for (size_t i = 0; i < inputs.size(); ++i) {
    op.inputs.push_back(VarId(static_cast<int32_t>(i)));
  }
  for (int i = 0; i < num_outputs; ++i) op.outputs.push_back(VarId(100 + i));
  op.attrs = std::move(attrs);
  op.loc = {"rules.cc", 7};
  return InferPrimitiveType(op, inputs, kernels);
}

// The single inferred type, or a failure naming the error.
void ExpectType(const absl::StatusOr<std::vector<TensorType>>& result,
                std::string_view want) {
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0], T(want)) << (*result)[0].ToString();
}

void ExpectInvalid(const absl::StatusOr<std::vector<TensorType>>& result,
                   std::initializer_list<std::string_view> substrings) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
      << result.status();
  for (std::string_view s : substrings) {
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(std::string(s)));
  }
}

Attributes WithLiteral(Literal literal) {
  Attributes a;
  a.literal = std::move(literal);
  return a;
}
Attributes WithInts(std::vector<int64_t> ints) {
  Attributes a;
  a.ints = std::move(ints);
  return a;
}
Attributes WithDType(DType d) {
  Attributes a;
  a.dtype = d;
  return a;
}
Attributes WithMatrix(int64_t rows, int64_t cols, size_t values) {
  Attributes a;
  auto m = std::make_shared<DenseMatrix>();
  m->rows = rows;
  m->cols = cols;
  m->data.assign(values, 1.0);
  a.matrix = std::move(m);
  return a;
}

TEST(TypeRulesTest, ErrorNamesPrimitiveOperandBothTypesAndLocation) {
  absl::StatusOr<std::vector<TensorType>> r =
      Infer(Primitive::kAdd, {T("f64[3]"), T("f32[3]")});
  ExpectInvalid(r, {"add", "(at rules.cc:7)", "operand 1", "f32[3]",
                    "operand 0", "f64[3]"});
  PrimOp op;
  op.prim = Primitive::kNeg;
  op.outputs = {VarId(1)};
  std::vector<TensorType> in = {T("bool")};
  ExpectInvalid(InferPrimitiveType(op, in, kNoKernels), {"neg (at <unknown>)"});
}

TEST(TypeRulesTest, Arity) {
  ExpectInvalid(Infer(Primitive::kAdd, {T("f64")}),
                {"add", "takes 2 operands, got 1"});
  ExpectInvalid(Infer(Primitive::kConstant, {T("f64")}, WithLiteral(Literal::F64(1))),
                {"constant", "takes 0 operands, got 1"});
  ExpectInvalid(Infer(Primitive::kConcat, {}), {"one or more operands, got none"});
  ExpectInvalid(Infer(Primitive::kCopy, {T("f64")}, {}, /*num_outputs=*/2),
                {"exactly 1 output, got 2"});
  ExpectInvalid(Infer(Primitive::kCopy, {T("f64")}, {}, /*num_outputs=*/0),
                {"exactly 1 output, got 0"});
  ExpectType(Infer(Primitive::kConcat, {T("i32")}), "i32[1]");
}

TEST(TypeRulesTest, Constant) {
  Literal v{T("f64[2]"), {1.0, 2.0}, {}};
  ExpectType(Infer(Primitive::kConstant, {}, WithLiteral(v)), "f64[2]");
  ExpectType(Infer(Primitive::kConstant, {}, WithLiteral(Literal::Bool(true))),
             "bool");
  ExpectInvalid(Infer(Primitive::kConstant, {}), {"constant", "'literal'"});
  Literal short_literal{T("f64[3]"), {1.0, 2.0}, {}};
  ExpectInvalid(Infer(Primitive::kConstant, {}, WithLiteral(short_literal)),
                {"f64[3]", "holds 2 floats", "exactly 3 floats"});
  Literal misplaced{T("i64"), {1.0}, {}};
  ExpectInvalid(Infer(Primitive::kConstant, {}, WithLiteral(misplaced)),
                {"holds 0 ints and 1 floats", "exactly 1 ints"});
  Literal negative{TensorType{DType::kF64, {-2}}, {}, {}};
  ExpectInvalid(Infer(Primitive::kConstant, {}, WithLiteral(negative)),
                {"the literal has shape [-2]"});
  // Values must be the dtype's own: no wrapping to i32, no overflow to an
  // f32 infinity (an infinity written as such is a value).
  Literal edges{T("i32[2]"), {}, {std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max()}};
  ExpectType(Infer(Primitive::kConstant, {}, WithLiteral(edges)), "i32[2]");
  Literal wide{T("i32[2]"), {}, {1, int64_t{1099511627781}}};
  ExpectInvalid(Infer(Primitive::kConstant, {}, WithLiteral(wide)),
                {"1099511627781", "(element 1)", "does not fit i32"});
  Literal huge{T("f32"), {1e300}, {}};
  ExpectInvalid(Infer(Primitive::kFillLike, {T("f32")}, WithLiteral(huge)),
                {"overflows f32"});
  Literal inf{T("f32"), {std::numeric_limits<double>::infinity()}, {}};
  ExpectType(Infer(Primitive::kConstant, {}, WithLiteral(inf)), "f32");
}

TEST(TypeRulesTest, FillLike) {
  ExpectType(Infer(Primitive::kFillLike, {T("i32[2,3]")},
                   WithLiteral(Literal::F64(2.0))),
             "i32[2,3]");
  ExpectInvalid(Infer(Primitive::kFillLike, {T("f64[2]")}), {"'literal'"});
  Literal vector{T("f64[2]"), {1.0, 2.0}, {}};
  ExpectInvalid(Infer(Primitive::kFillLike, {T("f64[2]")}, WithLiteral(vector)),
                {"fill_like", "f64[2]", "must be a scalar"});
}

// A literal takes the dtype of the value it is combined with (x * 0.5 is
// fill_like(x) {0.5} times x), which must not change the number written.
TEST(TypeRulesTest, FillLikeLiteralKeepsItsValue) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Literal u64_max{T("u64"), {}, {-1}};  // bit-cast
  for (const auto& [literal, type] : std::vector<std::pair<Literal, std::string>>{
           {Literal::F64(2.0), "i64"},
           {Literal::F64(-3.0), "i32"},
           {Literal::F64(0.1), "f32"},  // rounded to f32's nearest, as C++ does
           {Literal::F64(kInf), "f32"},
           {Literal::F64(kNaN), "f64"},
           {Literal::I64(1), "f64"},
           {Literal::I64(-7), "f32"},
           {Literal::I64(int64_t{1} << 53), "f64"},
           {Literal::I64(7), "u64"},
           {u64_max, "u64"},
           {Literal::I64(1), "bool"},
           {Literal::Bool(true), "i64"},
       }) {
    ExpectType(Infer(Primitive::kFillLike, {T(type + "[2]")}, WithLiteral(literal)),
               type + "[2]");
  }
  ExpectInvalid(Infer(Primitive::kFillLike, {T("i64")}, WithLiteral(Literal::F64(0.5))),
                {"fill_like (at rules.cc:7): the literal 0.5 would become 0 as i64, the dtype "
                 "of the value it is combined with (operand 0 has type i64); write a whole "
                 "number if i64 is meant, or cast the other operand to f64"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("f32")}, WithLiteral(Literal::F64(1e40))),
                {"the literal 1e+40 would become inf as f32", "write inf if infinity"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("u64")}, WithLiteral(Literal::I64(-1))),
                {"the literal -1 would become 18446744073709551615 as u64",
                 "use a literal in u64's range, or cast the other operand to i64"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("i32")}, WithLiteral(Literal::I64(3000000000))),
                {"the literal 3000000000 would become", "as i32", "wider dtype"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("i64")}, WithLiteral(Literal::F64(kNaN))),
                {"the literal nan would become 0 as i64", "i64 has no NaN or infinity"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("i64")}, WithLiteral(Literal::F64(1e19))),
                {"would become 9223372036854775807 as i64"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("i64")}, WithLiteral(u64_max)),
                {"the literal 18446744073709551615 would become -1 as i64"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("f64")},
                      WithLiteral(Literal::I64((int64_t{1} << 53) + 1))),
                {"the literal 9007199254740993 would become 9007199254740992 as f64",
                 "more digits than f64 holds"});
  ExpectInvalid(Infer(Primitive::kFillLike, {T("bool")}, WithLiteral(Literal::I64(2))),
                {"the literal 2 would become true as bool", "write true or false"});
}

TEST(TypeRulesTest, Copy) {
  ExpectType(Infer(Primitive::kCopy, {T("u64[4]")}), "u64[4]");
  ExpectInvalid(Infer(Primitive::kCopy, {T("u64"), T("u64")}),
                {"copy", "takes 1 operand, got 2"});
}

TEST(TypeRulesTest, Select) {
  ExpectType(Infer(Primitive::kSelect, {T("bool"), T("f64[3]"), T("f64[3]")}),
             "f64[3]");
  ExpectType(Infer(Primitive::kSelect, {T("bool[3]"), T("i64[3]"), T("i64[3]")}),
             "i64[3]");
  ExpectInvalid(Infer(Primitive::kSelect, {T("i64"), T("f64"), T("f64")}),
                {"select", "operand 0 has type i64", "condition must be bool"});
  ExpectInvalid(Infer(Primitive::kSelect, {T("bool"), T("f64"), T("f32")}),
                {"operand 2 has type f32", "operand 1 has type f64"});
  ExpectInvalid(Infer(Primitive::kSelect, {T("bool[2]"), T("f64[3]"), T("f64[3]")}),
                {"operand 0 has type bool[2]", "operand 1 has type f64[3]",
                 "scalar or have the operands' shape"});
}

TEST(TypeRulesTest, Cast) {
  ExpectType(Infer(Primitive::kCast, {T("f64[2]")}, WithDType(DType::kI32)),
             "i32[2]");
  ExpectInvalid(Infer(Primitive::kCast, {T("f64")}), {"cast", "'dtype'"});
}

TEST(TypeRulesTest, Broadcast) {
  ExpectType(Infer(Primitive::kBroadcast, {T("f32")}, WithInts({2, 3})),
             "f32[2,3]");
  ExpectType(Infer(Primitive::kBroadcast, {T("f32")}, WithInts({})), "f32");
  ExpectInvalid(Infer(Primitive::kBroadcast, {T("f32[2]")}, WithInts({2})),
                {"broadcast", "operand 0 has type f32[2]", "takes a scalar"});
  ExpectInvalid(Infer(Primitive::kBroadcast, {T("f32")}, WithInts({3, -1})),
                {"shape [3,-1]", "dimensions must be >= 0"});
  ExpectInvalid(Infer(Primitive::kBroadcast, {T("f32")},
                      WithInts({int64_t{1} << 40, int64_t{1} << 40})),
                {"element count"});
}

TEST(TypeRulesTest, Slice) {
  ExpectType(Infer(Primitive::kSlice, {T("i64[5]")}, WithInts({1, 3})), "i64[3]");
  ExpectType(Infer(Primitive::kSlice, {T("i64[5]")}, WithInts({5, 0})), "i64[0]");
  ExpectInvalid(Infer(Primitive::kSlice, {T("i64[5]")}, WithInts({3, 3})),
                {"slice {begin=3, size=3}", "out of bounds", "i64[5]",
                 "begin + size <= 5"});
  ExpectInvalid(Infer(Primitive::kSlice, {T("i64[5]")}, WithInts({-1, 1})),
                {"out of bounds"});
  ExpectInvalid(Infer(Primitive::kSlice, {T("i64[5]")},
                      WithInts({2, std::numeric_limits<int64_t>::max()})),
                {"out of bounds"});
  ExpectInvalid(Infer(Primitive::kSlice, {T("i64[5]")}, WithInts({1})),
                {"{begin, size}"});
  ExpectInvalid(Infer(Primitive::kSlice, {T("i64[2,2]")}, WithInts({0, 1})),
                {"operand 0 has type i64[2,2]", "takes a vector"});
}

TEST(TypeRulesTest, Concat) {
  ExpectType(Infer(Primitive::kConcat, {T("f64"), T("f64[3]"), T("f64[0]")}),
             "f64[4]");
  ExpectInvalid(Infer(Primitive::kConcat, {T("f64"), T("f32[3]")}),
                {"concat", "operand 1 has type f32[3]", "operand 0 has type f64"});
  ExpectInvalid(Infer(Primitive::kConcat, {T("f64[2,2]")}),
                {"operand 0 has type f64[2,2]", "scalars and vectors"});
}

TEST(TypeRulesTest, Arithmetic) {
  ExpectType(Infer(Primitive::kAdd, {T("i64[2]"), T("i64[2]")}), "i64[2]");
  ExpectType(Infer(Primitive::kMul, {T("f64"), T("f64[2,3]")}), "f64[2,3]");
  ExpectType(Infer(Primitive::kDiv, {T("i32[4]"), T("i32")}), "i32[4]");
  ExpectType(Infer(Primitive::kMod, {T("u64"), T("u64")}), "u64");
  ExpectInvalid(Infer(Primitive::kSub, {T("bool"), T("bool")}),
                {"sub", "operand 0 has type bool", "numeric (non-bool)"});
  ExpectInvalid(Infer(Primitive::kMax, {T("f64[2]"), T("f64[3]")}),
                {"max", "operand 1 has type f64[3]", "operand 0 has type f64[2]",
                 "equal shapes"});
  ExpectInvalid(Infer(Primitive::kMin, {T("i64"), T("i32")}),
                {"min", "one dtype"});
}

TEST(TypeRulesTest, NumericUnary) {
  ExpectType(Infer(Primitive::kAbs, {T("i32[3]")}), "i32[3]");
  ExpectInvalid(Infer(Primitive::kNeg, {T("bool[3]")}),
                {"neg", "operand 0 has type bool[3]", "numeric"});
}

TEST(TypeRulesTest, FloatUnary) {
  ExpectType(Infer(Primitive::kExp, {T("f32[2]")}), "f32[2]");
  ExpectInvalid(Infer(Primitive::kLog, {T("i64")}),
                {"log", "operand 0 has type i64", "float type"});
}

TEST(TypeRulesTest, FloatBinary) {
  ExpectType(Infer(Primitive::kPow, {T("f64[2]"), T("f64")}), "f64[2]");
  ExpectInvalid(Infer(Primitive::kPow, {T("f64"), T("i64")}),
                {"pow", "operand 1 has type i64", "float type"});
}

TEST(TypeRulesTest, Compare) {
  ExpectType(Infer(Primitive::kLt, {T("f64[3]"), T("f64")}), "bool[3]");
  ExpectType(Infer(Primitive::kEq, {T("bool"), T("bool")}), "bool");
  ExpectInvalid(Infer(Primitive::kGe, {T("f64[3]"), T("f64[2]")}),
                {"ge", "operand 1 has type f64[2]", "operand 0 has type f64[3]"});
}

TEST(TypeRulesTest, Logical) {
  ExpectType(Infer(Primitive::kAnd, {T("bool[2]"), T("bool")}), "bool[2]");
  ExpectInvalid(Infer(Primitive::kOr, {T("bool"), T("f64")}),
                {"or", "operand 1 has type f64", "needs bool"});
  ExpectType(Infer(Primitive::kNot, {T("bool")}), "bool");
  ExpectInvalid(Infer(Primitive::kNot, {T("i64")}),
                {"not", "operand 0 has type i64", "needs bool"});
}

TEST(TypeRulesTest, Reduce) {
  ExpectType(Infer(Primitive::kReduceSum, {T("f64[2,3]")}), "f64");
  ExpectType(Infer(Primitive::kSquaredNorm, {T("i64[3]")}), "i64");
  ExpectInvalid(Infer(Primitive::kReduceSum, {T("bool[3]")}),
                {"reduce_sum", "operand 0 has type bool[3]"});
  ExpectType(Infer(Primitive::kLogSumExp, {T("f32[2,3]")}), "f32");
  ExpectType(Infer(Primitive::kLogSumExp, {T("f64")}), "f64");
  ExpectInvalid(Infer(Primitive::kLogSumExp, {T("i64[3]")}),
                {"log_sum_exp", "operand 0 has type i64[3]", "float"});
}

TEST(TypeRulesTest, Dot) {
  ExpectType(Infer(Primitive::kDot, {T("f32[3]"), T("f32[3]")}), "f32");
  ExpectInvalid(Infer(Primitive::kDot, {T("f32[3]"), T("f32[2]")}),
                {"dot", "operand 1 has type f32[2]", "operand 0 has type f32[3]"});
  ExpectInvalid(Infer(Primitive::kDot, {T("bool[3]"), T("bool[3]")}),
                {"dot", "numeric"});
}

TEST(TypeRulesTest, GatherAndScatterAdd) {
  ExpectType(Infer(Primitive::kGather, {T("bool[5]"), T("i64[2]")}), "bool[2]");
  ExpectInvalid(Infer(Primitive::kGather, {T("f64[5]"), T("i32[2]")}),
                {"gather", "operand 1 has type i32[2]", "i64 vector"});
  ExpectInvalid(Infer(Primitive::kGather, {T("f64[2,2]"), T("i64[2]")}), {"from a vector"});
  Attributes n;
  n.ints = {4};
  ExpectType(Infer(Primitive::kScatterAdd, {T("f64[3]"), T("i64[3]")}, n), "f64[4]");
  ExpectInvalid(Infer(Primitive::kScatterAdd, {T("f64[3]"), T("i64[2]")}, n),
                {"scatter_add", "operand 1 has type i64[2]", "of the values' length"});
  ExpectInvalid(Infer(Primitive::kScatterAdd, {T("f64[3]"), T("i64[3]")}),
                {"needs attribute 'ints' = {n}"});
}

TEST(TypeRulesTest, MatVecInput) {
  ExpectType(Infer(Primitive::kMatVecInput, {T("f64[2,3]"), T("f64[3]")}), "f64[2]");
  ExpectType(Infer(Primitive::kMatVecTInput, {T("f32[2,3]"), T("f32[2]")}), "f32[3]");
  ExpectInvalid(Infer(Primitive::kMatVecInput, {T("f64[2,3]"), T("f64[2]")}),
                {"matvec_input", "operand 1 has type f64[2]", "needs a f64[3] vector"});
  ExpectInvalid(Infer(Primitive::kMatVecTInput, {T("i64[2,3]"), T("i64[2]")}),
                {"float matrix"});
}

TEST(TypeRulesTest, BernoulliLogitGlm) {
  const TensorType x = T("f64[5,3]"), y = T("i64[5]"), alpha = T("f64"), beta = T("f64[3]");
  ExpectType(Infer(Primitive::kBernoulliLogitGlm, {x, y, alpha, beta}), "f64");
  ExpectType(Infer(Primitive::kBernoulliLogitGlmGrad, {x, y, alpha, beta}), "f64[4]");
  ExpectType(Infer(Primitive::kBernoulliLogitGlmValueGrad, {x, y, alpha, beta}), "f64[5]");
  ExpectType(Infer(Primitive::kBernoulliLogitGlm, {T("f64[0,0]"), T("i64[0]"), alpha, T("f64[0]")}),
             "f64");
  ExpectInvalid(Infer(Primitive::kBernoulliLogitGlm, {T("f64[15]"), y, alpha, beta}),
                {"bernoulli_logit_glm", "operand 0 has type f64[15]", "X as f64[N,K]"});
  ExpectInvalid(Infer(Primitive::kBernoulliLogitGlmGrad, {T("f32[5,3]"), y, alpha, beta}),
                {"bernoulli_logit_glm_grad", "X as f64[N,K]"});
  ExpectInvalid(Infer(Primitive::kBernoulliLogitGlm, {x, T("f64[5]"), alpha, beta}),
                {"operand 1 has type f64[5]", "y as i64[5] (one per row of X)"});
  ExpectInvalid(Infer(Primitive::kBernoulliLogitGlm, {x, T("i64[4]"), alpha, beta}),
                {"operand 1 has type i64[4]", "y as i64[5]"});
  ExpectInvalid(Infer(Primitive::kBernoulliLogitGlm, {x, y, T("f64[1]"), beta}),
                {"operand 2 has type f64[1]", "alpha as an f64 scalar"});
  ExpectInvalid(Infer(Primitive::kBernoulliLogitGlm, {x, y, alpha, T("f64[4]")}),
                {"operand 3 has type f64[4]", "beta as f64[3] (one per column of X)"});
}

TEST(TypeRulesTest, MatVec) {
  ExpectType(Infer(Primitive::kMatVec, {T("f64[3]")}, WithMatrix(2, 3, 6)),
             "f64[2]");
  ExpectType(Infer(Primitive::kMatVecBatched, {T("f32[3]")}, WithMatrix(4, 3, 12)),
             "f32[4]");
  ExpectInvalid(Infer(Primitive::kMatVec, {T("f64[2]")}, WithMatrix(2, 3, 6)),
                {"matvec", "operand 0 has type f64[2]", "2 x 3", "column count"});
  ExpectInvalid(Infer(Primitive::kMatVec, {T("f64[3]")}), {"'matrix'"});
  ExpectInvalid(Infer(Primitive::kMatVec, {T("i64[3]")}, WithMatrix(2, 3, 6)),
                {"operand 0 has type i64[3]", "float vector"});
  ExpectInvalid(Infer(Primitive::kMatVec, {T("f64")}, WithMatrix(1, 1, 1)),
                {"operand 0 has type f64", "float vector"});
  ExpectInvalid(Infer(Primitive::kMatVec, {T("f64[3]")}, WithMatrix(2, 3, 5)),
                {"2 x 3 but holds 5 values"});
}

TEST(TypeRulesTest, Random) {
  ExpectType(Infer(Primitive::kRandomNormal, {T("u64"), T("u64")}, WithInts({4})),
             "f64[4]");
  ExpectType(Infer(Primitive::kRandomUniform, {T("u64"), T("u64")}), "f64");
  ExpectInvalid(Infer(Primitive::kRandomUniform, {T("u64"), T("i64")}),
                {"random_uniform", "operand 1 has type i64", "u64 scalars"});
  ExpectInvalid(Infer(Primitive::kRandomNormal, {T("u64[2]"), T("u64")}),
                {"operand 0 has type u64[2]"});
  ExpectInvalid(Infer(Primitive::kRandomNormal, {T("u64"), T("u64")}, WithInts({-1})),
                {"shape [-1]"});
}

TEST(TypeRulesTest, UserKernel) {
  std::map<std::string, KernelSignature> kernels;
  kernels["grad"] = {{T("f64[3]"), T("f64")}, {T("f64[3]"), T("f64")}, true};
  Attributes attrs;
  attrs.kernel = "grad";
  absl::StatusOr<std::vector<TensorType>> ok =
      Infer(Primitive::kUserKernel, {T("f64[3]"), T("f64")}, attrs, 2, kernels);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(*ok, ElementsAre(T("f64[3]"), T("f64")));

  ExpectInvalid(Infer(Primitive::kUserKernel, {T("f64[2]"), T("f64")}, attrs, 2,
                      kernels),
                {"kernel 'grad'", "(at rules.cc:7)", "operand 0 has type f64[2]",
                 "declares f64[3]"});
  ExpectInvalid(Infer(Primitive::kUserKernel, {T("f64[3]")}, attrs, 2, kernels),
                {"kernel 'grad'", "takes 2 operands", "got 1"});
  ExpectInvalid(Infer(Primitive::kUserKernel, {T("f64[3]"), T("f64")}, attrs, 1,
                      kernels),
                {"has 2 outputs", "got 1"});

  attrs.kernel = "hess";
  absl::StatusOr<std::vector<TensorType>> missing =
      Infer(Primitive::kUserKernel, {T("f64[3]")}, attrs, 1, kernels);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              AllOf(HasSubstr("kernel 'hess'"), HasSubstr("rules.cc:7"),
                    HasSubstr("not declared")));

  ExpectInvalid(Infer(Primitive::kUserKernel, {T("f64[3]")}, {}, 1, kernels),
                {"no kernel name"});
}

// A well-typed application of every built-in primitive: no primitive falls
// outside the type rules, and each rule gives its documented output.
TEST(TypeRulesTest, EveryPrimitiveHasAWellTypedUse) {
  for (int i = 0; i < NumBuiltinPrimitives(); ++i) {
    const Primitive prim = static_cast<Primitive>(i);
    const PrimitiveInfo& info = Info(prim);
    SCOPED_TRACE(std::string(info.name));
    std::vector<TensorType> in;
    Attributes attrs;
    std::string want;
    switch (info.rule) {
      case TypeRule::kConstant:
        attrs = WithLiteral(Literal::I64(3));
        want = "i64";
        break;
      case TypeRule::kFillLike:
        in = {T("f64[2]")};
        attrs = WithLiteral(Literal::F64(1));
        want = "f64[2]";
        break;
      case TypeRule::kSame:
      case TypeRule::kNumericUnary:
      case TypeRule::kFloatUnary:
        in = {T("f64[2]")};
        want = "f64[2]";
        break;
      case TypeRule::kSelect:
        in = {T("bool"), T("f64[2]"), T("f64[2]")};
        want = "f64[2]";
        break;
      case TypeRule::kCast:
        in = {T("f64[2]")};
        attrs = WithDType(DType::kBool);
        want = "bool[2]";
        break;
      case TypeRule::kBroadcast:
        in = {T("f64")};
        attrs = WithInts({2});
        want = "f64[2]";
        break;
      case TypeRule::kSlice:
        in = {T("f64[4]")};
        attrs = WithInts({1, 2});
        want = "f64[2]";
        break;
      case TypeRule::kConcat:
        in = {T("f64"), T("f64")};
        want = "f64[2]";
        break;
      case TypeRule::kGather:
        in = {T("f64[4]"), T("i64[2]")};
        want = "f64[2]";
        break;
      case TypeRule::kScatterAdd:
        in = {T("f64[3]"), T("i64[3]")};
        attrs = WithInts({2});
        want = "f64[2]";
        break;
      case TypeRule::kMatVecInput:
        in = {T("f64[2,3]"), T("f64[3]")};
        want = "f64[2]";
        break;
      case TypeRule::kMatVecTInput:
        in = {T("f64[2,3]"), T("f64[2]")};
        want = "f64[3]";
        break;
      case TypeRule::kBernoulliLogitGlm:
        in = {T("f64[2,3]"), T("i64[2]"), T("f64"), T("f64[3]")};
        want = prim == Primitive::kBernoulliLogitGlm       ? "f64"
               : prim == Primitive::kBernoulliLogitGlmGrad ? "f64[4]"
                                                           : "f64[5]";
        break;
      case TypeRule::kArithmetic:
      case TypeRule::kFloatBinary:
        in = {T("f64[2]"), T("f64")};
        want = "f64[2]";
        break;
      case TypeRule::kCompare:
        in = {T("f64[2]"), T("f64")};
        want = "bool[2]";
        break;
      case TypeRule::kLogicalBinary:
        in = {T("bool[2]"), T("bool[2]")};
        want = "bool[2]";
        break;
      case TypeRule::kLogicalNot:
        in = {T("bool[2]")};
        want = "bool[2]";
        break;
      case TypeRule::kReduce:
      case TypeRule::kFloatReduce:
        in = {T("f64[2]")};
        want = "f64";
        break;
      case TypeRule::kDot:
        in = {T("f64[2]"), T("f64[2]")};
        want = "f64";
        break;
      case TypeRule::kMatVec:
        in = {T("f64[2]")};
        attrs = WithMatrix(3, 2, 6);
        want = "f64[3]";
        break;
      case TypeRule::kRandom:
        in = {T("u64"), T("u64")};
        attrs = WithInts({2});
        want = "f64[2]";
        break;
    }
    if (info.num_inputs >= 0) {
      ASSERT_EQ(in.size(), static_cast<size_t>(info.num_inputs));
    }
    ExpectType(Infer(prim, in, attrs), want);
  }
}

}  // namespace
}  // namespace autobatch
