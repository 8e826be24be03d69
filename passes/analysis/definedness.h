// Definedness check: no variable may be read where it may be unassigned.
#ifndef AUTOBATCH_PASSES_ANALYSIS_DEFINEDNESS_H_
#define AUTOBATCH_PASSES_ANALYSIS_DEFINEDNESS_H_

#include "absl/status/status.h"
#include <vector>

#include "ir/ir.h"
#include "passes/analysis/liveness.h"

namespace autobatch {

// Checks, for every function, that each read (an op's inputs or args, a
// Branch condition, the results read by Return / IndirectGoto / the entry's
// Halt) happens where the variable has been assigned on EVERY path from the
// function's start (its params count as assigned there). Reads in
// unreachable blocks are not checked. A tape_push reads its value and a
// tape_pop assigns its result; a tape is not checked (its contents are
// checked at run time, ir/ir.h "Tapes"). Equivalently: no variable is live
// where it may be unassigned, which is what the stack discipline of
// lower_calls relies on (a live Full variable holds exactly one frame).
//
// Requires: an unlowered program whose indices are in range (the verifier's
// R1-R4). Returns InvalidArgument naming, for each offending variable (at
// most 10, in function, block, op order), the function, the variable, the
// block and the source line of the read, and what to do.
absl::Status CheckDefinedBeforeUse(const Program& program);

// The analysis behind it: for each block of `function`, the variables
// assigned on every path from the function's start to the block's entry
// (its params, and the other functions' uniform variables it reads, i.e.
// the entry's uniform inputs, count as assigned at the start; pops do not
// assign). For an unreachable block, every variable.
std::vector<VarSet> AssignedOnEveryPath(const Module& module, const Function& function);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ANALYSIS_DEFINEDNESS_H_
