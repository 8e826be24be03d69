// Helpers shared by the backend tests: building ops, running one lane,
// generating inputs with junk, comparing bits.
#ifndef AUTOBATCH_TESTS_BACKENDS_TEST_UTIL_H_
#define AUTOBATCH_TESTS_BACKENDS_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/kernel_registry.h"
#include "backends/kernels.h"
#include "backends/tensor.h"
#include "ir/ir.h"

namespace autobatch::testing {

// A PrimOp whose inputs are variables 0..num_inputs-1 and whose output is
// variable num_inputs (RunPrimitive does not look at variable ids).
inline PrimOp MakeOp(Primitive prim, int num_inputs, Attributes attrs = {}) {
  PrimOp op;
  op.prim = prim;
  for (int i = 0; i < num_inputs; ++i) op.inputs.push_back(VarId(i));
  op.outputs.push_back(VarId(num_inputs));
  op.attrs = std::move(attrs);
  op.loc = SourceLoc{"test.cc", 1};
  return op;
}

// Runs `op` over all lanes of the given tensors (one output).
inline absl::Status RunAll(const PrimOp& op, const std::vector<const Tensor*>& ins,
                           Tensor* out, const KernelRegistry* kernels = nullptr) {
  std::vector<ConstLanesView> in_views;
  for (const Tensor* t : ins) in_views.push_back({t->type(), t->bytes()});
  std::vector<LanesView> out_views = {{out->type(), out->bytes()}};
  return RunPrimitive(op, in_views, out_views, out->batch(), kernels);
}

// Runs `op` on lane `lane` alone (num_lanes = 1) and returns that lane's
// output bytes: the oracle every batched result must match.
inline std::vector<std::byte> RunOneLane(const PrimOp& op,
                                         const std::vector<const Tensor*>& ins,
                                         const TensorType& out_type, int64_t lane,
                                         const KernelRegistry* kernels = nullptr,
                                         absl::Status* status = nullptr) {
  std::vector<ConstLanesView> in_views;
  for (const Tensor* t : ins) in_views.push_back({t->type(), t->lane_bytes_ptr(lane)});
  Tensor out(out_type, 1);
  std::vector<LanesView> out_views = {{out.type(), out.bytes()}};
  absl::Status s = RunPrimitive(op, in_views, out_views, 1, kernels);
  if (status != nullptr) *status = s;
  return std::vector<std::byte>(out.bytes(), out.bytes() + out.size_bytes());
}

inline bool LaneBytesEqual(const Tensor& t, int64_t lane, const std::byte* expected) {
  // A zero-byte lane's pointers may be null, which memcmp must not get.
  return t.lane_bytes() == 0 ||
         std::memcmp(t.lane_bytes_ptr(lane), expected,
                     static_cast<size_t>(t.lane_bytes())) == 0;
}

// Hex dump of one lane, for failure messages.
inline std::string LaneHex(const std::byte* p, int64_t bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (int64_t i = 0; i < bytes; ++i) {
    auto b = static_cast<unsigned>(p[i]);
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
    if (i + 1 < bytes) s += ' ';
  }
  return s;
}

// Random element values. `junk` widens the distribution to the values that
// break naive kernels: NaN, infinities, huge and tiny magnitudes, zero
// divisors, INT_MIN / -1, and (bool) bytes other than 0 and 1.
class ValueGen {
 public:
  explicit ValueGen(uint64_t seed) : rng_(seed) {}

  std::mt19937_64& rng() { return rng_; }
  double Uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  bool Coin(double p) { return Uniform(0, 1) < p; }

  template <typename T>
  T Float(bool junk) {
    const T kSpecials[] = {T(0),
                           T(-0.0),
                           std::numeric_limits<T>::infinity(),
                           -std::numeric_limits<T>::infinity(),
                           std::numeric_limits<T>::quiet_NaN(),
                           -std::numeric_limits<T>::quiet_NaN(),
                           std::numeric_limits<T>::max(),
                           std::numeric_limits<T>::lowest(),
                           std::numeric_limits<T>::denorm_min(),
                           std::numeric_limits<T>::min(),
                           T(1),
                           T(-1)};
    if (Coin(junk ? 0.6 : 0.05)) {
      return kSpecials[rng_() % std::size(kSpecials)];
    }
    if (junk && Coin(0.3)) {  // any bit pattern, including signalling NaNs
      if constexpr (sizeof(T) == 8) {
        uint64_t bits = rng_();
        T v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
      } else {
        uint32_t bits = static_cast<uint32_t>(rng_());
        T v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
      }
    }
    switch (rng_() % 3) {
      case 0: return static_cast<T>(Uniform(-3, 3));
      case 1: return static_cast<T>(Uniform(-100, 100));
      default: return static_cast<T>(std::ldexp(Uniform(-1, 1), static_cast<int>(rng_() % 40) - 20));
    }
  }

  template <typename T>
  T Int(bool junk) {
    const T kSpecials[] = {T(0),
                           T(1),
                           static_cast<T>(-1),
                           T(2),
                           static_cast<T>(-2),
                           std::numeric_limits<T>::min(),
                           std::numeric_limits<T>::max(),
                           static_cast<T>(std::numeric_limits<T>::min() + 1),
                           static_cast<T>(std::numeric_limits<T>::max() - 1)};
    if (Coin(junk ? 0.6 : 0.15)) return kSpecials[rng_() % std::size(kSpecials)];
    if (Coin(0.3)) return static_cast<T>(rng_());
    return static_cast<T>(static_cast<int64_t>(rng_() % 41) - 20);
  }

  // Fills `elements` values of dtype d at p.
  void Fill(DType d, std::byte* p, int64_t elements, bool junk) {
    for (int64_t i = 0; i < elements; ++i) {
      switch (d) {
        case DType::kF64: Put(p, i, Float<double>(junk)); break;
        case DType::kF32: Put(p, i, Float<float>(junk)); break;
        case DType::kI64: Put(p, i, Int<int64_t>(junk)); break;
        case DType::kI32: Put(p, i, Int<int32_t>(junk)); break;
        case DType::kU64: Put(p, i, Int<uint64_t>(junk)); break;
        case DType::kBool: {
          uint8_t b = junk ? static_cast<uint8_t>(rng_()) : static_cast<uint8_t>(rng_() & 1);
          Put(p, i, b);
          break;
        }
      }
    }
  }

  // Fills every lane; lanes with junk_lane[l] get junk.
  void FillTensor(Tensor* t, const std::vector<uint8_t>& junk_lane) {
    for (int64_t l = 0; l < t->batch(); ++l) {
      Fill(t->dtype(), t->lane_bytes_ptr(l), t->lane_elements(),
           junk_lane[static_cast<size_t>(l)] != 0);
    }
  }

  // Arbitrary bytes (the "untouched" sentinel of output tensors).
  void FillBytes(Tensor* t) {
    for (int64_t i = 0; i < t->size_bytes(); ++i) {
      t->bytes()[i] = static_cast<std::byte>(rng_());
    }
  }

 private:
  template <typename T>
  static void Put(std::byte* p, int64_t i, T v) {
    std::memcpy(p + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
  }
  std::mt19937_64 rng_;
};

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_BACKENDS_TEST_UTIL_H_
