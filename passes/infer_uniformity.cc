// infer_uniformity: marks values computed once per call from uniform values.
#include "passes/infer_uniformity.h"

#include <variant>
#include <vector>

#include "ir/uniform.h"

namespace autobatch {

absl::StatusOr<Program> InferUniformity(Program program) {
  Module& module = program.module;
  bool any = false;
  for (const Variable& v : module.variables) any = any || v.uniform;
  if (!any || !program.entry.valid() ||
      program.entry.value >= static_cast<int32_t>(module.functions.size())) {
    return program;
  }
  // Variables that may never be uniform, and how often each is written.
  const size_t n = module.variables.size();
  std::vector<bool> barred(n, false);
  std::vector<int> writes(n, 0);
  auto bar = [&](VarId v) {
    if (v.valid() && static_cast<size_t>(v.value) < n) barred[v.value] = true;
  };
  const Function& entry = module.function(program.entry);
  for (VarId v : entry.params) bar(v);
  for (VarId v : entry.results) bar(v);
  for (const Function& fn : module.functions) {
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) {
        for (VarId v : OpWrites(op)) {
          if (v.valid() && static_cast<size_t>(v.value) < n) ++writes[v.value];
        }
        if (const auto* call = std::get_if<CallOp>(&op)) {
          for (VarId v : call->args) bar(v);
          for (VarId v : call->results) bar(v);
        }
      }
      if (const auto* branch = std::get_if<Branch>(&block.terminator)) bar(branch->cond);
    }
  }
  const std::vector<bool> once = BlocksRunOncePerLane(entry);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 0; b < entry.blocks.size(); ++b) {
      if (!once[b]) continue;
      for (const Op& op : entry.blocks[b].ops) {
        const auto* prim = std::get_if<PrimOp>(&op);
        if (prim == nullptr || !MayComputeUniform(*prim) || prim->outputs.size() != 1) continue;
        const VarId out = prim->outputs[0];
        Variable& var = module.var(out);
        if (var.uniform || barred[out.value] || writes[out.value] != 1) continue;
        bool inputs_uniform = true;
        for (VarId in : prim->inputs) inputs_uniform = inputs_uniform && module.var(in).uniform;
        if (!inputs_uniform) continue;
        var.uniform = true;
        changed = true;
      }
    }
  }
  return program;
}

}  // namespace autobatch
