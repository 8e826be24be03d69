// Element types and static tensor types of IR values.
#ifndef AUTOBATCH_IR_TYPES_H_
#define AUTOBATCH_IR_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autobatch {

// Element type of a tensor. u64 carries random-stream counters.
enum class DType : uint8_t { kF64, kF32, kI64, kI32, kBool, kU64 };

inline constexpr DType kAllDTypes[] = {DType::kF64, DType::kF32, DType::kI64,
                                       DType::kI32, DType::kBool, DType::kU64};

std::string_view DTypeName(DType dtype);  // "f64", "f32", "i64", ...
std::optional<DType> DTypeFromName(std::string_view name);
int DTypeSize(DType dtype);  // bytes per element (bool is 1)
inline bool IsFloat(DType d) { return d == DType::kF64 || d == DType::kF32; }
inline bool IsInteger(DType d) {
  return d == DType::kI64 || d == DType::kI32 || d == DType::kU64;
}

// The type of one example's value: dtype plus static event shape. The batch
// dimension is never part of a TensorType.
struct TensorType {
  DType dtype = DType::kF64;
  std::vector<int64_t> shape;  // empty = scalar

  int64_t NumElements() const;
  int Rank() const { return static_cast<int>(shape.size()); }
  bool IsScalar() const { return shape.empty(); }
  std::string ToString() const;  // "f64", "f64[3]", "i32[2,5]"
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

TensorType Scalar(DType dtype);
TensorType Vector(DType dtype, int64_t n);
// Parses TensorType::ToString's form; nullopt if malformed.
std::optional<TensorType> ParseTensorType(std::string_view text);

// Maps a C++ element type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<double> { static constexpr DType value = DType::kF64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::kF32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kI64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kI32; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kU64; };

// Calls f(T{}) with the C++ type for `dtype` (bool is stored as bool).
template <typename F>
decltype(auto) VisitDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF64: return f(double{});
    case DType::kF32: return f(float{});
    case DType::kI64: return f(int64_t{});
    case DType::kI32: return f(int32_t{});
    case DType::kBool: return f(bool{});
    case DType::kU64: return f(uint64_t{});
  }
  __builtin_unreachable();
}

}  // namespace autobatch

#endif  // AUTOBATCH_IR_TYPES_H_
