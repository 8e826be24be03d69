// inline_calls: replaces calls to non-recursive functions by the callee's blocks.
#include "passes/inline_calls.h"

#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "passes/analysis/call_graph.h"
#include "passes/analysis/cfg.h"
#include "passes/registry.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

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

class Inliner {
 public:
  explicit Inliner(Program& program, Deadline deadline = {})
      : program_(program), module_(program.module), deadline_(deadline) {}

  void InlineAllInto(FunctionId f) {
    const std::vector<bool> recursive = RecursiveFunctions(module_);
    inline_.assign(module_.functions.size(), false);
    for (size_t g = 0; g < module_.functions.size(); ++g) {
      inline_[g] = !recursive[g] && !Halts(module_.functions[g]);
    }
    if (InlineInto(f)) MergeStraightLines(module_.function(f));
  }

  void Run() {
    const size_t n = module_.functions.size();
    const std::vector<bool> recursive = RecursiveFunctions(module_);
    const std::vector<bool> reachable = ReachableFunctions(module_, program_.entry);
    std::vector<int> call_sites(n, 0);
    for (size_t f = 0; f < n; ++f) {
      if (!reachable[f]) continue;
      for (const Block& block : module_.functions[f].blocks) {
        for (const Op& op : block.ops) {
          if (const auto* call = std::get_if<CallOp>(&op)) ++call_sites[call->callee.value];
        }
      }
    }
    // Which callees are inlined is decided per callee, callees before
    // callers, from its size with its own inlined calls counted in (each
    // becomes the callee's ops plus a copy per argument and result): sizes
    // measured without them would let a chain of small functions that call
    // each other twice grow exponentially.
    const std::vector<FunctionId> order = PostOrder(module_, program_.entry);
    std::vector<size_t> inlined_size(n, 0);
    inline_.assign(n, false);
    for (FunctionId g : order) {
      size_t size = 0;
      for (const Block& block : module_.function(g).blocks) {
        for (const Op& op : block.ops) {
          const auto* call = std::get_if<CallOp>(&op);
          size += call != nullptr && inline_[call->callee.value]
                      ? inlined_size[call->callee.value] + call->args.size() + call->results.size()
                      : 1;
        }
      }
      inlined_size[g.value] = size;
      // A gradient stub has no body to inline until differentiate writes one.
      const Function& fn = module_.function(g);
      inline_[g.value] = reachable[g.value] && !recursive[g.value] && !Halts(fn) &&
                         !fn.gradient_of &&
                         (call_sites[g.value] == 1 || size <= static_cast<size_t>(kInlineMaxOps));
    }
    // Then the bodies, top-down: each function that stays a function gets
    // its calls inlined with the callees as written, whose own calls the scan
    // reaches in turn. So each body is cloned once per call site it ends up
    // at, and inlined names do not nest; inlining callees first would clone
    // each grown body again into its caller (quadratic in a chain's length,
    // with names f2.f3.f4...).
    for (FunctionId f : order) {
      if (inline_[f.value] && f != program_.entry) continue;  // inlined everywhere: dropped
      if (InlineInto(f)) MergeStraightLines(module_.function(f));
      if (out_of_time_) return;
    }
  }

  // Whether Run stopped because the deadline passed (the program is then
  // half inlined).
  bool out_of_time() const { return out_of_time_; }

 private:
  // Inlines every call of `f` to an inlined callee, including the calls
  // that inlining brings in. Returns whether it inlined anything.
  bool InlineInto(FunctionId f) {
    names_.clear();
    for (const Variable& var : module_.variables) {
      if (var.function == f) names_.insert(var.name);
    }
    // Blocks in the order they will be laid out: each block, then what was
    // inlined after it. InlineCall appends the callee's blocks and the
    // continuation (ids stay put, so nothing is renumbered per call), and
    // they are scanned next, as if inserted right after the call's block.
    const size_t original = module_.function(f).blocks.size();
    after_.assign(original, {});
    std::vector<int32_t> work;
    for (size_t b = original; b-- > 0;) work.push_back(static_cast<int32_t>(b));
    bool inlined = false;
    while (!work.empty()) {
      const int32_t b = work.back();
      work.pop_back();
      std::vector<Op>& ops = module_.function(f).blocks[b].ops;
      // The block's ops are scanned, and a callee's cloned, once each.
      if (deadline_.Charge(kPassOpWork * static_cast<int64_t>(ops.size() + 1))) {
        out_of_time_ = true;
        return false;
      }
      for (size_t k = 0; k < ops.size(); ++k) {
        const auto* call = std::get_if<CallOp>(&ops[k]);
        if (call != nullptr && inline_[call->callee.value]) {
          after_[b] = InlineCall(f, b, k);
          after_.resize(module_.function(f).blocks.size());
          for (size_t i = after_[b].size(); i-- > 0;) work.push_back(after_[b][i]);
          inlined = true;
          break;  // the rest of block b moved to its continuation block
        }
      }
    }
    if (inlined) LayOut(module_.function(f), original);
    return inlined;
  }

  // Orders f's blocks as InlineInto scanned them: the original blocks in
  // order, each followed by the blocks inlined after it (recursively).
  void LayOut(Function& fn, size_t original) {
    std::vector<int32_t> order;
    std::vector<int32_t> stack;
    for (size_t b = original; b-- > 0;) stack.push_back(static_cast<int32_t>(b));
    while (!stack.empty()) {
      const int32_t b = stack.back();
      stack.pop_back();
      order.push_back(b);
      for (size_t i = after_[b].size(); i-- > 0;) stack.push_back(after_[b][i]);
    }
    std::vector<int32_t> new_index(fn.blocks.size(), -1);
    for (size_t i = 0; i < order.size(); ++i) new_index[order[i]] = static_cast<int32_t>(i);
    std::vector<Block> laid_out;
    laid_out.reserve(order.size());
    for (int32_t b : order) {
      laid_out.push_back(std::move(fn.blocks[b]));
      laid_out.back().terminator = RemapBlocks(laid_out.back().terminator, new_index);
    }
    fn.blocks = std::move(laid_out);
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

  // Inlines the call at op k of block b of f; returns the blocks it added
  // (the callee's, then the continuation), appended to f's blocks.
  std::vector<int32_t> InlineCall(FunctionId f, size_t b, size_t k) {
    // Copies, not references: the blocks and variables vectors grow below.
    const CallOp call = std::get<CallOp>(module_.function(f).blocks[b].ops[k]);
    const Function callee = module_.function(call.callee);
    callee_ = call.callee;
    renamed_.clear();

    std::vector<Block>& blocks = module_.function(f).blocks;
    const int32_t count = static_cast<int32_t>(callee.blocks.size());
    const BlockId first(static_cast<int32_t>(blocks.size()));
    const BlockId after(first.value + count);
    // "g" for the first copy of g in f, then "g#2", "g#3"...: labels stay
    // distinct.
    const int copy = ++copies_[{f.value, call.callee.value}];
    const std::string prefix =
        copy == 1 ? callee.name : absl::StrCat(callee.name, "#", copy);

    Block continuation;
    {
      Block& site = blocks[b];
      continuation.label = absl::StrCat(site.label, ".ret");
      continuation.loc = site.loc;
      for (size_t j = 0; j < call.results.size(); ++j) {
        continuation.ops.push_back(
            MakeCopy(call.results[j], Rename(callee.results[j], f), call.loc));
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
    }

    std::vector<int32_t> cloned_index(callee.blocks.size());
    std::vector<int32_t> added;
    for (size_t i = 0; i < cloned_index.size(); ++i) {
      cloned_index[i] = first.value + static_cast<int32_t>(i);
      added.push_back(cloned_index[i]);
    }
    added.push_back(after.value);
    for (const Block& block : callee.blocks) {
      blocks.push_back(Clone(block, f, cloned_index, after, prefix));
    }
    blocks.push_back(std::move(continuation));
    return added;
  }

  // The variable of `f` standing for the callee's variable `v` at this call
  // site, made on first use.
  VarId Rename(VarId v, FunctionId f) {
    // The entry's uniform inputs are program-wide: every function reads the
    // same variable (ir/ir.h).
    if (module_.var(v).function != callee_) return v;
    VarId& to = renamed_[v.value];
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
  Deadline deadline_;          // charged per block and op scanned
  bool out_of_time_ = false;  // the deadline passed: stop
  std::vector<bool> inline_;  // per function: every call to it is inlined
  FunctionId callee_;         // of the call being inlined
  // The callee's variables: their copies at this call site.
  absl::flat_hash_map<int32_t, VarId> renamed_;
  absl::flat_hash_set<std::string> names_;  // variable names taken in the caller
  // Per block of the function being inlined into: the blocks InlineCall
  // added after it (laid out right after it).
  std::vector<std::vector<int32_t>> after_;
  std::map<std::pair<int32_t, int32_t>, int> copies_;  // (caller, callee): bodies inlined
};

}  // namespace

void InlineEveryCall(Program& program, FunctionId f) { Inliner(program).InlineAllInto(f); }

absl::StatusOr<Program> InlineCalls(Program program, Deadline deadline) {
  if (program.stage != Stage::kTyped) {
    return absl::FailedPreconditionError(absl::StrCat(
        "inline_calls needs a typed program (run infer_types first); got stage '",
        std::string(StageName(program.stage)), "'"));
  }
  Inliner inliner(program, deadline);
  inliner.Run();
  if (inliner.out_of_time()) return PassOutOfTime("inline_calls");
  return PruneUnreachable(program);
}

}  // namespace autobatch
