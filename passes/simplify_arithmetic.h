// simplify_arithmetic: ops that IEEE arithmetic makes equal to one of their
// operands become copies of it.
#ifndef AUTOBATCH_PASSES_SIMPLIFY_ARITHMETIC_H_
#define AUTOBATCH_PASSES_SIMPLIFY_ARITHMETIC_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Rewrites only identities that hold bit for bit for EVERY value of x, -0,
// NaN and the infinities included, under the primitives' own semantics
// (ir/primitives.def, backends/kernels.h). "1", "+0", "-0", "true" and
// "false" are operands whose value is known (passes/constants.h) and every
// element of which is that value in the op's dtype, bit for bit:
//
//   x * 1, 1 * x -> x    IEEE multiplication by 1 is exact (-0*1 = -0,
//                         inf*1 = inf, NaN*1 = NaN); integers: wrapping *1.
//   x / 1 -> x           exact likewise; integers: truncating x/1 = x.
//   x - (+0) -> x        x + (-0) in IEEE, exact for every x (-0 - +0 = -0);
//                         NOT x - (-0), which sends -0 to +0.
//   x + (-0), (-0) + x -> x   exact for every x (+0 + -0 = +0);
//                         NOT x + (+0) (-0 + +0 = +0). Integers: x + 0.
//   neg(neg x) -> x      two sign flips; integers: -(-INT_MIN) = INT_MIN.
//   abs(abs x) -> abs x  |y| = y for y = |x| (NaN canonical, sign clear;
//                         integers: |INT_MIN| = INT_MIN both times).
//   min(x, x), max(x, x) -> x   no NaN: a < b is false, b = x is chosen.
//   cast x to x's own dtype -> x   integers only the identity, floats
//                         canonicalize NaN (below); bools are left alone
//                         (a cast normalizes a bool byte to 0 or 1).
//   select(c, a, a) -> a; select(true, a, b) -> a; select(false, a, b) -> b
//                         select moves bytes, whatever they hold.
//   NOT x * 0 (inf * 0 = NaN, -1 * 0 = -0), NOT x - x (inf - inf = NaN),
//   NOT x / x: none of those hold for every x.
//
// Every computing primitive returns the canonical quiet NaN, so `x * 1`
// differs from x when x holds another NaN (a NaN input with a payload or a
// sign): float rewrites to x therefore require that x can hold only the
// canonical NaN (it is not a parameter and every write to it is a built-in
// computing op, or data movement of such values, a user kernel or a call
// result does not count). An operand is found at the rewrite's point: a
// known constant (function-wide or earlier in the block), and for
// neg(neg x) / abs(abs x) the inner op earlier in the same block with
// neither its output nor (neg) x written since.
//
// Shapes: when x is a scalar and the other operand a tensor, the result is
// `broadcast x` to the result's shape (never x itself); every other rewrite
// keeps the type. A rewritten op is `y = copy x` (`y = x op 1` with y = x
// is dropped); the copies are left to propagate_copies and the operands to
// remove_dead_ops.
//
// Why: differentiated code multiplies by seeds of 1 and adds zero adjoints;
// each such op costs a kernel launch per block execution.
//
// Requires: a verified program at stage typed. Guarantees: every lane
// computes the same bits for every variable.
absl::StatusOr<Program> SimplifyArithmetic(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_SIMPLIFY_ARITHMETIC_H_
