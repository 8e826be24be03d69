// Tidying of frontend IR: jump threading, block merging, copy propagation,
// copy forwarding and dead-op removal. Each rule applies one rewrite and the
// use counts are recomputed: simple, and cheap at frontend sizes.
#include "frontend/tidy.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

struct UseCounts {
  std::unordered_map<int32_t, int> reads, writes;
  int Reads(VarId v) const {
    auto it = reads.find(v.value);
    return it == reads.end() ? 0 : it->second;
  }
  int Writes(VarId v) const {
    auto it = writes.find(v.value);
    return it == writes.end() ? 0 : it->second;
  }
};

UseCounts CountUses(const Function& f) {
  UseCounts c;
  for (const Block& block : f.blocks) {
    for (const Op& op : block.ops) {
      for (VarId v : OpReads(op)) ++c.reads[v.value];
      for (VarId v : OpWrites(op)) ++c.writes[v.value];
    }
    if (const Branch* b = std::get_if<Branch>(&block.terminator)) ++c.reads[b->cond.value];
  }
  for (VarId v : f.results) ++c.reads[v.value];
  return c;
}

bool Contains(const std::vector<VarId>& vars, VarId v) {
  return std::find(vars.begin(), vars.end(), v) != vars.end();
}

int CountIn(const std::vector<VarId>& vars, VarId v) {
  return static_cast<int>(std::count(vars.begin(), vars.end(), v));
}

const PrimOp* AsCopy(const Op& op) {
  const PrimOp* p = std::get_if<PrimOp>(&op);
  if (p == nullptr || p->prim != Primitive::kCopy || p->inputs.size() != 1 ||
      p->outputs.size() != 1) {
    return nullptr;
  }
  return p;
}

void ForEachTarget(Terminator& t, const std::function<void(BlockId&)>& f) {
  std::visit(Overloaded{
                 [&](Branch& b) {
                   f(b.then_block);
                   f(b.else_block);
                 },
                 [&](Goto& g) { f(g.target); },
                 [](Return&) {},
                 [&](PushGoto& p) { f(p.return_to); },
                 [](IndirectGoto&) {},
                 [](Halt&) {},
             },
             t);
}

void RemoveUnreachable(Function& f) {
  const int32_t n = static_cast<int32_t>(f.blocks.size());
  if (n == 0) return;
  std::vector<bool> seen(n, false);
  std::vector<int32_t> stack = {0};
  seen[0] = true;
  while (!stack.empty()) {
    int32_t b = stack.back();
    stack.pop_back();
    for (BlockId s : Successors(f.blocks[b].terminator)) {
      if (s.value >= 0 && s.value < n && !seen[s.value]) {
        seen[s.value] = true;
        stack.push_back(s.value);
      }
    }
  }
  std::vector<int32_t> remap(n, -1);
  std::vector<Block> blocks;
  for (int32_t b = 0; b < n; ++b) {
    if (!seen[b]) continue;
    remap[b] = static_cast<int32_t>(blocks.size());
    blocks.push_back(std::move(f.blocks[b]));
  }
  for (Block& block : blocks) {
    ForEachTarget(block.terminator, [&](BlockId& t) { t = BlockId(remap[t.value]); });
  }
  f.blocks = std::move(blocks);
}

// Follows empty non-entry blocks that only jump on.
bool ThreadJumps(Function& f) {
  const int32_t n = static_cast<int32_t>(f.blocks.size());
  auto final_target = [&](int32_t b) {
    for (int32_t steps = 0; steps < n && b != 0; ++steps) {
      const Block& block = f.blocks[b];
      const Goto* g = std::get_if<Goto>(&block.terminator);
      if (!block.ops.empty() || g == nullptr || g->target.value == b) break;
      b = g->target.value;
    }
    return b;
  };
  bool changed = false;
  for (Block& block : f.blocks) {
    std::visit(Overloaded{
                   [&](Branch& t) {
                     for (BlockId* target : {&t.then_block, &t.else_block}) {
                       int32_t to = final_target(target->value);
                       if (to != target->value) {
                         *target = BlockId(to);
                         changed = true;
                       }
                     }
                   },
                   [&](Goto& t) {
                     int32_t to = final_target(t.target.value);
                     if (to != t.target.value) {
                       t.target = BlockId(to);
                       changed = true;
                     }
                   },
                   [](Return&) {},
                   [](PushGoto&) {},
                   [](IndirectGoto&) {},
                   [](Halt&) {},
               },
               block.terminator);
    if (const Branch* b = std::get_if<Branch>(&block.terminator);
        b != nullptr && b->then_block == b->else_block) {
      block.terminator = Goto{b->then_block};
      changed = true;
    }
  }
  return changed;
}

// Merges one block into its only predecessor, if any can be.
bool MergeOne(Function& f) {
  const int32_t n = static_cast<int32_t>(f.blocks.size());
  std::vector<int> preds(n, 0);
  for (const Block& block : f.blocks) {
    for (BlockId s : Successors(block.terminator)) ++preds[s.value];
  }
  for (int32_t a = 0; a < n; ++a) {
    const Goto* g = std::get_if<Goto>(&f.blocks[a].terminator);
    if (g == nullptr) continue;
    int32_t b = g->target.value;
    if (b == 0 || b == a || preds[b] != 1) continue;
    Block& from = f.blocks[b];
    Block& into = f.blocks[a];
    for (Op& op : from.ops) into.ops.push_back(std::move(op));
    from.ops.clear();
    into.terminator = from.terminator;
    into.loc = from.loc;
    from.terminator = Halt{};
    return true;
  }
  return false;
}

// `t = copy x` whose reads all follow in the same block, with x unchanged up
// to the last of them: read x instead.
bool PropagateCopy(Function& f, const std::unordered_set<int32_t>& keep,
                   const std::vector<bool>& preserve) {
  const UseCounts counts = CountUses(f);
  for (Block& block : f.blocks) {
    const int n = static_cast<int>(block.ops.size());
    for (int i = 0; i < n; ++i) {
      const PrimOp* copy = AsCopy(block.ops[i]);
      if (copy == nullptr) continue;
      const VarId x = copy->inputs[0];
      const VarId t = copy->outputs[0];
      if (t == x || keep.contains(t.value) || counts.Writes(t) != 1) continue;
      if (t.value < static_cast<int32_t>(preserve.size()) && preserve[t.value]) continue;
      int reads_here = 0;
      int last = i;  // the last op reading t; n if the terminator does
      for (int k = i + 1; k < n; ++k) {
        int r = CountIn(OpReads(block.ops[k]), t);
        if (r > 0) {
          reads_here += r;
          last = k;
        }
      }
      const Branch* branch = std::get_if<Branch>(&block.terminator);
      if (branch != nullptr && branch->cond == t) {
        ++reads_here;
        last = n;
      }
      if (reads_here != counts.Reads(t)) continue;
      bool x_written = false;
      for (int k = i + 1; k <= std::min(last, n - 1); ++k) {
        if (Contains(OpWrites(block.ops[k]), x)) x_written = true;
      }
      if (x_written) continue;
      for (int k = i + 1; k <= std::min(last, n - 1); ++k) {
        std::visit(Overloaded{
                       [&](PrimOp& o) { std::replace(o.inputs.begin(), o.inputs.end(), t, x); },
                       [&](CallOp& o) { std::replace(o.args.begin(), o.args.end(), t, x); },
                       [](PopOp&) {},
                   },
                   block.ops[k]);
      }
      if (Branch* b = std::get_if<Branch>(&block.terminator); b != nullptr && b->cond == t) {
        b->cond = x;
      }
      block.ops.erase(block.ops.begin() + i);
      return true;
    }
  }
  return false;
}

// `op -> t; ...; x = copy t` with t used only there: `op -> x`.
bool ForwardCopy(Function& f, const std::unordered_set<int32_t>& keep) {
  const UseCounts counts = CountUses(f);
  for (Block& block : f.blocks) {
    const int n = static_cast<int>(block.ops.size());
    for (int j = 0; j < n; ++j) {
      const PrimOp* copy = AsCopy(block.ops[j]);
      if (copy == nullptr) continue;
      const VarId t = copy->inputs[0];
      const VarId x = copy->outputs[0];
      if (t == x || keep.contains(t.value) || counts.Writes(t) != 1 || counts.Reads(t) != 1) {
        continue;
      }
      int i = j - 1;
      while (i >= 0 && !Contains(OpWrites(block.ops[i]), t)) --i;
      if (i < 0 || std::holds_alternative<PopOp>(block.ops[i])) continue;
      if (Contains(OpReads(block.ops[i]), x) || Contains(OpWrites(block.ops[i]), x)) continue;
      bool touched = false;
      for (int k = i + 1; k < j; ++k) {
        if (Contains(OpReads(block.ops[k]), x) || Contains(OpWrites(block.ops[k]), x)) {
          touched = true;
        }
      }
      if (touched) continue;
      std::visit(Overloaded{
                     [&](PrimOp& o) { std::replace(o.outputs.begin(), o.outputs.end(), t, x); },
                     [&](CallOp& o) { std::replace(o.results.begin(), o.results.end(), t, x); },
                     [](PopOp&) {},
                 },
                 block.ops[i]);
      block.ops.erase(block.ops.begin() + j);
      return true;
    }
  }
  return false;
}

bool RemoveDeadOps(Function& f, const std::unordered_set<int32_t>& keep) {
  const UseCounts counts = CountUses(f);
  bool changed = false;
  for (Block& block : f.blocks) {
    auto dead = [&](const Op& op) {
      const PrimOp* p = std::get_if<PrimOp>(&op);
      if (p == nullptr || p->prim == Primitive::kUserKernel) return false;
      if (p->prim == Primitive::kCopy && p->inputs.size() == 1 && p->outputs.size() == 1 &&
          p->inputs[0] == p->outputs[0]) {
        return true;  // x = copy x
      }
      for (VarId out : p->outputs) {
        if (keep.contains(out.value) || counts.Reads(out) > 0) return false;
      }
      return true;
    };
    auto end = std::remove_if(block.ops.begin(), block.ops.end(), dead);
    if (end != block.ops.end()) {
      block.ops.erase(end, block.ops.end());
      changed = true;
    }
  }
  return changed;
}

void TidyFunction(Function& f, const std::vector<bool>& preserve) {
  if (f.blocks.empty()) return;
  std::unordered_set<int32_t> keep;
  for (VarId v : f.params) keep.insert(v.value);
  for (VarId v : f.results) keep.insert(v.value);
  RemoveUnreachable(f);
  for (bool changed = true; changed;) {
    changed = ThreadJumps(f);
    RemoveUnreachable(f);
    while (MergeOne(f)) {
      RemoveUnreachable(f);
      changed = true;
    }
    while (ForwardCopy(f, keep)) changed = true;
    while (PropagateCopy(f, keep, preserve)) changed = true;
    if (RemoveDeadOps(f, keep)) changed = true;
  }
}

}  // namespace

void TidyModule(Module& module, const std::vector<bool>& preserve) {
  for (Function& f : module.functions) TidyFunction(f, preserve);
}

}  // namespace autobatch
