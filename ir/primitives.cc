// The built-in primitives, generated from ir/primitives.def.
#include "ir/primitives.h"

namespace autobatch {
namespace {

constexpr PrimitiveInfo kInfos[] = {
#define PRIMITIVE(Enum, name, num_inputs, rule, bit_stable, fusable, cost, op, cxx, doc) \
  {name, num_inputs, TypeRule::rule, bit_stable, fusable, CostClass::cost, op, cxx, doc},
#include "ir/primitives.def"
#undef PRIMITIVE
};

constexpr PrimitiveInfo kUserKernelInfo = {
    "kernel", -1, TypeRule::kSame, false, false, CostClass::kUserKernel, "", "",
    "a registered user kernel; its signature gives the types"};

}  // namespace

std::span<const PrimitiveInfo> AllPrimitives() { return kInfos; }

const PrimitiveInfo& Info(Primitive prim) {
  if (prim == Primitive::kUserKernel) return kUserKernelInfo;
  return kInfos[static_cast<int>(prim)];
}

std::optional<Primitive> PrimitiveFromName(std::string_view name) {
  for (int i = 0; i < NumBuiltinPrimitives(); ++i) {
    if (kInfos[i].name == name) return static_cast<Primitive>(i);
  }
  return std::nullopt;
}

}  // namespace autobatch
