// Sample: the Collatz step count, a data-dependent while loop.
#ifndef AUTOBATCH_SAMPLES_COLLATZ_COLLATZ_H_
#define AUTOBATCH_SAMPLES_COLLATZ_COLLATZ_H_

#include <cstdint>

#include "frontend/context.h"

namespace autobatch::samples {

// Registers `collatz_steps(n: i64) -> i64` on `ctx`: how many steps
// (n -> n / 2 if n is even, else 3n + 1) take n to 1, with a real loop
// (b.While), not recursion. 0 for n <= 1.
BatchFunction DefineCollatz(Context& ctx);

// Plain C++, for tests.
int64_t CollatzStepsReference(int64_t n);

}  // namespace autobatch::samples

#endif  // AUTOBATCH_SAMPLES_COLLATZ_COLLATZ_H_
