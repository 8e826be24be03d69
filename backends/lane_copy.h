// Byte copies, and byte-level gather, scatter and masked copies of lanes,
// shared by Tensor and the backends.
#ifndef AUTOBATCH_BACKENDS_LANE_COPY_H_
#define AUTOBATCH_BACKENDS_LANE_COPY_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace autobatch {

// memcpy of `bytes` bytes that allows bytes == 0 with null pointers: a tensor
// with no bytes (no lanes, or a zero-element event shape such as f64[0]) has
// null storage, and memcpy's pointers must not be null even for no bytes.
inline void CopyBytes(std::byte* dst, const std::byte* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
}

// Calls body(copy_lane) once, where copy_lane(dst, src) copies one lane of
// lane_bytes bytes (nothing for 0, where the pointers may be null). The size is dispatched here, outside body's loop over
// lanes: the common sizes get a fixed-size copy that compiles to a few moves,
// other multiples of 8 a word loop, so no lane pays a memcpy call (which
// dominated pushes, pops, gathers and scatters of small vectors).
template <typename Body>
inline void WithLaneCopy(int64_t lane_bytes, Body&& body) {
  auto fixed = [&](auto size) {
    body([](std::byte* dst, const std::byte* src) {
      std::memcpy(dst, src, decltype(size)::value);
    });
  };
  switch (lane_bytes) {
    case 0: return body([](std::byte*, const std::byte*) {});
    case 1: return fixed(std::integral_constant<size_t, 1>{});
    case 2: return fixed(std::integral_constant<size_t, 2>{});
    case 4: return fixed(std::integral_constant<size_t, 4>{});
    case 8: return fixed(std::integral_constant<size_t, 8>{});
    case 16: return fixed(std::integral_constant<size_t, 16>{});
    case 32: return fixed(std::integral_constant<size_t, 32>{});
    default: break;
  }
  const size_t bytes = static_cast<size_t>(lane_bytes);
  if (bytes % 8 == 0) {
    body([words = bytes / 8](std::byte* dst, const std::byte* src) {
      for (size_t w = 0; w < words; ++w) std::memcpy(dst + 8 * w, src + 8 * w, 8);
    });
  } else {
    body([bytes](std::byte* dst, const std::byte* src) { std::memcpy(dst, src, bytes); });
  }
}

// dst lane i = src lane lanes[i], for every i (lanes of lane_bytes bytes).
inline void GatherLaneBytes(const std::byte* src, std::byte* dst, int64_t lane_bytes,
                            std::span<const int64_t> lanes) {
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    for (size_t i = 0; i < lanes.size(); ++i) {
      copy_lane(dst + static_cast<int64_t>(i) * lane_bytes, src + lanes[i] * lane_bytes);
    }
  });
}

// dst lane lanes[i] = src lane i, for every i: the inverse of GatherLaneBytes.
inline void ScatterLaneBytes(const std::byte* src, std::byte* dst, int64_t lane_bytes,
                             std::span<const int64_t> lanes) {
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    for (size_t i = 0; i < lanes.size(); ++i) {
      copy_lane(dst + lanes[i] * lane_bytes, src + static_cast<int64_t>(i) * lane_bytes);
    }
  });
}

// Calls f(i) for every i in [begin, end) with mask[i] != 0, in increasing
// order. The mask is read eight bytes at a time and only the set bytes are
// visited: a branch per lane on a mask with no pattern mispredicts about half
// the time.
template <typename F>
inline void ForEachMaskedLane(const uint8_t* mask, int64_t begin, int64_t end, F&& f) {
  static_assert(std::endian::native == std::endian::little,
                "mask byte k is bits 8k.. of the word read");
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    uint64_t word;
    std::memcpy(&word, mask + i, 8);
    // The high bit of each byte that is nonzero (exact for any byte).
    uint64_t set = (((word & kLow7) + kLow7) | word) & kHigh;
    while (set != 0) {
      f(i + std::countr_zero(set) / 8);
      set &= set - 1;
    }
  }
  for (; i < end; ++i) {
    if (mask[i] != 0) f(i);
  }
}

// dst lane i = src lane i for the lanes i in [begin, end) with mask[i] != 0
// (src and dst batch-lane byte arrays, mask one byte per lane). Scalar lanes
// blend over the whole range, which vectorizes; wider lanes copy lane by lane,
// only the lanes in the mask.
inline void MaskedCopyLaneBytes(const std::byte* src, std::byte* dst, int64_t lane_bytes,
                                const uint8_t* mask, int64_t begin, int64_t end) {
  auto blend = [&](auto zero) {
    using W = decltype(zero);
    const W* s = reinterpret_cast<const W*>(src);
    W* d = reinterpret_cast<W*>(dst);
    for (int64_t i = begin; i < end; ++i) d[i] = mask[i] != 0 ? s[i] : d[i];
  };
  if (lane_bytes == 8) return blend(uint64_t{});
  if (lane_bytes == 4) return blend(uint32_t{});
  if (lane_bytes == 1) return blend(uint8_t{});
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    ForEachMaskedLane(mask, begin, end, [&](int64_t lane) {
      copy_lane(dst + lane * lane_bytes, src + lane * lane_bytes);
    });
  });
}

// dst lane i = (cond[i] != 0 ? a : b) lane i for the lanes i in [begin, end)
// with mask[i] != 0: the select primitive with one condition per lane,
// written straight into the running lanes of dst. dst may be a or b (the
// lane is then left as it is where it would be copied onto itself).
inline void MaskedSelectLaneBytes(const uint8_t* cond, const std::byte* a, const std::byte* b,
                                  std::byte* dst, int64_t lane_bytes, const uint8_t* mask,
                                  int64_t begin, int64_t end) {
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    ForEachMaskedLane(mask, begin, end, [&](int64_t lane) {
      const std::byte* src = (cond[lane] != 0 ? a : b) + lane * lane_bytes;
      std::byte* to = dst + lane * lane_bytes;
      if (src != to) copy_lane(to, src);
    });
  });
}

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_LANE_COPY_H_
