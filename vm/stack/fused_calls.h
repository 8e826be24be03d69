// The stack VM's fused segments (vm/fused_blocks.h): which segment starts at
// which op of each block, and the call of one on the arguments gathered.
#ifndef AUTOBATCH_VM_STACK_FUSED_CALLS_H_
#define AUTOBATCH_VM_STACK_FUSED_CALLS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "vm/fused_blocks.h"
#include "vm/profile.h"
#include "vm/stack/block_plan.h"

namespace autobatch {

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
  // first op, which is one; `new_execution` as RunCountedOp's).
  void Call(const Block& block, const FusedSegment& seg, int64_t n, bool new_execution,
            Profile& profile) const;

 private:
  std::vector<std::vector<const FusedSegment*>> at_;  // per global block
  std::vector<const std::byte*> in_;
  std::vector<const int64_t*> in_lanes_;
  std::vector<std::byte*> out_;
  std::vector<const int64_t*> out_lanes_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_FUSED_CALLS_H_
