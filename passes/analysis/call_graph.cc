// The static call graph of a module and the "may write" closure over it.
#include "passes/analysis/call_graph.h"

#include <algorithm>
#include <utility>

#include "support/overloaded.h"
#include "support/status.h"

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
    // A gradient stub will run its primal once differentiate writes its body.
    if (const auto& grad = module.functions[f].gradient_of) out.push_back(grad->function);
    for (FunctionId g : out) {
      AB_CHECK(g.valid() && static_cast<size_t>(g.value) < module.functions.size());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return callees;
}

std::vector<bool> RecursiveFunctions(const Module& module) {
  // Tarjan's strongly connected components, iteratively: f is recursive
  // when its component has more than one function or f calls itself.
  const std::vector<std::vector<FunctionId>> callees = Callees(module);
  const size_t n = module.functions.size();
  constexpr int kUnvisited = -1;
  std::vector<int> index(n, kUnvisited), low(n, 0);
  std::vector<bool> on_stack(n, false), recursive(n, false);
  std::vector<int32_t> stack;
  int next_index = 0;
  for (size_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    // (function, index of its next callee to visit)
    std::vector<std::pair<int32_t, size_t>> work = {{static_cast<int32_t>(root), 0}};
    index[root] = low[root] = next_index++;
    stack.push_back(static_cast<int32_t>(root));
    on_stack[root] = true;
    while (!work.empty()) {
      auto& [f, next] = work.back();
      if (next < callees[f].size()) {
        const int32_t g = callees[f][next++].value;
        if (g == f) recursive[f] = true;
        if (index[g] == kUnvisited) {
          index[g] = low[g] = next_index++;
          stack.push_back(g);
          on_stack[g] = true;
          work.push_back({g, 0});
        } else if (on_stack[g]) {
          low[f] = std::min(low[f], index[g]);
        }
        continue;
      }
      const int32_t done = f;
      work.pop_back();
      if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
      if (low[done] != index[done]) continue;
      // `done` roots a component: pop it.
      std::vector<int32_t> component;
      int32_t g;
      do {
        g = stack.back();
        stack.pop_back();
        on_stack[g] = false;
        component.push_back(g);
      } while (g != done);
      if (component.size() > 1) {
        for (int32_t h : component) recursive[h] = true;
      }
    }
  }
  return recursive;
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
    VarSet own(num_vars);
    for (const Block& block : f.blocks) {
      for (const Op& op : block.ops) {
        if (std::holds_alternative<PopOp>(op)) continue;
        own.insert_all(OpWrites(op));
        if (const auto* call = std::get_if<CallOp>(&op)) {
          own.insert_all(ParamsWrittenByCall(module, *call));
        }
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

Program PruneUnreachable(const Program& in) {
  const Module& m = in.module;
  const std::vector<bool> keep_function = ReachableFunctions(m, in.entry);
  std::vector<int32_t> new_function(m.functions.size(), -1);
  int32_t next = 0;
  for (size_t f = 0; f < m.functions.size(); ++f) {
    if (keep_function[f]) new_function[f] = next++;
  }

  std::vector<bool> keep_var(m.variables.size(), false);
  auto mark = [&](std::span<const VarId> vars) {
    for (VarId v : vars) keep_var.at(v.value) = true;
  };
  for (size_t f = 0; f < m.functions.size(); ++f) {
    if (!keep_function[f]) continue;
    const Function& fn = m.functions[f];
    mark(fn.params);
    mark(fn.results);
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) mark(OpVariables(op));
      if (const auto* branch = std::get_if<Branch>(&block.terminator)) {
        keep_var.at(branch->cond.value) = true;
      }
    }
  }
  std::vector<int32_t> new_var(m.variables.size(), -1);
  Program out;
  out.stage = in.stage;
  out.entry = FunctionId(new_function[in.entry.value]);
  out.module.kernels = m.kernels;
  for (size_t v = 0; v < m.variables.size(); ++v) {
    if (!keep_var[v]) continue;
    Variable var = m.variables[v];
    AB_CHECK(keep_function.at(var.function.value),
             "a variable used by a reachable function belongs to it (verifier R2)");
    var.function = FunctionId(new_function[var.function.value]);
    new_var[v] = static_cast<int32_t>(out.module.variables.size());
    out.module.variables.push_back(std::move(var));
  }

  for (size_t f = 0; f < m.functions.size(); ++f) {
    if (!keep_function[f]) continue;
    Function fn = m.functions[f];
    RenameVariables(fn, [&](VarId v) { return VarId(new_var.at(v.value)); });
    auto function = [&](FunctionId g) { return FunctionId(new_function.at(g.value)); };
    if (fn.gradient_of) fn.gradient_of->function = function(fn.gradient_of->function);
    for (Block& block : fn.blocks) {
      for (Op& op : block.ops) {
        std::visit(Overloaded{
                       [&](CallOp& o) { o.callee = function(o.callee); },
                       [](PrimOp&) {},
                       [](PopOp&) {},
                       [](TapePushOp&) {},
                       [](TapePopOp&) {},
                   },
                   op);
      }
      std::visit(Overloaded{
                     [&](PushGoto& t) { t.callee = function(t.callee); },
                     [](Branch&) {},
                     [](Goto&) {},
                     [](Return&) {},
                     [](IndirectGoto&) {},
                     [](Halt&) {},
                 },
                 block.terminator);
    }
    out.module.functions.push_back(std::move(fn));
  }
  return out;
}

}  // namespace autobatch
