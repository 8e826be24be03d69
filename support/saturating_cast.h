// SaturatingCast: a float to an integer type as the cast primitive converts
// it (truncated toward zero, saturated at the type's range, NaN to 0), for
// the kernels (backends/element_ops.h), generated code and the type rule
// that checks a literal keeps its value (ir/type_rules.cc).
#ifndef AUTOBATCH_SUPPORT_SATURATING_CAST_H_
#define AUTOBATCH_SUPPORT_SATURATING_CAST_H_

#include <limits>

namespace autobatch {

// 2^digits of I as a double: the first value above I's range.
template <typename I>
constexpr double TwoToDigits() {
  double v = 1.0;
  for (int i = 0; i < std::numeric_limits<I>::digits; ++i) v *= 2.0;
  return v;
}

template <typename I>
inline I SaturatingCast(double x) {
  constexpr double kLowest = static_cast<double>(std::numeric_limits<I>::min());
  if (x != x) return 0;
  if (x >= TwoToDigits<I>()) return std::numeric_limits<I>::max();
  if (x <= kLowest) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_SATURATING_CAST_H_
