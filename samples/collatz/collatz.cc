// Sample: the Collatz step count, a data-dependent while loop.
#include "samples/collatz/collatz.h"

namespace autobatch::samples {

BatchFunction DefineCollatz(Context& ctx) {
  return ctx.Batch("collatz_steps", {.param_names = {"n0"}})([](Builder& b, Value n0) {
    Var n = b.Local("n", n0);
    Var steps = b.Local("steps", 0);
    b.While([&] { return n > 1; }).Do([&] {
      b.If(n % 2 == 0).Then([&] { n = n / 2; }).Else([&] { n = 3 * n + 1; });
      steps = steps + 1;
    });
    return steps;
  });
}

int64_t CollatzStepsReference(int64_t n) {
  int64_t steps = 0;
  while (n > 1) {
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    ++steps;
  }
  return steps;
}

}  // namespace autobatch::samples
