// The control ops (CallOp, PopOp and the terminators), generated from
// ir/control_ops.def: their spellings, stage rules and semantics.
#ifndef AUTOBATCH_IR_CONTROL_OPS_H_
#define AUTOBATCH_IR_CONTROL_OPS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "ir/ir.h"

namespace autobatch {

enum class ControlOp : uint8_t {
#define CONTROL_OP(Type, spelling, form, stages, operands, misplaced, doc) k##Type,
#include "ir/control_ops.def"
#undef CONTROL_OP
};

// Where a control op sits in a Block.
enum class ControlForm : uint8_t { kOp, kTerminator };
// The stages whose programs may contain a control op.
enum class ControlStages : uint8_t { kAnyStage, kUnlowered, kLowered };

struct ControlOpInfo {
  std::string_view type_name;  // "PushGoto": the struct in ir/ir.h
  std::string_view spelling;   // "push_goto": text keyword and JSON "kind"
  ControlForm form;
  ControlStages stages;
  std::string_view operands;   // the text form
  std::string_view misplaced;  // what to do at a stage it does not belong to
  std::string_view doc;        // one line of semantics
};

inline constexpr ControlOpInfo kControlOpInfos[] = {
#define CONTROL_OP(Type, spelling, form, stages, operands, misplaced, doc) \
  {#Type, spelling, ControlForm::form, ControlStages::stages, operands, misplaced, doc},
#include "ir/control_ops.def"
#undef CONTROL_OP
};

// Every control op, in table order (the straight-line ops, then the
// terminators in the order of the Terminator variant).
constexpr std::span<const ControlOpInfo> AllControlOps() { return kControlOpInfos; }
constexpr const ControlOpInfo& Info(ControlOp op) {
  return kControlOpInfos[static_cast<int>(op)];
}

// The table entry of each control-op struct, and of a terminator.
#define CONTROL_OP(Type, spelling, form, stages, operands, misplaced, doc) \
  constexpr ControlOp KindOf(const Type&) { return ControlOp::k##Type; }
#include "ir/control_ops.def"
#undef CONTROL_OP
inline ControlOp KindOf(const Terminator& t) {
  return std::visit([](const auto& alternative) { return KindOf(alternative); }, t);
}

// Whether a program at `stage` may contain `op` (the verifier's S1).
constexpr bool AllowedAt(ControlOp op, Stage stage) {
  switch (Info(op).stages) {
    case ControlStages::kAnyStage: return true;
    case ControlStages::kUnlowered: return stage != Stage::kLowered;
    case ControlStages::kLowered: return stage == Stage::kLowered;
  }
  return false;
}

// The control op of `form` spelled `spelling`, or nullopt.
constexpr std::optional<ControlOp> ControlOpFromSpelling(std::string_view spelling,
                                                         ControlForm form) {
  for (size_t i = 0; i < AllControlOps().size(); ++i) {
    if (kControlOpInfos[i].form == form && kControlOpInfos[i].spelling == spelling) {
      return static_cast<ControlOp>(i);
    }
  }
  return std::nullopt;
}

}  // namespace autobatch

#endif  // AUTOBATCH_IR_CONTROL_OPS_H_
