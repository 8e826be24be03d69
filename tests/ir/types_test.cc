// Tests of DType / TensorType names and parsing, and of the primitive table.
#include "ir/types.h"

#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "gtest/gtest.h"
#include "ir/primitives.h"

namespace autobatch {
namespace {

TEST(DTypeTest, NamesRoundTrip) {
  std::set<std::string_view> names;
  for (DType d : kAllDTypes) {
    std::string_view name = DTypeName(d);
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
    EXPECT_EQ(DTypeFromName(name), d) << name;
  }
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(DTypeName(DType::kF64), "f64");
  EXPECT_EQ(DTypeName(DType::kBool), "bool");
  EXPECT_EQ(DTypeName(DType::kU64), "u64");
  EXPECT_EQ(DTypeFromName("F64"), std::nullopt);
  EXPECT_EQ(DTypeFromName(""), std::nullopt);
  EXPECT_EQ(DTypeFromName("f16"), std::nullopt);
}

TEST(DTypeTest, SizesAndClasses) {
  EXPECT_EQ(DTypeSize(DType::kF64), 8);
  EXPECT_EQ(DTypeSize(DType::kF32), 4);
  EXPECT_EQ(DTypeSize(DType::kI64), 8);
  EXPECT_EQ(DTypeSize(DType::kI32), 4);
  EXPECT_EQ(DTypeSize(DType::kBool), 1);
  EXPECT_EQ(DTypeSize(DType::kU64), 8);
  EXPECT_TRUE(IsFloat(DType::kF32));
  EXPECT_FALSE(IsFloat(DType::kI64));
  EXPECT_TRUE(IsInteger(DType::kU64));
  EXPECT_FALSE(IsInteger(DType::kBool));
  EXPECT_FALSE(IsInteger(DType::kF64));
}

TEST(TensorTypeTest, ToString) {
  EXPECT_EQ(Scalar(DType::kF64).ToString(), "f64");
  EXPECT_EQ(Vector(DType::kI32, 3).ToString(), "i32[3]");
  EXPECT_EQ((TensorType{DType::kBool, {2, 0, 5}}).ToString(), "bool[2,0,5]");
  EXPECT_EQ((TensorType{DType::kF32, {2, 5}}).NumElements(), 10);
  EXPECT_EQ(Scalar(DType::kF32).NumElements(), 1);
  EXPECT_EQ(Vector(DType::kF32, 0).NumElements(), 0);
  EXPECT_TRUE(Scalar(DType::kU64).IsScalar());
  EXPECT_EQ((TensorType{DType::kF32, {2, 5}}).Rank(), 2);
}

TEST(TensorTypeTest, ParseRoundTrip) {
  for (DType d : kAllDTypes) {
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{}, {0}, {7}, {2, 3}, {1, 1, 1, 1}, {123456789012}}) {
      TensorType t{d, shape};
      std::optional<TensorType> back = ParseTensorType(t.ToString());
      ASSERT_TRUE(back.has_value()) << t.ToString();
      EXPECT_EQ(*back, t) << t.ToString();
    }
  }
}

TEST(TensorTypeTest, ParseRejectsMalformed) {
  for (std::string_view bad :
       {"", "f16", "F64", "f64 ", " f64", "[3]", "f64[", "f64]", "f64[3",
        "f64[3]x", "f64[3][4]", "f64[-1]", "f64[+1]", "f64[,3]", "f64[3,]",
        "f64[3,,4]", "f64[a]", "f64[3 ]", "f64[99999999999999999999]"}) {
    EXPECT_EQ(ParseTensorType(bad), std::nullopt) << "'" << bad << "'";
  }
}

// ToString never prints "[]" (a scalar has no brackets), so "f64[]" is not
// the printed form of any type.
TEST(TensorTypeTest, ParseRejectsEmptyBrackets) {
  EXPECT_EQ(ParseTensorType("f64[]"), std::nullopt);
}

TEST(PrimitiveTableTest, NamesAreUniqueAndRoundTrip) {
  std::set<std::string_view> names;
  ASSERT_EQ(AllPrimitives().size(), static_cast<size_t>(NumBuiltinPrimitives()));
  for (int i = 0; i < NumBuiltinPrimitives(); ++i) {
    const Primitive prim = static_cast<Primitive>(i);
    const PrimitiveInfo& info = Info(prim);
    EXPECT_EQ(&info, &AllPrimitives()[i]);
    EXPECT_FALSE(info.name.empty());
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
    EXPECT_EQ(PrimitiveName(prim), info.name);
    EXPECT_EQ(PrimitiveFromName(info.name), prim) << info.name;
    EXPECT_FALSE(info.doc.empty()) << info.name;
    EXPECT_GE(info.num_inputs, -1) << info.name;
  }
  EXPECT_EQ(PrimitiveFromName("add"), Primitive::kAdd);
  EXPECT_EQ(PrimitiveFromName("no_such_primitive"), std::nullopt);
  EXPECT_EQ(PrimitiveFromName(""), std::nullopt);
}

TEST(PrimitiveTableTest, UserKernelIsNotABuiltin) {
  EXPECT_EQ(PrimitiveName(Primitive::kUserKernel), "kernel");
  EXPECT_EQ(PrimitiveFromName("kernel"), std::nullopt);
  EXPECT_EQ(Info(Primitive::kUserKernel).num_inputs, -1);
  EXPECT_FALSE(Info(Primitive::kUserKernel).bit_stable);
  for (const PrimitiveInfo& info : AllPrimitives()) {
    EXPECT_NE(info.name, "kernel");
  }
}

// Each type rule implies an arity; the table must agree with it.
TEST(PrimitiveTableTest, ArityMatchesTypeRule) {
  for (const PrimitiveInfo& info : AllPrimitives()) {
    int want = 0;
    switch (info.rule) {
      case TypeRule::kConstant: want = 0; break;
      case TypeRule::kFillLike:
      case TypeRule::kSame:
      case TypeRule::kCast:
      case TypeRule::kBroadcast:
      case TypeRule::kSlice:
      case TypeRule::kNumericUnary:
      case TypeRule::kFloatUnary:
      case TypeRule::kLogicalNot:
      case TypeRule::kReduce:
      case TypeRule::kFloatReduce:
      case TypeRule::kMatVec: want = 1; break;
      case TypeRule::kArithmetic:
      case TypeRule::kFloatBinary:
      case TypeRule::kCompare:
      case TypeRule::kLogicalBinary:
      case TypeRule::kDot:
      case TypeRule::kRandom:
      case TypeRule::kGather:
      case TypeRule::kScatterAdd:
      case TypeRule::kMatVecInput:
      case TypeRule::kMatVecTInput: want = 2; break;
      case TypeRule::kSelect: want = 3; break;
      case TypeRule::kBernoulliLogitGlm:
        want = 4;
        break;
      case TypeRule::kConcat: want = -1; break;
    }
    EXPECT_EQ(info.num_inputs, want) << info.name;
  }
}

// Only the batched matrix product may depend on the batch composition.
TEST(PrimitiveTableTest, OnlyMatVecBatchedIsNotBitStable) {
  for (int i = 0; i < NumBuiltinPrimitives(); ++i) {
    const Primitive prim = static_cast<Primitive>(i);
    EXPECT_EQ(Info(prim).bit_stable, prim != Primitive::kMatVecBatched)
        << PrimitiveName(prim);
  }
}

// The codegen column (ir/primitives.def): a template only on fusable,
// element-wise primitives, using only the placeholders codegen fills in.
TEST(PrimitiveTableTest, CodegenTemplatesAreElementwiseAndWellFormed) {
  const std::set<TypeRule> elementwise = {
      TypeRule::kArithmetic,   TypeRule::kFloatBinary, TypeRule::kCompare,
      TypeRule::kLogicalBinary, TypeRule::kNumericUnary, TypeRule::kFloatUnary,
      TypeRule::kLogicalNot};
  for (const PrimitiveInfo& info : AllPrimitives()) {
    if (info.cxx.empty()) continue;
    EXPECT_TRUE(info.fusable) << info.name;
    EXPECT_TRUE(elementwise.count(info.rule)) << info.name;
    const std::string cxx(info.cxx);
    const bool chunk = cxx.find("$x") != std::string::npos;
    for (size_t at = cxx.find('$'); at != std::string::npos; at = cxx.find('$', at + 1)) {
      ASSERT_LT(at + 1, cxx.size()) << info.name;
      const char c = cxx[at + 1];
      const std::string allowed = chunk ? "xn" : info.num_inputs == 2 ? "01ta" : "0ta";
      EXPECT_NE(allowed.find(c), std::string::npos)
          << info.name << ": $" << c << " in " << cxx;
    }
    EXPECT_TRUE(chunk || cxx.find("$0") != std::string::npos) << info.name;
  }
}

// The operator column: at most one primitive per operator and arity, and
// only on unary and binary primitives.
TEST(PrimitiveTableTest, OperatorsAreUnique) {
  std::set<std::pair<std::string_view, int>> seen;
  for (const PrimitiveInfo& info : AllPrimitives()) {
    if (info.op.empty()) continue;
    EXPECT_TRUE(info.num_inputs == 1 || info.num_inputs == 2) << info.name;
    EXPECT_TRUE(seen.insert({info.op, info.num_inputs}).second) << info.name;
  }
}

// Expensive kernels (RunsExpensiveKernel, ir/ir.h) are the matrix products
// and user kernels; the batched product, the data-indexed ops and user
// kernels are not fused.
TEST(PrimitiveTableTest, CostClassesAndFusability) {
  EXPECT_EQ(Info(Primitive::kUserKernel).cost, CostClass::kUserKernel);
  EXPECT_FALSE(Info(Primitive::kUserKernel).fusable);
  EXPECT_TRUE(IsExpensive(Primitive::kUserKernel));
  for (int i = 0; i < NumBuiltinPrimitives(); ++i) {
    const Primitive prim = static_cast<Primitive>(i);
    const PrimitiveInfo& info = Info(prim);
    EXPECT_NE(info.cost, CostClass::kUserKernel) << info.name;
    EXPECT_EQ(IsExpensive(prim), prim == Primitive::kMatVec || prim == Primitive::kMatVecBatched)
        << info.name;
    // The data-indexed ops are documented non-fusable (ir/primitives.def).
    const bool data_indexed = prim == Primitive::kGather || prim == Primitive::kScatterAdd ||
                              prim == Primitive::kMatVecInput || prim == Primitive::kMatVecTInput ||
                              prim == Primitive::kBernoulliLogitGlm ||
                              prim == Primitive::kBernoulliLogitGlmGrad ||
                              prim == Primitive::kBernoulliLogitGlmValueGrad;
    EXPECT_EQ(info.fusable, prim != Primitive::kMatVecBatched && !data_indexed) << info.name;
  }
}

}  // namespace
}  // namespace autobatch
