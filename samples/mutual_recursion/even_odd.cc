// Sample: is_even / is_odd, two functions that call each other.
#include "samples/mutual_recursion/even_odd.h"

namespace autobatch::samples {

EvenOdd DefineEvenOdd(Context& ctx) {
  // Both are declared first, so each body can call the other.
  EvenOdd f{ctx.Declare("is_even", {.param_names = {"n"}}),
            ctx.Declare("is_odd", {.param_names = {"n"}})};
  ctx.Batch(f.is_even)([f](Builder& b, Value n) {
    Var even = b.Local("even");
    b.If(n == 0).Then([&] { even = true; }).Else([&] { even = f.is_odd(n - 1); });
    return even;
  });
  ctx.Batch(f.is_odd)([f](Builder& b, Value n) {
    Var odd = b.Local("odd");
    b.If(n == 0).Then([&] { odd = false; }).Else([&] { odd = f.is_even(n - 1); });
    return odd;
  });
  return f;
}

bool IsEvenReference(int64_t n) { return n % 2 == 0; }

}  // namespace autobatch::samples
