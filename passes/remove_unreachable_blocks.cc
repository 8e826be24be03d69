// remove_unreachable_blocks: drops the blocks control can never reach.
#include "passes/remove_unreachable_blocks.h"

#include "passes/analysis/cfg.h"

namespace autobatch {

absl::StatusOr<Program> RemoveUnreachableBlocks(Program program) {
  for (Function& function : program.module.functions) RemoveUnreachableBlocks(function);
  return program;
}

}  // namespace autobatch
