// Tensor: a batch of values of one TensorType, contiguous and lane-major.
#ifndef AUTOBATCH_BACKENDS_TENSOR_H_
#define AUTOBATCH_BACKENDS_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "backends/lane_copy.h"
#include "support/memory.h"
#include "support/status.h"
#include "ir/types.h"

namespace autobatch {

// Shape [batch, event...]. Lane i's event block is elements
// [i * lane_elements(), (i + 1) * lane_elements()), so a lane is gathered or
// scattered with one memcpy and Eigen maps the whole batch as a
// (lane_elements x batch) column-major matrix without copying.
class Tensor {
 public:
  Tensor() = default;
  Tensor(TensorType type, int64_t batch);  // zero-filled

  // Lanes from a flat vector: batch = values.size() / event elements. The
  // size must be a multiple of the event size (else an error).
  template <typename T>
  static absl::StatusOr<Tensor> FromVector(const std::vector<T>& values,
                                           std::vector<int64_t> event_shape = {});
  // Copies out all lanes as a flat vector; T must match the dtype exactly.
  template <typename T>
  std::vector<T> ToVector() const;

  // Lanes from an Eigen matrix, one row per lane: batch = rows. The event
  // shape is `event_shape` (its element count must equal cols), or by default
  // a scalar when cols == 1 and a vector [cols] otherwise.
  template <typename Derived>
  static absl::StatusOr<Tensor> FromEigen(const Eigen::MatrixBase<Derived>& m,
                                          std::optional<std::vector<int64_t>> event_shape = {});
  // All lanes as a batch x lane_elements() matrix (row = lane); T must match
  // the dtype exactly.
  template <typename T>
  Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> ToEigen() const;

  // A UNIFORM tensor (ir/ir.h) holds ONE lane's value that every lane of a
  // batch reads (lane stride 0): batch() is 1 whatever the batch it is used
  // with. Backends read it through a ConstLanesView flagged uniform and
  // compute ops whose outputs are uniform once.
  static Tensor Uniform(TensorType type) {
    Tensor t(std::move(type), 1);
    t.uniform_ = true;
    return t;
  }
  bool uniform() const { return uniform_; }
  // Marks a one-lane tensor uniform (an input given once for all lanes).
  void set_uniform() {
    AB_CHECK(batch_ == 1, "Tensor::set_uniform: a uniform tensor has exactly one lane");
    uniform_ = true;
  }

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  int64_t batch() const { return batch_; }
  int64_t lane_elements() const { return lane_elements_; }
  int64_t lane_bytes() const { return lane_elements_ * DTypeSize(type_.dtype); }
  int64_t size_bytes() const { return batch_ * lane_bytes(); }

  std::byte* bytes() { return storage_.data(); }
  const std::byte* bytes() const { return storage_.data(); }
  std::byte* lane_bytes_ptr(int64_t lane) { return bytes() + lane * lane_bytes(); }
  const std::byte* lane_bytes_ptr(int64_t lane) const {
    return bytes() + lane * lane_bytes();
  }
  template <typename T>
  T* data() {
    AB_DCHECK(DTypeOf<T>::value == type_.dtype);
    return reinterpret_cast<T*>(storage_.data());
  }
  template <typename T>
  const T* data() const {
    AB_DCHECK(DTypeOf<T>::value == type_.dtype);
    return reinterpret_cast<const T*>(storage_.data());
  }

  // Copies lane `src_lane` of `src` (same type) into lane `dst_lane`.
  void CopyLaneFrom(const Tensor& src, int64_t src_lane, int64_t dst_lane) {
    AB_DCHECK(src.type_ == type_);
    CopyBytes(lane_bytes_ptr(dst_lane), src.lane_bytes_ptr(src_lane), lane_bytes());
  }
  // Makes this a tensor of `batch` lanes, keeping the first min(old, new)
  // lanes; the values of new lanes are unspecified. Never allocates (nor
  // writes) once the tensor has held `batch` lanes, so a VM can reuse one
  // tensor as scratch for lane sets of any size without touching the heap.
  void SetBatch(int64_t batch) {
    AB_DCHECK(batch >= 0);
    batch_ = batch;
    const size_t bytes = static_cast<size_t>(batch * lane_bytes());
    if (bytes > storage_.size()) storage_.resize(bytes);
  }
  // Bitwise equality of type, batch and contents.
  friend bool operator==(const Tensor& a, const Tensor& b);

 private:
  TensorType type_;
  int64_t batch_ = 0;
  int64_t lane_elements_ = 1;
  bool uniform_ = false;
  // Charged to the run's memory budget (support/memory.h) and aligned to a
  // cache line, beyond Eigen's widest vector loads: at malloc's 16 bytes,
  // whether a lane's loads straddle cache lines would depend on the heap.
  std::vector<std::byte, CountedAllocator<std::byte>> storage_;
};

template <typename T>
absl::StatusOr<Tensor> Tensor::FromVector(const std::vector<T>& values,
                                          std::vector<int64_t> event_shape) {
  TensorType type{DTypeOf<T>::value, std::move(event_shape)};
  int64_t event = type.NumElements();
  if (event <= 0 || static_cast<int64_t>(values.size()) % event != 0) {
    return absl::InvalidArgumentError(
        "Tensor::FromVector: " + std::to_string(values.size()) +
        " values do not split into lanes of type " + type.ToString());
  }
  Tensor t(type, static_cast<int64_t>(values.size()) / event);
  if (!values.empty()) {
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
    } else {
      std::memcpy(t.bytes(), values.data(), values.size() * sizeof(T));
    }
  }
  return t;
}

template <typename T>
std::vector<T> Tensor::ToVector() const {
  AB_CHECK(DTypeOf<T>::value == type_.dtype, "Tensor::ToVector: wrong dtype");
  const T* p = data<T>();
  return std::vector<T>(p, p + batch_ * lane_elements_);
}

template <typename Derived>
absl::StatusOr<Tensor> Tensor::FromEigen(const Eigen::MatrixBase<Derived>& m,
                                         std::optional<std::vector<int64_t>> event_shape) {
  using T = typename Derived::Scalar;
  std::vector<int64_t> shape = event_shape ? *event_shape
                               : m.cols() == 1 ? std::vector<int64_t>{}
                                               : std::vector<int64_t>{m.cols()};
  TensorType type{DTypeOf<T>::value, shape};
  if (type.NumElements() != m.cols()) {
    return absl::InvalidArgumentError(
        "Tensor::FromEigen: the matrix has " + std::to_string(m.cols()) +
        " columns but the event type " + type.ToString() + " has " +
        std::to_string(type.NumElements()) + " elements");
  }
  Tensor t(type, m.rows());
  T* out = t.data<T>();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) out[r * m.cols() + c] = m(r, c);
  }
  return t;
}

template <typename T>
Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Tensor::ToEigen() const {
  AB_CHECK(DTypeOf<T>::value == type_.dtype, "Tensor::ToEigen: wrong dtype");
  return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      data<T>(), batch_, lane_elements_);
}

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_TENSOR_H_
