// LaneSet: sorted lane indices plus a byte mask, kept in sync.
#include "backends/lane_set.h"

#include <algorithm>
#include <bit>

#include "support/status.h"

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
  set.AssignMask(std::vector<uint8_t>(set.mask_.begin(), set.mask_.end()));
  return set;
}

void LaneSet::Reset(int64_t batch) {
  AB_CHECK(batch >= 0, "LaneSet: negative batch");
  if (this->batch() == batch) {
    Clear();
  } else {
    indices_.clear();
    mask_.assign(static_cast<size_t>(batch), 0);
  }
  indices_.reserve(static_cast<size_t>(batch));
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

void LaneSet::AppendBits(int64_t first_lane, uint64_t bits) {
  AB_DCHECK(bits == 0 || (first_lane >= 0 &&
                          first_lane + 63 - std::countl_zero(bits) < batch() &&
                          (indices_.empty() || first_lane + std::countr_zero(bits) > indices_.back())),
            "LaneSet::AppendBits: lanes must be in range and appended in increasing order");
  const size_t size = indices_.size();
  indices_.resize(size + static_cast<size_t>(std::popcount(bits)));
  int64_t* out = indices_.data() + size;
  uint8_t* mask = mask_.data();
  while (bits != 0) {
    const int64_t lane = first_lane + std::countr_zero(bits);
    bits &= bits - 1;
    *out++ = lane;
    mask[lane] = 1;
  }
}

void LaneSet::Split(const LaneSet& lanes, const uint8_t* cond, LaneSet* if_true,
                    LaneSet* if_false) {
  AB_CHECK(if_true != &lanes && if_false != &lanes && if_true != if_false,
           "LaneSet::Split: outputs must be distinct from the input");
  if_true->Reset(lanes.batch());
  if_false->Reset(lanes.batch());
  const size_t n = lanes.indices_.size();
  // Every lane is written to both lists and counted in one: no branch.
  if_true->indices_.resize(n);
  if_false->indices_.resize(n);
  int64_t* yes = if_true->indices_.data();
  int64_t* no = if_false->indices_.data();
  uint8_t* yes_mask = if_true->mask_.data();
  uint8_t* no_mask = if_false->mask_.data();
  size_t yes_count = 0;
  size_t no_count = 0;
  for (int64_t lane : lanes.indices_) {
    const uint8_t taken = cond[lane] != 0 ? 1 : 0;
    yes[yes_count] = lane;
    no[no_count] = lane;
    yes_mask[lane] = taken;
    no_mask[lane] = taken ^ 1;
    yes_count += taken;
    no_count += taken ^ 1;
  }
  if_true->indices_.resize(yes_count);
  if_false->indices_.resize(no_count);
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
