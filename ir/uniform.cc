// The blocks every lane runs exactly once, for the uniform-value rule.
#include "ir/uniform.h"

#include <cstdint>
#include <variant>

namespace autobatch {
namespace {

// Blocks reachable from `start` (start itself only through a cycle) without
// passing through `skip` (-1: none).
std::vector<bool> ReachableFrom(const Function& fn, int32_t start, int32_t skip) {
  const int32_t n = static_cast<int32_t>(fn.blocks.size());
  std::vector<bool> seen(n, false);
  std::vector<int32_t> work;
  auto visit_successors = [&](int32_t b) {
    for (BlockId s : Successors(fn.blocks[b].terminator)) {
      if (s.value < 0 || s.value >= n || s.value == skip || seen[s.value]) continue;
      seen[s.value] = true;
      work.push_back(s.value);
    }
  };
  visit_successors(start);
  while (!work.empty()) {
    const int32_t b = work.back();
    work.pop_back();
    visit_successors(b);
  }
  return seen;
}

bool IsExit(const Terminator& t) {
  return std::holds_alternative<Return>(t) || std::holds_alternative<Halt>(t) ||
         std::holds_alternative<IndirectGoto>(t);
}

}  // namespace

std::vector<bool> BlocksRunOncePerLane(const Function& fn) {
  const int32_t n = static_cast<int32_t>(fn.blocks.size());
  std::vector<bool> once(n, false);
  if (n == 0) return once;
  const std::vector<bool> reachable = ReachableFrom(fn, 0, -1);
  for (int32_t b = 0; b < n; ++b) {
    if (b != 0 && !reachable[b]) continue;  // never runs
    if (ReachableFrom(fn, b, -1)[b]) continue;  // on a cycle
    bool skippable = false;
    if (b != 0) {
      // An exit reachable from block 0 without passing through b.
      const std::vector<bool> around = ReachableFrom(fn, 0, b);
      skippable = IsExit(fn.blocks[0].terminator);
      for (int32_t e = 0; e < n && !skippable; ++e) {
        skippable = around[e] && IsExit(fn.blocks[e].terminator);
      }
    }
    once[b] = !skippable;
  }
  return once;
}

bool MayComputeUniform(const PrimOp& op) {
  return op.prim != Primitive::kUserKernel && !op.inputs.empty();
}

}  // namespace autobatch
