// digamma: asymptotic series, upward recurrence and reflection (math.h).
#include "support/math/digamma.h"

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

// digamma(y) for y >= 10: log(y) - 1/(2y) - sum_k B_2k / (2k y^2k), k = 1..7
// (B_2k the Bernoulli numbers), in Horner form in w = 1 / y^2. The next
// term, B_16 / (16 y^16), is below 5e-17 at y = 10.
double Asymptotic(double y, const IsaFunctions& isa) {
  const double w = 1.0 / (y * y);
  const double p =
      1.0 / 12 -
      w * (1.0 / 120 -
           w * (1.0 / 252 -
                w * (1.0 / 240 - w * (1.0 / 132 - w * (691.0 / 32760 - w * (1.0 / 12))))));
  const double log_y = isa.unary_one[static_cast<int>(Fn::kLog)](y);
  return (log_y - 0.5 / y) - w * p;
}

// x > 0 and finite.
double Positive(double x, const IsaFunctions& isa) {
  double shift = 0;  // sum of 1 / x_i over the recurrence's steps
  while (x < kAsymptoticFrom) {
    shift = shift + 1.0 / x;
    x = x + 1.0;
  }
  return Asymptotic(x, isa) - shift;
}

}  // namespace

double Digamma(double x, const IsaFunctions& isa) {
  if (x != x || x == -kInf) return kNaN;
  if (x == kInf) return kInf;
  if (x == 0) return std::signbit(x) ? kInf : -kInf;  // -1/x as x -> 0
  if (x > 0) return Positive(x, isa);
  // Reflection: digamma(x) = digamma(1 - x) - pi cot(pi x), and cot has
  // period pi, so only r = x - round(x) in [-1/2, 1/2] matters; the
  // subtraction is exact (Sterbenz), and r = 0 at the poles.
  const double r = x - std::round(x);
  if (r == 0) return kNaN;
  const double tan_pi_r = isa.unary_one[static_cast<int>(Fn::kTan)](kPi * r);
  return Positive(1.0 - x, isa) - kPi / tan_pi_r;
}

}  // namespace autobatch::math::internal
