// Element types and static tensor types of IR values.
#include "ir/types.h"

#include <charconv>

#include "absl/strings/str_join.h"

namespace autobatch {

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF64: return "f64";
    case DType::kF32: return "f32";
    case DType::kI64: return "i64";
    case DType::kI32: return "i32";
    case DType::kBool: return "bool";
    case DType::kU64: return "u64";
  }
  return "?";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (DType d : kAllDTypes) {
    if (DTypeName(d) == name) return d;
  }
  return std::nullopt;
}

int DTypeSize(DType dtype) {
  return VisitDType(dtype, [](auto t) { return static_cast<int>(sizeof(t)); });
}

int64_t TensorType::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorType::ToString() const {
  std::string out(DTypeName(dtype));
  if (!shape.empty()) {
    out += "[";
    out += absl::StrJoin(shape, ",");
    out += "]";
  }
  return out;
}

TensorType Scalar(DType dtype) { return TensorType{dtype, {}}; }
TensorType Vector(DType dtype, int64_t n) { return TensorType{dtype, {n}}; }

std::optional<TensorType> ParseTensorType(std::string_view text) {
  size_t bracket = text.find('[');
  std::optional<DType> dtype = DTypeFromName(text.substr(0, bracket));
  if (!dtype) return std::nullopt;
  TensorType type{*dtype, {}};
  if (bracket == std::string_view::npos) return type;
  if (text.back() != ']') return std::nullopt;
  std::string_view dims = text.substr(bracket + 1, text.size() - bracket - 2);
  if (dims.empty()) return std::nullopt;  // "f64[]": write a scalar as "f64"
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string_view dim = dims.substr(0, comma);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (ec != std::errc() || ptr != dim.data() + dim.size() || value < 0) {
      return std::nullopt;
    }
    type.shape.push_back(value);
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
    if (dims.empty()) return std::nullopt;
  }
  return type;
}

}  // namespace autobatch
