// The per-element value of every elementwise primitive: ONE definition,
// shared by the batched kernels (kernels.cc) and by fused blocks generated
// from a program (codegen/codegen.h), so both give the same bits. The exact
// semantics are listed in kernels.h.
#ifndef AUTOBATCH_BACKENDS_ELEMENT_OPS_H_
#define AUTOBATCH_BACKENDS_ELEMENT_OPS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "support/math/math.h"
#include "support/saturating_cast.h"

namespace autobatch::element {

static_assert(std::numeric_limits<double>::is_iec559 &&
                  std::numeric_limits<float>::is_iec559,
              "the primitive semantics assume IEEE 754 floats");

// Element access. bool is stored as a byte that may hold junk: read != 0.

template <typename T>
struct StorageOf {
  using type = T;
};
template <>
struct StorageOf<bool> {
  using type = uint8_t;
};
template <typename T>
using Stored = typename StorageOf<T>::type;

template <typename T>
inline T Load(Stored<T> raw) {
  if constexpr (std::is_same_v<T, bool>) {
    return raw != 0;
  } else {
    return raw;
  }
}
template <typename T>
inline Stored<T> Store(T value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? 1 : 0;
  } else {
    return value;
  }
}
template <typename T>
inline T Canon(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x ? std::numeric_limits<T>::quiet_NaN() : x;
  } else {
    return x;
  }
}

// Scalar semantics shared by the kernels.

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <typename T>
inline T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
  } else {
    return a + b;
  }
}
template <typename T>
inline T Sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
  } else {
    return a - b;
  }
}
template <typename T>
inline T Mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
  } else {
    return a * b;
  }
}
template <typename T>
inline T Div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return Sub(T{0}, a);  // INT_MIN / -1 wraps to INT_MIN
    }
    return a / b;
  } else {
    return a / b;
  }
}
template <typename T>
inline T Mod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;  // also INT_MIN % -1, which traps in hardware
    }
    return a % b;
  } else {
    return std::fmod(a, b);
  }
}
template <typename T>
inline T Min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? a : b;
}
template <typename T>
inline T Max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  }
  return a > b ? a : b;
}
template <typename T>
inline T Neg(T x) {
  if constexpr (std::is_integral_v<T>) {
    return Sub(T{0}, x);
  } else {
    return -x;
  }
}
template <typename T>
inline T Abs(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(x);
  } else if constexpr (std::is_signed_v<T>) {
    return x < 0 ? Neg(x) : x;
  } else {
    return x;
  }
}


// Cast semantics (kernels.h). From is a loaded value (bool already 0/1).
template <typename To, typename From>
inline To Convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != 0;
  } else if constexpr (std::is_same_v<From, bool>) {
    return x ? To{1} : To{0};
  } else if constexpr (std::is_floating_point_v<To>) {
    return Canon(static_cast<To>(x));
  } else if constexpr (std::is_floating_point_v<From>) {
    return SaturatingCast<To>(static_cast<double>(x));
  } else {
    return static_cast<To>(x);  // modulo 2^bits (C++20)
  }
}

// The transcendental primitives over n contiguous elements: math::Eval
// (support/math/math.h, SLEEF's deterministic functions) in f64, f32
// widened and the result rounded back, every NaN canonical. Each element's
// bits depend only on its value, whatever its neighbours and n.
using Transcendental = math::Fn;
void EvalTranscendental(Transcendental fn, const double* x, double* y, int64_t n);
void EvalTranscendental(Transcendental fn, const float* x, float* y, int64_t n);

// The log_sum_exp primitive for `lanes` lanes of n contiguous elements:
// y[l] = math::LogSumExp(x + l * n, n) in f64 (f32 widened, rounded back).
void EvalLogSumExp(const double* x, double* y, int64_t lanes, int64_t n);
void EvalLogSumExp(const float* x, float* y, int64_t lanes, int64_t n);

// The pow primitive's value (math::Pow), for the kernels and the generated
// code alike. Out of line on purpose: where a compiler sees a constant
// exponent it may rewrite pow(x, 2.0) as x * x, which can differ from pow
// in the last bit.
double Pow(double a, double b);

}  // namespace autobatch::element

#endif  // AUTOBATCH_BACKENDS_ELEMENT_OPS_H_
