// Inputs, stand-in kernels and output comparisons for running programs as
// the fuzzer runs them (see fuzz_inputs.h).
#include "tests/fuzz/fuzz_inputs.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "vm/fused_blocks.h"

namespace autobatch {
namespace {

// Element values the synthesized inputs draw from: small numbers (so the
// samples' recursions finish within the budgets) and the edge cases every
// primitive must survive.
constexpr int64_t kIntValues[] = {0, 1, 2, 3, 5, 8, -1, 13, 4, 7,
                                  std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max()};
constexpr double kFloatValues[] = {0.0, 1.0, -1.5, 0.25, 3.0, -0.0, 2.5, -7.0,
                                   1e300, std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity()};
constexpr uint64_t kUnsignedValues[] = {0, 1, 42, 7, 3, 1ull << 63,
                                        std::numeric_limits<uint64_t>::max()};

template <typename T, size_t N>
T Pick(const T (&table)[N], uint64_t index) {
  return table[index % N];
}

// A model kernel's shape (mcmc/batched/model_kernel.h): q f64[d] -> (logp f64, grad f64[d]).
bool IsModelShaped(const KernelSignature& sig) {
  return sig.inputs.size() == 1 && sig.outputs.size() == 2 &&
         sig.inputs[0].dtype == DType::kF64 && sig.inputs[0].Rank() == 1 &&
         sig.outputs[0] == Scalar(DType::kF64) && sig.outputs[1] == sig.inputs[0];
}

// The first element of `lane` where a and b (same type) differ: its index,
// both values and their bytes (a NaN's sign or payload, -0.0 against 0.0).
std::string FirstDifference(const Tensor& a, const Tensor& b, int64_t lane) {
  const int64_t size = DTypeSize(a.type().dtype);
  const std::byte* pa = a.lane_bytes_ptr(lane);
  const std::byte* pb = b.lane_bytes_ptr(lane);
  int64_t i = 0;
  while (std::memcmp(pa + i * size, pb + i * size, static_cast<size_t>(size)) == 0) ++i;
  auto describe = [&](const std::byte* p) {
    std::string value;
    VisitDType(a.type().dtype, [&](auto zero) {
      using T = decltype(zero);
      T v;
      std::memcpy(&v, p, sizeof(T));
      if constexpr (std::is_same_v<T, bool>) {
        value = v ? "true" : "false";
      } else {
        value = absl::StrCat(v);
      }
    });
    std::string hex;
    for (int64_t j = size - 1; j >= 0; --j) {
      absl::StrAppend(&hex, absl::Hex(static_cast<unsigned>(p[j]), absl::kZeroPad2));
    }
    return absl::StrCat(value, " (0x", hex, ")");
  };
  return absl::StrCat("element ", i, " is ", describe(pa + i * size), " against ",
                      describe(pb + i * size));
}

}  // namespace

uint64_t FuzzHash(std::string_view bytes) { return Fnv1a64(bytes); }

Tensor SynthesizeInput(const TensorType& type, int64_t batch, uint64_t seed) {
  Tensor tensor(type, batch);
  const int64_t n = batch * type.NumElements();
  VisitDType(type.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* data = tensor.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t k = seed + static_cast<uint64_t>(i) * 7;
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = ((seed >> 3) + static_cast<uint64_t>(i)) % 2 == 1;
      } else if constexpr (std::is_floating_point_v<T>) {
        data[i] = static_cast<T>(Pick(kFloatValues, k));
      } else if constexpr (std::is_same_v<T, uint64_t>) {
        data[i] = Pick(kUnsignedValues, k);
      } else {
        // Saturate into i32 so INT64_MIN/MAX become INT32_MIN/MAX.
        const int64_t v = Pick(kIntValues, k);
        data[i] = static_cast<T>(std::clamp<int64_t>(v, std::numeric_limits<T>::min(),
                                                     std::numeric_limits<T>::max()));
      }
    }
  });
  return tensor;
}

std::vector<TensorType> EntryInputTypes(const Program& program) {
  const Function& entry = program.entry_function();
  std::vector<TensorType> types;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const Variable& var = program.module.var(entry.params[i]);
    if (var.type) {
      types.push_back(*var.type);
    } else if (entry.signature && entry.signature->params.size() == entry.params.size()) {
      types.push_back(entry.signature->params[i]);
    } else {
      types.push_back(Scalar(DType::kI64));
    }
  }
  return types;
}

absl::Status StandInKernel(const KernelSignature& sig, const KernelCall& call) {
  if (IsModelShaped(sig)) {
    const int64_t d = sig.inputs[0].shape[0];
    const auto* q = reinterpret_cast<const double*>(call.inputs[0].data);
    auto* logp = reinterpret_cast<double*>(call.outputs[0].data);
    auto* grad = reinterpret_cast<double*>(call.outputs[1].data);
    for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
      double sum = 0;
      for (int64_t i = 0; i < d; ++i) {
        const double x = q[lane * d + i];
        sum += x * x;
        grad[lane * d + i] = -x;
      }
      logp[lane] = -0.5 * sum;
    }
    return absl::OkStatus();
  }
  for (size_t k = 0; k < call.outputs.size(); ++k) {
    const TensorType& type = call.outputs[k].type;
    const int64_t bytes = call.num_lanes * type.NumElements() * DTypeSize(type.dtype);
    // No bytes: the view may be null, which memset must not get.
    if (bytes > 0) std::memset(call.outputs[k].data, 0, static_cast<size_t>(bytes));
  }
  return absl::OkStatus();
}
std::string CompareOutputs(const char* a_name, const std::vector<Tensor>& a,
                           const char* b_name, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) {
    return absl::StrCat(a_name, " returned ", a.size(), " outputs but ", b_name,
                        " returned ", b.size());
  }
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k] == b[k]) continue;
    if (a[k].type() != b[k].type() || a[k].batch() != b[k].batch()) {
      return absl::StrCat("output ", k, ": ", a_name, " gives ", a[k].type().ToString(),
                          " x ", a[k].batch(), " lanes, ", b_name, " gives ",
                          b[k].type().ToString(), " x ", b[k].batch(), " lanes");
    }
    for (int64_t lane = 0; lane < a[k].batch(); ++lane) {
      if (std::memcmp(a[k].lane_bytes_ptr(lane), b[k].lane_bytes_ptr(lane),
                      static_cast<size_t>(a[k].lane_bytes())) != 0) {
        return absl::StrCat("output ", k, " lane ", lane, " differs between ", a_name, " and ",
                            b_name, ": ", FirstDifference(a[k], b[k], lane));
      }
    }
  }
  return "";
}

}  // namespace autobatch
