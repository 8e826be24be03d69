// Hand-built IR programs shared by tests (no frontend needed to build them).
#ifndef AUTOBATCH_IR_TESTING_FIB_PROGRAM_H_
#define AUTOBATCH_IR_TESTING_FIB_PROGRAM_H_

#include "ir/ir.h"

namespace autobatch::testing {

// Stage untyped, no variable has a type. Entry function 0 is
// `main(n) -> (r)`: r = fibonacci(n); return. Function 1 is
// `fibonacci(n) -> (ans)` with fib(n) = 1 for n <= 1 (so fib(0) = fib(1) = 1,
// fib(5) = 8):
//   ^0 entry:   one = fill_like(n, i64 1); cond = gt(n, one); branch cond ^1 ^2
//   ^1 recurse: n_1 = sub(n, one); f1 = call fibonacci(n_1);
//               two = fill_like(n, i64 2); n_2 = sub(n, two);
//               f2 = call fibonacci(n_2); ans = add(f1, f2); goto ^3
//   ^2 base:    ans = fill_like(n, i64 1); goto ^3
//   ^3 exit:    return
// Every op, terminator and function has a fake location in "fib.cc".
// Meant to be valid for the verifier and for infer_types with n: i64.
Program MakeFibonacciProgram();

// Stage typed, every variable typed. One function `main(x: f64[3]) ->
// (specials: f64[5], big: u64, ints: i64[3], sum: f64[2], scaled: f64[3])`
// with signature, one block:
//   c_nan, c_inf, c_ninf, c_negzero, c_tiny = constant f64 nan, inf, -inf,
//       -0.0, 1e-310 (subnormal)
//   specials = concat(c_nan, c_inf, c_ninf, c_negzero, c_tiny)
//   big = constant u64 0xFFFFFFFFFFFFFFFF   (stored bit-cast as int64 -1)
//   vec = constant f64[3] [1.5, -2, 0.1]
//   ints = cast(vec) {dtype i64}
//   part = slice(x) {ints [1, 2]}                      -> f64[2]
//   mv = matvec(x) {matrix 2x3 [[1, 2, 3], [4, 5, 6.5]]} -> f64[2]
//   sum = add(part, mv)
//   scaled = kernel "scale"(vec, c_tiny)               -> f64[3]
//   return
// and the user kernel "scale": (f64[3], f64) -> (f64[3]), not bit-stable.
// Locations are in "special.cc".
Program MakeProgramWithSpecialConstants();

// Stage lowered, typed, every storage class used. Entry `main(x: f64) ->
// (r: f64)` calls `twice(a: f64) -> (b: f64)` the lowered way:
//   main ^0 entry:  a = copy(x); push_goto @twice, ^1
//        ^1 resume: r = copy(b); dead = copy(x); pop a, b; halt
//   twice ^0 entry: two = fill_like(a, f64 2); b = mul(a, two); indirect_goto
// Storage: x, r register; a, b full; two temp; dead null. Computes r = 2x.
// Hand-made to exercise every lowered construct (PushGoto, IndirectGoto,
// PopOp, Halt), not the output of lower_calls.
Program MakeSmallLoweredProgram();

// Stage untyped, untyped variables, with a gradient stub. Entry
// `main(x, y) -> (v, dy)`: v, dy = call grad_f(x, y); return. `grad_f(a, b)
// -> (value, db)` is the gradient stub of f with respect to param 1 (b),
// with signature (f64, f64) -> (f64, f64) and no blocks. `f(a, b) -> (r)`:
// ab = mul(a, b); r = mul(ab, a); return (r = a^2 b, dr/db = a^2). The stub
// comes before its primal. Locations in "grad.cc".
Program MakeGradientStubProgram();

}  // namespace autobatch::testing

#endif  // AUTOBATCH_IR_TESTING_FIB_PROGRAM_H_
