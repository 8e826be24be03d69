// Byte copies, and byte-level gather and scatter of lanes, shared by Tensor and the backends.
#ifndef AUTOBATCH_BACKENDS_LANE_COPY_H_
#define AUTOBATCH_BACKENDS_LANE_COPY_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace autobatch {

// memcpy of `bytes` bytes that allows bytes == 0 with null pointers: a tensor
// with no bytes (no lanes, or a zero-element event shape such as f64[0]) has
// null storage, and memcpy's pointers must not be null even for no bytes.
inline void CopyBytes(std::byte* dst, const std::byte* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
}

// dst lane i = src lane lanes[i], for every i (lanes of lane_bytes bytes).
inline void GatherLaneBytes(const std::byte* src, std::byte* dst, int64_t lane_bytes,
                            std::span<const int64_t> lanes) {
  if (lane_bytes == 0) return;  // src or dst may be null
  if (lane_bytes == 8) {
    const uint64_t* s = reinterpret_cast<const uint64_t*>(src);
    uint64_t* d = reinterpret_cast<uint64_t*>(dst);
    for (size_t i = 0; i < lanes.size(); ++i) d[i] = s[lanes[i]];
    return;
  }
  for (size_t i = 0; i < lanes.size(); ++i) {
    std::memcpy(dst + static_cast<int64_t>(i) * lane_bytes, src + lanes[i] * lane_bytes,
                static_cast<size_t>(lane_bytes));
  }
}

// dst lane lanes[i] = src lane i, for every i: the inverse of GatherLaneBytes.
inline void ScatterLaneBytes(const std::byte* src, std::byte* dst, int64_t lane_bytes,
                             std::span<const int64_t> lanes) {
  if (lane_bytes == 0) return;  // src or dst may be null
  if (lane_bytes == 8) {
    const uint64_t* s = reinterpret_cast<const uint64_t*>(src);
    uint64_t* d = reinterpret_cast<uint64_t*>(dst);
    for (size_t i = 0; i < lanes.size(); ++i) d[lanes[i]] = s[i];
    return;
  }
  for (size_t i = 0; i < lanes.size(); ++i) {
    std::memcpy(dst + lanes[i] * lane_bytes, src + static_cast<int64_t>(i) * lane_bytes,
                static_cast<size_t>(lane_bytes));
  }
}

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_LANE_COPY_H_
