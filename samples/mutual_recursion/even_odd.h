// Sample: is_even / is_odd, two functions that call each other.
#ifndef AUTOBATCH_SAMPLES_MUTUAL_RECURSION_EVEN_ODD_H_
#define AUTOBATCH_SAMPLES_MUTUAL_RECURSION_EVEN_ODD_H_

#include <cstdint>

#include "frontend/context.h"

namespace autobatch::samples {

struct EvenOdd {
  BatchFunction is_even;  // (n: i64) -> bool
  BatchFunction is_odd;   // (n: i64) -> bool
};

// Registers is_even(n) = n == 0 ? true : is_odd(n - 1) and is_odd(n) = n == 0
// ? false : is_even(n - 1) on `ctx`: mutual recursion n levels deep, for
// n >= 0 (a negative n recurses until the depth limit, an error).
EvenOdd DefineEvenOdd(Context& ctx);

// Plain C++, for tests.
bool IsEvenReference(int64_t n);

}  // namespace autobatch::samples

#endif  // AUTOBATCH_SAMPLES_MUTUAL_RECURSION_EVEN_ODD_H_
