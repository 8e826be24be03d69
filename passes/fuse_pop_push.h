// fuse_pop_push: turns "pop x, then write x" into an in-place write of x.
#ifndef AUTOBATCH_PASSES_FUSE_POP_PUSH_H_
#define AUTOBATCH_PASSES_FUSE_POP_PUSH_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// For each variable x listed by a PopOp, if the first later op of the same
// block that mentions x (reads, writes or pops it) is a PrimOp that writes x
// without reading it, then x is removed from the PopOp and added to that
// PrimOp's in_place: the write overwrites x's top frame instead of pushing,
// which leaves the stack exactly as "pop, then push" would (nothing reads x
// in between). PopOps left empty are removed.
//
// Requires: stage kLowered (after lower_calls).
// Guarantees: same results on the stack VM, never more pops or pushes;
// nothing else changes.
absl::StatusOr<Program> FusePopPush(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_FUSE_POP_PUSH_H_
