// LaneSet: sorted lane indices plus a byte mask, kept in sync.
#include "backends/lane_set.h"

#include <algorithm>

#include "ir/status.h"

namespace autobatch {

LaneSet LaneSet::All(int64_t batch) {
  LaneSet set(batch);
  set.SetAll();
  return set;
}

LaneSet LaneSet::FromMask(std::span<const uint8_t> mask) {
  LaneSet set(static_cast<int64_t>(mask.size()));
  set.AssignMask(mask);
  return set;
}

LaneSet LaneSet::FromIndices(int64_t batch, std::span<const int64_t> lanes) {
  LaneSet set(batch);
  for (int64_t lane : lanes) {
    AB_CHECK(lane >= 0 && lane < batch, "LaneSet::FromIndices: lane out of range");
    set.mask_[static_cast<size_t>(lane)] = 1;
  }
  set.AssignMask(std::vector<uint8_t>(set.mask_));
  return set;
}

void LaneSet::Reset(int64_t batch) {
  AB_CHECK(batch >= 0, "LaneSet: negative batch");
  indices_.clear();
  indices_.reserve(static_cast<size_t>(batch));
  mask_.assign(static_cast<size_t>(batch), 0);
}

void LaneSet::Clear() {
  // Zeroing the whole mask is one vectorized pass; lane by lane is a
  // scattered store each, cheaper only for a few lanes.
  if (indices_.size() * 8 > mask_.size()) {
    std::fill(mask_.begin(), mask_.end(), uint8_t{0});
  } else {
    for (int64_t lane : indices_) mask_[static_cast<size_t>(lane)] = 0;
  }
  indices_.clear();
}

void LaneSet::SetAll() {
  indices_.resize(mask_.size());
  for (size_t i = 0; i < mask_.size(); ++i) indices_[i] = static_cast<int64_t>(i);
  std::fill(mask_.begin(), mask_.end(), uint8_t{1});
}

void LaneSet::AssignMask(std::span<const uint8_t> mask) {
  AB_CHECK(mask.size() == mask_.size(), "LaneSet::AssignMask: wrong batch");
  indices_.clear();
  for (size_t i = 0; i < mask.size(); ++i) {
    const uint8_t in = mask[i] != 0 ? 1 : 0;
    mask_[i] = in;
    if (in) indices_.push_back(static_cast<int64_t>(i));
  }
}

bool LaneSet::IsConsistent() const {
  int64_t count = 0;
  for (uint8_t m : mask_) {
    if (m > 1) return false;
    count += m;
  }
  if (count != size()) return false;
  for (size_t i = 0; i < indices_.size(); ++i) {
    if (indices_[i] < 0 || indices_[i] >= batch() || !Contains(indices_[i])) return false;
    if (i > 0 && indices_[i] <= indices_[i - 1]) return false;
  }
  return true;
}

}  // namespace autobatch
