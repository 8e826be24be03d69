// allocate_variables: picks each variable's storage class from liveness.
#ifndef AUTOBATCH_PASSES_ALLOCATE_VARIABLES_H_
#define AUTOBATCH_PASSES_ALLOCATE_VARIABLES_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Sets Variable::storage for every variable (ir/ir.h, "Storage classes"):
//   Tape      the tape operand of a tape_push or tape_pop (ir/ir.h, "Tapes"),
//             and no other variable; liveness never sees a tape.
//   Full      otherwise, if live across a CallOp whose callee may write it: the variable
//             is in CallMayWrite(module)[callee] (passes/analysis/call_graph.h),
//             i.e. the call may, directly or through any chain of calls
//             including recursion, assign it or copy an argument into it.
//   Null      otherwise, if nothing reads it: no op, no Branch, and it is
//             neither a result (read by Return) nor an entry param.
//   Temporary otherwise, if it is never live on entry to or exit from any
//             block nor across any call, and is neither a param nor a
//             result: every read sees a write earlier in the same block.
//   Register  everything else (one value per lane; safe because no call it
//             is live across can write it).
// So the entry function's params and results are at least Register, a
// function's params and results never Temporary, its results never Null.
// Liveness is passes/analysis/liveness.h's activation-local analysis.
//
// Requires: stage kTyped (after infer_types), a program that passes
// VerifyProgram, no gradient stubs (run differentiate first; a stub is an
// InvalidArgument naming it). Runs CheckDefinedBeforeUse (passes/analysis/definedness.h) first and
// returns its error, if any: the classes above assume that a live variable
// has been assigned.
// Guarantees: only storage classes change; stage = kAllocated.
absl::StatusOr<Program> AllocateVariables(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ALLOCATE_VARIABLES_H_
