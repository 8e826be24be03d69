// The stack VM's scheduler: which lanes wait at which block, which block
// runs next (CallOptions::block_policy over the block-order contract,
// vm/stack/block_plan.h), and moving lanes between blocks on jumps, calls
// and returns. Choosing the next block costs O(blocks / 64) and moving lanes
// O(lanes moved), never O(batch).
#ifndef AUTOBATCH_VM_STACK_SCHEDULER_H_
#define AUTOBATCH_VM_STACK_SCHEDULER_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "backends/lane_set.h"
#include "vm/options.h"
#include "vm/stack/block_plan.h"
#include "vm/stack/storage.h"

namespace autobatch {

class Scheduler {
 public:
  Scheduler(const BlockPlan& plan, BlockPolicy policy) : plan_(plan), policy_(policy) {}

  // No lane waits anywhere; lanes are numbered [0, batch).
  void Reset(int64_t batch);

  // `lanes`, in increasing order (a LaneSet's indices), now wait at `gid`.
  // A lane waits at one block at a time.
  void MoveLanes(std::span<const int64_t> lanes, int32_t gid);
  // Pops each of `lanes`' return address (storage's program-counter stacks)
  // and moves the lane there; a lane returning from the entry halts.
  void ReturnLanes(const LaneSet& lanes, StackStorage& storage);

  // The block to run next (CallOptions::block_policy), or -1 if no lane
  // waits anywhere.
  int32_t NextBlock() const;
  // Moves the lanes waiting at `gid` into `lanes` (cleared first), in
  // increasing order, and adds one to lane_blocks[lane] for each.
  void Take(int32_t gid, LaneSet* lanes, int64_t* lane_blocks);

 private:
  // The lanes waiting at one block, as a bitset over the batch, so that Take
  // yields them in increasing order without sorting or merging; words
  // [lo, hi) are the only ones that may be nonzero, so Take costs the lanes
  // plus the span of words they occupy.
  struct Waiting {
    std::vector<uint64_t> bits;
    int64_t count = 0;
    size_t lo = std::numeric_limits<size_t>::max();
    size_t hi = 0;
  };
  void MoveLane(int64_t lane, int32_t gid);
  // `count` lanes, whose bits in words [first_word, last_word] are set, now
  // wait at `gid`: its count, span of words and non-empty bit.
  void NoteArrivals(int32_t gid, int64_t count, size_t first_word, size_t last_word);

  const BlockPlan& plan_;
  BlockPolicy policy_;
  int64_t batch_ = 0;
  std::vector<Waiting> waiting_;    // per global block
  std::vector<uint64_t> nonempty_;  // bitset of waiting_ non-empty
};

// The scheduler of compiled programs (vm/fused_blocks.h): the same choice
// of block (the policy over the same waiting counts, so the same schedule
// and profile), but a block's waiting lanes are a list in arrival order, as
// bench/fib_bound's executor by hand keeps them, not a bitset: moving a
// lane is an append, taking a block's lanes a swap of lists. The lanes of a
// block come in no particular order; the runtime sorts them when it runs
// something that wants them in order (CompiledRuntime::RunOp).
class LaneListScheduler {
 public:
  LaneListScheduler(const BlockPlan& plan, BlockPolicy policy) : plan_(plan), policy_(policy) {}

  void Reset(int64_t batch);
  // `count` lanes of `lanes` now wait at `gid`. A lane waits at one block
  // at a time.
  void MoveLanes(const int64_t* lanes, int64_t count, int32_t gid) {
    if (count == 0) return;
    std::vector<int64_t>& list = waiting_[static_cast<size_t>(gid)];
    const size_t old = list.size();
    list.resize(old + static_cast<size_t>(count));
    std::copy(lanes, lanes + count, list.data() + old);
    nonempty_[static_cast<size_t>(gid) >> 6] |= uint64_t{1} << (gid & 63);
  }
  // Pops each lane's return address and moves it there; a lane returning
  // from the entry halts.
  void ReturnLanes(const int64_t* lanes, int64_t count, StackStorage& storage);
  int32_t NextBlock() const;
  // The lanes waiting at `gid`, now in *lanes (whose old contents are
  // dropped); adds one to lane_blocks[lane] for each.
  void Take(int32_t gid, std::vector<int64_t>* lanes, int64_t* lane_blocks);

 private:
  const BlockPlan& plan_;
  BlockPolicy policy_;
  std::vector<std::vector<int64_t>> waiting_;  // per global block, each of capacity batch
  std::vector<uint64_t> nonempty_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_SCHEDULER_H_
