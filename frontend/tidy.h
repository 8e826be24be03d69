// Tidying of the IR the frontend emits: removes the copies and trivial
// blocks that statement-by-statement emission leaves, without changing what
// any function computes.
#ifndef AUTOBATCH_FRONTEND_TIDY_H_
#define AUTOBATCH_FRONTEND_TIDY_H_

#include <vector>

#include "ir/ir.h"

namespace autobatch {

// Rewrites every function of an UNLOWERED module (no PopOp, PushGoto or
// IndirectGoto; CallOp and Return allowed), repeating until nothing changes:
//  * jump threading: a branch or goto to an empty non-entry block that only
//    jumps on goes straight to the final target; `branch c, X, X` becomes
//    `goto X`;
//  * block merging: a block that is the only predecessor of its goto target
//    (not the entry) absorbs it;
//  * unreachable blocks are removed (block order is otherwise kept);
//  * copy forwarding (tried first): `op -> t; ...; x = copy t` in one block, where t is
//    written only by `op` and read only by the copy, x is neither an input
//    nor another output of `op`, and x is not read or written in between,
//    becomes `op -> x`;
//  * copy propagation: `t = copy x` whose only reads are later in the same
//    block, with no write of x up to the last of them, is removed and those
//    reads use x;
//  * dead code: a built-in PrimOp none of whose outputs is ever read is
//    removed (user kernels and calls are kept).
// Parameters and results are never renamed or removed, and their reads and
// writes are kept. Variables that become unused stay in the variable table.
// No PrimOp ends up with an output among its inputs unless it had one.
// Variables with preserve[id] set (e.g. locals the user named) are never
// removed by copy propagation, so they stay visible in the IR and in errors.
void TidyModule(Module& module, const std::vector<bool>& preserve = {});

}  // namespace autobatch

#endif  // AUTOBATCH_FRONTEND_TIDY_H_
