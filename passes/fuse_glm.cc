// fuse_glm: a GLM value and gradient pair in one block, one fused op.
#include "passes/fuse_glm.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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
  Fuser(Module& module, FunctionId f) : module_(module), f_(f) {
    for (const Variable& var : module_.variables) {
      if (var.function == f_) names_.insert(var.name);
    }
  }

  void Run() {
    Function& function = module_.function(f_);
    for (Block& block : function.blocks) {
      for (const auto& [first, second] : Pairs(block.ops)) Fuse(block.ops, first, second);
    }
  }

 private:
  // The pairs (first, second) of op indices to fuse in `ops`.
  std::vector<std::pair<size_t, size_t>> Pairs(const std::vector<Op>& ops) const {
    std::vector<std::pair<size_t, size_t>> pairs;
    std::vector<bool> used(ops.size(), false);
    for (size_t i = 0; i < ops.size(); ++i) {
      if (used[i] || !IsGlm(ops[i])) continue;
      const PrimOp& a = std::get<PrimOp>(ops[i]);
      if (std::find(a.inputs.begin(), a.inputs.end(), a.outputs[0]) != a.inputs.end()) continue;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        if (!used[j] && IsGlm(ops[j])) {
          const PrimOp& b = std::get<PrimOp>(ops[j]);
          if (b.prim != a.prim && b.inputs == a.inputs &&
              module_.var(a.outputs[0]).uniform == module_.var(b.outputs[0]).uniform) {
            used[i] = used[j] = true;
            pairs.emplace_back(i, j);
            break;
          }
        }
        // An op writing an input ends the search (b itself may: it read the
        // inputs first).
        const std::vector<VarId> writes = OpWrites(ops[j]);
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

  void Fuse(std::vector<Op>& ops, size_t first, size_t second) {
    const PrimOp op_first = std::get<PrimOp>(ops[first]);
    const PrimOp op_second = std::get<PrimOp>(ops[second]);
    const bool value_first = op_first.prim == Primitive::kBernoulliLogitGlm;
    const PrimOp& value = value_first ? op_first : op_second;
    const PrimOp& grad = value_first ? op_second : op_first;
    const VarId a = value.outputs[0], g = grad.outputs[0];
    const int64_t k1 = module_.var(g).type->NumElements();  // K + 1
    const bool uniform = module_.var(a).uniform;
    const std::string& base = module_.var(a).name;
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
    // Replace the second first, so `first` still indexes the first op.
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(second));
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(second), second_ops.begin(),
               second_ops.end());
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(first));
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(first), first_ops.begin(),
               first_ops.end());
  }

  Module& module_;
  FunctionId f_;
  std::set<std::string> names_;
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
