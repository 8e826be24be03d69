// Compile-time values: evaluation through RunPrimitive, and known constants.
#include "passes/constants.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/kernels.h"
#include "passes/analysis/use_counts.h"

namespace autobatch {
namespace {

bool Small(const TensorType& type) { return type.NumElements() <= kMaxConstantElements; }

ConstantValue Zeros(const TensorType& type) {
  return ConstantValue{type, std::vector<std::byte>(
                                 static_cast<size_t>(type.NumElements() * DTypeSize(type.dtype)))};
}

template <typename T>
T Element(const ConstantValue& value, int64_t k) {
  T x;
  std::memcpy(&x, value.bytes.data() + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return x;
}

// The literal's values of `value`, or false if some element has none.
template <typename T>
bool AppendValues(const ConstantValue& value, Literal& literal) {
  for (int64_t k = 0; k < value.type.NumElements(); ++k) {
    const T x = Element<T>(value, k);
    if constexpr (std::is_floating_point_v<T>) {
      const T canonical = std::numeric_limits<T>::quiet_NaN();
      if (x != x && std::memcmp(&x, &canonical, sizeof(T)) != 0) return false;
      literal.floats.push_back(static_cast<double>(x));
    } else if constexpr (std::is_same_v<T, bool>) {
      const auto byte = std::to_integer<uint8_t>(value.bytes[static_cast<size_t>(k)]);
      if (byte > 1) return false;
      literal.ints.push_back(byte);
    } else {
      literal.ints.push_back(static_cast<int64_t>(x));  // u64: bit-cast, as Literal keeps it
    }
  }
  return true;
}

}  // namespace

std::optional<ConstantValue> Evaluate(const PrimOp& op, std::span<const ConstantValue> inputs,
                                      const TensorType& output) {
  if (op.prim == Primitive::kUserKernel || op.outputs.size() != 1 ||
      inputs.size() != op.inputs.size() || !Small(output)) {
    return std::nullopt;
  }
  std::vector<ConstLanesView> in;
  for (const ConstantValue& value : inputs) {
    if (!Small(value.type)) return std::nullopt;
    in.push_back(ConstLanesView{value.type, value.bytes.data()});
  }
  ConstantValue result = Zeros(output);
  const LanesView out[] = {LanesView{output, result.bytes.data()}};
  if (!RunPrimitive(op, in, out, /*num_lanes=*/1, /*kernels=*/nullptr).ok()) return std::nullopt;
  return result;
}

std::optional<ConstantValue> ValueOfConstantOp(const PrimOp& op, const TensorType& output) {
  if (op.prim == Primitive::kConstant) return Evaluate(op, {}, output);
  if (op.prim == Primitive::kFillLike) {
    const ConstantValue like[] = {Zeros(output)};  // only its type matters
    return Evaluate(op, like, output);
  }
  return std::nullopt;
}

std::optional<Literal> LiteralFor(const ConstantValue& value) {
  Literal literal{value.type, {}, {}};
  const bool ok = VisitDType(
      value.type.dtype, [&](auto zero) { return AppendValues<decltype(zero)>(value, literal); });
  if (!ok) return std::nullopt;
  // The literal must give back these very bits (a guard: the literal's
  // conversion rules, backends/kernels.h, are the kernels' own).
  PrimOp constant;
  constant.prim = Primitive::kConstant;
  constant.outputs = {VarId(0)};
  constant.attrs.literal = literal;
  std::optional<ConstantValue> back = Evaluate(constant, {}, value.type);
  if (!back || *back != value) return std::nullopt;
  return literal;
}

bool EveryElementIs(const ConstantValue& value, double x) {
  return VisitDType(value.type.dtype, [&](auto zero) {
    using T = decltype(zero);
    T want;
    if constexpr (std::is_same_v<T, bool>) {
      want = x != 0;
    } else {
      want = static_cast<T>(x);
    }
    for (int64_t k = 0; k < value.type.NumElements(); ++k) {
      const T have = Element<T>(value, k);
      if (std::memcmp(&have, &want, sizeof(T)) != 0) return false;
    }
    return true;
  });
}

KnownConstants::KnownConstants(const Module& module, const Function& function)
    : module_(module) {
  const UseCounts counts(function, module.variables.size());
  for (const Block& block : function.blocks) {
    for (const Op& op : block.ops) {
      const PrimOp* prim = std::get_if<PrimOp>(&op);
      if (prim == nullptr || prim->outputs.size() != 1) continue;
      const VarId out = prim->outputs[0];
      const std::optional<TensorType>& type = module.var(out).type;
      if (counts.Writes(out) != 1 || !type ||
          std::find(function.params.begin(), function.params.end(), out) != function.params.end()) {
        continue;
      }
      if (std::optional<ConstantValue> value = ValueOfConstantOp(*prim, *type)) {
        everywhere_.insert_or_assign(out.value, *std::move(value));
      }
    }
  }
}

const ConstantValue* KnownConstants::Everywhere(VarId v) const {
  auto it = everywhere_.find(v.value);
  return it == everywhere_.end() ? nullptr : &it->second;
}

const ConstantValue* KnownConstants::Here(VarId v) const {
  auto it = here_.find(v.value);
  return it == here_.end() ? Everywhere(v) : &it->second;
}

void KnownConstants::StartBlock() { here_.clear(); }

void KnownConstants::AfterOp(const Op& op) {
  for (VarId v : OpWrites(op)) here_.erase(v.value);
  const PrimOp* prim = std::get_if<PrimOp>(&op);
  if (prim == nullptr || prim->outputs.size() != 1) return;
  const VarId out = prim->outputs[0];
  const std::optional<TensorType>& type = module_.var(out).type;
  if (!type) return;
  if (std::optional<ConstantValue> value = ValueOfConstantOp(*prim, *type)) {
    here_.insert_or_assign(out.value, *std::move(value));
  }
}

}  // namespace autobatch
