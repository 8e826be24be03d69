// fuse_glm: a GLM value and gradient pair in one straight-line run of blocks, one fused op.
#include "passes/fuse_glm.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/analysis/cfg.h"
#include "passes/require_stage.h"
#include "support/status.h"

namespace autobatch {
namespace {

bool IsGlm(const Op& op) {
  const PrimOp* prim = std::get_if<PrimOp>(&op);
  return prim != nullptr && prim->outputs.size() == 1 &&
         (prim->prim == Primitive::kBernoulliLogitGlm ||
          prim->prim == Primitive::kBernoulliLogitGlmGrad);
}

PrimOp MakeOp(Primitive prim, VarId in, VarId out, SourceLoc loc) {
  PrimOp op;
  op.prim = prim;
  op.inputs = {in};
  op.outputs = {out};
  op.loc = std::move(loc);
  return op;
}

class Fuser {
 public:
  Fuser(Module& module, FunctionId f) : module_(module), f_(f) {}

  void Run() {
    Function& function = module_.function(f_);
    const std::vector<std::vector<BlockId>> preds = Predecessors(function);
    // A block continues another when that one's Goto is its only way in.
    auto continuation = [&](size_t b) -> int {
      const Goto* jump = std::get_if<Goto>(&function.blocks[b].terminator);
      if (jump == nullptr || jump->target.value == 0) return -1;
      const auto& in = preds[static_cast<size_t>(jump->target.value)];
      return in.size() == 1 && in[0].value == static_cast<int32_t>(b) ? jump->target.value : -1;
    };
    std::vector<bool> continues(function.blocks.size(), false);
    for (size_t b = 0; b < function.blocks.size(); ++b) {
      if (const int next = continuation(b); next >= 0) continues[static_cast<size_t>(next)] = true;
    }
    for (size_t b = 0; b < function.blocks.size(); ++b) {
      if (continues[b]) continue;
      // The straight-line run of blocks from b: its ops in the order a lane
      // runs them.
      std::vector<Pos> run;
      std::vector<bool> seen(function.blocks.size(), false);
      for (int c = static_cast<int>(b); c >= 0 && !seen[static_cast<size_t>(c)];
           c = continuation(static_cast<size_t>(c))) {
        seen[static_cast<size_t>(c)] = true;
        for (size_t i = 0; i < function.blocks[static_cast<size_t>(c)].ops.size(); ++i) {
          run.push_back({static_cast<size_t>(c), i});
        }
      }
      for (const auto& [first, second] : Pairs(function, run)) Fuse(function, first, second);
    }
    // Apply the replacements, each block's ops in order.
    for (size_t b = 0; b < function.blocks.size(); ++b) {
      std::vector<Op> ops;
      for (size_t i = 0; i < function.blocks[b].ops.size(); ++i) {
        auto it = replacements_.find({b, i});
        if (it == replacements_.end()) {
          ops.push_back(std::move(function.blocks[b].ops[i]));
        } else {
          for (Op& op : it->second) ops.push_back(std::move(op));
        }
      }
      function.blocks[b].ops = std::move(ops);
    }
  }

 private:
  // An op's position: its block and its index there.
  struct Pos {
    size_t block, index;
    friend auto operator<=>(const Pos&, const Pos&) = default;
  };

  // The pairs (first, second) of ops to fuse in `run`.
  std::vector<std::pair<Pos, Pos>> Pairs(const Function& function,
                                         const std::vector<Pos>& run) const {
    auto op_at = [&](Pos p) -> const Op& { return function.blocks[p.block].ops[p.index]; };
    std::vector<std::pair<Pos, Pos>> pairs;
    std::vector<bool> used(run.size(), false);
    for (size_t i = 0; i < run.size(); ++i) {
      if (used[i] || !IsGlm(op_at(run[i]))) continue;
      const PrimOp& a = std::get<PrimOp>(op_at(run[i]));
      if (std::find(a.inputs.begin(), a.inputs.end(), a.outputs[0]) != a.inputs.end()) continue;
      for (size_t j = i + 1; j < run.size(); ++j) {
        const Op& op = op_at(run[j]);
        if (!used[j] && IsGlm(op)) {
          const PrimOp& b = std::get<PrimOp>(op);
          if (b.prim != a.prim && b.inputs == a.inputs &&
              module_.var(a.outputs[0]).uniform == module_.var(b.outputs[0]).uniform) {
            used[i] = used[j] = true;
            pairs.emplace_back(run[i], run[j]);
            break;
          }
        }
        // An op writing an input ends the search (b itself may: it read the
        // inputs first).
        const std::vector<VarId> writes = OpWrites(op);
        if (std::any_of(writes.begin(), writes.end(), [&](VarId v) {
              return std::find(a.inputs.begin(), a.inputs.end(), v) != a.inputs.end();
            })) {
          break;
        }
      }
    }
    return pairs;
  }

  VarId NewVariable(const std::string& base, TensorType type, bool uniform) {
    // The names taken, gathered on the first fusion only: scanning every
    // variable of the module for each of its functions costs a module of
    // thousands of functions quadratic time.
    if (names_.empty()) {
      for (const Variable& var : module_.variables) {
        if (var.function == f_) names_.insert(var.name);
      }
    }
    std::string name = base;
    for (int n = 2; names_.count(name) != 0; ++n) name = absl::StrCat(base, "#", n);
    names_.insert(name);
    Variable var;
    var.name = std::move(name);
    var.function = f_;
    var.type = std::move(type);
    var.uniform = uniform;
    return module_.AddVariable(std::move(var));
  }

  void Fuse(const Function& function, Pos first, Pos second) {
    const PrimOp& op_first = std::get<PrimOp>(function.blocks[first.block].ops[first.index]);
    const PrimOp& op_second = std::get<PrimOp>(function.blocks[second.block].ops[second.index]);
    const bool value_first = op_first.prim == Primitive::kBernoulliLogitGlm;
    const PrimOp& value = value_first ? op_first : op_second;
    const PrimOp& grad = value_first ? op_second : op_first;
    const VarId a = value.outputs[0], g = grad.outputs[0];
    const int64_t k1 = module_.var(g).type->NumElements();  // K + 1
    const bool uniform = module_.var(a).uniform;
    const std::string base = module_.var(a).name;
    const VarId vg =
        NewVariable(absl::StrCat(base, ".value_grad"), Vector(DType::kF64, k1 + 1), uniform);
    const VarId piece = NewVariable(absl::StrCat(base, ".value"), Vector(DType::kF64, 1), uniform);
    PrimOp fused = MakeOp(Primitive::kBernoulliLogitGlmValueGrad, VarId(), vg, op_first.loc);
    fused.inputs = op_first.inputs;
    auto slice = [](VarId to, VarId from, int64_t begin, int64_t size, SourceLoc loc) {
      PrimOp op = MakeOp(Primitive::kSlice, from, to, std::move(loc));
      op.attrs.ints = {begin, size};
      return op;
    };
    std::vector<Op> value_ops = {slice(piece, vg, 0, 1, value.loc),
                                 MakeOp(Primitive::kReduceSum, piece, a, value.loc)};
    std::vector<Op> grad_ops = {slice(g, vg, 1, k1, grad.loc)};
    std::vector<Op>& first_ops = value_first ? value_ops : grad_ops;
    first_ops.insert(first_ops.begin(), std::move(fused));
    std::vector<Op>& second_ops = value_first ? grad_ops : value_ops;
    replacements_[first] = std::move(first_ops);
    replacements_[second] = std::move(second_ops);
  }

  Module& module_;
  FunctionId f_;
  std::set<std::string> names_;
  std::map<Pos, std::vector<Op>> replacements_;
};

}  // namespace

absl::StatusOr<Program> FuseGlm(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "fuse_glm", {Stage::kTyped},
                                  "it runs after infer_types and before allocate_variables"));
  for (size_t f = 0; f < program.module.functions.size(); ++f) {
    Fuser(program.module, FunctionId(static_cast<int32_t>(f))).Run();
  }
  return program;
}

}  // namespace autobatch
