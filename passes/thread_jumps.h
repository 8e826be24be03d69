// thread_jumps: jumps through blocks that hold no ops go straight on.
#ifndef AUTOBATCH_PASSES_THREAD_JUMPS_H_
#define AUTOBATCH_PASSES_THREAD_JUMPS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Within each function, where control reaches a block E that has no ops
// (E other than block 0, which is the entry):
//   - a Goto to E becomes a copy of E's terminator (a Goto, Branch, Return,
//     PushGoto, IndirectGoto or Halt), so `x = 1; goto join` with `join:
//     indirect_goto` becomes `x = 1; indirect_goto`;
//   - a Branch target, or a PushGoto's return_to, that is E with a Goto
//     terminator becomes E's target.
// This is repeated while it applies (chains of empty blocks collapse; a
// cycle of empty blocks, a program that never halts, is left as it is),
// and the blocks no longer reachable from block 0 are then dropped.
//
// Why: every block a lane passes costs the stack VM a step for that lane
// (taking it off the block's waiting set, running the block, moving it to
// the next), whether or not the block computes anything. Lowering leaves an
// empty join block at the end of every if/else whose branches end the
// function: in fibonacci both branches end in `goto join` with `join:
// indirect_goto`, one step in every call for every lane. The stackless VM
// and the reference interpreter pay a block dispatch per empty block too.
//
// Requires: a verified program at any stage. An empty block's Branch
// condition is never a Temporary (verifier A4), so the copied Branch reads
// the same value at the end of the jumping block.
// Guarantees: every lane takes the same path through the ops as before and
// computes the same values; no block gains ops; block 0 stays block 0;
// applying it twice changes nothing more. Block indices change where blocks
// are dropped.
absl::StatusOr<Program> ThreadJumps(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_THREAD_JUMPS_H_
