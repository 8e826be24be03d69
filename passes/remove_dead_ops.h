// remove_dead_ops: ops without effects whose results nobody reads are
// removed.
#ifndef AUTOBATCH_PASSES_REMOVE_DEAD_OPS_H_
#define AUTOBATCH_PASSES_REMOVE_DEAD_OPS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Removes, in one sweep over each function, every PrimOp none of whose
// outputs is read anywhere in the function (nor is a parameter or a
// result), built-in or a user kernel declared pure (ir/ir.h
// KernelSignature), and every `x = copy x`. Impure user kernels and calls
// are kept (they may act outside the program: a kernel records draws or
// adapts a step size, a call may not return), and so are tape pushes and pops
// (a pop whose result nobody reads still pops: ir/ir.h, "Tapes").
// An op that only fed removed ops goes on the next run: the tidy round that
// runs this pass repeats until nothing changes (passes/pipeline.cc).
// Variables stay in the variable table (compact_variables drops them);
// a uniform variable whose one write is removed (nobody reads it) loses its
// flag, since a uniform value has exactly one write (verifier U3).
//
// Why: the frontend computes conditions and values that tidying leaves
// unused (fold_branches drops the Branch that read a condition; an unused
// intermediate of a user's expression); each costs a kernel launch per
// block execution.
//
// Requires: a verified program at stage untyped or typed.
// Guarantees: every lane computes the same values for every variable still
// read; the order of the remaining ops is kept.
absl::StatusOr<Program> RemoveDeadOps(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_REMOVE_DEAD_OPS_H_
