// differentiate: reverse-mode differentiation over the IR. Writes the body
// of every gradient stub (ir/ir.h GradientOf): the value of the primal
// function and its gradient with respect to the chosen params, in the same
// IR, through branches and loops with per-lane trip counts.
#ifndef AUTOBATCH_PASSES_DIFFERENTIATE_H_
#define AUTOBATCH_PASSES_DIFFERENTIATE_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// For each stub g = gradient of f with respect to params wrt:
//  1. g gets a copy of f's blocks (f's params become g's params) with every
//     call inlined (inline_calls.h InlineEveryCall).
//  2. Activity: a variable is ACTIVE when it is f64, depends on a wrt param
//     through ops that pass gradients (passes/adjoints.h) and the result
//     depends on it (both flow-insensitive, so conservative). Only active
//     ops (those writing an active variable) get reverse code.
//  3. Forward sweep: the copied blocks, run as before, saving on TAPES
//     (ir/ir.h TapePushOp, one tape per saved variable, and one i64 control
//     tape) what the reverse sweep needs and cannot read back: a value an
//     adjoint needs is read directly when its variable is written at most
//     once, outside any loop (params count as a write), and is pushed
//     otherwise (inputs before the op, the output after it); a block pushes
//     its own index at its end when one of its successors has more than one
//     predecessor (the function's start and its Return count as a
//     predecessor and a successor), so the reverse sweep knows where it
//     came from.
//  4. Reverse sweep: at the Return, every adjoint is set to 0 and the
//     result's to 1; then the blocks are visited backwards in the order the
//     lane ran them (popping the control tape where a block had several
//     predecessors), each block's active ops in reverse: dz = the output's
//     adjoint, the output's adjoint reset to 0 (unless it has one write),
//     each active input's adjoint += its contribution (summed over a
//     broadcast). Sums run in a fixed order, so bits never depend on the
//     batch. Each lane pops exactly what it pushed: per-lane trip counts
//     need nothing else.
//  5. g's results: the primal result, then the adjoint of each wrt param
//     (zeros when the result does not depend on it); g returns; its
//     gradient_of is cleared.
// Functions no longer reachable from the entry are then dropped.
//
// Requires: stage kTyped. Errors (InvalidArgument, naming g, f, the op and
// the user's source line): a call f cannot inline (recursion, or a callee
// that halts), a random draw or a user kernel whose result reaches f's
// result, tape ops already in f.
// Guarantees: the program verifies; no stubs remain; stage unchanged.
absl::StatusOr<Program> Differentiate(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_DIFFERENTIATE_H_
