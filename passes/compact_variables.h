// compact_variables: drops the variables nothing names and numbers the rest
// in order of first appearance.
#ifndef AUTOBATCH_PASSES_COMPACT_VARIABLES_H_
#define AUTOBATCH_PASSES_COMPACT_VARIABLES_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Rebuilds the variable table: a variable no function names (as a
// parameter, result, op input or output, tape, or Branch condition) is
// dropped; the others are numbered in order of first appearance (function
// by function in module order: parameters, then each block's ops in order,
// each op's reads before its writes before its tape (OpVariables), each
// block's Branch condition, then results). Variables the frontend named for itself (IsGeneratedName in
// passes/analysis/use_counts.h: `t<N>` and `l<N>`, never a parameter or a
// result) are renamed t0, t1, ... and l0, l1, ... per function in the same
// order, skipping the names of the function's other variables.
//
// Why: the tidy passes leave the variables they stop using in the table;
// every later pass and every executor sizes its per-variable state by the
// table, and the printed IR would show the gaps. The frontend numbers its
// own output the same way (frontend/context.cc), so a frontend program
// after tidying reads as if it had been emitted tidy.
//
// Requires: a verified program at any stage.
// Guarantees: only VarIds and generated names change; every op, terminator,
// parameter and result refers to the same variable as before; applying it
// twice changes nothing more.
absl::StatusOr<Program> CompactVariables(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_COMPACT_VARIABLES_H_
