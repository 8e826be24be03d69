// fuse_pop_push: turns "pop x, then write x" into an in-place write of x.
#include "passes/fuse_pop_push.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace autobatch {
namespace {

bool Mentions(const Op& op, VarId x) {
  for (VarId v : OpReads(op)) {
    if (v == x) return true;
  }
  for (VarId v : OpWrites(op)) {  // a PopOp's vars count as writes
    if (v == x) return true;
  }
  return false;
}

void FuseBlock(Block& block) {
  std::vector<Op>& ops = block.ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    auto* pop = std::get_if<PopOp>(&ops[i]);
    if (pop == nullptr) continue;
    std::vector<VarId> kept;
    for (VarId x : pop->vars) {
      bool fused = false;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        if (!Mentions(ops[j], x)) continue;
        auto* write = std::get_if<PrimOp>(&ops[j]);
        if (write != nullptr &&
            std::find(write->outputs.begin(), write->outputs.end(), x) !=
                write->outputs.end() &&
            std::find(write->inputs.begin(), write->inputs.end(), x) ==
                write->inputs.end() &&
            std::find(write->in_place.begin(), write->in_place.end(), x) ==
                write->in_place.end()) {
          write->in_place.push_back(x);
          std::sort(write->in_place.begin(), write->in_place.end());
          fused = true;
        }
        break;
      }
      if (!fused) kept.push_back(x);
    }
    pop->vars = std::move(kept);
  }
  ops.erase(std::remove_if(ops.begin(), ops.end(),
                           [](const Op& op) {
                             const auto* pop = std::get_if<PopOp>(&op);
                             return pop != nullptr && pop->vars.empty();
                           }),
            ops.end());
}

}  // namespace

absl::StatusOr<Program> FusePopPush(Program program) {
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fuse_pop_push needs a lowered program (run lower_calls first), got stage ",
        std::string(StageName(program.stage))));
  }
  for (Function& function : program.module.functions) {
    for (Block& block : function.blocks) FuseBlock(block);
  }
  return program;
}

}  // namespace autobatch
