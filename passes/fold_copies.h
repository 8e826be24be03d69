// fold_copies: `t = f(...); x = copy t` becomes `x = f(...)` when t has
// no other use.
#ifndef AUTOBATCH_PASSES_FOLD_COPIES_H_
#define AUTOBATCH_PASSES_FOLD_COPIES_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Within one block: `t = f(...); ...; x = copy t`, where f is a PrimOp or a
// CallOp, t is written only by f and read only by the copy in the whole
// function, t is neither a parameter nor a result, f neither reads nor
// writes x, and no op between the two reads or writes x, becomes
// `x = f(...)` (the copy removed; f's output t renamed x). Repeated while it
// applies, first block and first copy first. t stays in the variable table
// (compact_variables drops it).
//
// Why: the frontend emits every expression into a fresh temporary and every
// assignment `x = expr` as a copy of it; this gives the assignment's target
// the value directly. (coalesce_copies does the same after lowering for
// Temporary variables, with the stack discipline in mind; this pass runs on
// the untyped program, where every variable is still a plain value.)
//
// Requires: a verified program at stage untyped or typed (storage classes
// chosen by allocate_variables would no longer match the liveness).
// Guarantees: every lane computes the same values; no op gets an output that
// is also one of its inputs unless it had one; parameters and results keep
// every read and write.
absl::StatusOr<Program> FoldCopies(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_FOLD_COPIES_H_
