// digamma written once in portable C++ (internal to support/math; math.h
// states the definition).
#ifndef AUTOBATCH_SUPPORT_MATH_DIGAMMA_H_
#define AUTOBATCH_SUPPORT_MATH_DIGAMMA_H_

#include "support/math/sleef_isa.h"

namespace autobatch::math::internal {

// digamma(x) with log and tan from `isa` (every variant gives the same bits).
double Digamma(double x, const IsaFunctions& isa);

}  // namespace autobatch::math::internal

#endif  // AUTOBATCH_SUPPORT_MATH_DIGAMMA_H_
