// allocate_variables: picks each variable's storage class from liveness.
#include "passes/allocate_variables.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/status.h"
#include "passes/analysis/call_graph.h"
#include "passes/analysis/definedness.h"
#include "passes/analysis/liveness.h"
#include "passes/require_stage.h"

namespace autobatch {

absl::StatusOr<Program> AllocateVariables(Program program) {
  if (program.stage != Stage::kTyped && program.stage != Stage::kAllocated) {
    return absl::InvalidArgumentError(absl::StrCat(
        "allocate_variables needs a typed program (run infer_types first), got stage ",
        std::string(StageName(program.stage))));
  }
  AB_RETURN_IF_ERROR(RequireNoGradientStubs(program, "allocate_variables"));
  AB_RETURN_IF_ERROR(CheckDefinedBeforeUse(program));
  Module& module = program.module;
  const size_t num_vars = module.variables.size();
  const std::vector<VarSet> call_may_write = CallMayWrite(module);

  VarSet full(num_vars), crosses(num_vars), read(num_vars), interface(num_vars);
  VarSet tapes(num_vars);
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const FunctionId fid(static_cast<int32_t>(f));
    const Function& fn = module.functions[f];
    const bool is_entry = fid == program.entry;
    interface.insert_all(fn.params);
    interface.insert_all(fn.results);
    // Results are read by the caller (or are the program's outputs).
    read.insert_all(fn.results);
    if (is_entry) read.insert_all(fn.params);

    const FunctionLiveness liveness = ComputeLiveness(program, fid);
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const Block& block = fn.blocks[b];
      crosses.UnionWith(liveness.blocks[b].live_in);
      crosses.UnionWith(liveness.blocks[b].live_out);
      for (const Op& op : block.ops) {
        read.insert_all(OpReads(op));
        if (std::optional<VarId> tape = TapeOf(op)) tapes.insert(*tape);
      }
      read.insert_all(TerminatorReads(program, fid, block.terminator));
    }
    for (const CallLiveness& call : LiveAcrossCalls(program, fid, liveness)) {
      crosses.UnionWith(call.live_across);
      const auto& op = std::get<CallOp>(fn.blocks[call.block.value].ops[call.op_index]);
      VarSet clobbered = call.live_across;
      clobbered.IntersectWith(call_may_write[op.callee.value]);
      full.UnionWith(clobbered);
    }
  }

  for (size_t i = 0; i < num_vars; ++i) {
    const VarId v(static_cast<int32_t>(i));
    StorageClass storage = StorageClass::kRegister;
    if (tapes.contains(v)) {
      storage = StorageClass::kTape;
    } else if (module.variables[i].uniform) {
      // Stored once per call, never pushed (verifier U5): a register, which
      // nothing but its one write changes, or null when nothing reads it.
      if (!read.contains(v)) storage = StorageClass::kNull;
    } else if (full.contains(v)) {
      storage = StorageClass::kFull;
    } else if (!read.contains(v)) {
      storage = StorageClass::kNull;
    } else if (!crosses.contains(v) && !interface.contains(v)) {
      storage = StorageClass::kTemporary;
    }
    module.variables[i].storage = storage;
  }
  program.stage = Stage::kAllocated;
  return program;
}

}  // namespace autobatch
