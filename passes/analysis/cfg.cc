// Control-flow-graph utilities shared by the passes.
#include "passes/analysis/cfg.h"

#include <algorithm>
#include <utility>

#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {

std::vector<std::vector<BlockId>> Predecessors(const Function& function) {
  std::vector<std::vector<BlockId>> preds(function.blocks.size());
  for (size_t b = 0; b < function.blocks.size(); ++b) {
    for (BlockId s : Successors(function.blocks[b].terminator)) {
      AB_CHECK(s.valid() && static_cast<size_t>(s.value) < preds.size());
      std::vector<BlockId>& list = preds[s.value];
      const BlockId from(static_cast<int32_t>(b));
      if (list.empty() || list.back() != from) list.push_back(from);
    }
  }
  return preds;
}

std::vector<bool> ReachableBlocks(const Function& function) {
  std::vector<bool> reached(function.blocks.size(), false);
  if (function.blocks.empty()) return reached;
  std::vector<int32_t> stack = {0};
  reached[0] = true;
  while (!stack.empty()) {
    const int32_t b = stack.back();
    stack.pop_back();
    for (BlockId s : Successors(function.blocks[b].terminator)) {
      AB_CHECK(s.valid() && static_cast<size_t>(s.value) < reached.size());
      if (!reached[s.value]) {
        reached[s.value] = true;
        stack.push_back(s.value);
      }
    }
  }
  return reached;
}

Terminator RemapBlocks(const Terminator& terminator,
                       const std::vector<int32_t>& new_index) {
  auto map = [&](BlockId b) {
    AB_CHECK(b.valid() && static_cast<size_t>(b.value) < new_index.size());
    return BlockId(new_index[b.value]);
  };
  return std::visit(
      Overloaded{
          [&](const Branch& t) -> Terminator {
            return Branch{t.cond, map(t.then_block), map(t.else_block)};
          },
          [&](const Goto& t) -> Terminator { return Goto{map(t.target)}; },
          [](const Return& t) -> Terminator { return t; },
          [&](const PushGoto& t) -> Terminator {
            return PushGoto{t.callee, map(t.return_to)};
          },
          [](const IndirectGoto& t) -> Terminator { return t; },
          [](const Halt& t) -> Terminator { return t; },
      },
      terminator);
}

void PermuteBlocks(Function& function, const std::vector<int32_t>& order) {
  const size_t n = function.blocks.size();
  AB_CHECK(order.size() == n);
  std::vector<int32_t> new_index(n, -1);
  for (size_t i = 0; i < n; ++i) {
    AB_CHECK(order[i] >= 0 && static_cast<size_t>(order[i]) < n &&
                 new_index[order[i]] == -1,
             "not a permutation");
    new_index[order[i]] = static_cast<int32_t>(i);
  }
  std::vector<Block> blocks;
  blocks.reserve(n);
  for (int32_t old : order) {
    Block block = std::move(function.blocks[old]);
    block.terminator = RemapBlocks(block.terminator, new_index);
    blocks.push_back(std::move(block));
  }
  function.blocks = std::move(blocks);
}

void RemoveUnreachableBlocks(Function& function) {
  const std::vector<bool> reachable = ReachableBlocks(function);
  std::vector<int32_t> new_index(function.blocks.size(), -1);
  std::vector<Block> kept;
  for (size_t b = 0; b < function.blocks.size(); ++b) {
    if (!reachable[b]) continue;
    new_index[b] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(function.blocks[b]));
  }
  // A kept block's successors are reachable, hence kept: no index maps to -1.
  for (Block& block : kept) block.terminator = RemapBlocks(block.terminator, new_index);
  function.blocks = std::move(kept);
}

}  // namespace autobatch
