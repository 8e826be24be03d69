// cse: available expressions, and recomputations turned into copies.
#include "passes/cse.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "passes/analysis/cfg.h"
#include "passes/constants.h"
#include "passes/require_stage.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

// A set of expression instances, one bit each.
class Bits {
 public:
  Bits(size_t size, bool all) : words_((size + 63) / 64, all ? ~uint64_t{0} : 0) {}
  bool Test(int i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void Set(int i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  void Reset(int i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
  void Intersect(const Bits& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] &= other.words_[w];
  }
  // this = gen | (in & ~kill)
  void Transfer(const Bits& in, const Bits& gen, const Bits& kill) {
    for (size_t w = 0; w < words_.size(); ++w) {
      words_[w] = gen.words_[w] | (in.words_[w] & ~kill.words_[w]);
    }
  }
  void Clear() { std::fill(words_.begin(), words_.end(), 0); }
  friend bool operator==(const Bits&, const Bits&) = default;

 private:
  std::vector<uint64_t> words_;
};

bool IsCommutative(Primitive prim) {
  return prim == Primitive::kAdd || prim == Primitive::kMul || prim == Primitive::kEq ||
         prim == Primitive::kNe || prim == Primitive::kAnd || prim == Primitive::kOr;
}

// An expression's key: its primitive and its operands, each a variable
// (its index, >= 0) or a known constant (-1 - its class).
using Key = std::pair<Primitive, std::vector<int64_t>>;

// An expression held in variables: `outputs = expression`.
struct Instance {
  const PrimOp* op;  // an op computing it (for its attributes)
  std::vector<VarId> outputs;
  std::vector<VarId> kill;  // the variables whose writes end it
};

class Cse {
 public:
  Cse(const Module& module, Function& function)
      : module_(module), function_(function), known_(module, function) {}

  void Run() {
    FindInstances();
    if (instances_.empty()) return;
    ComputeAvailability();
    Rewrite();
  }

 private:
  bool IsCandidate(const PrimOp& op) const {
    if (op.outputs.empty() || !op.in_place.empty()) return false;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (op.outputs[i] == op.outputs[j]) return false;
      }
    }
    switch (op.prim) {
      case Primitive::kConstant:
      case Primitive::kFillLike:
      case Primitive::kCopy:
        return false;
      case Primitive::kUserKernel: {
        auto sig = module_.kernels.find(op.attrs.kernel);
        return sig != module_.kernels.end() && sig->second.pure && sig->second.bit_stable;
      }
      default:
        return Info(op.prim).bit_stable;
    }
  }

  // The class of a known constant value (equal type and bits, one class).
  int64_t ConstantClass(const ConstantValue& value) {
    for (size_t c = 0; c < constants_.size(); ++c) {
      if (constants_[c] == value) return static_cast<int64_t>(c);
    }
    constants_.push_back(value);
    return static_cast<int64_t>(constants_.size()) - 1;
  }

  Key KeyOf(const PrimOp& op) {
    Key key{op.prim, {}};
    for (VarId in : op.inputs) {
      const ConstantValue* value = known_.Everywhere(in);
      key.second.push_back(value != nullptr ? -1 - ConstantClass(*value) : in.value);
    }
    if (IsCommutative(op.prim) && key.second.size() == 2 && key.second[1] < key.second[0]) {
      std::swap(key.second[0], key.second[1]);
    }
    return key;
  }

  // Whether `op` makes its expression available in its outputs: it does
  // not overwrite one of its own inputs.
  static bool Generates(const PrimOp& op) {
    for (VarId out : op.outputs) {
      if (std::find(op.inputs.begin(), op.inputs.end(), out) != op.inputs.end()) return false;
    }
    return true;
  }

  // The instances with `key` and `op`'s attributes and number of outputs.
  std::vector<int> Matching(const Key& key, const PrimOp& op) const {
    std::vector<int> ids;
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return ids;
    for (int id : it->second) {
      const Instance& inst = instances_[id];
      if (inst.outputs.size() == op.outputs.size() && inst.op->attrs == op.attrs) {
        ids.push_back(id);
      }
    }
    return ids;
  }

  // The instance `op` generates (creating it on first sight), or -1.
  int InstanceOf(const PrimOp& op) {
    if (!IsCandidate(op) || !Generates(op)) return -1;
    const Key key = KeyOf(op);
    for (int id : Matching(key, op)) {
      if (instances_[id].outputs == op.outputs) return id;
    }
    Instance inst{&op, op.outputs, op.outputs};
    for (VarId in : op.inputs) {
      if (known_.Everywhere(in) == nullptr) inst.kill.push_back(in);
    }
    const int id = static_cast<int>(instances_.size());
    for (VarId v : inst.kill) killed_by_[v].push_back(id);
    instances_.push_back(std::move(inst));
    by_key_[key].push_back(id);
    return id;
  }

  void FindInstances() {
    for (Block& block : function_.blocks) {
      std::vector<int>& ids = generated_.emplace_back();
      for (const Op& op : block.ops) {
        const PrimOp* prim = std::get_if<PrimOp>(&op);
        ids.push_back(prim != nullptr ? InstanceOf(*prim) : -1);
      }
    }
  }

  // What `op` ends: the instances naming a variable it writes, and every
  // instance at a call.
  template <typename F>
  void ForEachKilled(const Op& op, F&& kill) const {
    const bool is_call = std::visit(Overloaded{
                                        [](const PrimOp&) { return false; },
                                        [](const CallOp&) { return true; },
                                        [](const PopOp&) { return false; },
                                        [](const TapePushOp&) { return false; },
                                        [](const TapePopOp&) { return false; },
                                    },
                                    op);
    if (is_call) {
      for (size_t id = 0; id < instances_.size(); ++id) kill(static_cast<int>(id));
      return;
    }
    for (VarId v : OpWrites(op)) {
      auto it = killed_by_.find(v);
      if (it == killed_by_.end()) continue;
      for (int id : it->second) kill(id);
    }
  }

  void ComputeAvailability() {
    const size_t n = instances_.size();
    const size_t num_blocks = function_.blocks.size();
    std::vector<Bits> gen(num_blocks, Bits(n, false)), kill(num_blocks, Bits(n, false));
    for (size_t b = 0; b < num_blocks; ++b) {
      const std::vector<Op>& ops = function_.blocks[b].ops;
      for (size_t i = 0; i < ops.size(); ++i) {
        ForEachKilled(ops[i], [&](int id) {
          gen[b].Reset(id);
          kill[b].Set(id);
        });
        if (generated_[b][i] >= 0) gen[b].Set(generated_[b][i]);
      }
    }
    const std::vector<std::vector<BlockId>> preds = Predecessors(function_);
    in_.assign(num_blocks, Bits(n, true));
    std::vector<Bits> out(num_blocks, Bits(n, true));
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t b = 0; b < num_blocks; ++b) {
        Bits in(n, b != 0);  // nothing is available where the function starts
        if (b != 0) {
          for (BlockId p : preds[b]) in.Intersect(out[p.value]);
        }
        Bits next(n, false);
        next.Transfer(in, gen[b], kill[b]);
        in_[b] = std::move(in);
        if (next != out[b]) {
          out[b] = std::move(next);
          changed = true;
        }
      }
    }
  }

  // The ops that replace `op` when `inst` holds its value.
  static std::vector<Op> Replacement(const PrimOp& op, const Instance& inst) {
    std::vector<Op> copies;
    if (inst.outputs == op.outputs) return copies;  // it already holds it
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      copies.push_back(MakeCopy(op.outputs[k], inst.outputs[k], op.loc));
    }
    return copies;
  }

  // Whether an instance in `outputs` can stand in for `op`: the same
  // variables, or none of op's outputs among them (copies in order would
  // otherwise read a variable an earlier copy wrote), and a uniform output
  // copied only from a uniform variable (verifier U3).
  bool CanStandIn(const PrimOp& op, const std::vector<VarId>& outputs) const {
    if (outputs == op.outputs) return true;
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      if (std::find(outputs.begin(), outputs.end(), op.outputs[k]) != outputs.end()) return false;
      if (module_.var(op.outputs[k]).uniform && !module_.var(outputs[k]).uniform) return false;
    }
    return true;
  }

  void Rewrite() {
    const std::vector<bool> reachable = ReachableBlocks(function_);
    for (size_t b = 0; b < function_.blocks.size(); ++b) {
      if (!reachable[b]) continue;
      Bits available = in_[b];
      std::vector<Op> ops;
      std::vector<Op>& old_ops = function_.blocks[b].ops;
      for (size_t i = 0; i < old_ops.size(); ++i) {
        const Op& op = old_ops[i];
        std::optional<std::vector<Op>> replacement;
        if (const PrimOp* prim = std::get_if<PrimOp>(&op); prim != nullptr && IsCandidate(*prim)) {
          for (int id : Matching(KeyOf(*prim), *prim)) {
            if (available.Test(id) && CanStandIn(*prim, instances_[id].outputs)) {
              replacement = Replacement(*prim, instances_[id]);
              break;
            }
          }
        }
        // The dataflow saw the original op: apply its kills and its
        // instance, whatever replaces it (a copy writes what it wrote).
        ForEachKilled(op, [&](int id) { available.Reset(id); });
        if (generated_[b][i] >= 0) available.Set(generated_[b][i]);
        if (replacement) {
          for (Op& copy : *replacement) ops.push_back(std::move(copy));
        } else {
          ops.push_back(op);
        }
      }
      replaced_blocks_.emplace_back(b, std::move(ops));
    }
    // Instances point into the old ops: swap the blocks in only now.
    for (auto& [b, ops] : replaced_blocks_) function_.blocks[b].ops = std::move(ops);
  }

  const Module& module_;
  Function& function_;
  KnownConstants known_;
  std::vector<ConstantValue> constants_;         // by class
  std::vector<Instance> instances_;              // by id
  std::map<Key, std::vector<int>> by_key_;       // ids by key
  std::map<VarId, std::vector<int>> killed_by_;  // ids by variable
  std::vector<std::vector<int>> generated_;      // [block][op]: id or -1
  std::vector<Bits> in_;                         // available at block entry
  std::vector<std::pair<size_t, std::vector<Op>>> replaced_blocks_;
};

}  // namespace

absl::StatusOr<Program> EliminateCommonSubexpressions(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "cse", {Stage::kTyped},
                                  "it runs after infer_types and before allocate_variables"));
  for (Function& function : program.module.functions) {
    Cse(program.module, function).Run();
  }
  return program;
}

}  // namespace autobatch
