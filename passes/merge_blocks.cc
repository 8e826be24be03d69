// merge_blocks: a block that only one Goto reaches joins the block before.
#include "passes/merge_blocks.h"

#include <utility>
#include <vector>

#include "passes/analysis/cfg.h"
#include "passes/require_stage.h"
#include "support/status.h"

namespace autobatch {
namespace {

// Merges the first block (in block order) that can be merged into its only
// predecessor; the emptied block is left unreachable, ending in Halt.
bool MergeOne(Function& function) {
  const size_t n = function.blocks.size();
  // Predecessor edges, a Branch to one block twice counting twice (it is not
  // a Goto, so it blocks the merge either way).
  std::vector<int> predecessors(n, 0);
  for (const Block& block : function.blocks) {
    for (BlockId s : Successors(block.terminator)) ++predecessors[s.value];
  }
  for (size_t a = 0; a < n; ++a) {
    const auto* jump = std::get_if<Goto>(&function.blocks[a].terminator);
    if (jump == nullptr) continue;
    const int32_t b = jump->target.value;
    if (b == 0 || b == static_cast<int32_t>(a) || predecessors[b] != 1) continue;
    Block& from = function.blocks[b];
    Block& into = function.blocks[a];
    for (Op& op : from.ops) into.ops.push_back(std::move(op));
    from.ops.clear();
    into.terminator = from.terminator;
    into.loc = from.loc;
    from.terminator = Halt{};
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<Program> MergeBlocks(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "merge_blocks",
                                  {Stage::kUntyped, Stage::kTyped, Stage::kAllocated},
                                  "it runs before lower_calls"));
  for (Function& function : program.module.functions) {
    while (MergeOne(function)) RemoveUnreachableBlocks(function);
  }
  return program;
}

}  // namespace autobatch
