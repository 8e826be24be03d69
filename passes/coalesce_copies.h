// coalesce_copies: removes the copies lowering leaves around block-local
// temporaries.
#ifndef AUTOBATCH_PASSES_COALESCE_COPIES_H_
#define AUTOBATCH_PASSES_COALESCE_COPIES_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "support/deadline.h"

namespace autobatch {

// Within each block, for a temporary t (StorageClass::kTemporary: written and
// read only inside the block) and a variable x of the same type:
//
// * Forward: "t = f(...); ...; x = copy t", where t is written only by f and
//   nothing between the two ops reads, writes or pops x, becomes
//   "x = f(...)" (keeping the copy's in_place mark for x), and every other
//   read of t reads x instead. A Full x then pushes its frame at f instead
//   of at the copy, which is the same stack state since nothing touches x in
//   between. If t is read after the copy, nothing before its last read may
//   write or pop x (that read's own op may write it: ops read before they
//   write), and x must not be Null (a Null variable drops what it is given);
//   this last case only with ForwardCopies::kAnyReads (below).
// * Backward: "t = copy x; ...uses of t...", where t is written only there
//   and nothing after the copy writes or pops x before t's last read (the op
//   of that last read may write x: ops read before they write), drops the
//   copy and reads x instead of t; not when x is uniform and t is the
//   block's Branch condition (a condition is per lane, verifier U4).
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
//
// With ForwardCopies::kOnlyRead the forward rule only folds a t whose one
// read is the copy. kAnyReads also folds t with other reads; it writes x
// earlier, which can make x interfere with a Register that
// coalesce_registers would otherwise merge into it (NUTS's saved subtree
// weight), so the pipeline runs kOnlyRead before coalesce_registers and
// kAnyReads after it.
//
// `deadline` (PassContext::deadline): charged per op of each sweep; once it
// has passed the pass stops and returns DeadlineExceeded.
enum class ForwardCopies { kOnlyRead, kAnyReads };
absl::StatusOr<Program> CoalesceCopies(Program program,
                                       ForwardCopies forward = ForwardCopies::kOnlyRead,
                                       Deadline deadline = {});

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_COALESCE_COPIES_H_
