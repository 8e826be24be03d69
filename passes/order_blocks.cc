// order_blocks: orders each function's blocks for the stack VM.
#include "passes/order_blocks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/analysis/cfg.h"

namespace autobatch {
namespace {

// reaches[b]: some block ending in PushGoto is reachable from b (b included).
std::vector<bool> ReachesCall(const Function& function) {
  const std::vector<std::vector<BlockId>> preds = Predecessors(function);
  std::vector<bool> reaches(function.blocks.size(), false);
  std::vector<int32_t> stack;
  for (size_t b = 0; b < function.blocks.size(); ++b) {
    if (std::holds_alternative<PushGoto>(function.blocks[b].terminator)) {
      reaches[b] = true;
      stack.push_back(static_cast<int32_t>(b));
    }
  }
  while (!stack.empty()) {
    const int32_t b = stack.back();
    stack.pop_back();
    for (BlockId p : preds[b]) {
      if (!reaches[p.value]) {
        reaches[p.value] = true;
        stack.push_back(p.value);
      }
    }
  }
  return reaches;
}

}  // namespace

absl::StatusOr<Program> OrderBlocks(Program program) {
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        "order_blocks needs a lowered program (run lower_calls first), got stage ",
        std::string(StageName(program.stage))));
  }
  for (Function& function : program.module.functions) {
    if (function.blocks.empty()) continue;
    const std::vector<bool> reaches = ReachesCall(function);
    std::vector<int32_t> order = {0};
    for (bool calling : {true, false}) {
      for (bool heavy : {false, true}) {
        for (size_t b = 1; b < function.blocks.size(); ++b) {
          if (reaches[b] == calling && RunsExpensiveKernel(function.blocks[b]) == heavy) {
            order.push_back(static_cast<int32_t>(b));
          }
        }
      }
    }
    PermuteBlocks(function, order);
  }
  return program;
}

}  // namespace autobatch
