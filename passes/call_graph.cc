// The static call graph of a module and the "may write" closure over it.
#include "passes/call_graph.h"

#include <algorithm>

#include "ir/status.h"

namespace autobatch {

std::vector<std::vector<FunctionId>> Callees(const Module& module) {
  std::vector<std::vector<FunctionId>> callees(module.functions.size());
  for (size_t f = 0; f < module.functions.size(); ++f) {
    std::vector<FunctionId>& out = callees[f];
    for (const Block& block : module.functions[f].blocks) {
      for (const Op& op : block.ops) {
        if (const auto* call = std::get_if<CallOp>(&op)) out.push_back(call->callee);
      }
      if (const auto* push = std::get_if<PushGoto>(&block.terminator)) {
        out.push_back(push->callee);
      }
    }
    for (FunctionId g : out) {
      AB_CHECK(g.valid() && static_cast<size_t>(g.value) < module.functions.size());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return callees;
}

std::vector<bool> ReachableFunctions(const Module& module, FunctionId entry) {
  const std::vector<std::vector<FunctionId>> callees = Callees(module);
  std::vector<bool> reached(module.functions.size(), false);
  AB_CHECK(entry.valid() && static_cast<size_t>(entry.value) < reached.size());
  std::vector<FunctionId> stack = {entry};
  reached[entry.value] = true;
  while (!stack.empty()) {
    const FunctionId f = stack.back();
    stack.pop_back();
    for (FunctionId g : callees[f.value]) {
      if (!reached[g.value]) {
        reached[g.value] = true;
        stack.push_back(g);
      }
    }
  }
  return reached;
}

std::vector<VarSet> CallMayWrite(const Module& module) {
  const size_t num_vars = module.variables.size();
  const std::vector<std::vector<FunctionId>> callees = Callees(module);
  std::vector<VarSet> may_write;
  may_write.reserve(module.functions.size());
  for (const Function& f : module.functions) {
    VarSet own(num_vars, f.params);
    for (const Block& block : f.blocks) {
      for (const Op& op : block.ops) {
        if (std::holds_alternative<PopOp>(op)) continue;
        own.insert_all(OpWrites(op));
      }
    }
    may_write.push_back(std::move(own));
  }
  // Sets only grow, so the iteration reaches the least fixed point.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t g = 0; g < module.functions.size(); ++g) {
      for (FunctionId h : callees[g]) {
        if (static_cast<size_t>(h.value) == g) continue;
        changed |= may_write[g].UnionWith(may_write[h.value]);
      }
    }
  }
  return may_write;
}

}  // namespace autobatch
