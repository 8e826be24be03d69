// The one definition of every primitive's per-lane value (see kernels.h).
#include "backends/kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// GCC 12 reports false "(maybe) uninitialized" warnings inside the AVX-512
// intrinsics Eigen inlines; the state that counts is the one in force where
// those headers are read.
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

#include "absl/strings/str_cat.h"
#include "backends/element_ops.h"
#include "backends/kernel_registry.h"
#include "backends/lane_copy.h"
#include "backends/random.h"
#include "backends/scratch_buffer.h"
#include "support/math/math.h"
#include "support/status.h"

namespace autobatch {
namespace {

using element::Abs;
using element::Add;
using element::Canon;
using element::Convert;
using element::Div;
using element::Load;
using element::Max;
using element::Min;
using element::Mod;
using element::Mul;
using element::Neg;
using element::Store;
using element::Stored;
using element::Sub;

// Pointers to a view's elements (bool as its stored byte).
template <typename T>
const Stored<T>* Ptr(const ConstLanesView& v) {
  return reinterpret_cast<const Stored<T>*>(v.data);
}
template <typename T>
Stored<T>* Ptr(const LanesView& v) {
  return reinterpret_cast<Stored<T>*>(v.data);
}

// ---------------------------------------------------------------------------
// Transcendental functions (support/math/math.h), in f64: f32 elements are
// widened into a buffer of kMaxChunk and the results rounded back.

using element::Transcendental;
constexpr int64_t kMaxChunk = 256;

template <typename T>
void EvalWidened(Transcendental fn, const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    math::Eval(fn, x, y, n);
  } else {
    double buffer[kMaxChunk];
    for (int64_t start = 0; start < n; start += kMaxChunk) {
      const int64_t m = std::min(kMaxChunk, n - start);
      for (int64_t i = 0; i < m; ++i) buffer[i] = static_cast<double>(x[start + i]);
      math::Eval(fn, buffer, buffer, m);
      for (int64_t i = 0; i < m; ++i) y[start + i] = Canon(static_cast<T>(buffer[i]));
    }
  }
}

template <typename T>
void LogSumExpWidened(const T* x, T* y, int64_t lanes, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    math::LogSumExpLanes(x, lanes, n, y);
  } else {
    // Lanes widened in groups of up to kMaxChunk elements (at least one
    // lane), in a per-thread buffer that only grows.
    thread_local ScratchBuffer buffer;
    const int64_t group = std::max<int64_t>(1, n == 0 ? kMaxChunk : kMaxChunk / n);
    auto* wide = reinterpret_cast<double*>(
        buffer.Get(static_cast<size_t>(2 * group + group * n) * sizeof(double)));
    double* out = wide + group * n;
    for (int64_t first = 0; first < lanes; first += group) {
      const int64_t g = std::min(group, lanes - first);
      for (int64_t i = 0; i < g * n; ++i) wide[i] = static_cast<double>(x[first * n + i]);
      math::LogSumExpLanes(wide, g, n, out);
      for (int64_t l = 0; l < g; ++l) y[first + l] = Canon(static_cast<T>(out[l]));
    }
  }
}

// ---------------------------------------------------------------------------
// The call being run and its checks.

struct Call {
  const PrimOp& op;
  std::span<const ConstLanesView> in;
  std::span<const LanesView> out;
  int64_t lanes;
  const KernelRegistry* kernels;
  const uint8_t* active;
};

absl::Status Invalid(const Call& c, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "RunPrimitive: ", std::string(PrimitiveName(c.op.prim)), " at ",
      c.op.loc.ToString(), ": ", what,
      " (the op does not type-check; run the verifier before executing)"));
}

enum class Allow { kAny, kNumeric, kFloat, kBool };

bool Allows(Allow allow, DType d) {
  switch (allow) {
    case Allow::kAny: return true;
    case Allow::kNumeric: return d != DType::kBool;
    case Allow::kFloat: return IsFloat(d);
    case Allow::kBool: return d == DType::kBool;
  }
  return false;
}

absl::Status CheckDType(const Call& c, const TensorType& t, Allow allow,
                        const char* what) {
  if (!Allows(allow, t.dtype)) {
    return Invalid(c, absl::StrCat(what, " has type ", t.ToString(),
                                   ", which this primitive does not accept"));
  }
  return absl::OkStatus();
}

absl::Status CheckSameDType(const Call& c, const TensorType& a,
                            const TensorType& b, const char* what) {
  if (a.dtype != b.dtype) {
    return Invalid(c, absl::StrCat(what, ": dtypes differ (", a.ToString(),
                                   " vs ", b.ToString(), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckElements(const Call& c, const TensorType& t, int64_t expected,
                           const char* what) {
  if (t.NumElements() != expected) {
    return Invalid(c, absl::StrCat(what, " has type ", t.ToString(), " but ",
                                   expected, " elements are required"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Kernel drivers.

// Elementwise binary with scalar broadcasting; T is the operand type, R the
// result type.
template <typename T, typename R, typename F>
void BinaryLoop(const Call& c, F f) {
  const Stored<T>* a = Ptr<T>(c.in[0]);
  const Stored<T>* b = Ptr<T>(c.in[1]);
  Stored<R>* o = Ptr<R>(c.out[0]);
  const int64_t na = c.in[0].type.NumElements();
  const int64_t nb = c.in[1].type.NumElements();
  const int64_t n = c.out[0].type.NumElements();
  if (na == nb) {
    const int64_t total = c.lanes * n;
    for (int64_t i = 0; i < total; ++i) o[i] = Store<R>(f(Load<T>(a[i]), Load<T>(b[i])));
  } else if (na == 1) {
    for (int64_t l = 0; l < c.lanes; ++l) {
      const T x = Load<T>(a[l]);
      for (int64_t j = 0; j < n; ++j) {
        o[l * n + j] = Store<R>(f(x, Load<T>(b[l * n + j])));
      }
    }
  } else {
    for (int64_t l = 0; l < c.lanes; ++l) {
      const T y = Load<T>(b[l]);
      for (int64_t j = 0; j < n; ++j) {
        o[l * n + j] = Store<R>(f(Load<T>(a[l * n + j]), y));
      }
    }
  }
}

absl::Status CheckBinary(const Call& c, Allow allow, bool bool_result) {
  const TensorType& a = c.in[0].type;
  const TensorType& b = c.in[1].type;
  const TensorType& o = c.out[0].type;
  AB_RETURN_IF_ERROR(CheckDType(c, a, allow, "operand a"));
  AB_RETURN_IF_ERROR(CheckSameDType(c, a, b, "operands a and b"));
  if (o.dtype != (bool_result ? DType::kBool : a.dtype)) {
    return Invalid(c, absl::StrCat("the result has type ", o.ToString()));
  }
  const int64_t na = a.NumElements(), nb = b.NumElements(), n = o.NumElements();
  if (n != std::max(na, nb) || (na != n && na != 1) || (nb != n && nb != 1)) {
    return Invalid(c, absl::StrCat("operands ", a.ToString(), " and ",
                                   b.ToString(), " do not broadcast to ",
                                   o.ToString()));
  }
  return absl::OkStatus();
}

// Runs f on a's dtype if it is allowed (checked beforehand).
template <typename Pred, typename F>
absl::Status DispatchIf(const Call& c, DType d, F f) {
  return VisitDType(d, [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    if constexpr (Pred::template value<T>) {
      f(zero);
      return absl::OkStatus();
    } else {
      return Invalid(c, absl::StrCat("dtype ", std::string(DTypeName(d)),
                                     " is not supported"));
    }
  });
}

struct AnyType {
  template <typename T>
  static constexpr bool value = true;
};
struct NumericType {
  template <typename T>
  static constexpr bool value = !std::is_same_v<T, bool>;
};
struct FloatType {
  template <typename T>
  static constexpr bool value = std::is_floating_point_v<T>;
};
struct BoolType {
  template <typename T>
  static constexpr bool value = std::is_same_v<T, bool>;
};

// Arithmetic: numeric operands, result of the same dtype.
template <typename F>
absl::Status Arithmetic(const Call& c, F f) {
  AB_RETURN_IF_ERROR(CheckBinary(c, Allow::kNumeric, /*bool_result=*/false));
  return DispatchIf<NumericType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    BinaryLoop<T, T>(c, [&](T a, T b) { return Canon(f(a, b)); });
  });
}

template <typename F>
absl::Status Comparison(const Call& c, F f) {
  AB_RETURN_IF_ERROR(CheckBinary(c, Allow::kAny, /*bool_result=*/true));
  return DispatchIf<AnyType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    BinaryLoop<T, bool>(c, [&](T a, T b) { return f(a, b); });
  });
}

template <typename F>
absl::Status Logical(const Call& c, F f) {
  AB_RETURN_IF_ERROR(CheckBinary(c, Allow::kBool, /*bool_result=*/true));
  BinaryLoop<bool, bool>(c, f);
  return absl::OkStatus();
}

absl::Status CheckUnary(const Call& c, Allow allow) {
  AB_RETURN_IF_ERROR(CheckDType(c, c.in[0].type, allow, "the operand"));
  if (c.out[0].type.dtype != c.in[0].type.dtype ||
      c.out[0].type.NumElements() != c.in[0].type.NumElements()) {
    return Invalid(c, absl::StrCat("the result has type ",
                                   c.out[0].type.ToString(), ", not ",
                                   c.in[0].type.ToString()));
  }
  return absl::OkStatus();
}

template <typename Pred, typename F>
absl::Status Unary(const Call& c, Allow allow, F f) {
  AB_RETURN_IF_ERROR(CheckUnary(c, allow));
  return DispatchIf<Pred>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    const Stored<T>* x = Ptr<T>(c.in[0]);
    Stored<T>* o = Ptr<T>(c.out[0]);
    const int64_t total = c.lanes * c.in[0].type.NumElements();
    for (int64_t i = 0; i < total; ++i) o[i] = Store<T>(f(Load<T>(x[i])));
  });
}

absl::Status RunTranscendental(const Call& c, Transcendental fn) {
  AB_RETURN_IF_ERROR(CheckUnary(c, Allow::kFloat));
  return DispatchIf<FloatType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    EvalWidened(fn, Ptr<T>(c.in[0]), Ptr<T>(c.out[0]), c.lanes * c.in[0].type.NumElements());
  });
}

// pow over chunks of widened operands (a scalar operand broadcast), so that
// math::Pow runs its vector path.
absl::Status RunPow(const Call& c) {
  AB_RETURN_IF_ERROR(CheckBinary(c, Allow::kFloat, /*bool_result=*/false));
  return DispatchIf<FloatType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* a = Ptr<T>(c.in[0]);
    const T* b = Ptr<T>(c.in[1]);
    T* o = Ptr<T>(c.out[0]);
    const int64_t n = c.out[0].type.NumElements();
    const bool a_full = c.in[0].type.NumElements() == n;
    const bool b_full = c.in[1].type.NumElements() == n;
    const int64_t total = c.lanes * n;
    double wa[kMaxChunk];
    double wb[kMaxChunk];
    for (int64_t start = 0; start < total; start += kMaxChunk) {
      const int64_t m = std::min(kMaxChunk, total - start);
      for (int64_t i = 0; i < m; ++i) {
        const int64_t e = start + i;
        wa[i] = static_cast<double>(a[a_full ? e : e / n]);
        wb[i] = static_cast<double>(b[b_full ? e : e / n]);
      }
      math::Pow(wa, wb, wa, m);
      for (int64_t i = 0; i < m; ++i) o[start + i] = Canon(static_cast<T>(wa[i]));
    }
  });
}

// ---------------------------------------------------------------------------
// Constants and data movement.

// Element k of a literal, converted to To with cast semantics.
template <typename To>
To LiteralElement(const Literal& lit, size_t k) {
  switch (lit.type.dtype) {
    case DType::kF64: return Convert<To>(lit.floats[k]);
    case DType::kF32: return Convert<To>(static_cast<float>(lit.floats[k]));
    case DType::kI64: return Convert<To>(lit.ints[k]);
    case DType::kI32: return Convert<To>(static_cast<int32_t>(lit.ints[k]));
    case DType::kBool: return Convert<To>(lit.ints[k] != 0);
    case DType::kU64: return Convert<To>(static_cast<uint64_t>(lit.ints[k]));
  }
  return To{};
}

size_t LiteralSize(const Literal& lit) {
  return IsFloat(lit.type.dtype) ? lit.floats.size() : lit.ints.size();
}

// Writes the literal (1 value broadcast, or one per element) into every lane.
absl::Status FillFromLiteral(const Call& c, const Literal& lit) {
  const LanesView& out = c.out[0];
  const int64_t n = out.type.NumElements();
  const size_t size = LiteralSize(lit);
  if (size != 1 && static_cast<int64_t>(size) != n) {
    return Invalid(c, absl::StrCat("the literal has ", size,
                                   " values for a result of type ",
                                   out.type.ToString()));
  }
  if (c.lanes == 0 || n == 0) return absl::OkStatus();
  VisitDType(out.type.dtype, [&](auto zero) {
    using T = decltype(zero);
    Stored<T>* o = Ptr<T>(out);
    for (int64_t j = 0; j < n; ++j) {
      o[j] = Store<T>(LiteralElement<T>(lit, size == 1 ? 0 : static_cast<size_t>(j)));
    }
  });
  // Lane 0 is copied to lanes [1, 2), then [0, 2) to [2, 4), and so on:
  // a logarithmic number of memcpy calls instead of one per lane (a call per
  // 8-byte lane was 8% of fibonacci's time on the stack VM).
  const int64_t lane_bytes = n * DTypeSize(out.type.dtype);
  for (int64_t filled = 1; filled < c.lanes;) {
    const int64_t more = std::min(filled, c.lanes - filled);
    std::memcpy(out.data + filled * lane_bytes, out.data, static_cast<size_t>(more * lane_bytes));
    filled += more;
  }
  return absl::OkStatus();
}

absl::Status RunConstant(const Call& c) {
  if (!c.op.attrs.literal) return Invalid(c, "the literal attribute is missing");
  return FillFromLiteral(c, *c.op.attrs.literal);
}

absl::Status RunFillLike(const Call& c) {
  if (!c.op.attrs.literal) return Invalid(c, "the literal attribute is missing");
  if (LiteralSize(*c.op.attrs.literal) != 1) {
    return Invalid(c, "the literal attribute must be one scalar");
  }
  AB_RETURN_IF_ERROR(CheckUnary(c, Allow::kAny));
  return FillFromLiteral(c, *c.op.attrs.literal);
}

absl::Status RunCopy(const Call& c) {
  AB_RETURN_IF_ERROR(CheckUnary(c, Allow::kAny));
  const int64_t bytes = c.lanes * c.in[0].type.NumElements() * DTypeSize(c.in[0].type.dtype);
  if (bytes > 0) std::memcpy(c.out[0].data, c.in[0].data, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status RunSelect(const Call& c) {
  const TensorType& cond = c.in[0].type;
  const TensorType& a = c.in[1].type;
  const TensorType& b = c.in[2].type;
  const TensorType& o = c.out[0].type;
  AB_RETURN_IF_ERROR(CheckDType(c, cond, Allow::kBool, "the condition"));
  AB_RETURN_IF_ERROR(CheckSameDType(c, a, b, "operands a and b"));
  AB_RETURN_IF_ERROR(CheckSameDType(c, a, o, "operand a and the result"));
  const int64_t n = o.NumElements();
  AB_RETURN_IF_ERROR(CheckElements(c, a, n, "operand a"));
  AB_RETURN_IF_ERROR(CheckElements(c, b, n, "operand b"));
  const int64_t nc = cond.NumElements();
  if (nc != 1 && nc != n) {
    return Invalid(c, absl::StrCat("the condition has type ", cond.ToString(),
                                   "; it must be a scalar or have ", n, " elements"));
  }
  const uint8_t* pc = Ptr<bool>(c.in[0]);
  // Selection moves bits, so select on the unsigned integer of the same size.
  auto run = [&](auto zero) {
    using B = decltype(zero);
    const B* pa = reinterpret_cast<const B*>(c.in[1].data);
    const B* pb = reinterpret_cast<const B*>(c.in[2].data);
    B* po = reinterpret_cast<B*>(c.out[0].data);
    if (nc == n) {
      const int64_t total = c.lanes * n;
      for (int64_t i = 0; i < total; ++i) po[i] = pc[i] != 0 ? pa[i] : pb[i];
    } else {
      for (int64_t l = 0; l < c.lanes; ++l) {
        const B* src = pc[l] != 0 ? pa : pb;
        for (int64_t j = 0; j < n; ++j) po[l * n + j] = src[l * n + j];
      }
    }
  };
  switch (DTypeSize(o.dtype)) {
    case 1: run(uint8_t{}); break;
    case 4: run(uint32_t{}); break;
    case 8: run(uint64_t{}); break;
    default: AB_CHECK(false, "select: unexpected element size");
  }
  return absl::OkStatus();
}

absl::Status RunCast(const Call& c) {
  const TensorType& x = c.in[0].type;
  const TensorType& o = c.out[0].type;
  if (c.op.attrs.dtype && *c.op.attrs.dtype != o.dtype) {
    return Invalid(c, absl::StrCat("the result has type ", o.ToString(),
                                   " but the attribute asks for ",
                                   std::string(DTypeName(*c.op.attrs.dtype))));
  }
  AB_RETURN_IF_ERROR(CheckElements(c, o, x.NumElements(), "the result"));
  const int64_t total = c.lanes * x.NumElements();
  VisitDType(x.dtype, [&](auto from_zero) {
    using From = decltype(from_zero);
    VisitDType(o.dtype, [&](auto to_zero) {
      using To = decltype(to_zero);
      const Stored<From>* in = Ptr<From>(c.in[0]);
      Stored<To>* out = Ptr<To>(c.out[0]);
      for (int64_t i = 0; i < total; ++i) {
        out[i] = Store<To>(Convert<To>(Load<From>(in[i])));
      }
    });
  });
  return absl::OkStatus();
}

absl::Status RunBroadcast(const Call& c) {
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[0].type, 1, "the operand"));
  AB_RETURN_IF_ERROR(CheckSameDType(c, c.in[0].type, c.out[0].type,
                                    "the operand and the result"));
  const int64_t n = c.out[0].type.NumElements();
  const int size = DTypeSize(c.out[0].type.dtype);
  for (int64_t l = 0; l < c.lanes; ++l) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(c.out[0].data + (l * n + j) * size, c.in[0].data + l * size,
                  static_cast<size_t>(size));
    }
  }
  return absl::OkStatus();
}

absl::Status RunSlice(const Call& c) {
  const std::vector<int64_t>& ints = c.op.attrs.ints;
  if (ints.size() != 2) return Invalid(c, "the attribute must be {begin, size}");
  const int64_t begin = ints[0], size = ints[1];
  const int64_t n = c.in[0].type.NumElements();
  if (begin < 0 || size < 0 || begin > n || size > n - begin) {
    return Invalid(c, absl::StrCat("slice [", begin, ", +", size,
                                   ") is out of range for ",
                                   c.in[0].type.ToString()));
  }
  AB_RETURN_IF_ERROR(CheckSameDType(c, c.in[0].type, c.out[0].type,
                                    "the operand and the result"));
  AB_RETURN_IF_ERROR(CheckElements(c, c.out[0].type, size, "the result"));
  const int64_t elem = DTypeSize(c.in[0].type.dtype);
  if (size == 0) return absl::OkStatus();
  for (int64_t l = 0; l < c.lanes; ++l) {
    std::memcpy(c.out[0].data + l * size * elem, c.in[0].data + (l * n + begin) * elem,
                static_cast<size_t>(size * elem));
  }
  return absl::OkStatus();
}

absl::Status RunConcat(const Call& c) {
  int64_t total = 0;
  for (const ConstLanesView& in : c.in) {
    AB_RETURN_IF_ERROR(CheckSameDType(c, in.type, c.out[0].type,
                                      "an operand and the result"));
    total += in.type.NumElements();
  }
  AB_RETURN_IF_ERROR(CheckElements(c, c.out[0].type, total, "the result"));
  const int64_t elem = DTypeSize(c.out[0].type.dtype);
  int64_t offset = 0;
  for (const ConstLanesView& in : c.in) {
    const int64_t n = in.type.NumElements();
    if (n > 0) {
      for (int64_t l = 0; l < c.lanes; ++l) {
        std::memcpy(c.out[0].data + (l * total + offset) * elem,
                    in.data + l * n * elem, static_cast<size_t>(n * elem));
      }
    }
    offset += n;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Reductions and linear algebra.

absl::Status CheckReduceResult(const Call& c) {
  if (c.out[0].type.dtype != c.in[0].type.dtype ||
      c.out[0].type.NumElements() != 1) {
    return Invalid(c, absl::StrCat("the result has type ", c.out[0].type.ToString(),
                                   "; a scalar of the operand's dtype is required"));
  }
  return absl::OkStatus();
}

// Per lane: term(0), then += term(i) in index order; empty = +0. Groups of
// kReduceGroup lanes run side by side, so their additions overlap instead of
// each waiting for the previous one's latency; every lane still sums in index
// order, so its bits do not depend on its group.
constexpr int64_t kReduceGroup = 8;

// o[l + k] for the `group` lanes from l.
template <int64_t group, typename T, typename Term>
void ReduceGroup(T* o, int64_t l, int64_t n, Term& term) {
  T acc[group];
  for (int64_t k = 0; k < group; ++k) acc[k] = n > 0 ? term((l + k) * n) : T{0};
  for (int64_t i = 1; i < n; ++i) {
    for (int64_t k = 0; k < group; ++k) acc[k] = Add(acc[k], term((l + k) * n + i));
  }
  for (int64_t k = 0; k < group; ++k) o[l + k] = Canon(acc[k]);
}

template <typename T, typename Term>
void ReduceLanes(const Call& c, int64_t n, Term term) {
  T* o = Ptr<T>(c.out[0]);
  int64_t l = 0;
  for (; l + kReduceGroup <= c.lanes; l += kReduceGroup) ReduceGroup<kReduceGroup>(o, l, n, term);
  for (; l < c.lanes; ++l) ReduceGroup<1>(o, l, n, term);
}

absl::Status RunReduce(const Call& c, bool square) {
  AB_RETURN_IF_ERROR(CheckDType(c, c.in[0].type, Allow::kNumeric, "the operand"));
  AB_RETURN_IF_ERROR(CheckReduceResult(c));
  const int64_t n = c.in[0].type.NumElements();
  return DispatchIf<NumericType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = Ptr<T>(c.in[0]);
    if (square) {
      ReduceLanes<T>(c, n, [x](int64_t i) { return Mul(x[i], x[i]); });
    } else {
      ReduceLanes<T>(c, n, [x](int64_t i) { return x[i]; });
    }
  });
}

absl::Status RunDot(const Call& c) {
  AB_RETURN_IF_ERROR(CheckDType(c, c.in[0].type, Allow::kNumeric, "operand a"));
  AB_RETURN_IF_ERROR(CheckSameDType(c, c.in[0].type, c.in[1].type, "operands a and b"));
  const int64_t n = c.in[0].type.NumElements();
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[1].type, n, "operand b"));
  AB_RETURN_IF_ERROR(CheckReduceResult(c));
  return DispatchIf<NumericType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* a = Ptr<T>(c.in[0]);
    const T* b = Ptr<T>(c.in[1]);
    ReduceLanes<T>(c, n, [a, b](int64_t i) { return Mul(a[i], b[i]); });
  });
}

absl::Status RunLogSumExp(const Call& c) {
  AB_RETURN_IF_ERROR(CheckDType(c, c.in[0].type, Allow::kFloat, "the operand"));
  AB_RETURN_IF_ERROR(CheckReduceResult(c));
  return DispatchIf<FloatType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    LogSumExpWidened(Ptr<T>(c.in[0]), Ptr<T>(c.out[0]), c.lanes, c.in[0].type.NumElements());
  });
}

absl::Status CheckMatVec(const Call& c) {
  const DenseMatrix* m = c.op.attrs.matrix.get();
  if (m == nullptr) return Invalid(c, "the matrix attribute is missing");
  if (m->rows < 0 || m->cols < 0 ||
      static_cast<int64_t>(m->data.size()) != m->rows * m->cols) {
    return Invalid(c, absl::StrCat("the matrix attribute is ", m->rows, " x ",
                                   m->cols, " but holds ", m->data.size(),
                                   " values"));
  }
  AB_RETURN_IF_ERROR(CheckDType(c, c.in[0].type, Allow::kFloat, "the operand"));
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[0].type, m->cols, "the operand"));
  AB_RETURN_IF_ERROR(CheckSameDType(c, c.in[0].type, c.out[0].type,
                                    "the operand and the result"));
  return CheckElements(c, c.out[0].type, m->rows, "the result");
}

// The matrix converted to T, column-major (rows x cols), in a per-thread
// buffer. The buffer is 64-byte aligned: from a std::vector, at malloc's 16
// bytes, half the vector loads of a column could straddle cache lines, and
// whether they did depended on the heap (pea-nuts ran 15-20% slower or faster
// from one binary to the next). The conversion is kept while the same matrix
// comes back (a VM runs one op over and over, in tiles too): the weak pointer
// proves the matrix is the same living object, and it is const.
template <typename T>
const T* ColumnMajor(const std::shared_ptr<const DenseMatrix>& matrix) {
  struct Cache {
    std::weak_ptr<const DenseMatrix> source;
    ScratchBuffer buffer;
  };
  thread_local Cache cache;
  const DenseMatrix& m = *matrix;
  T* out = reinterpret_cast<T*>(
      cache.buffer.Get(static_cast<size_t>(m.rows * m.cols) * sizeof(T)));
  if (cache.source.lock() == matrix) return out;
  for (int64_t j = 0; j < m.cols; ++j) {
    for (int64_t i = 0; i < m.rows; ++i) {
      out[j * m.rows + i] = static_cast<T>(m.data[i * m.cols + j]);
    }
  }
  cache.source = matrix;
  return out;
}

// o[k] = M x[k] for the K lanes x[k] = x + k * cols, o[k] = o + k * rows, in
// axpy form: vectorizes over rows, and each element sums j = 0, 1, ... in
// order. The K lanes share each column load (the matrix streams from L2 once
// per K lanes); which lanes share it does not change any lane's bits.
template <int K, typename T>
void MatVecLanes(const T* cm, int64_t rows, int64_t cols, const T* x, T* __restrict o) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int k = 0; k < K; ++k) o[k * rows + i] = cm[i] * x[k * cols];
  }
  for (int64_t j = 1; j < cols; ++j) {
    const T* __restrict col = cm + j * rows;
    T a[K];
    for (int k = 0; k < K; ++k) a[k] = x[k * cols + j];
    for (int64_t i = 0; i < rows; ++i) {
      for (int k = 0; k < K; ++k) o[k * rows + i] = o[k * rows + i] + col[i] * a[k];
    }
  }
}

absl::Status RunMatVec(const Call& c) {
  AB_RETURN_IF_ERROR(CheckMatVec(c));
  const DenseMatrix& m = *c.op.attrs.matrix;
  const int64_t rows = m.rows, cols = m.cols;
  return DispatchIf<FloatType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    if (rows == 0 || c.lanes == 0) return;
    const T* cm = ColumnMajor<T>(c.op.attrs.matrix);
    const T* x = Ptr<T>(c.in[0]);
    T* o = Ptr<T>(c.out[0]);
    if (cols == 0) {
      std::fill(o, o + c.lanes * rows, T{0});
      return;
    }
    constexpr int64_t kBlock = 4;
    int64_t l = 0;
    for (; l + kBlock <= c.lanes; l += kBlock) {
      MatVecLanes<kBlock>(cm, rows, cols, x + l * cols, o + l * rows);
    }
    for (; l < c.lanes; ++l) MatVecLanes<1>(cm, rows, cols, x + l * cols, o + l * rows);
    for (int64_t i = 0; i < c.lanes * rows; ++i) o[i] = Canon(o[i]);
  });
}

absl::Status RunMatVecBatched(const Call& c) {
  AB_RETURN_IF_ERROR(CheckMatVec(c));
  const DenseMatrix& m = *c.op.attrs.matrix;
  const int64_t rows = m.rows, cols = m.cols;
  return DispatchIf<FloatType>(c, c.in[0].type.dtype, [&](auto zero) {
    using T = decltype(zero);
    if (rows == 0 || c.lanes == 0) return;
    using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    Eigen::Map<Matrix> out(Ptr<T>(c.out[0]), rows, c.lanes);
    if (cols == 0) {
      out.setZero();
      return;
    }
    Eigen::Map<const Matrix> x(Ptr<T>(c.in[0]), cols, c.lanes);
    Eigen::Map<const Matrix> mat(ColumnMajor<T>(c.op.attrs.matrix), rows, cols);
    out.noalias() = mat * x;  // single-threaded: EIGEN_DONT_PARALLELIZE
    T* o = out.data();
    for (int64_t i = 0; i < rows * c.lanes; ++i) o[i] = Canon(o[i]);
  });
}

// ---------------------------------------------------------------------------
// Data-indexed ops. They read each operand of lane l at its own offset, so a
// uniform operand (one lane, stride 0) is read in place: no repetition.

const std::byte* LaneBytesAt(const ConstLanesView& v, int64_t lane) {
  return v.uniform || v.data == nullptr
             ? v.data
             : v.data + lane * v.type.NumElements() * DTypeSize(v.type.dtype);
}

// Index idx clamped to [0, n - 1] (n > 0).
int64_t Clamp(int64_t idx, int64_t n) { return idx < 0 ? 0 : idx >= n ? n - 1 : idx; }

absl::Status RunGather(const Call& c) {
  const TensorType& x = c.in[0].type;
  if (x.Rank() != 1) return Invalid(c, "the operand is not a vector");
  AB_RETURN_IF_ERROR(CheckDType(c, c.in[1].type, Allow::kAny, "the indices"));
  if (c.in[1].type.dtype != DType::kI64) return Invalid(c, "the indices are not i64");
  const int64_t m = c.in[1].type.NumElements();
  AB_RETURN_IF_ERROR(CheckSameDType(c, x, c.out[0].type, "the operand and the result"));
  AB_RETURN_IF_ERROR(CheckElements(c, c.out[0].type, m, "the result"));
  const int64_t n = x.shape[0];
  const int64_t size = DTypeSize(x.dtype);
  for (int64_t l = 0; l < c.lanes && m > 0; ++l) {
    const std::byte* xs = LaneBytesAt(c.in[0], l);
    const auto* idx = reinterpret_cast<const int64_t*>(LaneBytesAt(c.in[1], l));
    std::byte* out = c.out[0].data + l * m * size;
    if (n == 0) {
      std::memset(out, 0, static_cast<size_t>(m * size));
      continue;
    }
    for (int64_t i = 0; i < m; ++i) {
      std::memcpy(out + i * size, xs + Clamp(idx[i], n) * size, static_cast<size_t>(size));
    }
  }
  return absl::OkStatus();
}

absl::Status RunScatterAdd(const Call& c) {
  const TensorType& v = c.in[0].type;
  AB_RETURN_IF_ERROR(CheckDType(c, v, Allow::kNumeric, "the values"));
  const int64_t m = v.NumElements();
  if (c.in[1].type.dtype != DType::kI64) return Invalid(c, "the indices are not i64");
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[1].type, m, "the indices"));
  if (c.op.attrs.ints.size() != 1 || c.op.attrs.ints[0] < 0) {
    return Invalid(c, "the attribute ints is not {n} with n >= 0");
  }
  const int64_t n = c.op.attrs.ints[0];
  AB_RETURN_IF_ERROR(CheckSameDType(c, v, c.out[0].type, "the values and the result"));
  AB_RETURN_IF_ERROR(CheckElements(c, c.out[0].type, n, "the result"));
  return DispatchIf<NumericType>(c, v.dtype, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t l = 0; l < c.lanes && n > 0; ++l) {
      const T* vs = reinterpret_cast<const T*>(LaneBytesAt(c.in[0], l));
      const auto* idx = reinterpret_cast<const int64_t*>(LaneBytesAt(c.in[1], l));
      T* out = Ptr<T>(c.out[0]) + l * n;
      std::fill(out, out + n, T{0});
      for (int64_t i = 0; i < m; ++i) {
        T& o = out[Clamp(idx[i], n)];
        o = Add(o, vs[i]);
      }
      for (int64_t j = 0; j < n; ++j) out[j] = Canon(out[j]);
    }
  });
}

// matvec_input (transposed = false): out[i] = M[i,0] x[0] + M[i,1] x[1] + ...;
// matvec_t_input: out[j] = M[0,j] y[0] + M[1,j] y[1] + ...; products rounded
// separately, summed in index order.
absl::Status RunMatVecInput(const Call& c, bool transposed) {
  const TensorType& mt = c.in[0].type;
  AB_RETURN_IF_ERROR(CheckDType(c, mt, Allow::kFloat, "the matrix"));
  if (mt.Rank() != 2) return Invalid(c, "the matrix operand is not of rank 2");
  const int64_t rows = mt.shape[0], cols = mt.shape[1];
  const int64_t in_len = transposed ? rows : cols;
  const int64_t out_len = transposed ? cols : rows;
  AB_RETURN_IF_ERROR(CheckSameDType(c, mt, c.in[1].type, "the matrix and the vector"));
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[1].type, in_len, "the vector"));
  AB_RETURN_IF_ERROR(CheckSameDType(c, mt, c.out[0].type, "the matrix and the result"));
  AB_RETURN_IF_ERROR(CheckElements(c, c.out[0].type, out_len, "the result"));
  return DispatchIf<FloatType>(c, mt.dtype, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t l = 0; l < c.lanes && out_len > 0; ++l) {
      const T* m = reinterpret_cast<const T*>(LaneBytesAt(c.in[0], l));
      const T* x = reinterpret_cast<const T*>(LaneBytesAt(c.in[1], l));
      T* out = Ptr<T>(c.out[0]) + l * out_len;
      if (in_len == 0) {
        std::fill(out, out + out_len, T{0});
        continue;
      }
      if (!transposed) {
        for (int64_t i = 0; i < rows; ++i) {
          const T* row = m + i * cols;
          T acc = Mul(row[0], x[0]);
          for (int64_t j = 1; j < cols; ++j) acc = Add(acc, Mul(row[j], x[j]));
          out[i] = Canon(acc);
        }
      } else {
        // Row by row, so M streams once: out[j] gains M[i,j] y[i] for
        // i = 0, 1, ..., the same order per element.
        for (int64_t j = 0; j < cols; ++j) out[j] = Mul(m[j], x[0]);
        for (int64_t i = 1; i < rows; ++i) {
          const T* row = m + i * cols;
          for (int64_t j = 0; j < cols; ++j) out[j] = Add(out[j], Mul(row[j], x[i]));
        }
        for (int64_t j = 0; j < cols; ++j) out[j] = Canon(out[j]);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// bernoulli_logit_glm and its gradient (ir/primitives.def). Lanes run in
// chunks of kGlmChunk that share X and y (both uniform: one copy, read once
// per chunk), the rest in chunks of kGlmWidth (the last one padded), the
// rows in blocks of kGlmRows whose per-lane intermediates stay in L1. Every
// lane does the same scalar operations in the same order whatever its chunk
// (a lane alone is a chunk of one, as where X or y vary by lane), so its
// bits do not depend on the batch.

constexpr int64_t kGlmChunk = 16;
constexpr int64_t kGlmRows = 32;

struct GlmLanes {
  const double* x;   // [rows, cols], shared by the chunk's lanes
  const int64_t* y;  // [rows], shared
  int64_t rows, cols;
  const double* alpha[kGlmChunk];  // each lane's scalar
  const double* beta[kGlmChunk];   // each lane's [cols]
  double* out[kGlmChunk];          // each lane's result: 1, cols + 1 or cols + 2
};

// What a GLM kernel returns: the log mass, its gradient, or both (the value
// first), from one pass over X.
enum class GlmOut { kValue, kGrad, kValueGrad };

// The chunk's lanes as W GCC vectors of kGlmWidth lanes (one vector of one
// lane for a chunk of one). Their operations are element-wise IEEE
// operations, so each lane gets the scalar code's bits. Plain loops over
// the lanes let GCC vectorize across the rows with shuffles instead and
// kept the NaN and y selects scalar; 64-byte vectors without AVX-512 were
// lowered to scalar code. (A struct, not an alias template: GCC drops the
// attribute of a dependent alias.)
constexpr int64_t kGlmWidth = 4;

template <int64_t Width>
struct GlmLaneVector {
  typedef double Type __attribute__((vector_size(Width * sizeof(double))));
};

// Vectors pass by reference: these are all inlined, and by value a vector
// wider than the target's registers draws -Wpsabi.

// Every lane of *v to `value`.
template <typename V>
void Splat(double value, V* v) {
  for (size_t i = 0; i < sizeof(V) / sizeof(double); ++i) (*v)[i] = value;
}

// The canonical quiet NaN into the lanes of *x that are NaN.
template <typename V>
void CanonLanes(V* x) {
  V nan;
  Splat(std::numeric_limits<double>::quiet_NaN(), &nan);
  *x = *x != *x ? nan : *x;
}

// Rows [i, i + R) of the block at `first` for the chunk's W vectors of
// lanes: eta into eta[i * W + w] and s = (y_i == 1 ? -eta : eta) into
// s[i * W + w]; beta_t[j * W + w] holds the lanes' beta[j]. R rows side by
// side only overlap their sums' latencies: each sum still runs j = 0, 1, ...
// on its own.
template <int64_t R, int64_t W, typename V>
void GlmRows(const GlmLanes& g, const V* beta_t, const V* alpha, int64_t first, int64_t i,
             V* eta, V* s) {
  const int64_t k = g.cols;
  const double* rows = g.x + (first + i) * k;
  V acc[R][W];
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t w = 0; w < W; ++w) {
      if (k == 0) {
        Splat(0.0, &acc[r][w]);
      } else {
        acc[r][w] = rows[r * k] * beta_t[w];
      }
    }
  }
  for (int64_t j = 1; j < k; ++j) {
    for (int64_t r = 0; r < R; ++r) {
      const double xj = rows[r * k + j];
      for (int64_t w = 0; w < W; ++w) acc[r][w] = acc[r][w] + xj * beta_t[j * W + w];
    }
  }
  for (int64_t r = 0; r < R; ++r) {
    const bool one = g.y[first + i + r] == 1;
    for (int64_t w = 0; w < W; ++w) {
      CanonLanes(&acc[r][w]);
      const V e = alpha[w] + acc[r][w];
      eta[(i + r) * W + w] = e;
      s[(i + r) * W + w] = one ? -e : e;
    }
  }
}

template <int64_t C>
void GlmChunk(const GlmLanes& g, GlmOut what) {
  constexpr int64_t kWidth = C % kGlmWidth == 0 ? kGlmWidth : 1;
  constexpr int64_t W = C / kWidth;
  static_assert(W * kWidth == C);
  using V = typename GlmLaneVector<kWidth>::Type;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int64_t k = g.cols;
  thread_local ScratchBuffer buffer;
  // beta_t [k * W], then the gradient's accumulators [(k + 1) * W] (64-byte
  // aligned): lane w * kWidth + e is element e of vector w.
  V* beta_t = reinterpret_cast<V*>(buffer.Get(static_cast<size_t>((2 * k + 1) * W) * sizeof(V)));
  V* acc = beta_t + k * W;
  V alpha[W];
  for (int64_t v = 0; v < C; ++v) alpha[v / kWidth][v % kWidth] = *g.alpha[v];
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t v = 0; v < C; ++v) beta_t[j * W + v / kWidth][v % kWidth] = g.beta[v][j];
  }
  V zero, one, minus_zero, nan, minus_inf;
  Splat(0.0, &zero);
  Splat(1.0, &one);
  Splat(-0.0, &minus_zero);  // the identity of +: each sum starts from its first term
  Splat(kNaN, &nan);
  Splat(-kInf, &minus_inf);
  for (int64_t j = 0; j < (k + 1) * W; ++j) acc[j] = minus_zero;
  V value[W];  // the log mass's sums (kValueGrad)
  for (int64_t w = 0; w < W; ++w) value[w] = minus_zero;
  V eta[kGlmRows * W], s[kGlmRows * W], f[kGlmRows * W], t[kGlmRows * W], l[kGlmRows * W];
  // Adds the block's log-mass terms, l = log1p_exp(s), to sum[0, W).
  auto add_terms = [&](int64_t first, int64_t n, V* sum) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t yi = g.y[first + i];
      const bool in_support = yi == 0 || yi == 1;
      for (int64_t w = 0; w < W; ++w) {
        const V e = eta[i * W + w];
        const V term = in_support ? -l[i * W + w] + 0.0 : minus_inf;
        sum[w] = sum[w] + (e != e ? nan : term);
      }
    }
  };
  for (int64_t first = 0; first < g.rows; first += kGlmRows) {
    const int64_t n = std::min(kGlmRows, g.rows - first);
    const int64_t m = n * C;
    constexpr int64_t kRowGroup = W >= 8 ? 1 : 8 / W;  // R * W accumulators in registers
    int64_t i = 0;
    for (; i + kRowGroup <= n; i += kRowGroup) {
      GlmRows<kRowGroup, W>(g, beta_t, alpha, first, i, eta, s);
    }
    for (; i < n; ++i) GlmRows<1, W>(g, beta_t, alpha, first, i, eta, s);
    double* s_flat = reinterpret_cast<double*>(s);
    if (what == GlmOut::kValue) {
      math::Eval(math::Fn::kLog1pExp, s_flat, reinterpret_cast<double*>(l), m);
      add_terms(first, n, acc);
      continue;
    }
    if (what == GlmOut::kGrad) {
      math::Eval(math::Fn::kLogistic, s_flat, reinterpret_cast<double*>(f), m);
    } else {
      // log1p_exp and logistic from one t = exp(-|s|), each finished as
      // support/math finishes it (math.cc's Log1pExpFrom and LogisticFrom,
      // then Canon), so both keep the separate functions' bits.
      double* t_flat = reinterpret_cast<double*>(t);
      for (int64_t q = 0; q < m; ++q) t_flat[q] = -std::fabs(s_flat[q]);
      math::Eval(math::Fn::kExp, t_flat, t_flat, m);
      math::Eval(math::Fn::kLog1p, t_flat, reinterpret_cast<double*>(l), m);
      for (int64_t q = 0; q < n * W; ++q) {
        const V x = s[q];
        l[q] = x > 0 ? x + l[q] : l[q];
        // x >= 0 ? 1 / (1 + t) : t / (1 + t), with one division.
        f[q] = (x >= 0 ? one : t[q]) / (1.0 + t[q]);
        CanonLanes(&l[q]);
        CanonLanes(&f[q]);
      }
      add_terms(first, n, value);
    }
    for (int64_t q = 0; q < n; ++q) {
      const int64_t yi = g.y[first + q];
      for (int64_t w = 0; w < W; ++w) {
        const V e = eta[q * W + w];
        const V p = f[q * W + w];
        // The residual y - logistic(eta), as logistic(-eta) when y = 1; NaN
        // where eta is (as the composite's gradient).
        const V r = yi == 1 ? p : yi == 0 ? -p : zero;
        f[q * W + w] = e != e ? nan : r;
        acc[w] = acc[w] + f[q * W + w];
      }
    }
    // Xᵀ r, kColGroup columns side by side (each its own sum, i ascending;
    // kColGroup * W accumulators in registers).
    constexpr int64_t kColGroup = W >= 4 ? 2 : 4;
    const double* x0 = g.x + first * k;
    int64_t j = 0;
    for (; j + kColGroup <= k; j += kColGroup) {
      V a[kColGroup * W];  // a local copy: no aliasing with x0 and f
      std::copy(acc + (j + 1) * W, acc + (j + 1 + kColGroup) * W, a);
      for (int64_t q = 0; q < n; ++q) {
        for (int64_t c = 0; c < kColGroup; ++c) {
          const double xqj = x0[q * k + j + c];
          for (int64_t w = 0; w < W; ++w) a[c * W + w] = a[c * W + w] + xqj * f[q * W + w];
        }
      }
      std::copy(a, a + kColGroup * W, acc + (j + 1) * W);
    }
    for (; j < k; ++j) {
      V* a = acc + (j + 1) * W;
      for (int64_t q = 0; q < n; ++q) {
        const double xqj = x0[q * k + j];
        for (int64_t w = 0; w < W; ++w) a[w] = a[w] + xqj * f[q * W + w];
      }
    }
  }
  const int64_t outputs = what == GlmOut::kValue ? 1 : k + 1;
  const int64_t skip = what == GlmOut::kValueGrad ? 1 : 0;
  for (int64_t v = 0; v < C; ++v) {
    const int64_t w = v / kWidth, e = v % kWidth;
    // An empty sum is +0.
    if (skip == 1) g.out[v][0] = g.rows == 0 ? 0.0 : Canon(value[w][e]);
    for (int64_t j = 0; j < outputs; ++j) {
      g.out[v][skip + j] = g.rows == 0 ? 0.0 : Canon(acc[j * W + w][e]);
    }
  }
}

absl::Status RunBernoulliLogitGlm(const Call& c, GlmOut what) {
  const TensorType& xt = c.in[0].type;
  if (xt.dtype != DType::kF64 || xt.Rank() != 2) return Invalid(c, "X is not f64[N,K]");
  const int64_t rows = xt.shape[0], cols = xt.shape[1];
  if (c.in[1].type.dtype != DType::kI64) return Invalid(c, "y is not i64");
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[1].type, rows, "y"));
  for (size_t i = 2; i < 4; ++i) {
    if (c.in[i].type.dtype != DType::kF64) return Invalid(c, "alpha or beta is not f64");
  }
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[2].type, 1, "alpha"));
  AB_RETURN_IF_ERROR(CheckElements(c, c.in[3].type, cols, "beta"));
  if (c.out[0].type.dtype != DType::kF64) return Invalid(c, "the result is not f64");
  const int64_t outputs = what == GlmOut::kValue ? 1 : what == GlmOut::kGrad ? cols + 1 : cols + 2;
  AB_RETURN_IF_ERROR(CheckElements(c, c.out[0].type, outputs, "the result"));
  double* out = Ptr<double>(c.out[0]);
  // Lanes [first, first + count) as a chunk of `width` >= count lanes: the
  // lanes past count repeat the last one and write to `pad`. Every lane's
  // operations are its own, so a padded chunk gives each real lane the bits
  // it has in any other chunk.
  thread_local ScratchBuffer pad_buffer;
  auto* pad =
      reinterpret_cast<double*>(pad_buffer.Get(static_cast<size_t>(outputs) * sizeof(double)));
  auto lanes_from = [&](int64_t first, int64_t count, int64_t width) {
    GlmLanes g{};
    g.x = reinterpret_cast<const double*>(LaneBytesAt(c.in[0], first));
    g.y = reinterpret_cast<const int64_t*>(LaneBytesAt(c.in[1], first));
    g.rows = rows;
    g.cols = cols;
    for (int64_t v = 0; v < width; ++v) {
      const int64_t lane = first + std::min(v, count - 1);
      g.alpha[v] = reinterpret_cast<const double*>(LaneBytesAt(c.in[2], lane));
      g.beta[v] = reinterpret_cast<const double*>(LaneBytesAt(c.in[3], lane));
      g.out[v] = v < count ? out + lane * outputs : pad;
    }
    return g;
  };
  // Lanes share a chunk only when they share X and y: then chunks of
  // kGlmChunk, and the rest in chunks of kGlmWidth, the last one padded.
  const bool shared = c.in[0].uniform && c.in[1].uniform;
  int64_t l = 0;
  if (shared) {
    for (; l + kGlmChunk <= c.lanes; l += kGlmChunk) {
      GlmChunk<kGlmChunk>(lanes_from(l, kGlmChunk, kGlmChunk), what);
    }
    for (; l < c.lanes; l += kGlmWidth) {
      GlmChunk<kGlmWidth>(lanes_from(l, std::min(kGlmWidth, c.lanes - l), kGlmWidth), what);
    }
  }
  for (; l < c.lanes; ++l) GlmChunk<1>(lanes_from(l, 1, 1), what);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Randomness (backends/random.h has the construction).

absl::Status RunRandom(const Call& c, bool normal) {
  for (int k = 0; k < 2; ++k) {
    const TensorType& t = c.in[k].type;
    if (t.dtype != DType::kU64 || t.NumElements() != 1) {
      return Invalid(c, absl::StrCat(k == 0 ? "the key" : "the counter",
                                     " has type ", t.ToString(),
                                     "; a u64 scalar is required"));
    }
  }
  if (c.out[0].type.dtype != DType::kF64) {
    return Invalid(c, absl::StrCat("the result has type ", c.out[0].type.ToString(),
                                   "; random variates are f64"));
  }
  RandomLanes(Ptr<uint64_t>(c.in[0]), Ptr<uint64_t>(c.in[1]), c.lanes,
              c.out[0].type.NumElements(), normal, Ptr<double>(c.out[0]));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// User kernels.

absl::Status RunUserKernel(const Call& c) {
  const std::string& name = c.op.attrs.kernel;
  const UserKernel* kernel = c.kernels == nullptr ? nullptr : c.kernels->Find(name);
  if (kernel == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "RunPrimitive: user kernel '", name, "' at ", c.op.loc.ToString(),
        " is not registered; register it with KernelRegistry::Register and "
        "pass that registry to the executor"));
  }
  const KernelSignature& sig = kernel->signature;
  auto check = [&](const char* what, size_t k, const TensorType& want,
                   const TensorType& got) -> absl::Status {
    if (want.dtype == got.dtype && want.NumElements() == got.NumElements()) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "RunPrimitive: user kernel '", name, "' at ", c.op.loc.ToString(), ": ",
        what, " ", k, " has type ", got.ToString(), " but the kernel declares ",
        want.ToString()));
  };
  if (sig.inputs.size() != c.in.size() || sig.outputs.size() != c.out.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RunPrimitive: user kernel '", name, "' at ", c.op.loc.ToString(),
        " declares ", sig.inputs.size(), " inputs and ", sig.outputs.size(),
        " outputs but is called with ", c.in.size(), " and ", c.out.size()));
  }
  for (size_t k = 0; k < c.in.size(); ++k) {
    AB_RETURN_IF_ERROR(check("input", k, sig.inputs[k], c.in[k].type));
  }
  for (size_t k = 0; k < c.out.size(); ++k) {
    AB_RETURN_IF_ERROR(check("output", k, sig.outputs[k], c.out[k].type));
  }
  KernelCall call{c.in, c.out, c.lanes, c.active};
  absl::Status status = kernel->fn(call);
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("user kernel '", name, "' at ",
                                   c.op.loc.ToString(), " failed: ",
                                   std::string(status.message())));
}

absl::Status Dispatch(const Call& c) {
  using P = Primitive;
  switch (c.op.prim) {
    case P::kConstant: return RunConstant(c);
    case P::kFillLike: return RunFillLike(c);
    case P::kCopy: return RunCopy(c);
    case P::kSelect: return RunSelect(c);
    case P::kCast: return RunCast(c);
    case P::kBroadcast: return RunBroadcast(c);
    case P::kSlice: return RunSlice(c);
    case P::kConcat: return RunConcat(c);
    case P::kAdd: return Arithmetic(c, [](auto a, auto b) { return Add(a, b); });
    case P::kSub: return Arithmetic(c, [](auto a, auto b) { return Sub(a, b); });
    case P::kMul: return Arithmetic(c, [](auto a, auto b) { return Mul(a, b); });
    case P::kDiv: return Arithmetic(c, [](auto a, auto b) { return Div(a, b); });
    case P::kMod: return Arithmetic(c, [](auto a, auto b) { return Mod(a, b); });
    case P::kMin: return Arithmetic(c, [](auto a, auto b) { return Min(a, b); });
    case P::kMax: return Arithmetic(c, [](auto a, auto b) { return Max(a, b); });
    case P::kNeg:
      return Unary<NumericType>(c, Allow::kNumeric, [](auto x) { return Canon(Neg(x)); });
    case P::kAbs:
      return Unary<NumericType>(c, Allow::kNumeric, [](auto x) { return Canon(Abs(x)); });
    case P::kExp: return RunTranscendental(c, Transcendental::kExp);
    case P::kLog: return RunTranscendental(c, Transcendental::kLog);
    case P::kLog1p: return RunTranscendental(c, Transcendental::kLog1p);
    case P::kExpm1: return RunTranscendental(c, Transcendental::kExpm1);
    case P::kTanh: return RunTranscendental(c, Transcendental::kTanh);
    case P::kSin: return RunTranscendental(c, Transcendental::kSin);
    case P::kCos: return RunTranscendental(c, Transcendental::kCos);
    case P::kAtan: return RunTranscendental(c, Transcendental::kAtan);
    case P::kLgamma: return RunTranscendental(c, Transcendental::kLgamma);
    case P::kErfc: return RunTranscendental(c, Transcendental::kErfc);
    case P::kDigamma: return RunTranscendental(c, Transcendental::kDigamma);
    case P::kTrigamma: return RunTranscendental(c, Transcendental::kTrigamma);
    case P::kLog1pExp: return RunTranscendental(c, Transcendental::kLog1pExp);
    case P::kLogistic: return RunTranscendental(c, Transcendental::kLogistic);
    case P::kSqrt:
      return Unary<FloatType>(c, Allow::kFloat, [](auto x) { return Canon(std::sqrt(x)); });
    case P::kFloor:
      return Unary<FloatType>(c, Allow::kFloat, [](auto x) { return Canon(std::floor(x)); });
    case P::kPow: return RunPow(c);
    case P::kLt: return Comparison(c, [](auto a, auto b) { return a < b; });
    case P::kLe: return Comparison(c, [](auto a, auto b) { return a <= b; });
    case P::kGt: return Comparison(c, [](auto a, auto b) { return a > b; });
    case P::kGe: return Comparison(c, [](auto a, auto b) { return a >= b; });
    case P::kEq: return Comparison(c, [](auto a, auto b) { return a == b; });
    case P::kNe: return Comparison(c, [](auto a, auto b) { return a != b; });
    case P::kAnd: return Logical(c, [](bool a, bool b) { return a && b; });
    case P::kOr: return Logical(c, [](bool a, bool b) { return a || b; });
    case P::kNot:
      return Unary<BoolType>(c, Allow::kBool, [](auto x) { return !x; });
    case P::kReduceSum: return RunReduce(c, /*square=*/false);
    case P::kDot: return RunDot(c);
    case P::kSquaredNorm: return RunReduce(c, /*square=*/true);
    case P::kLogSumExp: return RunLogSumExp(c);
    case P::kMatVec: return RunMatVec(c);
    case P::kMatVecBatched: return RunMatVecBatched(c);
    case P::kGather: return RunGather(c);
    case P::kScatterAdd: return RunScatterAdd(c);
    case P::kMatVecInput: return RunMatVecInput(c, /*transposed=*/false);
    case P::kMatVecTInput: return RunMatVecInput(c, /*transposed=*/true);
    case P::kBernoulliLogitGlm: return RunBernoulliLogitGlm(c, GlmOut::kValue);
    case P::kBernoulliLogitGlmGrad: return RunBernoulliLogitGlm(c, GlmOut::kGrad);
    case P::kBernoulliLogitGlmValueGrad: return RunBernoulliLogitGlm(c, GlmOut::kValueGrad);
    case P::kRandomUniform: return RunRandom(c, /*normal=*/false);
    case P::kRandomNormal: return RunRandom(c, /*normal=*/true);
    case P::kUserKernel: return RunUserKernel(c);
  }
  return Invalid(c, "unknown primitive");
}

// Built-in kernels index lanes consecutively, so a uniform input (one lane,
// stride 0) is repeated for them: into per-thread scratch when every uniform
// input is small (a lane's bits do not depend on where its operands sit),
// else the kernel runs lane by lane, each lane reading the one copy.
// User kernels get the flag; the data-indexed ops read stride 0 themselves.
bool ReadsUniformInPlace(Primitive prim) {
  using P = Primitive;
  return prim == P::kUserKernel || prim == P::kGather || prim == P::kScatterAdd ||
         prim == P::kMatVecInput || prim == P::kMatVecTInput || prim == P::kBernoulliLogitGlm ||
         prim == P::kBernoulliLogitGlmGrad || prim == P::kBernoulliLogitGlmValueGrad;
}

int64_t LaneBytes(const TensorType& type) {
  return type.NumElements() * DTypeSize(type.dtype);
}

absl::Status RunWithUniformInputs(const Call& c) {
  constexpr int64_t kRepeatMaxLaneBytes = 64;
  bool small = true;
  for (const ConstLanesView& in : c.in) {
    if (in.uniform) small &= LaneBytes(in.type) <= kRepeatMaxLaneBytes;
  }
  thread_local std::vector<ConstLanesView> views;
  thread_local std::vector<LanesView> outs;
  views.assign(c.in.begin(), c.in.end());
  if (small) {
    thread_local std::vector<ScratchBuffer> repeated;
    if (repeated.size() < c.in.size()) repeated.resize(c.in.size());
    for (size_t i = 0; i < c.in.size(); ++i) {
      if (!c.in[i].uniform) continue;
      const int64_t lane_bytes = LaneBytes(c.in[i].type);
      std::byte* buffer = repeated[i].Get(static_cast<size_t>(lane_bytes * c.lanes));
      for (int64_t l = 0; l < c.lanes; ++l) {
        CopyBytes(buffer + l * lane_bytes, c.in[i].data, lane_bytes);
      }
      views[i].data = buffer;
      views[i].uniform = false;
    }
    return Dispatch(Call{c.op, views, c.out, c.lanes, c.kernels, c.active});
  }
  outs.assign(c.out.begin(), c.out.end());
  for (int64_t l = 0; l < c.lanes; ++l) {
    for (size_t i = 0; i < c.in.size(); ++i) {
      views[i].uniform = false;
      if (!c.in[i].uniform && c.in[i].data != nullptr) {
        views[i].data = c.in[i].data + l * LaneBytes(c.in[i].type);
      }
    }
    for (size_t k = 0; k < c.out.size(); ++k) {
      if (c.out[k].data != nullptr) outs[k].data = c.out[k].data + l * LaneBytes(c.out[k].type);
    }
    AB_RETURN_IF_ERROR(Dispatch(Call{c.op, views, outs, 1, c.kernels,
                                     c.active == nullptr ? nullptr : c.active + l}));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunPrimitive(const PrimOp& op,
                          std::span<const ConstLanesView> inputs,
                          std::span<const LanesView> outputs, int64_t num_lanes,
                          const KernelRegistry* kernels, const uint8_t* active) {
  Call c{op, inputs, outputs, num_lanes, kernels, active};
  if (num_lanes < 0) return Invalid(c, "negative number of lanes");
  if (op.prim != Primitive::kUserKernel) {
    const int arity = Info(op.prim).num_inputs;
    const bool arity_ok = arity < 0 ? !inputs.empty()
                                    : inputs.size() == static_cast<size_t>(arity);
    if (!arity_ok || outputs.size() != 1) {
      return Invalid(c, absl::StrCat("called with ", inputs.size(), " inputs and ",
                                     outputs.size(), " outputs"));
    }
  }
  for (const ConstLanesView& in : inputs) {
    if (in.uniform && num_lanes > 1 && !ReadsUniformInPlace(op.prim)) {
      return RunWithUniformInputs(c);
    }
  }
  return Dispatch(c);
}

namespace element {

void EvalTranscendental(Transcendental fn, const double* x, double* y, int64_t n) {
  EvalWidened(fn, x, y, n);
}
void EvalTranscendental(Transcendental fn, const float* x, float* y, int64_t n) {
  EvalWidened(fn, x, y, n);
}
void EvalLogSumExp(const double* x, double* y, int64_t lanes, int64_t n) {
  LogSumExpWidened(x, y, lanes, n);
}
void EvalLogSumExp(const float* x, float* y, int64_t lanes, int64_t n) {
  LogSumExpWidened(x, y, lanes, n);
}
double Pow(double a, double b) { return math::Pow(a, b); }

}  // namespace element
}  // namespace autobatch
