// Fingerprints of lowered programs and the checks of their fused blocks.
#include "vm/fused_blocks.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/json.h"

namespace autobatch {

uint64_t Fnv1a64(std::string_view text, uint64_t hash) {
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

uint64_t ProgramFingerprint(const Program& program) {
  return Fnv1a64(DumpProgramJson(program, /*indent=*/-1));
}

absl::Status CheckFusedProgram(const FusedProgram& fused, const Program& program) {
  const uint64_t expected = ProgramFingerprint(program);
  if (fused.fingerprint != expected) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the fused blocks were generated from another program (fingerprint %016x; this "
        "program's is %016x): regenerate them from this lowered program with "
        "`autobatch compile`, or run without CallOptions::fused_blocks",
        fused.fingerprint, expected));
  }
  const Module& module = program.module;
  const int32_t num_vars = static_cast<int32_t>(module.variables.size());
  int32_t last_fn = -1, last_block = -1, last_end = 0;
  for (size_t s = 0; s < fused.segments.size(); ++s) {
    const FusedSegment& seg = fused.segments[s];
    auto bad = [&](const std::string& what) {
      return absl::FailedPreconditionError(absl::StrCat(
          "fused segment ", s, " (function ", seg.function, ", block ", seg.block, ", ops ",
          seg.first_op, "..", seg.end_op, "): ", what,
          "; the fused blocks do not match this program: regenerate them"));
    };
    if (seg.function < 0 || static_cast<size_t>(seg.function) >= module.functions.size()) {
      return bad("no such function");
    }
    const Function& fn = module.functions[static_cast<size_t>(seg.function)];
    if (seg.block < 0 || static_cast<size_t>(seg.block) >= fn.blocks.size()) {
      return bad("no such block");
    }
    const int32_t num_ops = static_cast<int32_t>(fn.blocks[static_cast<size_t>(seg.block)].ops.size());
    if (seg.first_op < 0 || seg.first_op >= seg.end_op || seg.end_op > num_ops) {
      return bad("the op range is empty or outside the block");
    }
    const std::vector<Op>& ops = fn.blocks[static_cast<size_t>(seg.block)].ops;
    if (!std::holds_alternative<PrimOp>(ops[static_cast<size_t>(seg.first_op)])) {
      return bad("the first op is not a primitive");
    }
    for (int32_t i = seg.first_op; i < seg.end_op; ++i) {
      if (std::holds_alternative<CallOp>(ops[static_cast<size_t>(i)])) {
        return bad("the ops include a call");
      }
      if (TapeOf(ops[static_cast<size_t>(i)])) return bad("the ops include a tape op");
    }
    const bool same_block = seg.function == last_fn && seg.block == last_block;
    if (seg.function < last_fn || (seg.function == last_fn && seg.block < last_block) ||
        (same_block && seg.first_op < last_end)) {
      return bad("segments are not in ascending order or overlap");
    }
    for (std::span<const int32_t> vars : {seg.inputs, seg.outputs}) {
      for (int32_t v : vars) {
        if (v < 0 || v >= num_vars) return bad(absl::StrCat("no variable ", v));
      }
    }
    if (seg.run == nullptr) return bad("no function to run");
    last_fn = seg.function;
    last_block = seg.block;
    last_end = seg.end_op;
  }
  if (fused.blocks.empty()) return absl::OkStatus();
  size_t k = 0;
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const Function& fn = module.functions[f];
    for (size_t b = 0; b < fn.blocks.size(); ++b, ++k) {
      const std::string where =
          absl::StrCat("compiled block for function '", fn.name, "' block ", b);
      auto bad = [&](const std::string& what) {
        return absl::FailedPreconditionError(absl::StrCat(
            where, ": ", what,
            "; the compiled program does not match this program: compile it again "
            "(`autobatch compile --whole-program`)"));
      };
      if (k >= fused.blocks.size()) return bad("missing");
      const CompiledBlock& block = fused.blocks[k];
      if (block.function != static_cast<int32_t>(f) || block.block != static_cast<int32_t>(b)) {
        return bad(absl::StrCat("found function ", block.function, " block ", block.block));
      }
      if (block.run == nullptr) return bad("no function to run");
      for (int32_t op : block.inline_ops) {
        if (op < 0 || static_cast<size_t>(op) >= fn.blocks[b].ops.size() ||
            !std::holds_alternative<PrimOp>(fn.blocks[b].ops[static_cast<size_t>(op)])) {
          return bad(absl::StrCat("inline op ", op, " is not a primitive of the block"));
        }
      }
    }
  }
  if (k != fused.blocks.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the compiled program has ", fused.blocks.size(), " blocks and this program ", k,
        ": compile it again from this program (`autobatch compile --whole-program`)"));
  }
  return absl::OkStatus();
}

}  // namespace autobatch
