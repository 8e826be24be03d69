// Definedness check: no variable may be read where it may be unassigned.
#include "passes/analysis/definedness.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/analysis/cfg.h"
#include "passes/analysis/liveness.h"

namespace autobatch {
namespace {

constexpr size_t kMaxReported = 10;

std::string BlockName(const Block& block, size_t index) {
  if (block.label.empty()) return absl::StrCat("^", index);
  return absl::StrCat("^", index, " (", block.label, ")");
}

}  // namespace

std::vector<VarSet> AssignedOnEveryPath(const Module& module, const Function& function) {
  const size_t num_vars = module.variables.size();
  const size_t n = function.blocks.size();
  const std::vector<std::vector<BlockId>> preds = Predecessors(function);
  const std::vector<bool> reachable = ReachableBlocks(function);
  // Must-defined sets; `out` of unreachable blocks stays "everything" so
  // they do not weaken their successors.
  const VarSet everything = VarSet::All(num_vars);
  std::vector<VarSet> in(n, everything), out(n, everything);
  VarSet params(num_vars, function.params);
  // Another function's uniform variable read here is an input of the entry
  // (verifier R2), written before anything runs. (Only the variables the
  // function names: a module of thousands of functions must not cost all of
  // its variables per function.)
  auto other_uniform = [&](VarId v) {
    const Variable& var = module.var(v);
    if (var.uniform && module.functions.size() > static_cast<size_t>(var.function.value) &&
        &module.functions[var.function.value] != &function) {
      params.insert(v);
    }
  };
  for (const Block& block : function.blocks) {
    for (const Op& op : block.ops) {
      for (VarId v : OpReads(op)) other_uniform(v);
    }
    if (const auto* branch = std::get_if<Branch>(&block.terminator)) other_uniform(branch->cond);
  }

  auto block_in = [&](size_t b) {
    VarSet defined = b == 0 ? params : everything;
    for (BlockId p : preds[b]) defined.IntersectWith(out[p.value]);
    return defined;
  };
  auto transfer = [&](size_t b, VarSet defined) {
    for (const Op& op : function.blocks[b].ops) {
      if (std::holds_alternative<PopOp>(op)) continue;
      defined.insert_all(OpWrites(op));
    }
    return defined;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 0; b < n; ++b) {
      if (!reachable[b]) continue;
      in[b] = block_in(b);
      VarSet o = transfer(b, in[b]);
      if (o != out[b]) {
        // Sets only shrink from "everything", so this terminates.
        out[b] = std::move(o);
        changed = true;
      }
    }
  }
  return in;
}

absl::Status CheckDefinedBeforeUse(const Program& program) {
  const Module& module = program.module;
  std::vector<std::string> errors;
  std::set<int32_t> reported;

  for (size_t f = 0; f < module.functions.size(); ++f) {
    const Function& function = module.functions[f];
    const bool is_entry = program.entry.value == static_cast<int32_t>(f);
    const size_t n = function.blocks.size();
    if (n == 0) continue;
    const std::vector<bool> reachable = ReachableBlocks(function);
    const std::vector<VarSet> in = AssignedOnEveryPath(module, function);

    auto check = [&](const VarSet& defined, VarId v, size_t b, const SourceLoc& loc,
                     std::string_view reader) {
      if (defined.contains(v) || reported.count(v.value) != 0) return;
      reported.insert(v.value);
      const Variable& var = module.var(v);
      errors.push_back(absl::StrCat(
          "function '", function.name, "', block ", BlockName(function.blocks[b], b),
          ": variable '", var.name, "' may be read before it is assigned (",
          std::string(reader), " at ", loc.ToString(), "): some path from the start of '",
          function.name, "' reaches this read without assigning '", var.name,
          "'; assign it on every path before the read (e.g. initialize it before "
          "the If or loop)"));
    };
    for (size_t b = 0; b < n; ++b) {
      if (!reachable[b]) continue;
      const Block& block = function.blocks[b];
      VarSet defined = in[b];
      for (const Op& op : block.ops) {
        if (!std::holds_alternative<PopOp>(op)) {
          for (VarId v : OpReads(op)) check(defined, v, b, LocOf(op), "read");
          defined.insert_all(OpWrites(op));
        }
      }
      const bool returns = !std::holds_alternative<Branch>(block.terminator);
      // A Halt outside the entry reads the entry's results, which only the
      // entry defines: nothing to check within this function.
      const bool foreign_halt = !is_entry && std::holds_alternative<Halt>(block.terminator);
      for (VarId v : foreign_halt ? std::vector<VarId>{}
                                  : TerminatorReads(program, FunctionId(static_cast<int32_t>(f)),
                                                    block.terminator)) {
        check(defined, v, b, block.loc,
              returns ? "returned as a result" : "read by the branch");
      }
    }
  }
  if (errors.empty()) return absl::OkStatus();
  if (errors.size() > kMaxReported) errors.resize(kMaxReported);
  return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
}

}  // namespace autobatch
