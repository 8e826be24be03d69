// fold_branches: a Branch whose two targets are one block becomes a Goto.
#ifndef AUTOBATCH_PASSES_FOLD_BRANCHES_H_
#define AUTOBATCH_PASSES_FOLD_BRANCHES_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Every `branch c, ^X, ^X` becomes `goto ^X`.
//
// Why: an If whose branches are both empty (or become empty once the tidy
// passes remove their copies) threads to `branch c, ^join, ^join`. As a Goto
// it no longer reads c, so the op computing c can go (remove_dead_ops) and
// the join can merge into the block (merge_blocks); the executors no longer
// split the lanes on c only to send them all to one block.
//
// Requires: a verified program at any stage.
// Guarantees: every lane goes where it went; no op changes; applying it
// twice changes nothing more.
absl::StatusOr<Program> FoldBranches(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_FOLD_BRANCHES_H_
