// compact_variables: drops the variables nothing names and numbers the rest
// in order of first appearance.
#include "passes/compact_variables.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/analysis/use_counts.h"

namespace autobatch {
namespace {

// The variables of the module in order of first appearance.
std::vector<VarId> AppearanceOrder(const Module& module) {
  std::vector<bool> seen(module.variables.size(), false);
  std::vector<VarId> order;
  auto see = [&](VarId v) {
    if (!seen[v.value]) {
      seen[v.value] = true;
      order.push_back(v);
    }
  };
  for (const Function& function : module.functions) {
    for (VarId v : function.params) see(v);
    for (const Block& block : function.blocks) {
      for (const Op& op : block.ops) {
        for (VarId v : OpVariables(op)) see(v);
      }
      for (VarId v : TerminatorReads(block.terminator)) see(v);
    }
    for (VarId v : function.results) see(v);
  }
  return order;
}

}  // namespace

absl::StatusOr<Program> CompactVariables(Program program) {
  Module& module = program.module;
  const std::vector<VarId> order = AppearanceOrder(module);
  auto generated = [&](VarId v) {
    const Variable& var = module.var(v);
    return IsGeneratedName(var.name) && !IsParamOrResult(module.function(var.function), v);
  };
  // Per function, the names generated ones must not take.
  std::vector<std::set<std::string>> taken(module.functions.size());
  for (VarId v : order) {
    if (!generated(v)) taken[module.var(v).function.value].insert(module.var(v).name);
  }
  std::vector<int> next_temp(module.functions.size(), 0);
  std::vector<int> next_local(module.functions.size(), 0);
  std::vector<int32_t> new_id(module.variables.size(), -1);
  std::vector<Variable> variables;
  for (VarId v : order) {
    Variable var = module.var(v);
    if (generated(v)) {
      const size_t f = var.function.value;
      const bool temp = var.name[0] == 't';
      int& next = temp ? next_temp[f] : next_local[f];
      do {
        var.name = absl::StrCat(temp ? "t" : "l", next++);
      } while (taken[f].contains(var.name));
    }
    new_id[v.value] = static_cast<int32_t>(variables.size());
    variables.push_back(std::move(var));
  }
  module.variables = std::move(variables);
  for (Function& function : module.functions) {
    RenameVariables(function, [&](VarId v) { return VarId(new_id[v.value]); });
  }
  return program;
}

}  // namespace autobatch
