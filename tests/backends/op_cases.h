// The op cases of the backend tests: every primitive, for every dtype its
// type rule allows, plus a two-output user kernel ("sum_and_product"); and
// the lane sets they run on.
#ifndef AUTOBATCH_TESTS_BACKENDS_OP_CASES_H_
#define AUTOBATCH_TESTS_BACKENDS_OP_CASES_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/kernel_registry.h"
#include "backends/lane_set.h"
#include "ir/ir.h"
#include "tests/backends/test_util.h"

namespace autobatch::testing {

inline constexpr DType kNumeric[] = {DType::kF64, DType::kF32, DType::kI64, DType::kI32, DType::kU64};
inline constexpr DType kFloats[] = {DType::kF64, DType::kF32};

// One op to test: the op, its operand types and its result types.
struct OpCase {
  std::string name;
  PrimOp op;
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
};

inline std::string CaseName(const PrimOp& op, const std::vector<TensorType>& inputs) {
  std::string name(op.prim == Primitive::kUserKernel ? op.attrs.kernel : PrimitiveName(op.prim));
  for (const TensorType& t : inputs) absl::StrAppend(&name, " ", t.ToString());
  return name;
}

inline void AddCase(std::vector<OpCase>& cases, PrimOp op, std::vector<TensorType> inputs,
         TensorType output) {
  std::string name = CaseName(op, inputs);
  cases.push_back({std::move(name), std::move(op), std::move(inputs), {std::move(output)}});
}

inline Literal LiteralFor(DType d, int64_t n) {
  Literal lit{TensorType{d, n == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{n}}, {}, {}};
  for (int64_t i = 0; i < n; ++i) {
    if (IsFloat(d)) {
      lit.floats.push_back(i % 2 ? -0.1 * static_cast<double>(i) : 1.5);
    } else {
      lit.ints.push_back(i % 2 ? -3 - i : 7);
    }
  }
  return lit;
}

// Every primitive, for every dtype its type rule allows, with the shape
// combinations its rule allows (scalar, vector, scalar broadcast).
inline std::vector<OpCase> AllCases() {
  std::vector<OpCase> cases;
  const std::vector<int64_t> kS = {};
  const std::vector<int64_t> kV = {3};
  auto shape_pairs = [&](DType d) {
    const TensorType s{d, kS}, v{d, kV};
    return std::vector<std::pair<TensorType, TensorType>>{{s, s}, {v, v}, {s, v}, {v, s}};
  };
  auto out_shape = [](const TensorType& a, const TensorType& b) {
    return a.IsScalar() ? b.shape : a.shape;
  };
  for (DType d : kAllDTypes) {
    const TensorType s{d, kS}, v{d, kV};
    for (int64_t n : {1, 3}) {
      Attributes attrs;
      attrs.literal = LiteralFor(d, n);
      AddCase(cases, MakeOp(Primitive::kConstant, 0, attrs), {}, attrs.literal->type);
    }
    for (DType lit : {DType::kF64, DType::kI64, DType::kBool}) {
      Attributes attrs;
      attrs.literal = LiteralFor(lit, 1);
      // A value d holds exactly: the type rule refuses a fill the cast would
      // change (ir/type_rules.h; the kernel's casts are tested on their own).
      if (d == DType::kBool && lit != DType::kBool) {
        attrs.literal = lit == DType::kF64 ? Literal::F64(1) : Literal::I64(1);
      } else if (!IsFloat(d) && lit == DType::kF64) {
        attrs.literal = Literal::F64(7);
      }
      AddCase(cases, MakeOp(Primitive::kFillLike, 1, attrs), {v}, v);
    }
    AddCase(cases, MakeOp(Primitive::kCopy, 1), {v}, v);
    AddCase(cases, MakeOp(Primitive::kCopy, 1), {s}, s);
    const TensorType cs = Scalar(DType::kBool), cv = Vector(DType::kBool, 3);
    AddCase(cases, MakeOp(Primitive::kSelect, 3), {cs, s, s}, s);
    AddCase(cases, MakeOp(Primitive::kSelect, 3), {cs, v, v}, v);
    AddCase(cases, MakeOp(Primitive::kSelect, 3), {cv, v, v}, v);
    for (DType to : kAllDTypes) {
      Attributes attrs;
      attrs.dtype = to;
      AddCase(cases, MakeOp(Primitive::kCast, 1, attrs), {v}, TensorType{to, kV});
    }
    Attributes bshape;
    bshape.ints = {2, 3};
    AddCase(cases, MakeOp(Primitive::kBroadcast, 1, bshape), {s}, TensorType{d, {2, 3}});
    Attributes slice;
    slice.ints = {1, 3};
    AddCase(cases, MakeOp(Primitive::kSlice, 1, slice), {TensorType{d, {5}}}, TensorType{d, kV});
    AddCase(cases, MakeOp(Primitive::kConcat, 3), {s, TensorType{d, {2}}, v}, TensorType{d, {6}});
    AddCase(cases, MakeOp(Primitive::kConcat, 1), {s}, TensorType{d, {1}});
    AddCase(cases, MakeOp(Primitive::kGather, 2), {TensorType{d, {5}}, Vector(DType::kI64, 3)}, v);
    for (Primitive p : {Primitive::kLt, Primitive::kLe, Primitive::kGt, Primitive::kGe,
                        Primitive::kEq, Primitive::kNe}) {
      for (const auto& [a, b] : shape_pairs(d)) {
        AddCase(cases, MakeOp(p, 2), {a, b}, TensorType{DType::kBool, out_shape(a, b)});
      }
    }
  }
  for (DType d : kNumeric) {
    const TensorType s{d, kS}, v{d, kV}, w{d, {4}};
    for (Primitive p : {Primitive::kAdd, Primitive::kSub, Primitive::kMul, Primitive::kDiv,
                        Primitive::kMod, Primitive::kMin, Primitive::kMax}) {
      for (const auto& [a, b] : shape_pairs(d)) {
        AddCase(cases, MakeOp(p, 2), {a, b}, TensorType{d, out_shape(a, b)});
      }
    }
    for (Primitive p : {Primitive::kNeg, Primitive::kAbs}) {
      AddCase(cases, MakeOp(p, 1), {v}, v);
      AddCase(cases, MakeOp(p, 1), {s}, s);
    }
    AddCase(cases, MakeOp(Primitive::kReduceSum, 1), {w}, s);
    AddCase(cases, MakeOp(Primitive::kReduceSum, 1), {s}, s);
    AddCase(cases, MakeOp(Primitive::kSquaredNorm, 1), {w}, s);
    AddCase(cases, MakeOp(Primitive::kDot, 2), {w, w}, s);
    // Random i64 indices: most are out of range and clamp.
    Attributes length;
    length.ints = {4};
    AddCase(cases, MakeOp(Primitive::kScatterAdd, 2, length), {v, Vector(DType::kI64, 3)}, w);
  }
  for (DType d : kFloats) {
    const TensorType s{d, kS}, v{d, kV};
    for (Primitive p : {Primitive::kExp, Primitive::kLog, Primitive::kLog1p, Primitive::kExpm1,
                        Primitive::kSqrt, Primitive::kTanh, Primitive::kFloor, Primitive::kSin,
                        Primitive::kCos, Primitive::kAtan, Primitive::kLgamma, Primitive::kErfc,
                        Primitive::kDigamma, Primitive::kTrigamma, Primitive::kLog1pExp, Primitive::kLogistic}) {
      AddCase(cases, MakeOp(p, 1), {v}, v);
      AddCase(cases, MakeOp(p, 1), {s}, s);
    }
    AddCase(cases, MakeOp(Primitive::kLogSumExp, 1), {TensorType{d, {4}}}, s);
    AddCase(cases, MakeOp(Primitive::kLogSumExp, 1), {s}, s);
    for (const auto& [a, b] : shape_pairs(d)) {
      AddCase(cases, MakeOp(Primitive::kPow, 2), {a, b}, TensorType{d, out_shape(a, b)});
    }
    auto m = std::make_shared<DenseMatrix>();
    m->rows = 4;
    m->cols = 3;
    for (int i = 0; i < 12; ++i) m->data.push_back(0.25 * i - 1.3);
    Attributes attrs;
    attrs.matrix = m;
    AddCase(cases, MakeOp(Primitive::kMatVec, 1, attrs), {v}, TensorType{d, {4}});
    AddCase(cases, MakeOp(Primitive::kMatVecBatched, 1, attrs), {v}, TensorType{d, {4}});
    const TensorType matrix{d, {4, 3}};
    AddCase(cases, MakeOp(Primitive::kMatVecInput, 2), {matrix, v}, TensorType{d, {4}});
    AddCase(cases, MakeOp(Primitive::kMatVecTInput, 2), {matrix, TensorType{d, {4}}}, v);
    if (d == DType::kF64) {
      // Random i64 outcomes: most are outside {0, 1} (-inf terms, no gradient).
      const std::vector<TensorType> glm = {TensorType{d, {5, 3}}, Vector(DType::kI64, 5), s, v};
      AddCase(cases, MakeOp(Primitive::kBernoulliLogitGlm, 4), glm, s);
      AddCase(cases, MakeOp(Primitive::kBernoulliLogitGlmGrad, 4), glm, Vector(d, 4));
      AddCase(cases, MakeOp(Primitive::kBernoulliLogitGlmValueGrad, 4), glm, Vector(d, 5));
    }
  }
  {
    const TensorType s = Scalar(DType::kBool), v = Vector(DType::kBool, 3);
    for (Primitive p : {Primitive::kAnd, Primitive::kOr}) {
      for (const auto& [a, b] : shape_pairs(DType::kBool)) {
        AddCase(cases, MakeOp(p, 2), {a, b}, TensorType{DType::kBool, out_shape(a, b)});
      }
    }
    AddCase(cases, MakeOp(Primitive::kNot, 1), {v}, v);
    AddCase(cases, MakeOp(Primitive::kNot, 1), {s}, s);
  }
  const TensorType u64 = Scalar(DType::kU64);
  for (Primitive p : {Primitive::kRandomUniform, Primitive::kRandomNormal}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, std::vector<int64_t>{5}}) {
      Attributes attrs;
      attrs.ints = shape;
      AddCase(cases, MakeOp(p, 2, attrs), {u64, u64}, TensorType{DType::kF64, shape});
    }
  }
  // A user kernel with two inputs and two outputs that skips inactive lanes.
  Attributes kernel;
  kernel.kernel = "sum_and_product";
  PrimOp op = MakeOp(Primitive::kUserKernel, 2, kernel);
  op.outputs.push_back(VarId(3));
  cases.push_back({"sum_and_product", op, {Scalar(DType::kF64), Vector(DType::kF64, 2)},
                   {Vector(DType::kF64, 2), Vector(DType::kF64, 2)}});
  return cases;
}

inline KernelSignature SumAndProductSignature() {
  return {{Scalar(DType::kF64), Vector(DType::kF64, 2)},
          {Vector(DType::kF64, 2), Vector(DType::kF64, 2)},
          true};
}

inline absl::Status SumAndProduct(const KernelCall& call) {
  const double* a = reinterpret_cast<const double*>(call.inputs[0].data);
  const double* b = reinterpret_cast<const double*>(call.inputs[1].data);
  double* sum = reinterpret_cast<double*>(call.outputs[0].data);
  double* product = reinterpret_cast<double*>(call.outputs[1].data);
  for (int64_t l = 0; l < call.num_lanes; ++l) {
    if (!call.IsActive(l)) continue;
    for (int j = 0; j < 2; ++j) {
      sum[2 * l + j] = a[l] + b[2 * l + j];
      product[2 * l + j] = a[l] * b[2 * l + j];
    }
  }
  return absl::OkStatus();
}

enum class LaneSetKind { kHalf, kSparse, kFull, kEmpty, kSingle, kEveryThird };

// A lane set of `batch` lanes: about half, about a tenth, all, none, one,
// every third (0, 3, 6, ...).
inline LaneSet MakeLanes(LaneSetKind kind, int64_t batch, std::mt19937_64& rng) {
  switch (kind) {
    case LaneSetKind::kFull: return LaneSet::All(batch);
    case LaneSetKind::kEmpty: return LaneSet(batch);
    case LaneSetKind::kEveryThird: {
      LaneSet set(batch);
      for (int64_t lane = 0; lane < batch; lane += 3) set.Append(lane);
      return set;
    }
    case LaneSetKind::kSingle: {
      LaneSet set(batch);
      set.Append(static_cast<int64_t>(rng() % static_cast<uint64_t>(batch)));
      return set;
    }
    case LaneSetKind::kHalf:
    case LaneSetKind::kSparse: {
      const uint64_t modulus = kind == LaneSetKind::kHalf ? 2 : 10;
      std::vector<uint8_t> mask(static_cast<size_t>(batch));
      for (auto& m : mask) m = rng() % modulus == 0;
      return LaneSet::FromMask(mask);
    }
  }
  return LaneSet(batch);
}

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_BACKENDS_OP_CASES_H_
