// coalesce_copies: removes the copies lowering leaves around block-local
// temporaries.
#ifndef AUTOBATCH_PASSES_COALESCE_COPIES_H_
#define AUTOBATCH_PASSES_COALESCE_COPIES_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Within each block, for a temporary t (StorageClass::kTemporary: written and
// read only inside the block) and a variable x of the same type:
//
// * Forward: "t = f(...); ...; x = copy t", where the copy is the only read of
//   t in the block and nothing between the two ops reads, writes or pops x,
//   becomes "x = f(...)" (keeping the copy's in_place mark for x). A Full x
//   then pushes its frame at f instead of at the copy, which is the same
//   stack state since nothing touches x in between.
// * Backward: "t = copy x; ...uses of t...", where t is written only there
//   and nothing after the copy writes or pops x before t's last read (the op
//   of that last read may write x: ops read before they write), drops the
//   copy and reads x instead of t.
//
// Both rules repeat until neither applies. Each removes one copy op, one
// batched kernel launch and, on the stack VM, the data movement of one
// variable per block execution.
//
// Requires: stage kLowered (after lower_calls). Best after fuse_pop_push:
// "pop x; t = f(); x = copy t" fuses into an in-place copy first, which the
// forward rule then folds into "x = f() in place".
// Guarantees: every lane computes the same values (bit for bit) and the
// stacks see the same pushes and pops; ops other than the removed copies
// only have variables renamed.
absl::StatusOr<Program> CoalesceCopies(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_COALESCE_COPIES_H_
