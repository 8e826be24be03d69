// propagate_copies: reads of `t = copy x` in its own block read x instead.
#ifndef AUTOBATCH_PASSES_PROPAGATE_COPIES_H_
#define AUTOBATCH_PASSES_PROPAGATE_COPIES_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// `t = copy x`, where t is a variable the frontend named for itself (a
// temporary `t<N>` or unnamed local `l<N>`, passes/analysis/use_counts.h
// IsGeneratedName; never a parameter or a result), t is written only by
// this copy and every read of t in the function follows it in the same
// block (the block's Branch included), and no op from the copy up to the
// last of those reads writes x: the copy is removed and those reads read x.
// Repeated while it applies, first block and first copy first. t stays in
// the variable table (compact_variables drops it), no longer uniform. A
// uniform x is not propagated into a call argument or a Branch condition,
// where a uniform variable may not stand (verifier U4).
//
// Why: reading a local or a parameter into an expression makes the frontend
// copy it into a temporary first; reading the variable itself saves the
// copy. Variables the user named (Builder::Local("name")) are kept, so that
// they stay visible in the IR and in the errors of later passes (a type
// error names them, not the temporary they were copied from).
//
// Requires: a verified program at stage untyped or typed (storage classes
// chosen by allocate_variables would no longer match the liveness).
// Guarantees: every lane computes the same values; parameters, results and
// named variables keep every read and write.
absl::StatusOr<Program> PropagateCopies(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_PROPAGATE_COPIES_H_
