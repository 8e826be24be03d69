// LaneSet: the lanes of a batch a block runs for.
#ifndef AUTOBATCH_BACKENDS_LANE_SET_H_
#define AUTOBATCH_BACKENDS_LANE_SET_H_

#include <bit>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <span>
#include <vector>

#include "support/memory.h"
#include "support/status.h"

namespace autobatch {

// The run's counting allocator (support/memory.h), except that
// value-initialization (vector::resize) leaves trivial elements
// uninitialized: LaneSet resizes its indices to what it is about to write,
// and zeroing them first was a pass of its own.
template <typename T>
struct DefaultInitAllocator : CountedAllocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) {}  // NOLINT: rebinding
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A set of lanes of a batch of `batch()` lanes, held in two forms that are
// always kept in sync, because each execution mode wants one of them:
//   indices(): the lanes in increasing order (compact mode gathers them; the
//              VM iterates them), and
//   mask():    batch() bytes, mask()[l] = 1 iff lane l is in the set (dense
//              mode blends with it; user kernels receive it as `active`).
// Membership is O(1), iteration O(size()), clearing O(size()). A LaneSet keeps
// its capacity: after Reset(batch) no operation allocates, so a VM can reuse
// its sets every step without touching the heap.
class LaneSet {
 public:
  LaneSet() = default;
  explicit LaneSet(int64_t batch) { Reset(batch); }  // empty

  static LaneSet All(int64_t batch);
  // The lanes l with mask[l] != 0; batch = mask.size().
  static LaneSet FromMask(std::span<const uint8_t> mask);
  // `lanes` in any order, duplicates allowed; each in [0, batch).
  static LaneSet FromIndices(int64_t batch, std::span<const int64_t> lanes);

  // Makes this the empty set over `batch` lanes: O(size()) when the batch
  // is unchanged (Clear), without allocating once it has been this batch.
  void Reset(int64_t batch);
  // Removes every lane (batch unchanged).
  void Clear();
  // Adds every lane.
  void SetAll();
  // Appends `lane`, which must be greater than every lane in the set (the
  // cheap way to build a set in a scan over the batch).
  void Append(int64_t lane) {
    AB_DCHECK(lane >= 0 && lane < batch() &&
                  (indices_.empty() || lane > indices_.back()),
              "LaneSet::Append: lanes must be appended in increasing order");
    mask_[static_cast<size_t>(lane)] = 1;
    indices_.push_back(lane);
  }
  // Appends first_lane + k for every set bit k of `bits`, in increasing
  // order; all must be greater than every lane in the set. Append for a word
  // of a bitset, with the end of the indices in a register: a loop of
  // Append reloads it after every mask store (a byte store may alias it).
  void AppendBits(int64_t first_lane, uint64_t bits);
  // Replaces the contents with the lanes where mask[l] != 0 (mask.size() ==
  // batch()).
  void AssignMask(std::span<const uint8_t> mask);
  // *if_true = the lanes l of `lanes` with cond[l] != 0, *if_false = the
  // others (cond has one byte per lane of the batch). Branch-free: the
  // conditions of a batch's lanes are as good as random to the predictor.
  static void Split(const LaneSet& lanes, const uint8_t* cond, LaneSet* if_true,
                    LaneSet* if_false);

  int64_t batch() const { return static_cast<int64_t>(mask_.size()); }
  int64_t size() const { return static_cast<int64_t>(indices_.size()); }
  bool empty() const { return indices_.empty(); }
  bool full() const { return size() == batch(); }
  // Whether visiting the lanes by index beats a pass over the whole mask
  // (fewer than one lane in 8): the backends' choice for masked copies.
  bool sparse() const { return size() * 8 < batch(); }
  bool Contains(int64_t lane) const { return mask_[static_cast<size_t>(lane)] != 0; }
  std::span<const int64_t> indices() const { return indices_; }
  std::span<const uint8_t> mask() const { return mask_; }

  // Checks that indices and mask agree (for tests and debug checks).
  bool IsConsistent() const;

  friend bool operator==(const LaneSet& a, const LaneSet& b) {
    return a.indices_ == b.indices_ && a.mask_.size() == b.mask_.size();
  }

 private:
  std::vector<int64_t, DefaultInitAllocator<int64_t>> indices_;
  std::vector<uint8_t, CountedAllocator<uint8_t>> mask_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_LANE_SET_H_
