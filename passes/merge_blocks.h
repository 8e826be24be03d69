// merge_blocks: a block that only one Goto reaches joins the block before.
#ifndef AUTOBATCH_PASSES_MERGE_BLOCKS_H_
#define AUTOBATCH_PASSES_MERGE_BLOCKS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Within each function, where block A ends in `goto ^B`, B is not block 0
// nor A, and no other terminator names B (A's Goto is B's only
// predecessor), B's ops are appended to A's and A takes B's terminator (and
// its location); B is dropped. This is repeated while it applies, first A
// first, so a chain of such blocks becomes one block with the first one's
// label. Other blocks keep their order.
//
// Why: the frontend starts a block at every If, While and join; after
// thread_jumps and the copy passes many of them are single-entry and
// single-exit. Each block a lane passes costs the stack VM a step (and every
// executor a dispatch), and ops in one block can be fused and coalesced
// together (coalesce_copies, fused segments) where a block boundary stops
// them.
//
// Requires: a verified, unlowered program (stage untyped, typed or
// allocated: a Temporary read and written in A or B stays within the merged
// block, and liveness across blocks does not change).
// Guarantees: every lane runs the same ops in the same order; block 0 stays
// block 0; applying it twice changes nothing more.
absl::StatusOr<Program> MergeBlocks(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_MERGE_BLOCKS_H_
