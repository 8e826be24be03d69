// cse: an op recomputing a value that a variable still holds becomes a copy
// of that variable (common subexpression elimination).
#ifndef AUTOBATCH_PASSES_CSE_H_
#define AUTOBATCH_PASSES_CSE_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// An expression is a primitive, its attributes and its inputs: two ops
// compute the same expression when they have the same primitive, equal
// attributes and the same input variables, except that a variable holding
// a function-wide known constant (passes/constants.h) counts as its value
// (so `y * c1` and `y * c2` match when c1 and c2 are two constants of one
// type and bits), and that add, mul, eq, ne, and, or match with their
// operands swapped (exactly commutative: every NaN they return is
// canonical; min and max are not, min(+0, -0) = -0 but min(-0, +0) = +0).
//
// The IR is not SSA (a variable is written again, in loops too), so the
// pass computes available expressions, a forward dataflow over each
// function's blocks (intersection where paths join): an op `r = e`
// (outputs r, none of them among e's inputs) makes e available in r, and it
// stays available until r or an input of e is written, or until a call
// (a value kept across a call would live across it: on the stack VM that is
// a push and a pop per recursive call where recomputing costs one op). An op
// computing an expression available in r on EVERY path to it becomes
// `out = copy r` (one copy per output); one recomputing it into r itself is
// dropped. A uniform output (Variable::uniform) is replaced only by a copy
// of a uniform r, so the copy keeps the uniform rules (verifier U3); a
// varying output may copy either.
//
// Candidates are ops without effects whose bits do not depend on the
// batch: built-in primitives except constant, fill_like and copy (a copy
// costs what they cost; the stack VM fills constants once) and
// matvec_batched (not bit_stable); user kernels only when declared pure and
// bit_stable (ir/ir.h KernelSignature). random_uniform and random_normal
// are candidates: their key and counter are explicit inputs, so equal
// inputs draw equal values.
//
// Why: differentiation recomputes the forward values the reverse sweep
// needs, and the frontend emits each use of an expression anew; an
// expensive op (a transcendental, a matvec, a model kernel) done twice
// costs twice per block execution.
//
// Requires: a verified program at stage typed. Guarantees: every lane
// computes the same bits for every variable; the copies are left to
// propagate_copies and the ops that fed only replaced ones to
// remove_dead_ops.
absl::StatusOr<Program> EliminateCommonSubexpressions(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_CSE_H_
