// lower_calls: replaces CallOp / Return by explicit stack operations.
#ifndef AUTOBATCH_PASSES_LOWER_CALLS_H_
#define AUTOBATCH_PASSES_LOWER_CALLS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Lowers every function following the contract in ir/ir.h ("Storage
// classes and the stack discipline"); the invariant it establishes is:
//
//   At every point of an activation, a Full variable holds exactly one
//   frame of that activation if it is live there (passes/analysis/liveness.h), and
//   none otherwise.
//
// * A write to a Full variable pushes (it is dead just before the write).
// * Where a Full variable dies, a PopOp discards its frame: right after the
//   op that last reads it (or after the op that writes it, for a write that
//   is never read); on a CFG edge where it stops being live, the pop goes at
//   the start of the successor when every predecessor agrees, at the end of
//   the predecessor when it ends in a Goto, and otherwise in a new block on
//   that edge. Params that are dead on entry are popped at the start of the
//   function (in a new entry block if block 0 has predecessors).
// * A call  [before; r = call g(a); after]  becomes
//     B:  before; g.param_i = copy(a_i) ...; PopOp(args that die here);
//         push_goto g, B'
//     B': r_j = copy(g.result_j) ...; PopOp(g's Full results); after; <term>
//   Copies into Null params and from results that are dead after the call
//   are omitted. Self-calls (g is the caller) share variables between the
//   two activations, so:
//   - an argument that is g's own param at the same position and dies at
//     the call is not copied nor popped: its value (and frame) is handed to
//     the callee as is; if it lives on and is not Full (a param every
//     recursive call passes through, see CallMayWrite in
//     passes/analysis/call_graph.h), it is not copied either: the callee reads the
//     same value;
//   - other arguments that are params of g written by the copies are first
//     saved in new Temporaries "<name>.arg", and popped (if they die) before
//     the copies, so that e.g. `f(b, a)` inside f(a, b) is a parallel
//     assignment;
//   - a result that is g's own result at the same position is left in place
//     (neither copied nor popped: the callee's frame becomes the caller's);
//     if another result would overwrite one of g's results still to be read,
//     all results go through new Temporaries "<name>.ret".
// * A PrimOp that reads and writes the same Full variable x writes a new
//   Temporary "<x>.new" instead, then pops x and copies the Temporary into
//   x (fuse_pop_push later makes that copy an in-place write).
// * A tape_push or tape_pop stays as it is: a tape has no frames (ir/ir.h,
//   "Tapes"). A Full value it pushes that dies there, or a Full result it
//   pops that is never read, is popped after it.
// * Return becomes IndirectGoto; Halt stays.
// New blocks are placed next to the block they come from (continuations
// right after it, edge blocks right before their target, except before
// block 0), so the original order survives; order_blocks may reorder.
// New blocks are labelled "<label>.ret<k>" (continuation after the k-th
// call of the block), "<from>.to.<to>" (edge) and "entry.pops".
//
// Requires: stage kAllocated (after allocate_variables), a program that
// passes VerifyProgram.
// Errors: CheckDefinedBeforeUse's (passes/analysis/definedness.h): a live variable
// that may be unassigned, naming function, variable, block and source line.
// Guarantees: no CallOp or Return remains; the program computes the same
// per-lane results on the stack VM as the input on the reference
// interpreter; stage = kLowered.
absl::StatusOr<Program> LowerCalls(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_LOWER_CALLS_H_
