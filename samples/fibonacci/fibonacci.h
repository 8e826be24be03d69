// Sample: recursive Fibonacci, the "hello world" of auto-batching.
#ifndef AUTOBATCH_SAMPLES_FIBONACCI_FIBONACCI_H_
#define AUTOBATCH_SAMPLES_FIBONACCI_FIBONACCI_H_

#include <cstdint>

#include "frontend/context.h"

namespace autobatch::samples {

// Registers `fibonacci(n: i64) -> i64` on `ctx`: fib(n) = n > 1 ? fib(n - 1) +
// fib(n - 2) : 1 (so fib(0) = fib(1) = 1), by plain recursion.
BatchFunction DefineFibonacci(Context& ctx);

// The same function in plain C++, for tests.
int64_t FibonacciReference(int64_t n);

}  // namespace autobatch::samples

#endif  // AUTOBATCH_SAMPLES_FIBONACCI_FIBONACCI_H_
