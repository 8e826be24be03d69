// remove_unreachable_blocks: drops the blocks control can never reach.
#ifndef AUTOBATCH_PASSES_REMOVE_UNREACHABLE_BLOCKS_H_
#define AUTOBATCH_PASSES_REMOVE_UNREACHABLE_BLOCKS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Within each function, drops every block that no path of terminators
// (Branch and Goto targets, PushGoto's return_to) leads to from block 0,
// keeping the others in their order and renumbering every terminator.
//
// Why: a block nothing jumps to still costs the verifier, the printer and
// every pass. The frontend drops its own (code after a Break or a Return,
// frontend/body.cc), but a program read from JSON may have some; the tidy
// passes run after this one and drop the blocks they orphan themselves.
//
// Requires: a verified program at any stage.
// Guarantees: every lane runs the same ops as before; block 0 stays block 0;
// applying it twice changes nothing more.
absl::StatusOr<Program> RemoveUnreachableBlocks(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_REMOVE_UNREACHABLE_BLOCKS_H_
