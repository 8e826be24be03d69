// fold_copies: `t = f(...); x = copy t` becomes `x = f(...)` when t has
// no other use.
#include "passes/fold_copies.h"

#include <algorithm>
#include <vector>

#include "passes/analysis/use_counts.h"
#include "passes/require_stage.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

bool Contains(const std::vector<VarId>& vars, VarId v) {
  return std::find(vars.begin(), vars.end(), v) != vars.end();
}

bool Touches(const Op& op, VarId v) {
  return Contains(OpReads(op), v) || Contains(OpWrites(op), v);
}

// Renames the output `from` of `def` to `to`; false if `def` cannot take
// the copy's place (a pop writes no value; tape ops are left as the pass
// that emitted them wrote them, ir/ir.h "Tapes").
bool RenameOutput(Op& def, VarId from, VarId to) {
  return std::visit(Overloaded{
                        [&](PrimOp& o) {
                          std::replace(o.outputs.begin(), o.outputs.end(), from, to);
                          return true;
                        },
                        [&](CallOp& o) {
                          std::replace(o.results.begin(), o.results.end(), from, to);
                          return true;
                        },
                        [](PopOp&) { return false; },
                        [](TapePushOp&) { return false; },
                        [](TapePopOp&) { return false; },
                    },
                    def);
}

// Folds the first copy that can be folded.
bool FoldOne(Function& function, size_t num_variables) {
  const UseCounts counts(function, num_variables);
  for (Block& block : function.blocks) {
    std::vector<Op>& ops = block.ops;
    for (size_t j = 0; j < ops.size(); ++j) {
      const PrimOp* copy = AsCopy(ops[j]);
      if (copy == nullptr) continue;
      const VarId t = copy->inputs[0];
      const VarId x = copy->outputs[0];
      if (t == x || IsParamOrResult(function, t) || counts.Writes(t) != 1 ||
          counts.Reads(t) != 1) {
        continue;
      }
      size_t i = j;
      while (i > 0 && !Contains(OpWrites(ops[i - 1]), t)) --i;
      if (i == 0) continue;  // t is written in another block
      Op& def = ops[--i];
      if (Touches(def, x)) continue;
      bool touched = false;
      for (size_t k = i + 1; k < j; ++k) touched = touched || Touches(ops[k], x);
      if (touched || !RenameOutput(def, t, x)) continue;
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(j));
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<Program> FoldCopies(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "fold_copies", {Stage::kUntyped, Stage::kTyped},
                                  "it runs before allocate_variables"));
  const size_t num_variables = program.module.variables.size();
  for (Function& function : program.module.functions) {
    while (FoldOne(function, num_variables)) {
    }
  }
  return program;
}

}  // namespace autobatch
