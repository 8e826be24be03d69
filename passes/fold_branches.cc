// fold_branches: a Branch whose two targets are one block becomes a Goto.
#include "passes/fold_branches.h"

namespace autobatch {

absl::StatusOr<Program> FoldBranches(Program program) {
  for (Function& function : program.module.functions) {
    for (Block& block : function.blocks) {
      const auto* branch = std::get_if<Branch>(&block.terminator);
      if (branch != nullptr && branch->then_block == branch->else_block) {
        block.terminator = Goto{branch->then_block};
      }
    }
  }
  return program;
}

}  // namespace autobatch
