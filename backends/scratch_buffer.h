// ScratchBuffer: a reusable, 64-byte aligned byte buffer that only grows.
#ifndef AUTOBATCH_BACKENDS_SCRATCH_BUFFER_H_
#define AUTOBATCH_BACKENDS_SCRATCH_BUFFER_H_

#include <cstddef>
#include <memory>
#include <new>

#include "support/memory.h"

namespace autobatch {

// Backends keep one per operand slot so that running an op allocates only
// until the buffers have reached their working size.
class ScratchBuffer {
 public:
  static constexpr std::size_t kAlignment = kMemoryAlignment;

  // At least `bytes` bytes, 64-byte aligned; contents are unspecified (not
  // preserved across growth). Valid until the next call.
  std::byte* Get(std::size_t bytes) {
    if (bytes == 0) bytes = 1;  // never null: memcpy(nullptr, ..., 0) is UB
    if (bytes > capacity_) {
      std::size_t capacity = capacity_ * 2 > bytes ? capacity_ * 2 : bytes;
      // Freed first: the old buffer's bytes count against the run's budget.
      data_.reset();
      capacity_ = 0;
      data_.reset(static_cast<std::byte*>(AllocateCounted(capacity)));
      capacity_ = capacity;
    }
    return data_.get();
  }
  std::size_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { FreeCounted(p); }
  };
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t capacity_ = 0;
};

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_SCRATCH_BUFFER_H_
