// lower_calls: replaces CallOp / Return by explicit stack operations.
#include "passes/lower_calls.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/overloaded.h"
#include "support/status.h"
#include "passes/analysis/cfg.h"
#include "passes/analysis/definedness.h"
#include "passes/analysis/liveness.h"

namespace autobatch {
namespace {

// Where the blocks of the output function come from, before final ordering.
enum class Origin { kChain, kEdge, kEntry };

struct NewBlock {
  Block block;
  Origin origin = Origin::kChain;
  int32_t source = -1;  // kChain: original block; kEdge: original target
  // kChain tails keep the original terminator, whose block ids are still
  // ORIGINAL ids; every other terminator already uses creation indices.
  bool original_targets = false;
};

class FunctionLowering {
 public:
  FunctionLowering(Program& program, FunctionId fid)
      : module_(program.module),
        fid_(fid),
        fn_(program.module.function(fid)),
        liveness_(ComputeLiveness(program, fid)) {
    for (const Variable& v : module_.variables) {
      if (v.function == fid_) names_.insert(v.name);
    }
  }

  Function Run() {
    const size_t n = fn_.blocks.size();
    ComputeEdgePops();
    heads_.assign(n, -1);
    tails_.assign(n, -1);
    for (size_t b = 0; b < n; ++b) LowerBlock(b);
    PlaceEdgePops();
    return Assemble();
  }

 private:
  bool Full(VarId v) const { return module_.var(v).storage == StorageClass::kFull; }
  bool Null(VarId v) const { return module_.var(v).storage == StorageClass::kNull; }

  std::string Label(size_t b) const {
    const std::string& label = fn_.blocks[b].label;
    return label.empty() ? absl::StrCat("b", b) : label;
  }

  // A new Temporary (or Null, if never read) variable of this function with
  // x's type and a fresh name derived from x's.
  VarId NewTemp(VarId x, const std::string& suffix, StorageClass storage) {
    const Variable& base = module_.var(x);
    std::string name = absl::StrCat(base.name, suffix);
    for (int i = 1; names_.count(name) != 0; ++i) {
      name = absl::StrCat(base.name, suffix, i);
    }
    names_.insert(name);
    Variable v{name, fid_, base.type, storage};
    return module_.AddVariable(std::move(v));
  }

  // Appends PopOp(vars) unless empty, merging it into a PopOp that ends
  // `ops`; the listed variables are sorted and deduplicated.
  static void EmitPop(std::vector<Op>& ops, std::vector<VarId> vars, const SourceLoc& loc) {
    if (vars.empty()) return;
    if (!ops.empty() && std::holds_alternative<PopOp>(ops.back())) {
      const std::vector<VarId>& last = std::get<PopOp>(ops.back()).vars;
      vars.insert(vars.end(), last.begin(), last.end());
      ops.pop_back();
    }
    std::sort(vars.begin(), vars.end());
    vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
    ops.push_back(PopOp{std::move(vars), loc});
  }

  // Full variables holding a frame at the end of block p (before its
  // terminator runs) that are dead on entry to s.
  VarSet EdgeSet(const VarSet& frames, size_t s) const {
    VarSet e = frames;
    e.Subtract(liveness_.blocks[s].live_in);
    return e;
  }

  VarSet FullOnly(const VarSet& set) const {
    VarSet out(module_.variables.size());
    for (VarId v : set.Vars()) {
      if (Full(v)) out.insert(v);
    }
    return out;
  }

  // E(p, s) for every edge, the part common to all edges into s (popped at
  // the start of s) and the rest (popped on the edge).
  void ComputeEdgePops() {
    const size_t n = fn_.blocks.size();
    const std::vector<std::vector<BlockId>> preds = Predecessors(fn_);
    common_.assign(n, VarSet(module_.variables.size()));
    for (size_t s = 0; s < n; ++s) {
      std::vector<std::pair<int32_t, VarSet>> incoming;  // -1: function entry
      if (s == 0) {
        incoming.push_back({-1, EdgeSet(FullOnly(VarSet(module_.variables.size(),
                                                        fn_.params)),
                                        0)});
      }
      for (BlockId p : preds[s]) {
        incoming.push_back(
            {p.value,
             EdgeSet(FullOnly(liveness_.blocks[p.value].live_before_terminator), s)});
      }
      if (incoming.empty()) continue;
      VarSet common = incoming.front().second;
      for (const auto& [p, e] : incoming) common.IntersectWith(e);
      common_[s] = common;
      for (auto& [p, e] : incoming) {
        e.Subtract(common);
        if (!e.empty()) edge_pops_[{p, static_cast<int32_t>(s)}] = e.Vars();
      }
    }
  }

  void LowerBlock(size_t b) {
    const Block& block = fn_.blocks[b];
    const BlockLiveness& live = liveness_.blocks[b];
    Block cur;
    cur.label = block.label;
    const SourceLoc& start_loc = block.ops.empty() ? block.loc : LocOf(block.ops.front());
    EmitPop(cur.ops, common_[b].Vars(), start_loc);
    heads_[b] = static_cast<int32_t>(blocks_.size());
    int calls = 0;
    for (size_t k = 0; k < block.ops.size(); ++k) {
      const VarSet& after = live.live_after_op[k];
      std::visit(Overloaded{
                     [&](const PrimOp& op) { LowerPrim(op, after, cur.ops); },
                     [&](const CallOp& op) {
                       LowerCall(op, after, b, ++calls, cur);
                     },
                     [&](const PopOp&) {
                       AB_CHECK(false, "PopOp before lower_calls (verifier S1)");
                     },
                     [&](const TapePushOp& op) { LowerTapeOp(op, after, cur.ops); },
                     [&](const TapePopOp& op) { LowerTapeOp(op, after, cur.ops); },
                 },
                 block.ops[k]);
    }
    cur.loc = block.loc;
    cur.terminator = std::visit(
        Overloaded{
            [](const Branch& t) -> Terminator { return t; },
            [](const Goto& t) -> Terminator { return t; },
            [](const Return&) -> Terminator { return IndirectGoto{}; },
            [](const PushGoto&) -> Terminator {
              AB_CHECK(false, "PushGoto before lower_calls (verifier S1)");
              return Halt{};
            },
            [](const IndirectGoto&) -> Terminator {
              AB_CHECK(false, "IndirectGoto before lower_calls (verifier S1)");
              return Halt{};
            },
            [](const Halt& t) -> Terminator { return t; },
        },
        block.terminator);
    tails_[b] = static_cast<int32_t>(blocks_.size());
    blocks_.push_back({std::move(cur), Origin::kChain, static_cast<int32_t>(b),
                       /*original_targets=*/true});
  }

  void LowerPrim(const PrimOp& op, const VarSet& after, std::vector<Op>& out) {
    PrimOp lowered = op;
    std::vector<VarId> clash;  // Full outputs that are also inputs
    for (VarId x : op.outputs) {
      if (Full(x) &&
          std::find(op.inputs.begin(), op.inputs.end(), x) != op.inputs.end()) {
        clash.push_back(x);
      }
    }
    std::vector<std::pair<VarId, VarId>> copies;  // (x, temporary)
    for (VarId& x : lowered.outputs) {
      if (std::find(clash.begin(), clash.end(), x) == clash.end()) continue;
      const bool used = after.contains(x);
      const VarId t = NewTemp(x, ".new", used ? StorageClass::kTemporary : StorageClass::kNull);
      if (used) copies.push_back({x, t});
      x = t;
    }
    std::vector<VarId> pops = clash;  // the old frames of clashing variables
    for (VarId v : op.inputs) {
      if (Full(v) && !after.contains(v)) pops.push_back(v);
    }
    for (VarId v : lowered.outputs) {
      if (Full(v) && !after.contains(v)) pops.push_back(v);  // written, never read
    }
    out.push_back(std::move(lowered));
    EmitPop(out, std::move(pops), op.loc);
    for (const auto& [x, t] : copies) out.push_back(MakeCopy(x, t, op.loc));
  }

  // A tape op stays as it is (the tape has no frames); a pushed Full value
  // that dies here, or a popped Full result never read, is popped after it.
  template <typename TapeOp>
  void LowerTapeOp(const TapeOp& op, const VarSet& after, std::vector<Op>& out) {
    out.push_back(op);
    std::vector<VarId> pops;
    for (VarId v : OpVariables(out.back())) {
      if (v != op.tape && Full(v) && !after.contains(v)) pops.push_back(v);
    }
    EmitPop(out, std::move(pops), op.loc);
  }

  void LowerCall(const CallOp& op, const VarSet& after, size_t b, int index, Block& cur) {
    const Function& callee = module_.function(op.callee);
    auto contains = [](const std::vector<VarId>& list, VarId v) {
      return std::find(list.begin(), list.end(), v) != list.end();
    };
    VarSet across = after;
    across.erase_all(op.results);

    // --- arguments -> params ---
    // An argument that is the callee's own param at the same position (a
    // self-call passing it through) and dies here needs no copy: its value,
    // and its frame if Full, become the callee's.
    const size_t n = callee.params.size();
    std::vector<bool> write(n);
    std::vector<VarId> handed_over, written_params;
    for (size_t i = 0; i < n; ++i) {
      const VarId param = callee.params[i];
      const bool itself = op.args[i] == param;
      const bool pass_through = itself && !across.contains(param);
      if (pass_through) handed_over.push_back(param);
      // A param passed to itself is copied only to push the callee's frame:
      // when it is Full and the caller still needs its own.
      const bool needs_copy = !itself || (Full(param) && !pass_through);
      write[i] = needs_copy && !Null(param);
      if (write[i]) written_params.push_back(callee.params[i]);
    }
    // Arguments that are params written below (only in a self-call) are
    // saved first, so the copies act as one parallel assignment.
    std::vector<VarId> source = op.args;
    std::map<VarId, VarId> saved;
    for (size_t i = 0; i < n; ++i) {
      VarId& a = source[i];
      if (!write[i] || !contains(written_params, a)) continue;
      auto it = saved.find(a);
      if (it == saved.end()) {
        const VarId t = NewTemp(a, ".arg", StorageClass::kTemporary);
        cur.ops.push_back(MakeCopy(t, a, op.loc));
        it = saved.emplace(a, t).first;
      }
      a = it->second;
    }
    // Arguments that die here are popped: before the copies if a copy
    // pushes onto the same variable (its value is saved above), else after.
    std::vector<VarId> pop_before, pop_after;
    for (VarId a : op.args) {
      if (!Full(a) || across.contains(a) || contains(handed_over, a)) continue;
      (contains(written_params, a) ? pop_before : pop_after).push_back(a);
    }
    EmitPop(cur.ops, std::move(pop_before), op.loc);
    for (size_t i = 0; i < n; ++i) {
      if (write[i]) cur.ops.push_back(MakeCopy(callee.params[i], source[i], op.loc));
    }
    EmitPop(cur.ops, std::move(pop_after), op.loc);

    const int32_t continuation = static_cast<int32_t>(blocks_.size()) + 1;
    cur.terminator = PushGoto{op.callee, BlockId(continuation)};
    cur.loc = op.loc;
    blocks_.push_back({std::move(cur), Origin::kChain, static_cast<int32_t>(b), false});
    cur = Block();
    cur.label = absl::StrCat(Label(b), ".ret", index);

    // --- callee results -> results ---
    // A result that is the callee's own result at the same position (a
    // self-call) is already in place, frame included. Results dead after the
    // call are not copied.
    std::vector<VarId> kept;                        // left in place
    std::vector<std::pair<VarId, VarId>> moves;     // (to, from)
    bool clash = false;
    for (size_t j = 0; j < op.results.size(); ++j) {
      const VarId to = op.results[j], from = callee.results[j];
      if (!after.contains(to)) continue;
      if (to == from) {
        kept.push_back(to);
        continue;
      }
      moves.push_back({to, from});
      clash |= contains(callee.results, to);
    }
    std::vector<VarId> pops;
    for (VarId r : callee.results) {
      if (Full(r) && !contains(kept, r)) pops.push_back(r);
    }
    if (!clash) {
      for (const auto& [to, from] : moves) cur.ops.push_back(MakeCopy(to, from, op.loc));
      EmitPop(cur.ops, std::move(pops), op.loc);
    } else {
      // Writing `to` would clobber another result still to be read (or
      // popped): go through temporaries.
      std::vector<VarId> temps;
      for (const auto& [to, from] : moves) {
        temps.push_back(NewTemp(from, ".ret", StorageClass::kTemporary));
        cur.ops.push_back(MakeCopy(temps.back(), from, op.loc));
      }
      EmitPop(cur.ops, std::move(pops), op.loc);
      for (size_t i = 0; i < moves.size(); ++i) {
        cur.ops.push_back(MakeCopy(moves[i].first, temps[i], op.loc));
      }
    }
    AB_CHECK(static_cast<int32_t>(blocks_.size()) == continuation);
  }

  // Puts every remaining edge pop on its edge: at the end of a Goto
  // predecessor, else in a new block.
  void PlaceEdgePops() {
    for (const auto& [edge, vars] : edge_pops_) {
      const auto [p, s] = edge;
      if (p >= 0 && std::holds_alternative<Goto>(fn_.blocks[p].terminator)) {
        Block& tail = blocks_[tails_[p]].block;
        EmitPop(tail.ops, vars, tail.loc);
        continue;
      }
      Block block;
      block.label = p < 0 ? std::string("entry.pops")
                          : absl::StrCat(Label(p), ".to.", Label(s));
      block.loc = p < 0 ? fn_.loc : fn_.blocks[p].loc;
      EmitPop(block.ops, vars, block.loc);
      block.terminator = Goto{BlockId(heads_[s])};
      edge_blocks_[edge] = static_cast<int32_t>(blocks_.size());
      blocks_.push_back({std::move(block), p < 0 ? Origin::kEntry : Origin::kEdge, s, false});
    }
  }

  // Resolves original block ids and puts the blocks in their final order.
  Function Assemble() {
    for (NewBlock& nb : blocks_) {
      if (!nb.original_targets) continue;
      const int32_t p = nb.source;
      std::vector<int32_t> target(fn_.blocks.size());
      for (size_t s = 0; s < fn_.blocks.size(); ++s) {
        auto it = edge_blocks_.find({p, static_cast<int32_t>(s)});
        target[s] = it != edge_blocks_.end() ? it->second : heads_[s];
      }
      nb.block.terminator = RemapBlocks(nb.block.terminator, target);
    }

    std::vector<int32_t> order;
    std::vector<std::vector<int32_t>> edges_into(fn_.blocks.size());
    for (size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].origin == Origin::kEntry) order.push_back(static_cast<int32_t>(i));
      if (blocks_[i].origin == Origin::kEdge) {
        edges_into[blocks_[i].source].push_back(static_cast<int32_t>(i));
      }
    }
    for (size_t b = 0; b < fn_.blocks.size(); ++b) {
      if (b != 0) order.insert(order.end(), edges_into[b].begin(), edges_into[b].end());
      for (int32_t i = heads_[b]; i <= tails_[b]; ++i) order.push_back(i);
      if (b == 0) order.insert(order.end(), edges_into[b].begin(), edges_into[b].end());
    }
    Function out = fn_;
    out.blocks.clear();
    for (NewBlock& nb : blocks_) out.blocks.push_back(std::move(nb.block));
    PermuteBlocks(out, order);
    return out;
  }

  Module& module_;
  const FunctionId fid_;
  const Function fn_;  // the unlowered function (a copy: module_ grows)
  const FunctionLiveness liveness_;
  std::set<std::string> names_;  // variable names taken in this function

  std::vector<VarSet> common_;  // pops at the start of each original block
  std::map<std::pair<int32_t, int32_t>, std::vector<VarId>> edge_pops_;
  std::map<std::pair<int32_t, int32_t>, int32_t> edge_blocks_;
  std::vector<NewBlock> blocks_;  // in creation order
  std::vector<int32_t> heads_, tails_;  // chain of each original block
};

}  // namespace

absl::StatusOr<Program> LowerCalls(Program program) {
  if (program.stage != Stage::kAllocated) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lower_calls needs an allocated program (run allocate_variables first), got "
        "stage ",
        std::string(StageName(program.stage))));
  }
  AB_RETURN_IF_ERROR(CheckDefinedBeforeUse(program));
  // Functions are replaced only once all are lowered: each lowering reads
  // the unlowered bodies (its own, and its callees' params and results).
  std::vector<Function> lowered;
  for (size_t f = 0; f < program.module.functions.size(); ++f) {
    FunctionLowering lowering(program, FunctionId(static_cast<int32_t>(f)));
    lowered.push_back(lowering.Run());
  }
  for (size_t f = 0; f < lowered.size(); ++f) {
    program.module.functions[f] = std::move(lowered[f]);
  }
  program.stage = Stage::kLowered;
  return program;
}

}  // namespace autobatch
