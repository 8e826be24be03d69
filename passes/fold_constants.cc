// fold_constants: built-in ops of known inputs become constants.
#include "passes/fold_constants.h"

#include <optional>
#include <vector>

#include "passes/constants.h"
#include "passes/require_stage.h"
#include "support/status.h"

namespace autobatch {
namespace {

// Whether the pass may replace an op of `prim` by its value (the header's
// list). Every built-in primitive is a function of its inputs and
// attributes (ir/primitives.def), so the table's columns decide.
bool Foldable(Primitive prim) {
  if (prim == Primitive::kUserKernel || prim == Primitive::kConstant ||
      prim == Primitive::kFillLike) {
    return false;
  }
  return Info(prim).bit_stable && Info(prim).cost != CostClass::kRandom;
}

// The constant `op` folds to, or nullopt.
std::optional<PrimOp> Folded(const Module& module, const PrimOp& op, const KnownConstants& known) {
  if (!Foldable(op.prim) || op.outputs.size() != 1) return std::nullopt;
  // A uniform value is computed by an op with uniform inputs (verifier U3),
  // which a `constant` has not; it runs once per call anyway.
  if (module.var(op.outputs[0]).uniform) return std::nullopt;
  std::vector<ConstantValue> inputs;
  for (VarId in : op.inputs) {
    const ConstantValue* value = known.Here(in);
    if (value == nullptr) return std::nullopt;
    inputs.push_back(*value);
  }
  const std::optional<TensorType>& type = module.var(op.outputs[0]).type;
  if (!type) return std::nullopt;
  std::optional<ConstantValue> value = Evaluate(op, inputs, *type);
  if (!value) return std::nullopt;
  std::optional<Literal> literal = LiteralFor(*value);
  if (!literal) return std::nullopt;
  PrimOp constant;
  constant.prim = Primitive::kConstant;
  constant.outputs = op.outputs;
  constant.attrs.literal = *std::move(literal);
  constant.loc = op.loc;
  return constant;
}

}  // namespace

absl::StatusOr<Program> FoldConstants(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "fold_constants", {Stage::kTyped},
                                  "it runs after infer_types and before allocate_variables"));
  for (Function& function : program.module.functions) {
    KnownConstants known(program.module, function);
    for (Block& block : function.blocks) {
      known.StartBlock();
      for (Op& op : block.ops) {
        if (const PrimOp* prim = std::get_if<PrimOp>(&op)) {
          if (std::optional<PrimOp> folded = Folded(program.module, *prim, known)) {
            op = *std::move(folded);
          }
        }
        known.AfterOp(op);
      }
    }
  }
  return program;
}

}  // namespace autobatch
