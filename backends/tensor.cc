// Tensor: construction and bitwise comparison of batched values.
#include "backends/tensor.h"

namespace autobatch {

Tensor::Tensor(TensorType type, int64_t batch)
    : type_(std::move(type)), batch_(batch), lane_elements_(type_.NumElements()) {
  AB_CHECK(batch_ >= 0, "Tensor: negative batch size");
  AB_CHECK(lane_elements_ >= 0, "Tensor: negative event dimension");
  storage_.assign(static_cast<size_t>(batch_ * lane_bytes()), std::byte{0});
}

bool operator==(const Tensor& a, const Tensor& b) {
  if (a.type_ != b.type_ || a.batch_ != b.batch_) return false;
  return a.size_bytes() == 0 ||
         std::memcmp(a.storage_.data(), b.storage_.data(),
                     static_cast<size_t>(a.size_bytes())) == 0;
}

}  // namespace autobatch
