// Type rules of primitives: one checker per TypeRule of ir/primitives.def.
#include "ir/type_rules.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "support/saturating_cast.h"
#include "support/status.h"

namespace autobatch {
namespace {

// The largest element count a type may have: a whole tensor's size in bytes
// (8 per element at most) must fit in int64 so no executor overflows.
constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 8;

std::string DimsToString(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    absl::StrAppend(&out, dims[i]);
  }
  return out + "]";
}

// A literal's scalar as fill_like casts it to another dtype (the kernels'
// Convert, backends/element_ops.h): what it becomes, and whether that is the
// same number. A float rounded to f32's nearest value counts as the same
// (0.1 is not exact in f64 either); a finite float that becomes inf in f32
// does not, nor anything an integer or bool dtype cannot hold exactly (a
// fraction, NaN, inf, a value out of range), nor an integer with more
// digits than the float dtype.
struct LiteralCast {
  bool exact = true;
  std::string becomes;  // the cast value, as text
};

template <typename To>
LiteralCast CastFloat(double x) {
  if constexpr (std::is_same_v<To, bool>) {
    return {x == 0 || x == 1, x != 0 ? "true" : "false"};
  } else if constexpr (std::is_floating_point_v<To>) {
    const To y = static_cast<To>(x);
    return {!(std::isfinite(x) && !std::isfinite(y)), PrintDouble(y)};
  } else {
    const bool in_range =
        x >= static_cast<double>(std::numeric_limits<To>::min()) && x < TwoToDigits<To>();
    return {in_range && std::trunc(x) == x, absl::StrCat(SaturatingCast<To>(x))};
  }
}

template <typename To, typename From>
LiteralCast CastInteger(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return {x == 0 || x == 1, x != 0 ? "true" : "false"};
  } else if constexpr (std::is_floating_point_v<To>) {
    const To y = static_cast<To>(x);
    const bool exact = y >= static_cast<To>(std::numeric_limits<From>::min()) &&
                       y < static_cast<To>(TwoToDigits<From>()) && static_cast<From>(y) == x;
    return {exact, PrintDouble(y)};
  } else {
    return {std::in_range<To>(x), absl::StrCat(static_cast<To>(x))};  // modulo 2^bits
  }
}

template <typename To>
LiteralCast CastLiteral(const Literal& lit) {
  switch (lit.type.dtype) {
    case DType::kF64:
    case DType::kF32:
      return CastFloat<To>(lit.floats[0]);
    case DType::kU64:
      return CastInteger<To>(static_cast<uint64_t>(lit.ints[0]));
    case DType::kBool:
      return CastInteger<To>(int64_t{lit.ints[0] != 0});
    case DType::kI64:
    case DType::kI32:
      return CastInteger<To>(lit.ints[0]);
  }
  return {};
}

LiteralCast CastLiteral(const Literal& lit, DType to) {
  switch (to) {
    case DType::kF64: return CastLiteral<double>(lit);
    case DType::kF32: return CastLiteral<float>(lit);
    case DType::kI64: return CastLiteral<int64_t>(lit);
    case DType::kI32: return CastLiteral<int32_t>(lit);
    case DType::kU64: return CastLiteral<uint64_t>(lit);
    case DType::kBool: return CastLiteral<bool>(lit);
  }
  return {};
}

// The literal's value as the user wrote it.
std::string LiteralText(const Literal& lit) {
  switch (lit.type.dtype) {
    case DType::kF64:
    case DType::kF32:
      return PrintDouble(lit.floats[0]);
    case DType::kU64:
      return absl::StrCat(static_cast<uint64_t>(lit.ints[0]));
    case DType::kBool:
      return lit.ints[0] != 0 ? "true" : "false";
    case DType::kI64:
    case DType::kI32:
      return absl::StrCat(lit.ints[0]);
  }
  return "?";
}

// What to write instead of a literal that `to` cannot hold.
std::string LiteralFix(const Literal& lit, DType to) {
  const std::string name(DTypeName(to));
  if (to == DType::kBool) return "write true or false (or 0 or 1)";
  if (IsFloat(lit.type.dtype) && !IsFloat(to)) {
    if (!std::isfinite(lit.floats[0])) {
      return absl::StrCat(name, " has no NaN or infinity: cast the other operand to f64 "
                          "(cast(x, DType::kF64)) first");
    }
    if (std::trunc(lit.floats[0]) == lit.floats[0]) {
      return absl::StrCat("use a literal in ", name,
                          "'s range, or cast the other operand to f64 (cast(x, "
                          "DType::kF64)) first");
    }
    return absl::StrCat("write a whole number if ", name,
                        " is meant, or cast the other operand to f64 (cast(x, DType::kF64)) "
                        "so the fraction is kept");
  }
  if (IsFloat(to)) {
    if (IsFloat(lit.type.dtype)) {
      return "cast the other operand to f64 (cast(x, DType::kF64)) first, or write inf if "
             "infinity is meant";
    }
    return absl::StrCat("the integer has more digits than ", name,
                        " holds: cast the other operand to an integer dtype, or write the "
                        "float you mean");
  }
  return absl::StrCat("use a literal in ", name, "'s range, or cast the other operand to ",
                      to == DType::kU64 ? "i64" : "a wider dtype", " first");
}

// Checks one primitive application; every error names the primitive and the
// op's source location.
class RuleChecker {
 public:
  RuleChecker(const PrimOp& op, std::span<const TensorType> inputs)
      : op_(op), in_(inputs) {}

  std::string Name() const {
    if (op_.prim == Primitive::kUserKernel) {
      return absl::StrCat("kernel '", op_.attrs.kernel, "'");
    }
    return std::string(PrimitiveName(op_.prim));
  }

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(), " (at ", op_.loc.ToString(), "): ", std::string(what)));
  }

  std::string Operand(size_t i) const {
    return absl::StrCat("operand ", i, " has type ", in_[i].ToString());
  }

  // Counts and shapes that executors can hold without overflow.
  absl::Status CheckShape(const std::vector<int64_t>& shape,
                          const std::string& what) const {
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d < 0 || (d > 0 && n > kMaxElements / d)) {
        return Error(absl::StrCat(
            what, " has shape ", DimsToString(shape),
            ": dimensions must be >= 0 and the element count at most ",
            kMaxElements));
      }
      n *= d;
    }
    return absl::OkStatus();
  }

  absl::Status CheckCounts() const {
    const PrimitiveInfo& info = Info(op_.prim);
    if (info.num_inputs >= 0 && in_.size() != static_cast<size_t>(info.num_inputs)) {
      return Error(absl::StrCat("takes ", info.num_inputs, " operand",
                                info.num_inputs == 1 ? "" : "s", ", got ",
                                in_.size()));
    }
    if (info.num_inputs < 0 && in_.empty()) {
      return Error("takes one or more operands, got none");
    }
    if (op_.outputs.size() != 1) {
      return Error(absl::StrCat("built-in primitives have exactly 1 output, got ",
                                op_.outputs.size()));
    }
    for (size_t i = 0; i < in_.size(); ++i) {
      AB_RETURN_IF_ERROR(CheckShape(in_[i].shape, absl::StrCat("operand ", i)));
    }
    return absl::OkStatus();
  }

  absl::Status CheckLiteral(const Literal& lit) const {
    AB_RETURN_IF_ERROR(CheckShape(lit.type.shape, "the literal"));
    const bool is_float = IsFloat(lit.type.dtype);
    const size_t want = static_cast<size_t>(lit.type.NumElements());
    const size_t have = is_float ? lit.floats.size() : lit.ints.size();
    const size_t stray = is_float ? lit.ints.size() : lit.floats.size();
    if (have != want || stray != 0) {
      return Error(absl::StrCat(
          "literal of type ", lit.type.ToString(), " holds ", have, " ",
          is_float ? "floats" : "ints", " and ", stray, " ",
          is_float ? "ints" : "floats", "; it needs exactly ", want, " ",
          is_float ? "floats" : "ints", " (floats for f64/f32, ints otherwise)"));
    }
    // Every value must be one of the dtype's, not wrap or overflow to one.
    for (size_t k = 0; k < have; ++k) {
      switch (lit.type.dtype) {
        case DType::kI32:
          if (lit.ints[k] < std::numeric_limits<int32_t>::min() ||
              lit.ints[k] > std::numeric_limits<int32_t>::max()) {
            return Error(absl::StrCat("literal value ", lit.ints[k], " (element ", k,
                                      ") does not fit i32; use an i64 literal and cast, or "
                                      "a value in [-2^31, 2^31)"));
          }
          break;
        case DType::kF32:
          if (std::isfinite(lit.floats[k]) &&
              !std::isfinite(static_cast<float>(lit.floats[k]))) {
            return Error(absl::StrCat("literal value ", lit.floats[k], " (element ", k,
                                      ") overflows f32 (largest about 3.4e38); use an f64 "
                                      "literal, or write inf if infinity is meant"));
          }
          break;
        default:
          break;
      }
    }
    return absl::OkStatus();
  }

  // Operand i's dtype satisfies `ok`; `needs` says what the primitive wants.
  absl::Status CheckDType(size_t i, bool ok, const std::string& needs) const {
    if (ok) return absl::OkStatus();
    return Error(absl::StrCat(Operand(i), ", but ", Name(), " needs ", needs));
  }

  // Elementwise operands i and j: one dtype, and equal shapes or one scalar.
  // Returns the result shape.
  absl::StatusOr<std::vector<int64_t>> Elementwise(size_t i, size_t j) const {
    const TensorType& a = in_[i];
    const TensorType& b = in_[j];
    if (a.dtype != b.dtype) {
      return Error(absl::StrCat(Operand(j), " but ", Operand(i),
                                "; elementwise operands need one dtype "
                                "(cast one of them)"));
    }
    if (a.shape == b.shape || b.IsScalar()) return a.shape;
    if (a.IsScalar()) return b.shape;
    return Error(absl::StrCat(Operand(j), " but ", Operand(i),
                              "; elementwise operands need equal shapes, or "
                              "one scalar operand to broadcast"));
  }

  absl::StatusOr<std::vector<TensorType>> One(TensorType t) const {
    return std::vector<TensorType>{std::move(t)};
  }

  absl::StatusOr<std::vector<TensorType>> Builtin() const {
    AB_RETURN_IF_ERROR(CheckCounts());
    const Attributes& attrs = op_.attrs;
    const std::string kNumeric = "a numeric (non-bool) type";
    const std::string kFloat = "a float type (f64 or f32)";
    const std::string kBool = "bool";
    switch (Info(op_.prim).rule) {
      case TypeRule::kConstant: {
        if (!attrs.literal) return Error("needs attribute 'literal' (its value)");
        AB_RETURN_IF_ERROR(CheckLiteral(*attrs.literal));
        return One(attrs.literal->type);
      }
      case TypeRule::kFillLike: {
        if (!attrs.literal) return Error("needs attribute 'literal' (the fill value)");
        if (!attrs.literal->type.IsScalar()) {
          return Error(absl::StrCat("fill literal has type ",
                                    attrs.literal->type.ToString(),
                                    "; it must be a scalar"));
        }
        AB_RETURN_IF_ERROR(CheckLiteral(*attrs.literal));
        const LiteralCast cast = CastLiteral(*attrs.literal, in_[0].dtype);
        if (!cast.exact) {
          const std::string dtype(DTypeName(in_[0].dtype));
          return Error(absl::StrCat(
              "the literal ", LiteralText(*attrs.literal), " would become ", cast.becomes,
              " as ", dtype, ", the dtype of the value it is combined with (", Operand(0),
              "); ", LiteralFix(*attrs.literal, in_[0].dtype)));
        }
        return One(in_[0]);
      }
      case TypeRule::kSame:
        return One(in_[0]);
      case TypeRule::kSelect: {
        if (in_[0].dtype != DType::kBool) {
          return Error(absl::StrCat(Operand(0),
                                    ", but the condition must be bool "
                                    "(compare it, e.g. ne with 0)"));
        }
        if (in_[2] != in_[1]) {
          return Error(absl::StrCat(Operand(2), " but ", Operand(1),
                                    "; both branches of select need one type"));
        }
        if (!in_[0].IsScalar() && in_[0].shape != in_[1].shape) {
          return Error(absl::StrCat(Operand(0), " but ", Operand(1),
                                    "; the condition must be a scalar or have "
                                    "the operands' shape"));
        }
        return One(in_[1]);
      }
      case TypeRule::kCast:
        if (!attrs.dtype) return Error("needs attribute 'dtype' (the target)");
        return One(TensorType{*attrs.dtype, in_[0].shape});
      case TypeRule::kBroadcast: {
        if (!in_[0].IsScalar()) {
          return Error(absl::StrCat(Operand(0),
                                    ", but broadcast takes a scalar"));
        }
        AB_RETURN_IF_ERROR(CheckShape(attrs.ints, "attribute 'ints' (the shape)"));
        return One(TensorType{in_[0].dtype, attrs.ints});
      }
      case TypeRule::kSlice: {
        if (in_[0].Rank() != 1) {
          return Error(absl::StrCat(Operand(0), ", but slice takes a vector"));
        }
        if (attrs.ints.size() != 2) {
          return Error(absl::StrCat("needs attribute 'ints' = {begin, size}, got ",
                                    DimsToString(attrs.ints)));
        }
        const int64_t n = in_[0].shape[0];
        const int64_t begin = attrs.ints[0];
        const int64_t size = attrs.ints[1];
        if (begin < 0 || size < 0 || begin > n || size > n - begin) {
          return Error(absl::StrCat("slice {begin=", begin, ", size=", size,
                                    "} is out of bounds of ", Operand(0),
                                    "; need 0 <= begin and begin + size <= ", n));
        }
        return One(Vector(in_[0].dtype, size));
      }
      case TypeRule::kConcat: {
        int64_t total = 0;
        for (size_t i = 0; i < in_.size(); ++i) {
          if (in_[i].Rank() > 1) {
            return Error(absl::StrCat(Operand(i),
                                      ", but concat takes scalars and vectors"));
          }
          if (in_[i].dtype != in_[0].dtype) {
            return Error(absl::StrCat(Operand(i), " but ", Operand(0),
                                      "; concat needs one dtype (cast first)"));
          }
          total += in_[i].IsScalar() ? 1 : in_[i].shape[0];
          if (total > kMaxElements) return Error("concat result is too long");
        }
        return One(Vector(in_[0].dtype, total));
      }
      case TypeRule::kArithmetic:
      case TypeRule::kFloatBinary:
      case TypeRule::kLogicalBinary: {
        const TypeRule rule = Info(op_.prim).rule;
        for (size_t i = 0; i < 2; ++i) {
          const DType d = in_[i].dtype;
          if (rule == TypeRule::kArithmetic) {
            AB_RETURN_IF_ERROR(CheckDType(i, d != DType::kBool, kNumeric));
          } else if (rule == TypeRule::kFloatBinary) {
            AB_RETURN_IF_ERROR(CheckDType(i, IsFloat(d), kFloat));
          } else {
            AB_RETURN_IF_ERROR(CheckDType(i, d == DType::kBool, kBool));
          }
        }
        AB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, Elementwise(0, 1));
        return One(TensorType{in_[0].dtype, std::move(shape)});
      }
      case TypeRule::kCompare: {
        AB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, Elementwise(0, 1));
        return One(TensorType{DType::kBool, std::move(shape)});
      }
      case TypeRule::kNumericUnary:
        AB_RETURN_IF_ERROR(CheckDType(0, in_[0].dtype != DType::kBool, kNumeric));
        return One(in_[0]);
      case TypeRule::kFloatUnary:
        AB_RETURN_IF_ERROR(CheckDType(0, IsFloat(in_[0].dtype), kFloat));
        return One(in_[0]);
      case TypeRule::kLogicalNot:
        AB_RETURN_IF_ERROR(CheckDType(0, in_[0].dtype == DType::kBool, kBool));
        return One(in_[0]);
      case TypeRule::kReduce:
        AB_RETURN_IF_ERROR(CheckDType(0, in_[0].dtype != DType::kBool, kNumeric));
        return One(Scalar(in_[0].dtype));
      case TypeRule::kFloatReduce:
        AB_RETURN_IF_ERROR(CheckDType(0, IsFloat(in_[0].dtype), kFloat));
        return One(Scalar(in_[0].dtype));
      case TypeRule::kDot: {
        AB_RETURN_IF_ERROR(CheckDType(0, in_[0].dtype != DType::kBool, kNumeric));
        if (in_[1] != in_[0]) {
          return Error(absl::StrCat(Operand(1), " but ", Operand(0),
                                    "; dot needs two operands of one type"));
        }
        return One(Scalar(in_[0].dtype));
      }
      case TypeRule::kMatVec: {
        if (!IsFloat(in_[0].dtype) || in_[0].Rank() != 1) {
          return Error(absl::StrCat(Operand(0), ", but ", Name(),
                                    " needs a float vector (f64[n] or f32[n])"));
        }
        const DenseMatrix* m = attrs.matrix.get();
        if (m == nullptr) return Error("needs attribute 'matrix'");
        if (m->rows < 0 || m->cols < 0 || m->rows > kMaxElements ||
            (m->cols > 0 && m->rows > kMaxElements / m->cols) ||
            m->data.size() != static_cast<size_t>(m->rows * m->cols)) {
          return Error(absl::StrCat("matrix attribute is ", m->rows, " x ",
                                    m->cols, " but holds ", m->data.size(),
                                    " values; it needs rows * cols, row-major"));
        }
        if (m->cols != in_[0].shape[0]) {
          return Error(absl::StrCat(Operand(0), " but the matrix is ", m->rows,
                                    " x ", m->cols, "; the vector's length must "
                                    "equal the matrix's column count"));
        }
        return One(Vector(in_[0].dtype, m->rows));
      }
      case TypeRule::kGather: {
        if (in_[0].Rank() != 1) {
          return Error(absl::StrCat(Operand(0), ", but ", Name(), " gathers from a vector"));
        }
        if (in_[1].dtype != DType::kI64 || in_[1].Rank() != 1) {
          return Error(absl::StrCat(Operand(1), ", but the indices must be an i64 vector"));
        }
        return One(Vector(in_[0].dtype, in_[1].shape[0]));
      }
      case TypeRule::kScatterAdd: {
        if (in_[0].dtype == DType::kBool || in_[0].Rank() != 1) {
          return Error(absl::StrCat(Operand(0), ", but ", Name(),
                                    " adds a numeric (non-bool) vector"));
        }
        if (in_[1] != Vector(DType::kI64, in_[0].shape[0])) {
          return Error(absl::StrCat(Operand(1), " but ", Operand(0),
                                    "; the indices must be an i64 vector of the values' length"));
        }
        if (attrs.ints.size() != 1 || attrs.ints[0] < 0 || attrs.ints[0] > kMaxElements) {
          return Error(absl::StrCat("needs attribute 'ints' = {n}, the result's length (n >= 0), "
                                    "got ", DimsToString(attrs.ints)));
        }
        return One(Vector(in_[0].dtype, attrs.ints[0]));
      }
      case TypeRule::kMatVecInput:
      case TypeRule::kMatVecTInput: {
        if (!IsFloat(in_[0].dtype) || in_[0].Rank() != 2) {
          return Error(absl::StrCat(Operand(0), ", but ", Name(),
                                    " needs a float matrix (f64[m,n] or f32[m,n])"));
        }
        const bool transposed = Info(op_.prim).rule == TypeRule::kMatVecTInput;
        const int64_t in_len = in_[0].shape[transposed ? 0 : 1];
        const int64_t out_len = in_[0].shape[transposed ? 1 : 0];
        if (in_[1] != Vector(in_[0].dtype, in_len)) {
          return Error(absl::StrCat(Operand(1), " but ", Operand(0), "; ", Name(), " needs a ",
                                    Vector(in_[0].dtype, in_len).ToString(), " vector"));
        }
        return One(Vector(in_[0].dtype, out_len));
      }
      case TypeRule::kBernoulliLogitGlm: {
        if (in_[0].dtype != DType::kF64 || in_[0].Rank() != 2) {
          return Error(
              absl::StrCat(Operand(0), ", but ", Name(), " needs the design matrix X as f64[N,K]"));
        }
        const int64_t rows = in_[0].shape[0], cols = in_[0].shape[1];
        if (in_[1] != Vector(DType::kI64, rows)) {
          return Error(absl::StrCat(Operand(1), " but ", Operand(0), "; ", Name(),
                                    " needs the outcomes y as ",
                                    Vector(DType::kI64, rows).ToString(), " (one per row of X)"));
        }
        if (in_[2] != Scalar(DType::kF64)) {
          return Error(absl::StrCat(Operand(2), ", but ", Name(),
                                    " needs the intercept alpha as an f64 scalar"));
        }
        if (in_[3] != Vector(DType::kF64, cols)) {
          return Error(absl::StrCat(
              Operand(3), " but ", Operand(0), "; ", Name(), " needs the coefficients beta as ",
              Vector(DType::kF64, cols).ToString(), " (one per column of X)"));
        }
        if (cols >= kMaxElements) {
          return Error(absl::StrCat(Operand(0), ": too many columns"));
        }
        if (op_.prim == Primitive::kBernoulliLogitGlm) return One(Scalar(DType::kF64));
        return One(Vector(DType::kF64,
                          op_.prim == Primitive::kBernoulliLogitGlmGrad ? cols + 1 : cols + 2));
      }
      case TypeRule::kRandom: {
        for (size_t i = 0; i < 2; ++i) {
          if (in_[i] != Scalar(DType::kU64)) {
            return Error(absl::StrCat(
                Operand(i), ", but ", Name(), " needs u64 scalars (operand 0 ",
                "the key, operand 1 the counter)"));
          }
        }
        AB_RETURN_IF_ERROR(CheckShape(attrs.ints, "attribute 'ints' (the shape)"));
        return One(TensorType{DType::kF64, attrs.ints});
      }
    }
    return Error("has an unknown type rule");
  }

  absl::StatusOr<std::vector<TensorType>> UserKernel(
      const std::map<std::string, KernelSignature>& kernels) const {
    if (op_.attrs.kernel.empty()) {
      return Error("user-kernel op has no kernel name (attribute 'kernel')");
    }
    auto it = kernels.find(op_.attrs.kernel);
    if (it == kernels.end()) {
      return absl::NotFoundError(absl::StrCat(
          Name(), " (at ", op_.loc.ToString(),
          ") is not declared: the module has no KernelSignature for it; "
          "register the kernel and declare it in Module::kernels"));
    }
    const KernelSignature& sig = it->second;
    if (in_.size() != sig.inputs.size()) {
      return Error(absl::StrCat("takes ", sig.inputs.size(),
                                " operands (its signature), got ", in_.size()));
    }
    if (op_.outputs.size() != sig.outputs.size()) {
      return Error(absl::StrCat("has ", sig.outputs.size(),
                                " outputs (its signature), got ",
                                op_.outputs.size()));
    }
    for (size_t i = 0; i < in_.size(); ++i) {
      if (in_[i] != sig.inputs[i]) {
        return Error(absl::StrCat(Operand(i), ", but the kernel's signature "
                                  "declares ", sig.inputs[i].ToString()));
      }
    }
    for (size_t i = 0; i < sig.outputs.size(); ++i) {
      AB_RETURN_IF_ERROR(CheckShape(sig.outputs[i].shape,
                                    absl::StrCat("signature output ", i)));
    }
    return sig.outputs;
  }

 private:
  const PrimOp& op_;
  std::span<const TensorType> in_;
};

}  // namespace

absl::StatusOr<std::vector<TensorType>> InferPrimitiveType(
    const PrimOp& op, std::span<const TensorType> inputs,
    const std::map<std::string, KernelSignature>& kernels) {
  RuleChecker checker(op, inputs);
  if (op.prim == Primitive::kUserKernel) return checker.UserKernel(kernels);
  return checker.Builtin();
}

}  // namespace autobatch
