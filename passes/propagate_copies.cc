// propagate_copies: reads of `t = copy x` in its own block read x instead.
#include "passes/propagate_copies.h"

#include <algorithm>
#include <vector>

#include "passes/analysis/use_counts.h"
#include "passes/require_stage.h"
#include "support/status.h"

namespace autobatch {
namespace {

// Whether ops[begin, end) or `terminator` read `t` where a uniform
// variable may not stand (verifier U4): a call argument or a Branch
// condition.
bool ReadsAsPerLaneOnly(const std::vector<Op>& ops, size_t begin, size_t end,
                        const Terminator& terminator, VarId t) {
  for (size_t k = begin; k < end; ++k) {
    const auto* call = std::get_if<CallOp>(&ops[k]);
    if (call != nullptr && std::find(call->args.begin(), call->args.end(), t) != call->args.end()) {
      return true;
    }
  }
  const auto* branch = std::get_if<Branch>(&terminator);
  return branch != nullptr && branch->cond == t;
}

// Propagates the first copy that can be propagated.
bool PropagateOne(Module& module, Function& function) {
  const UseCounts counts(function, module.variables.size());
  for (Block& block : function.blocks) {
    std::vector<Op>& ops = block.ops;
    const size_t n = ops.size();
    for (size_t i = 0; i < n; ++i) {
      const PrimOp* copy = AsCopy(ops[i]);
      if (copy == nullptr) continue;
      const VarId x = copy->inputs[0];
      const VarId t = copy->outputs[0];
      if (t == x || IsParamOrResult(function, t) || !IsGeneratedName(module.var(t).name) ||
          counts.Writes(t) != 1) {
        continue;
      }
      // The reads of t after the copy in this block; `last` = n stands for
      // the terminator.
      int reads_here = 0;
      size_t last = i;
      for (size_t k = i + 1; k < n; ++k) {
        const std::vector<VarId> reads = OpReads(ops[k]);
        const int r = static_cast<int>(std::count(reads.begin(), reads.end(), t));
        if (r > 0) {
          reads_here += r;
          last = k;
        }
      }
      const std::vector<VarId> terminator_reads = TerminatorReads(block.terminator);
      if (std::find(terminator_reads.begin(), terminator_reads.end(), t) !=
          terminator_reads.end()) {
        ++reads_here;
        last = n;
      }
      if (reads_here != counts.Reads(t)) continue;
      const size_t end = std::min(last + 1, n);
      bool x_written = false;
      for (size_t k = i + 1; k < end; ++k) {
        const std::vector<VarId> writes = OpWrites(ops[k]);
        x_written = x_written || std::find(writes.begin(), writes.end(), x) != writes.end();
      }
      if (x_written) continue;
      if (module.var(x).uniform && ReadsAsPerLaneOnly(ops, i + 1, end, block.terminator, t)) {
        continue;
      }
      for (size_t k = i + 1; k < end; ++k) ReplaceOpReads(ops[k], t, x);
      ReplaceTerminatorReads(block.terminator, t, x);
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      // t is read and written nowhere now: a uniform flag would break U3.
      module.variables[t.value].uniform = false;
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<Program> PropagateCopies(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "propagate_copies",
                                  {Stage::kUntyped, Stage::kTyped},
                                  "it runs before allocate_variables"));
  for (Function& function : program.module.functions) {
    while (PropagateOne(program.module, function)) {
    }
  }
  return program;
}

}  // namespace autobatch
