// order_blocks: orders each function's blocks for the stack VM's scheduler.
#ifndef AUTOBATCH_PASSES_ORDER_BLOCKS_H_
#define AUTOBATCH_PASSES_ORDER_BLOCKS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Within each function, block 0 stays first; then come the blocks from
// which a PushGoto (a call) is reachable inside the function, then the
// blocks that can only lead to a return or a halt; inside each group, blocks
// that run an expensive kernel (a matrix product or a user kernel, e.g. a
// model's gradient) come after the others; otherwise blocks keep their
// incoming order (which lower_calls keeps close to the frontend's, i.e.
// topological for acyclic code).
//
// Why: the stack VM runs the lowest-index block that has lanes. Lanes that
// will call again should get to the call quickly, re-entering the callee
// together with lanes already there; lanes on their way out (base cases,
// code after the last call) should wait at high indices so that lanes
// returning from other recursion depths gather there and run as one batch.
// Measured with the stack-machine model in tests/passes (64 lanes, random
// inputs): is_even/is_odd 186 -> 154 block executions, swap 117 -> 99,
// accumulate 78 -> 59 (= the busiest lane's own count, the lower bound);
// fibonacci (4890, bound 4877) and collatz unchanged. Putting trivial blocks
// (no PrimOp) first, as TFP's heuristic does, made no difference there and
// hurt collatz (595 vs 567): a trivial exit block run early costs a step
// every time a few lanes trickle through it. Expensive blocks go last so
// that every lane reaches its next expensive kernel before it runs: on the
// pea-nuts program (bench/vm_bench, batch 1024) the leaf's utilization went
// from 20% (below the lock-step bound, 22.5%) to the free-running bound, 36.0%
// (docs/BENCHMARKS.md, "fibonacci and pea-nuts against native code (vm_bench)").
//
// Requires: stage kLowered (after lower_calls).
// Guarantees: half 2 of the block-order contract, stated (with what relies
// on it) and checked (CheckBlockOrder) in vm/stack/block_plan.h; only the order of blocks within functions changes, every
// terminator renumbered to match; block 0 stays block 0; applying it twice
// changes nothing more.
absl::StatusOr<Program> OrderBlocks(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ORDER_BLOCKS_H_
