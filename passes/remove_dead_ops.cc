// remove_dead_ops: ops without effects whose results nobody reads are removed.
#include "passes/remove_dead_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "passes/analysis/use_counts.h"
#include "passes/require_stage.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

// Whether the user kernel `name` is declared pure (ir/ir.h KernelSignature).
bool IsPureKernel(const Module& module, const std::string& name) {
  auto sig = module.kernels.find(name);
  return sig != module.kernels.end() && sig->second.pure;
}

bool Dead(const Module& module, const Function& function, const UseCounts& counts,
          const Op& op) {
  return std::visit(
      Overloaded{
          [&](const PrimOp& o) {
            if (o.prim == Primitive::kUserKernel && !IsPureKernel(module, o.attrs.kernel)) {
              return false;
            }
            if (const PrimOp* copy = AsCopy(op);
                copy != nullptr && copy->inputs[0] == copy->outputs[0]) {
              // A uniform variable's one write stays (verifier U3).
              return !module.var(copy->outputs[0]).uniform;
            }
            return std::none_of(o.outputs.begin(), o.outputs.end(), [&](VarId out) {
              return IsParamOrResult(function, out) || counts.Reads(out) > 0;
            });
          },
          [](const CallOp&) { return false; },
          [](const PopOp&) { return false; },
          // A tape op moves the tape even when its result is never read.
          [](const TapePushOp&) { return false; },
          [](const TapePopOp&) { return false; },
      },
      op);
}

}  // namespace

absl::StatusOr<Program> RemoveDeadOps(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "remove_dead_ops", {Stage::kUntyped, Stage::kTyped},
                                  "it runs before allocate_variables"));
  for (Function& function : program.module.functions) {
    const UseCounts counts(function, program.module.variables.size());
    std::vector<VarId> unwritten_uniform;
    for (Block& block : function.blocks) {
      std::erase_if(block.ops, [&](const Op& op) {
        if (!Dead(program.module, function, counts, op)) return false;
        for (VarId out : OpWrites(op)) {
          if (program.module.var(out).uniform) unwritten_uniform.push_back(out);
        }
        return true;
      });
    }
    // Nothing reads them (the op was dead) and nothing writes them now: a
    // uniform flag would break U3 (one write), so it goes.
    for (VarId v : unwritten_uniform) program.module.variables[v.value].uniform = false;
  }
  return program;
}

}  // namespace autobatch
