// Live-variable analysis of one function.
#include "passes/analysis/liveness.h"

#include <bit>
#include <utility>

#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {

VarSet::VarSet(size_t num_vars, std::span<const VarId> vars) : VarSet(num_vars) {
  insert_all(vars);
}

VarSet VarSet::All(size_t num_vars) {
  VarSet all(num_vars);
  for (uint64_t& word : all.words_) word = ~uint64_t{0};
  if (num_vars % 64 != 0) all.words_.back() = (uint64_t{1} << (num_vars % 64)) - 1;
  return all;
}

void VarSet::insert(VarId v) {
  AB_CHECK(v.valid());
  const size_t w = static_cast<size_t>(v.value) / 64;
  if (w >= words_.size()) words_.resize(w + 1, 0);
  words_[w] |= uint64_t{1} << (v.value % 64);
}

void VarSet::erase(VarId v) {
  AB_CHECK(v.valid());
  const size_t w = static_cast<size_t>(v.value) / 64;
  if (w < words_.size()) words_[w] &= ~(uint64_t{1} << (v.value % 64));
}

bool VarSet::empty() const {
  for (uint64_t w : words_) {
    if (w != 0) return false;
  }
  return true;
}

size_t VarSet::size() const {
  size_t n = 0;
  for (uint64_t w : words_) n += static_cast<size_t>(std::popcount(w));
  return n;
}

bool VarSet::UnionWith(const VarSet& other) {
  if (other.words_.size() > words_.size()) words_.resize(other.words_.size(), 0);
  bool grew = false;
  for (size_t i = 0; i < other.words_.size(); ++i) {
    const uint64_t merged = words_[i] | other.words_[i];
    grew |= merged != words_[i];
    words_[i] = merged;
  }
  return grew;
}

void VarSet::IntersectWith(const VarSet& other) {
  for (size_t i = 0; i < words_.size(); ++i) {
    words_[i] &= i < other.words_.size() ? other.words_[i] : 0;
  }
}

void VarSet::Subtract(const VarSet& other) {
  for (size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) {
    words_[i] &= ~other.words_[i];
  }
}

std::vector<VarId> VarSet::Vars() const {
  std::vector<VarId> out;
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t w = words_[i];
    while (w != 0) {
      const int bit = std::countr_zero(w);
      out.push_back(VarId(static_cast<int32_t>(i * 64 + bit)));
      w &= w - 1;
    }
  }
  return out;
}

std::vector<VarId> TerminatorReads(const Program& program, FunctionId function_id,
                                   const Terminator& terminator) {
  const Function& function = program.module.function(function_id);
  return std::visit(
      Overloaded{
          [](const Branch& t) { return std::vector<VarId>{t.cond}; },
          [](const Goto&) { return std::vector<VarId>{}; },
          [&](const Return&) { return function.results; },
          [](const PushGoto&) { return std::vector<VarId>{}; },
          [&](const IndirectGoto&) { return function.results; },
          [&](const Halt&) { return program.entry_function().results; },
      },
      terminator);
}

FunctionLiveness ComputeLiveness(const Program& program, FunctionId function_id) {
  const Function& function = program.module.function(function_id);
  const size_t num_vars = program.module.variables.size();
  const size_t n = function.blocks.size();

  FunctionLiveness result;
  result.blocks.resize(n);
  for (BlockLiveness& b : result.blocks) {
    b.live_in = VarSet(num_vars);
    b.live_out = VarSet(num_vars);
  }

  // Backward transfer of one block from its live_out; fills live_after_op
  // when `record` is set.
  auto transfer = [&](size_t b, BlockLiveness& info, bool record) {
    const Block& block = function.blocks[b];
    VarSet live = info.live_out;
    live.insert_all(TerminatorReads(program, function_id, block.terminator));
    if (record) {
      info.live_before_terminator = live;
      info.live_after_op.assign(block.ops.size(), VarSet());
    }
    for (size_t k = block.ops.size(); k-- > 0;) {
      if (record) info.live_after_op[k] = live;
      // PopOps neither read nor write in this view (see the header).
      if (std::holds_alternative<PopOp>(block.ops[k])) continue;
      live.erase_all(OpWrites(block.ops[k]));
      live.insert_all(OpReads(block.ops[k]));
    }
    return live;
  };

  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = n; b-- > 0;) {
      BlockLiveness& info = result.blocks[b];
      for (BlockId s : Successors(function.blocks[b].terminator)) {
        info.live_out.UnionWith(result.blocks.at(s.value).live_in);
      }
      VarSet in = transfer(b, info, /*record=*/false);
      if (in != info.live_in) {
        // Sets only grow (the transfer is monotone), so this terminates.
        info.live_in = std::move(in);
        changed = true;
      }
    }
  }
  for (size_t b = 0; b < n; ++b) transfer(b, result.blocks[b], /*record=*/true);
  return result;
}

std::vector<CallLiveness> LiveAcrossCalls(const Program& program,
                                          FunctionId function_id,
                                          const FunctionLiveness& liveness) {
  const Function& function = program.module.function(function_id);
  std::vector<CallLiveness> out;
  for (size_t b = 0; b < function.blocks.size(); ++b) {
    const Block& block = function.blocks[b];
    for (size_t k = 0; k < block.ops.size(); ++k) {
      const auto* call = std::get_if<CallOp>(&block.ops[k]);
      if (call == nullptr) continue;
      VarSet across = liveness.blocks[b].live_after_op[k];
      across.erase_all(call->results);
      out.push_back({BlockId(static_cast<int32_t>(b)), static_cast<int>(k),
                     std::move(across)});
    }
  }
  return out;
}

}  // namespace autobatch
