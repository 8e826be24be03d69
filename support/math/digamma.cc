// digamma: asymptotic series, upward recurrence and reflection (math.h).
// Each value is prepared (the recurrence, the reflection's argument), then
// log and tan run, one value at a time or across a chunk with the vector
// path (the same bits), then the pieces are combined.
#include "support/math/digamma.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/math/math.h"

namespace autobatch::math::internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.141592653589793;  // the double nearest pi
// The series is used from here up; below, the recurrence shifts x here.
constexpr double kAsymptoticFrom = 10.0;
constexpr int64_t kChunk = 256;

enum class Kind : int8_t { kSeries, kReflected, kDone };

// digamma(x) = series(y) - shift (kSeries), or that minus pi / tan(pi_r)
// (kReflected), or `value` (kDone: a special value).
struct Parts {
  Kind kind = Kind::kDone;
  double y = 1.0;  // where the series is evaluated (>= 10); 1 when unused
  double shift = 0;
  double pi_r = 0;
  double value = 0;
};

// The recurrence for x > 0 and finite: y = x + k >= 10 by steps of 1, and
// the sum of 1 / x_i over the steps, in order.
void Shift(double x, Parts& parts) {
  double shift = 0;
  while (x < kAsymptoticFrom) {
    shift = shift + 1.0 / x;
    x = x + 1.0;
  }
  parts.y = x;
  parts.shift = shift;
}

Parts Prepare(double x) {
  Parts parts;
  if (x != x || x == -kInf) {
    parts.value = kNaN;
  } else if (x == kInf) {
    parts.value = kInf;
  } else if (x == 0) {
    parts.value = std::signbit(x) ? kInf : -kInf;  // -1/x as x -> 0
  } else if (x > 0) {
    parts.kind = Kind::kSeries;
    Shift(x, parts);
  } else {
    // Reflection: digamma(x) = digamma(1 - x) - pi cot(pi x), and cot has
    // period pi, so only r = x - round(x) in [-1/2, 1/2] matters; the
    // subtraction is exact (Sterbenz), and r = 0 at the poles.
    const double r = x - std::round(x);
    if (r == 0) {
      parts.value = kNaN;
    } else {
      parts.kind = Kind::kReflected;
      parts.pi_r = kPi * r;
      Shift(1.0 - x, parts);
    }
  }
  return parts;
}

// digamma(y) for y >= 10 from log(y): log(y) - 1/(2y) - sum_k B_2k / (2k
// y^2k), k = 1..7 (B_2k the Bernoulli numbers), in Horner form in
// w = 1 / y^2. The next term, B_16 / (16 y^16), is below 5e-17 at y = 10.
double Series(double y, double log_y) {
  const double w = 1.0 / (y * y);
  const double p =
      1.0 / 12 -
      w * (1.0 / 120 -
           w * (1.0 / 252 -
                w * (1.0 / 240 - w * (1.0 / 132 - w * (691.0 / 32760 - w * (1.0 / 12))))));
  return (log_y - 0.5 / y) - w * p;
}

double Finish(const Parts& parts, double log_y, double tan_pi_r) {
  switch (parts.kind) {
    case Kind::kSeries: return Series(parts.y, log_y) - parts.shift;
    case Kind::kReflected: return (Series(parts.y, log_y) - parts.shift) - kPi / tan_pi_r;
    case Kind::kDone: break;
  }
  return parts.value;
}

}  // namespace

double Digamma(double x, const IsaFunctions& isa) {
  const Parts parts = Prepare(x);
  const double log_y = isa.unary_one[static_cast<int>(Fn::kLog)](parts.y);
  const double tan_pi_r =
      parts.kind == Kind::kReflected ? isa.unary_one[static_cast<int>(Fn::kTan)](parts.pi_r) : 0;
  return Finish(parts, log_y, tan_pi_r);
}

namespace {

// trigamma(y) for y >= 10: 1/y + 1/(2y^2) + sum_k B_2k / y^(2k+1), k = 1..7,
// in Horner form in w = 1 / y^2. The next term, B_16 / y^17, is below
// 1e-17 at y = 10.
double TrigammaSeries(double y) {
  const double t = 1.0 / y;
  const double w = t * t;
  const double p =
      1.0 / 6 -
      w * (1.0 / 30 -
           w * (1.0 / 42 -
                w * (1.0 / 30 - w * (5.0 / 66 - w * (691.0 / 2730 - w * (7.0 / 6))))));
  return (t + 0.5 * w) + t * w * p;
}

// trigamma(x) for x > 0 and finite: the recurrence up to y >= 10, then the
// series.
double TrigammaPositive(double x) {
  double shift = 0;
  while (x < kAsymptoticFrom) {
    shift = shift + 1.0 / (x * x);
    x = x + 1.0;
  }
  return TrigammaSeries(x) + shift;
}

}  // namespace

double Trigamma(double x, const IsaFunctions& isa) {
  if (x != x || x == -kInf) return kNaN;
  if (x == kInf) return 0.0;
  if (x > 0) return TrigammaPositive(x);
  // Poles at 0 and the negative integers: +inf from both sides.
  const double r = x - std::round(x);
  if (r == 0) return kInf;
  // Reflection: trigamma(x) + trigamma(1 - x) = pi^2 / sin(pi x)^2, and
  // sin(pi x)^2 has period 1, so only r matters.
  const double s = isa.unary_one[static_cast<int>(Fn::kSin)](kPi * r);
  return (kPi * kPi) / (s * s) - TrigammaPositive(1.0 - x);
}

void Digamma(const double* x, double* y, int64_t n, const IsaFunctions& isa) {
  Parts parts[kChunk];
  double log_y[kChunk];
  double tan_pi_r[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t m = std::min(kChunk, n - start);
    bool reflected = false;
    for (int64_t i = 0; i < m; ++i) {
      parts[i] = Prepare(x[start + i]);
      log_y[i] = parts[i].y;
      tan_pi_r[i] = parts[i].pi_r;
      reflected |= parts[i].kind == Kind::kReflected;
    }
    isa.unary[static_cast<int>(Fn::kLog)](log_y, log_y, m);
    if (reflected) isa.unary[static_cast<int>(Fn::kTan)](tan_pi_r, tan_pi_r, m);
    for (int64_t i = 0; i < m; ++i) y[start + i] = Finish(parts[i], log_y[i], tan_pi_r[i]);
  }
}

}  // namespace autobatch::math::internal
