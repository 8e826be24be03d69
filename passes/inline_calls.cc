// inline_calls: replaces calls to non-recursive functions by the callee's blocks.
#include "passes/inline_calls.h"

#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/analysis/call_graph.h"
#include "passes/analysis/cfg.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

// recursive[f]: f can reach itself through the call graph.
std::vector<bool> RecursiveFunctions(const Module& module) {
  const std::vector<std::vector<FunctionId>> callees = Callees(module);
  const size_t n = module.functions.size();
  std::vector<bool> recursive(n, false);
  for (size_t f = 0; f < n; ++f) {
    std::vector<bool> seen(n, false);
    std::vector<FunctionId> stack(callees[f].begin(), callees[f].end());
    while (!stack.empty() && !recursive[f]) {
      const FunctionId g = stack.back();
      stack.pop_back();
      if (static_cast<size_t>(g.value) == f) recursive[f] = true;
      if (seen[g.value]) continue;
      seen[g.value] = true;
      stack.insert(stack.end(), callees[g.value].begin(), callees[g.value].end());
    }
  }
  return recursive;
}

// The functions reachable from `entry`, callees before callers (a DFS
// post-order; inside a recursive cycle the order is arbitrary).
std::vector<FunctionId> PostOrder(const Module& module, FunctionId entry) {
  const std::vector<std::vector<FunctionId>> callees = Callees(module);
  std::vector<bool> seen(module.functions.size(), false);
  std::vector<FunctionId> order;
  // (function, index of the next callee to visit)
  std::vector<std::pair<FunctionId, size_t>> stack = {{entry, 0}};
  seen[entry.value] = true;
  while (!stack.empty()) {
    auto& [f, next] = stack.back();
    if (next < callees[f.value].size()) {
      const FunctionId g = callees[f.value][next++];
      if (!seen[g.value]) {
        seen[g.value] = true;
        stack.push_back({g, 0});
      }
      continue;
    }
    order.push_back(f);
    stack.pop_back();
  }
  return order;
}

// A Halt ends the lane wherever it is; inlined into the entry function it
// would also change which paths must have written the entry's results (the
// definedness check reads them at the entry's Halts), so such callees stay
// functions.
bool Halts(const Function& fn) {
  for (const Block& block : fn.blocks) {
    if (std::holds_alternative<Halt>(block.terminator)) return true;
  }
  return false;
}

size_t OpCount(const Function& fn) {
  size_t ops = 0;
  for (const Block& block : fn.blocks) ops += block.ops.size();
  return ops;
}

class Inliner {
 public:
  explicit Inliner(Program& program) : program_(program), module_(program.module) {}

  void InlineAllInto(FunctionId f) {
    const std::vector<bool> recursive = RecursiveFunctions(module_);
    candidate_.assign(module_.functions.size(), false);
    call_sites_.assign(module_.functions.size(), 1);
    for (size_t g = 0; g < module_.functions.size(); ++g) {
      candidate_[g] = !recursive[g] && !Halts(module_.functions[g]);
    }
    if (InlineInto(f)) MergeStraightLines(module_.function(f));
  }

  void Run() {
    const std::vector<bool> recursive = RecursiveFunctions(module_);
    const std::vector<bool> reachable = ReachableFunctions(module_, program_.entry);
    std::vector<int> call_sites(module_.functions.size(), 0);
    for (size_t f = 0; f < module_.functions.size(); ++f) {
      if (!reachable[f]) continue;
      for (const Block& block : module_.functions[f].blocks) {
        for (const Op& op : block.ops) {
          if (const auto* call = std::get_if<CallOp>(&op)) ++call_sites[call->callee.value];
        }
      }
    }
    // Whether a call may be inlined is decided at each call site, from the
    // callee as it is then (callees are processed first, so with their own
    // calls inlined): sizes measured before inlining would let a chain of
    // small functions that call each other twice grow exponentially.
    candidate_.assign(module_.functions.size(), false);
    call_sites_ = std::move(call_sites);
    for (size_t g = 0; g < module_.functions.size(); ++g) {
      // A gradient stub has no body to inline until differentiate writes one.
      candidate_[g] = reachable[g] && !recursive[g] && !Halts(module_.functions[g]) &&
                      !module_.functions[g].gradient_of;
    }
    for (FunctionId f : PostOrder(module_, program_.entry)) {
      if (InlineInto(f)) MergeStraightLines(module_.function(f));
    }
  }

 private:
  bool Inlinable(FunctionId g) const {
    return candidate_[g.value] &&
           (call_sites_[g.value] == 1 ||
            OpCount(module_.function(g)) <= static_cast<size_t>(kInlineMaxOps));
  }

  // Inlines every call of `f` to an inlinable callee, including calls that
  // inlining brings in (none are left in an already processed callee, but
  // its calls to recursive functions are scanned again, harmlessly).
  // Returns whether it inlined anything.
  bool InlineInto(FunctionId f) {
    bool inlined = false;
    for (size_t b = 0; b < module_.function(f).blocks.size(); ++b) {
      std::vector<Op>& ops = module_.function(f).blocks[b].ops;
      for (size_t k = 0; k < ops.size(); ++k) {
        const auto* call = std::get_if<CallOp>(&ops[k]);
        if (call != nullptr && Inlinable(call->callee)) {
          InlineCall(f, b, k);
          inlined = true;
          break;  // the rest of block b moved to its continuation block
        }
      }
    }
    return inlined;
  }

  // Merges each block that ends in "goto T" with T when it is T's only
  // predecessor (and T is not the entry): the call's block with the callee's
  // entry (unless a loop returns there) and a callee's only returning block
  // with the continuation. Fewer blocks, fewer steps for the VM. The merged
  // block keeps the first label; blocks are renumbered in order.
  static void MergeStraightLines(Function& fn) {
    const size_t n = fn.blocks.size();
    const std::vector<std::vector<BlockId>> predecessors = Predecessors(fn);
    std::vector<bool> merged_away(n, false);
    for (size_t b = 0; b < n; ++b) {
      if (merged_away[b]) continue;
      Block& block = fn.blocks[b];
      for (const auto* jump = std::get_if<Goto>(&block.terminator);
           jump != nullptr && jump->target.value != 0 &&
           static_cast<size_t>(jump->target.value) != b &&
           predecessors[jump->target.value].size() == 1;
           jump = std::get_if<Goto>(&block.terminator)) {
        const size_t t = static_cast<size_t>(jump->target.value);
        Block& target = fn.blocks[t];
        std::move(target.ops.begin(), target.ops.end(), std::back_inserter(block.ops));
        block.terminator = std::move(target.terminator);
        block.loc = target.loc;
        merged_away[t] = true;
      }
    }
    std::vector<int32_t> new_index(n, -1);
    std::vector<Block> kept;
    for (size_t b = 0; b < n; ++b) {
      if (merged_away[b]) continue;
      new_index[b] = static_cast<int32_t>(kept.size());
      kept.push_back(std::move(fn.blocks[b]));
    }
    for (Block& block : kept) block.terminator = RemapBlocks(block.terminator, new_index);
    fn.blocks = std::move(kept);
  }

  void InlineCall(FunctionId f, size_t b, size_t k) {
    // Copies, not references: the blocks and variables vectors grow below.
    const CallOp call = std::get<CallOp>(module_.function(f).blocks[b].ops[k]);
    const Function callee = module_.function(call.callee);
    callee_ = call.callee;
    renamed_.assign(module_.variables.size(), VarId());
    names_.clear();
    for (const Variable& var : module_.variables) {
      if (var.function == f) names_.insert(var.name);
    }

    // The callee's blocks go right after the call's block, then the
    // continuation, so that the function reads in the order it runs; the
    // blocks after them move down.
    std::vector<Block>& blocks = module_.function(f).blocks;
    const int32_t count = static_cast<int32_t>(callee.blocks.size());
    const int32_t site_index = static_cast<int32_t>(b);
    std::vector<int32_t> moved(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      moved[i] = static_cast<int32_t>(i) + (static_cast<int32_t>(i) > site_index ? count + 1 : 0);
    }
    for (Block& block : blocks) block.terminator = RemapBlocks(block.terminator, moved);
    const BlockId first(site_index + 1);
    const BlockId after(site_index + 1 + count);
    // "g" for the first copy of g in f, then "g#2", "g#3"...: labels stay
    // distinct.
    const int copy = ++copies_[{f.value, call.callee.value}];
    const std::string prefix =
        copy == 1 ? callee.name : absl::StrCat(callee.name, "#", copy);

    Block& site = blocks[b];
    Block continuation;
    continuation.label = absl::StrCat(site.label, ".ret");
    continuation.loc = site.loc;
    for (size_t j = 0; j < call.results.size(); ++j) {
      continuation.ops.push_back(MakeCopy(call.results[j], Rename(callee.results[j], f), call.loc));
    }
    std::move(site.ops.begin() + static_cast<std::ptrdiff_t>(k) + 1, site.ops.end(),
              std::back_inserter(continuation.ops));
    continuation.terminator = std::move(site.terminator);

    site.ops.resize(k);
    for (size_t i = 0; i < call.args.size(); ++i) {
      site.ops.push_back(MakeCopy(Rename(callee.params[i], f), call.args[i], call.loc));
    }
    site.terminator = Goto{first};
    site.loc = call.loc;

    std::vector<int32_t> cloned_index(callee.blocks.size());
    for (size_t i = 0; i < cloned_index.size(); ++i) {
      cloned_index[i] = first.value + static_cast<int32_t>(i);
    }
    std::vector<Block> inserted;
    for (const Block& block : callee.blocks) {
      inserted.push_back(Clone(block, f, cloned_index, after, prefix));
    }
    inserted.push_back(std::move(continuation));
    blocks.insert(blocks.begin() + site_index + 1, std::make_move_iterator(inserted.begin()),
                  std::make_move_iterator(inserted.end()));
  }

  // The variable of `f` standing for the callee's variable `v` at this call
  // site, made on first use.
  VarId Rename(VarId v, FunctionId f) {
    // The entry's uniform inputs are program-wide: every function reads the
    // same variable (ir/ir.h).
    if (module_.var(v).function != callee_) return v;
    VarId& to = renamed_.at(v.value);
    if (to.valid()) return to;
    Variable var = module_.var(v);
    const std::string& callee_name = module_.function(var.function).name;
    std::string base = absl::StrCat(callee_name, ".", var.name);
    std::string name = base;
    for (int n = 2; names_.count(name) != 0; ++n) name = absl::StrCat(base, "#", n);
    names_.insert(name);
    var.name = std::move(name);
    var.function = f;
    to = module_.AddVariable(std::move(var));
    return to;
  }

  // `block` of the callee as a block of f: variables renamed, targets mapped
  // by `cloned_index`, a Return turned into a jump to `after`.
  Block Clone(const Block& block, FunctionId f, const std::vector<int32_t>& cloned_index,
              BlockId after, const std::string& prefix) {
    Block out = block;
    out.label = absl::StrCat(prefix, ".", block.label);
    for (Op& op : out.ops) RenameVariables(op, [&](VarId v) { return Rename(v, f); });
    bool returns = false;
    std::visit(Overloaded{
                   [&](Return&) { returns = true; },
                   [&](Branch& branch) { branch.cond = Rename(branch.cond, f); },
                   [](Goto&) {},
                   [](Halt&) {},
                   [](PushGoto&) { AB_CHECK(false, "inline_calls runs before lowering"); },
                   [](IndirectGoto&) { AB_CHECK(false, "inline_calls runs before lowering"); },
               },
               out.terminator);
    out.terminator =
        returns ? Terminator{Goto{after}} : RemapBlocks(out.terminator, cloned_index);
    return out;
  }

  Program& program_;
  Module& module_;
  std::vector<bool> candidate_;    // per function: inlinable if small or called once
  std::vector<int> call_sites_;    // per function: calls to it before inlining
  FunctionId callee_;              // of the call being inlined
  std::vector<VarId> renamed_;     // per variable: its copy at this call site
  std::set<std::string> names_;    // variable names taken in the caller
  std::map<std::pair<int32_t, int32_t>, int> copies_;  // (caller, callee): bodies inlined
};

}  // namespace

void InlineEveryCall(Program& program, FunctionId f) { Inliner(program).InlineAllInto(f); }

absl::StatusOr<Program> InlineCalls(Program program) {
  if (program.stage != Stage::kTyped) {
    return absl::FailedPreconditionError(absl::StrCat(
        "inline_calls needs a typed program (run infer_types first); got stage '",
        std::string(StageName(program.stage)), "'"));
  }
  Inliner(program).Run();
  return PruneUnreachable(program);
}

}  // namespace autobatch
