// The stack VM's fused segments (vm/fused_blocks.h): which segment starts at
// which op of each block, and the call of one on the arguments gathered.
#ifndef AUTOBATCH_VM_STACK_FUSED_CALLS_H_
#define AUTOBATCH_VM_STACK_FUSED_CALLS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "ir/ir.h"
#include "vm/fused_blocks.h"
#include "vm/profile.h"
#include "vm/run_support.h"
#include "vm/stack/block_plan.h"

namespace autobatch {

// The Budget work (vm/run_support.h) of a call of `seg` for `n` lanes whose
// inputs and outputs are `lane_bytes` per lane: each op of the segment
// charged as if it touched all of them.
inline int64_t FusedSegmentWork(const FusedSegment& seg, int64_t n, int64_t lane_bytes) {
  return (seg.end_op - seg.first_op) * (Budget::kOpWork + n * lane_bytes);
}

class FusedCalls {
 public:
  // Indexes `fused`'s segments (null: none; checked by CheckFusedProgram).
  void Reset(const BlockPlan& plan, const FusedProgram* fused);

  // The fused segment starting at each op of block `gid` (null where none
  // starts), or an empty vector if the block has none.
  const std::vector<const FusedSegment*>& at(int32_t gid) const { return at_[gid]; }

  // A call's arguments, in the segment's input and output order.
  void ClearArgs();
  void AddInput(const std::byte* data, const int64_t* lanes);
  void AddOutput(std::byte* data, const int64_t* lanes);
  // Calls `seg` of `block` for `n` lanes on the arguments added, counting
  // each of its primitives in `profile` (the segment's time goes to its
  // first op, which is one; `new_execution` as RunCountedOp's). With a
  // deadline, the lanes go in chunks of about Budget::kClockWork of work
  // each (FusedSegmentWork), each charged to `budget`, so that a deadline
  // binds inside a long segment: OK, or DeadlineExceeded with the lanes
  // after the chunk not run. Lanes are independent in a segment
  // (codegen/codegen.h), so chunks give the bits of one call.
  absl::Status Call(const Block& block, const FusedSegment& seg, int64_t n, bool new_execution,
                    Profile& profile, Budget& budget) const;

 private:
  // Bytes per lane of the segment's inputs and outputs.
  int64_t SegmentLaneBytes(const FusedSegment& seg) const;

  const BlockPlan* plan_ = nullptr;
  std::vector<std::vector<const FusedSegment*>> at_;  // per global block
  std::vector<const std::byte*> in_;
  std::vector<const int64_t*> in_lanes_;
  std::vector<std::byte*> out_;
  std::vector<const int64_t*> out_lanes_;
  // The lanes of the chunk being run: in_lanes_ and out_lanes_ advanced.
  mutable std::vector<const int64_t*> chunk_in_lanes_;
  mutable std::vector<const int64_t*> chunk_out_lanes_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_FUSED_CALLS_H_
