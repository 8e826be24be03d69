// digamma written once in portable C++ (internal to support/math; math.h
// states the definition).
#ifndef AUTOBATCH_SUPPORT_MATH_DIGAMMA_H_
#define AUTOBATCH_SUPPORT_MATH_DIGAMMA_H_

#include <cstdint>

#include "support/math/sleef_isa.h"

namespace autobatch::math::internal {

// digamma(x) with log and tan from `isa` (every variant gives the same bits).
double Digamma(double x, const IsaFunctions& isa);
// y[i] = digamma(x[i]) for i < n, log and tan across elements: the same
// bits. y may be x.
void Digamma(const double* x, double* y, int64_t n, const IsaFunctions& isa);
// trigamma(x) with sin from `isa` (only for x < 0; every variant gives the
// same bits).
double Trigamma(double x, const IsaFunctions& isa);

}  // namespace autobatch::math::internal

#endif  // AUTOBATCH_SUPPORT_MATH_DIGAMMA_H_
