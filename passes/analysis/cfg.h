// Control-flow-graph utilities shared by the passes.
//
// Predecessors, reachability and block renumbering within one function.
#ifndef AUTOBATCH_PASSES_ANALYSIS_CFG_H_
#define AUTOBATCH_PASSES_ANALYSIS_CFG_H_

#include <vector>

#include "ir/ir.h"

namespace autobatch {

// Predecessors of every block of `function`, each list sorted ascending and
// without duplicates (a Branch with then == else counts once). PushGoto's
// return_to counts as a successor (ir/ir.h Successors).
// Requires: every block index named by a terminator is in range.
std::vector<std::vector<BlockId>> Predecessors(const Function& function);

// reachable[b] is true if block b can be reached from block 0.
// Requires: as Predecessors.
std::vector<bool> ReachableBlocks(const Function& function);

// The same terminator with every block index b replaced by new_index[b]
// (Branch targets, Goto target, PushGoto return_to).
Terminator RemapBlocks(const Terminator& terminator,
                       const std::vector<int32_t>& new_index);

// Reorders the blocks of `function`: the block at old index order[i] moves
// to index i, and every terminator is renumbered accordingly.
// Requires: `order` is a permutation of 0..blocks.size()-1.
void PermuteBlocks(Function& function, const std::vector<int32_t>& order);

// Drops the blocks that cannot be reached from block 0 (ReachableBlocks),
// keeping the others in their order and renumbering every terminator.
// Requires: as Predecessors.
void RemoveUnreachableBlocks(Function& function);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ANALYSIS_CFG_H_
