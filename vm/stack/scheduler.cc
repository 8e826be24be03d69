// The stack VM's scheduler: waiting sets, block choice, lane moves and returns.
#include "vm/stack/scheduler.h"

#include <algorithm>
#include <array>
#include <bit>

#include "support/status.h"

namespace autobatch {

void Scheduler::Reset(int64_t batch) {
  batch_ = batch;
  waiting_.assign(static_cast<size_t>(plan_.num_blocks()), {});
  for (Waiting& w : waiting_) w.bits.assign((static_cast<size_t>(batch_) + 63) / 64, 0);
  nonempty_.assign((waiting_.size() + 63) / 64, 0);
}

void Scheduler::MoveLane(int64_t lane, int32_t gid) {
  Waiting& w = waiting_[gid];
  const size_t word = static_cast<size_t>(lane) >> 6;
  const uint64_t bit = uint64_t{1} << (lane & 63);
  AB_DCHECK((w.bits[word] & bit) == 0, "a lane waits at one block at a time");
  w.bits[word] |= bit;
  NoteArrivals(gid, 1, word, word);
}

void Scheduler::NoteArrivals(int32_t gid, int64_t count, size_t first_word, size_t last_word) {
  Waiting& w = waiting_[gid];
  w.count += count;
  w.lo = std::min(w.lo, first_word);
  w.hi = std::max(w.hi, last_word + 1);
  nonempty_[gid >> 6] |= uint64_t{1} << (gid & 63);
}

void Scheduler::MoveLanes(std::span<const int64_t> lanes, int32_t gid) {
  if (lanes.empty()) return;
  Waiting& w = waiting_[gid];
  // A word's bits are gathered in a register and stored once: an OR into
  // memory per lane waits on the store of the lane before it.
  uint64_t* const bits = w.bits.data();
  size_t word = static_cast<size_t>(lanes.front()) >> 6;
  uint64_t gathered = 0;
  for (int64_t lane : lanes) {
    AB_DCHECK((bits[static_cast<size_t>(lane) >> 6] & (uint64_t{1} << (lane & 63))) == 0,
              "a lane waits at one block at a time");
    if ((static_cast<size_t>(lane) >> 6) != word) {
      bits[word] |= gathered;
      word = static_cast<size_t>(lane) >> 6;
      gathered = 0;
    }
    gathered |= uint64_t{1} << (lane & 63);
  }
  bits[word] |= gathered;
  NoteArrivals(gid, static_cast<int64_t>(lanes.size()), static_cast<size_t>(lanes.front()) >> 6,
               word);
}

void Scheduler::Take(int32_t gid, LaneSet* lanes, int64_t* lane_blocks) {
  Waiting& w = waiting_[gid];
  lanes->Clear();
  for (size_t word = w.lo; word < w.hi; ++word) {
    const uint64_t bits = w.bits[word];
    if (bits == 0) continue;
    w.bits[word] = 0;
    const auto first = static_cast<int64_t>(word * 64);
    lanes->AppendBits(first, bits);
    // Each lane's count of blocks, a word of lanes at a time: a vector add
    // of the bits, where an increment per lane waited on the stores before
    // it (a fifth of fibonacci's Step).
    int64_t* counts = lane_blocks + first;
    const int64_t n = std::min<int64_t>(64, batch_ - first);
    for (int64_t k = 0; k < n; ++k) counts[k] += static_cast<int64_t>((bits >> k) & 1);
  }
  AB_DCHECK(lanes->size() == w.count);
  w.count = 0;
  w.lo = std::numeric_limits<size_t>::max();
  w.hi = 0;
  nonempty_[gid >> 6] &= ~(uint64_t{1} << (gid & 63));
}

namespace {

// The block to run next among those marked in `nonempty` (both schedulers'
// rule); count(g) is the number of lanes waiting at g.
template <typename Count>
int32_t ChooseBlock(BlockPolicy policy, const BlockPlan& plan,
                    const std::vector<uint64_t>& nonempty, Count count) {
  if (policy == BlockPolicy::kMostLanes) {
    // Fullest block first; blocks with an expensive kernel only when no
    // other block has lanes, so that they run for every lane that can reach
    // them (as the block-order contract arranges for kLowestIndex).
    int32_t best = -1;
    for (size_t w = 0; w < nonempty.size(); ++w) {
      for (uint64_t bits = nonempty[w]; bits != 0; bits &= bits - 1) {
        const int32_t g = static_cast<int32_t>(w * 64 + std::countr_zero(bits));
        const bool heavy_best = best >= 0 && plan.block(best).heavy;
        const bool heavy_g = plan.block(g).heavy;
        if (best < 0 || (heavy_best && !heavy_g) ||
            (heavy_best == heavy_g && count(g) > count(best))) {
          best = g;
        }
      }
    }
    return best;
  }
  for (size_t w = 0; w < nonempty.size(); ++w) {
    if (nonempty[w] != 0) return static_cast<int32_t>(w * 64 + std::countr_zero(nonempty[w]));
  }
  return -1;
}

}  // namespace

int32_t Scheduler::NextBlock() const {
  return ChooseBlock(policy_, plan_, nonempty_, [&](int32_t g) { return waiting_[g].count; });
}

void LaneListScheduler::Reset(int64_t batch) {
  waiting_.resize(static_cast<size_t>(plan_.num_blocks()));
  for (std::vector<int64_t>& list : waiting_) {
    list.clear();
    list.reserve(static_cast<size_t>(batch));
  }
  nonempty_.assign((waiting_.size() + 63) / 64, 0);
}

int32_t LaneListScheduler::NextBlock() const {
  return ChooseBlock(policy_, plan_, nonempty_, [&](int32_t g) {
    return static_cast<int64_t>(waiting_[static_cast<size_t>(g)].size());
  });
}

void LaneListScheduler::Take(int32_t gid, std::vector<int64_t>* lanes, int64_t* lane_blocks) {
  std::vector<int64_t>& list = waiting_[static_cast<size_t>(gid)];
  lanes->swap(list);
  list.clear();  // keeps the capacity *lanes had
  for (int64_t lane : *lanes) ++lane_blocks[lane];
  nonempty_[static_cast<size_t>(gid) >> 6] &= ~(uint64_t{1} << (gid & 63));
}

void LaneListScheduler::ReturnLanes(const int64_t* lanes, int64_t count, StackStorage& storage) {
  // The lanes return to a few blocks: the last target's list is kept at
  // hand.
  int32_t last_gid = -1;
  std::vector<int64_t>* last = nullptr;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t lane = lanes[k];
    const int32_t gid = storage.PopReturn(lane);
    if (gid < 0) continue;
    if (gid != last_gid) {
      last_gid = gid;
      last = &waiting_[static_cast<size_t>(gid)];
      nonempty_[static_cast<size_t>(gid) >> 6] |= uint64_t{1} << (gid & 63);
    }
    last->push_back(lane);
  }
}

// The lanes return to a few blocks, the continuations of the calls, whose
// waiting-set bookkeeping (count, span of words) is kept in locals during
// the loop and written once: MoveLane's read-modify-writes of it for every
// lane stalled on store forwarding, a third of the time fibonacci spent in
// Step.
void Scheduler::ReturnLanes(const LaneSet& lanes, StackStorage& storage) {
  struct Target {
    int32_t gid;
    uint64_t* bits;
    int64_t count;
    size_t first_word;
    size_t last_word;   // the word `gathered` belongs to
    uint64_t gathered;  // its bits not yet stored (see MoveLanes)
  };
  constexpr int kTargets = 4;  // more go through MoveLane
  std::array<Target, kTargets> targets;
  int used = 0;
  for (int64_t lane : lanes.indices()) {
    const int32_t gid = storage.PopReturn(lane);
    if (gid < 0) continue;
    const size_t word = static_cast<size_t>(lane) >> 6;
    int t = 0;
    while (t < used && targets[t].gid != gid) ++t;
    if (t == used) {
      if (used == kTargets) {
        MoveLane(lane, gid);
        continue;
      }
      targets[used++] = {gid, waiting_[gid].bits.data(), 0, word, word, 0};
    }
    Target& target = targets[t];
    AB_DCHECK((target.bits[word] & (uint64_t{1} << (lane & 63))) == 0,
              "a lane waits at one block at a time");
    if (word != target.last_word) {
      target.bits[target.last_word] |= target.gathered;
      target.last_word = word;
      target.gathered = 0;
    }
    target.gathered |= uint64_t{1} << (lane & 63);
    ++target.count;
  }
  for (int t = 0; t < used; ++t) {
    const Target& target = targets[t];
    target.bits[target.last_word] |= target.gathered;
    NoteArrivals(target.gid, target.count, target.first_word, target.last_word);
  }
}

}  // namespace autobatch
