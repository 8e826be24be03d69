// Sample: recursive Fibonacci, the "hello world" of auto-batching.
#include "samples/fibonacci/fibonacci.h"

namespace autobatch::samples {

BatchFunction DefineFibonacci(Context& ctx) {
  BatchFunction fib = ctx.Declare("fibonacci", {.param_names = {"n"}});
  // Bodies are built lazily, after this function returns: capture handles by
  // value (they are cheap), not by reference to locals.
  ctx.Batch(fib)([fib](Builder& b, Value n) {
    Var ans = b.Local("ans");
    b.If(n > 1)
        .Then([&] {
          // C++ leaves the evaluation order of `fib(n - 1) + fib(n - 2)`
          // unspecified (GCC calls the right one first); naming the first
          // call fixes the order, and with it the batching pattern.
          Value left = fib(n - 1);
          ans = left + fib(n - 2);
        })
        .Else([&] { ans = 1; });
    return ans;
  });
  return fib;
}

int64_t FibonacciReference(int64_t n) {
  return n > 1 ? FibonacciReference(n - 1) + FibonacciReference(n - 2) : 1;
}

}  // namespace autobatch::samples
