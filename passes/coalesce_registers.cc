// coalesce_registers: copy coalescing of Register variables over the
// supergraph of a lowered program.
#include "passes/coalesce_registers.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/analysis/liveness.h"
#include "support/overloaded.h"

namespace autobatch {
namespace {

const PrimOp* AsCopy(const Op& op) {
  const auto* prim = std::get_if<PrimOp>(&op);
  return prim != nullptr && prim->prim == Primitive::kCopy ? prim : nullptr;
}

class Coalescer {
 public:
  explicit Coalescer(Program& program)
      : program_(program), module_(program.module), num_vars_(module_.variables.size()) {}

  void Run() {
    NumberBlocks();
    ComputeLiveness();
    BuildInterference();
    MergeAlongCopies();
    Rename();
  }

 private:
  bool IsRegister(VarId v) const {
    // A uniform register holds one value for every lane: never merged.
    return module_.var(v).storage == StorageClass::kRegister && !module_.var(v).uniform;
  }

  int32_t Gid(FunctionId f, BlockId b) const { return fn_offset_[f.value] + b.value; }
  const Block& BlockAt(int32_t gid) const {
    const auto [f, b] = blocks_[gid];
    return module_.functions[f].blocks[b];
  }

  // Global block numbers, and each block's supergraph successors.
  void NumberBlocks() {
    const size_t num_functions = module_.functions.size();
    fn_offset_.resize(num_functions);
    std::vector<std::vector<int32_t>> return_sites(num_functions);
    for (size_t f = 0; f < num_functions; ++f) {
      fn_offset_[f] = static_cast<int32_t>(blocks_.size());
      for (size_t b = 0; b < module_.functions[f].blocks.size(); ++b) {
        blocks_.push_back({static_cast<int32_t>(f), static_cast<int32_t>(b)});
      }
    }
    for (size_t f = 0; f < num_functions; ++f) {
      const Function& fn = module_.functions[f];
      for (const Block& block : fn.blocks) {
        if (const auto* call = std::get_if<PushGoto>(&block.terminator)) {
          return_sites[call->callee.value].push_back(
              Gid(FunctionId(static_cast<int32_t>(f)), call->return_to));
        }
      }
    }
    successors_.resize(blocks_.size());
    for (size_t gid = 0; gid < blocks_.size(); ++gid) {
      const FunctionId f(blocks_[gid].first);
      const Terminator& term = BlockAt(static_cast<int32_t>(gid)).terminator;
      std::vector<int32_t>& succ = successors_[gid];
      auto local = [&] {
        for (BlockId b : Successors(term)) succ.push_back(Gid(f, b));
      };
      std::visit(Overloaded{
                     [&](const PushGoto& call) { succ.push_back(Gid(call.callee, BlockId(0))); },
                     [&](const IndirectGoto&) { succ = return_sites[f.value]; },
                     [&](const Branch&) { local(); },
                     [&](const Goto&) { local(); },
                     [&](const Return&) { local(); },
                     [&](const Halt&) { local(); },
                 },
                 term);
    }
  }

  // What a block's terminator reads: a Branch its condition; an IndirectGoto
  // the function's results (read at the return sites, or as the outputs);
  // Halt the entry's results.
  VarSet TerminatorReads(int32_t gid) const {
    VarSet reads(num_vars_);
    const Function& fn = module_.functions[blocks_[gid].first];
    const Terminator& term = BlockAt(gid).terminator;
    std::visit(Overloaded{
                   [&](const Branch& branch) { reads.insert(branch.cond); },
                   [&](const IndirectGoto&) { reads.insert_all(fn.results); },
                   [&](const Halt&) { reads.insert_all(program_.entry_function().results); },
                   [](const Goto&) {},
                   [](const Return&) {},  // not in lowered programs
                   [](const PushGoto&) {},
               },
               term);
    return reads;
  }

  // live = (live - writes) + reads, backwards over one op.
  static void StepBack(const Op& op, VarSet& live) {
    live.erase_all(OpWrites(op));
    live.insert_all(OpReads(op));
  }

  void ComputeLiveness() {
    live_in_.assign(blocks_.size(), VarSet(num_vars_));
    live_out_.assign(blocks_.size(), VarSet(num_vars_));
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = blocks_.size(); i-- > 0;) {
        const int32_t gid = static_cast<int32_t>(i);
        VarSet out(num_vars_);
        for (int32_t s : successors_[gid]) out.UnionWith(live_in_[s]);
        live_out_[gid] = out;
        VarSet live = out;
        live.UnionWith(TerminatorReads(gid));
        const std::vector<Op>& ops = BlockAt(gid).ops;
        for (size_t k = ops.size(); k-- > 0;) StepBack(ops[k], live);
        changed = live_in_[gid].UnionWith(live) || changed;
      }
    }
  }

  void AddEdge(VarId a, VarId b) {
    if (a == b || !IsRegister(a) || !IsRegister(b)) return;
    adjacent_[a.value].insert(b);
    adjacent_[b.value].insert(a);
  }

  void AddClique(const std::vector<VarId>& vars) {
    for (VarId a : vars) {
      for (VarId b : vars) AddEdge(a, b);
    }
  }

  void BuildInterference() {
    adjacent_.assign(num_vars_, VarSet(num_vars_));
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const int32_t gid = static_cast<int32_t>(i);
      VarSet live = live_out_[gid];
      live.UnionWith(TerminatorReads(gid));
      const std::vector<Op>& ops = BlockAt(gid).ops;
      for (size_t k = ops.size(); k-- > 0;) {
        const Op& op = ops[k];
        const PrimOp* copy = AsCopy(op);
        const std::vector<VarId> writes = OpWrites(op);
        for (VarId d : writes) {
          for (VarId v : live.Vars()) {
            if (copy == nullptr || v != copy->inputs[0]) AddEdge(d, v);
          }
        }
        AddClique(writes);
        StepBack(op, live);
      }
    }
    // The VM writes the entry's params together before the first block; a
    // class holds at most one param and at most one result of its function;
    // the entry's params and results (the program's inputs and outputs) stay
    // apart.
    const Function& entry = program_.entry_function();
    std::vector<VarId> at_start = live_in_[Gid(program_.entry, BlockId(0))].Vars();
    at_start.insert(at_start.end(), entry.params.begin(), entry.params.end());
    AddClique(at_start);
    for (const Function& fn : module_.functions) {
      AddClique(fn.params);
      AddClique(fn.results);
    }
    std::vector<VarId> signature = entry.params;
    signature.insert(signature.end(), entry.results.begin(), entry.results.end());
    AddClique(signature);
  }

  VarId Find(VarId v) {
    while (parent_[v.value] != v.value) {
      parent_[v.value] = parent_[parent_[v.value]];
      v = VarId(parent_[v.value]);
    }
    return v;
  }

  bool Interfere(VarId a, VarId b) const {
    for (VarId m : members_[b.value]) {
      if (adjacent_[a.value].contains(m)) return true;
    }
    return false;
  }

  void MergeAlongCopies() {
    parent_.resize(num_vars_);
    std::iota(parent_.begin(), parent_.end(), 0);
    members_.resize(num_vars_);
    for (size_t v = 0; v < num_vars_; ++v) members_[v] = {VarId(static_cast<int32_t>(v))};
    for (const Function& fn : module_.functions) {
      for (const Block& block : fn.blocks) {
        for (const Op& op : block.ops) {
          const PrimOp* copy = AsCopy(op);
          if (copy == nullptr) continue;
          const VarId s = copy->inputs[0], d = copy->outputs[0];
          const Variable& sv = module_.var(s);
          const Variable& dv = module_.var(d);
          if (!IsRegister(s) || !IsRegister(d) || sv.function != dv.function ||
              sv.type != dv.type) {
            continue;
          }
          VarId a = Find(s), b = Find(d);
          if (a == b || Interfere(a, b)) continue;
          if (b.value < a.value) std::swap(a, b);
          parent_[b.value] = a.value;
          adjacent_[a.value].UnionWith(adjacent_[b.value]);
          members_[a.value].insert(members_[a.value].end(), members_[b.value].begin(),
                                   members_[b.value].end());
          members_[b.value].clear();
        }
      }
    }
  }

  void Rename() {
    // Each class is named by its param, else its result, else its lowest
    // VarId (the union-find root).
    std::vector<VarId> name(num_vars_);
    for (size_t v = 0; v < num_vars_; ++v) name[v] = Find(VarId(static_cast<int32_t>(v)));
    for (const Function& fn : module_.functions) {
      for (const std::vector<VarId>* list : {&fn.results, &fn.params}) {
        for (VarId v : *list) {
          const VarId root = Find(v);
          for (VarId m : members_[root.value]) name[m.value] = v;
        }
      }
    }
    for (Function& fn : module_.functions) {
      RenameVariables(fn, [&](VarId v) { return name[v.value]; });
      for (Block& block : fn.blocks) {
        // Only copies this pass made trivial go: a copy of a Full variable
        // onto itself pushes a frame and stays.
        std::erase_if(block.ops, [&](const Op& op) {
          const PrimOp* copy = AsCopy(op);
          return copy != nullptr && IsRegister(copy->outputs[0]) &&
                 copy->inputs[0] == copy->outputs[0];
        });
      }
    }
  }

  Program& program_;
  Module& module_;
  const size_t num_vars_;
  std::vector<int32_t> fn_offset_;
  std::vector<std::pair<int32_t, int32_t>> blocks_;  // (function, block) per gid
  std::vector<std::vector<int32_t>> successors_;
  std::vector<VarSet> live_in_, live_out_;
  std::vector<VarSet> adjacent_;           // per variable; per class at roots
  std::vector<int32_t> parent_;            // union-find over VarId values
  std::vector<std::vector<VarId>> members_;  // per root: the class
};

}  // namespace

absl::StatusOr<Program> CoalesceRegisters(Program program) {
  if (program.stage != Stage::kLowered) {
    return absl::FailedPreconditionError(absl::StrCat(
        "coalesce_registers needs a lowered program; got stage '",
        std::string(StageName(program.stage)), "': run lower_calls first"));
  }
  Coalescer(program).Run();
  return program;
}

}  // namespace autobatch
