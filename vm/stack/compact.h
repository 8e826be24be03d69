// The stack VM's compact execution: a block run for its lanes alone, on
// contiguous copies of its variables holding just those lanes (epochs say
// which copies are current and which are newer than the storage), in tiles
// of lanes that stay in cache, with copies and selects done storage to
// storage where that saves a gather and a scatter.
#ifndef AUTOBATCH_VM_STACK_COMPACT_H_
#define AUTOBATCH_VM_STACK_COMPACT_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "vm/options.h"
#include "vm/profile.h"
#include "vm/run_support.h"
#include "vm/stack/block_plan.h"
#include "vm/stack/fused_calls.h"
#include "vm/stack/storage.h"

namespace autobatch {

class CompactExecutor {
 public:
  // `budget` is charged for each op run (Budget::ChargeOp), so that a
  // deadline binds inside a heavy block.
  CompactExecutor(const BlockPlan& plan, StackStorage& storage, FusedCalls& fused,
                  Budget& budget, Backend& backend, const KernelRegistry* kernels,
                  const CallOptions& options, Profile& profile)
      : plan_(plan),
        storage_(storage),
        fused_(fused),
        budget_(budget),
        backend_(backend),
        kernels_(kernels),
        options_(options),
        profile_(profile) {}

  // After storage.Allocate: no copies yet (the constants' hold their value
  // in every lane), and each block's tile size for this batch and backend.
  void Reset();

  // Runs block `gid` compact for `lanes`, in tiles of lanes (counted in
  // counters.tiles) unless the block is never tiled (TileLanes) or the lanes
  // fit in one: every op is a function of its lane alone, so running tile
  // by tile gives each lane the bits of running all at once. The storage is
  // current in `lanes` at the end.
  absl::Status Run(int32_t gid, const LaneSet& lanes, BlockCounters& counters);

 private:
  // The lanes of one tile of a block touching `lane_bytes` per lane
  // (CallOptions::tile_bytes), or 0: never tiled (nor is a batch-dependent
  // block).
  int64_t TileLanes(bool batch_dependent, int64_t lane_bytes) const;
  absl::Status RunTile(const Block& block, const Function& fn, int32_t gid,
                       const LaneSet& lanes, bool first_tile);
  absl::Status RunFused(const Block& block, const Function& fn, const FusedSegment& seg,
                        const LaneSet& lanes, bool first_tile);
  absl::Status RunStorageCopy(const PrimOp& op, const Function& fn, const LaneSet& lanes,
                              bool first_tile);
  void RunStorageSelect(const PrimOp& op, const LaneSet& lanes, bool first_tile);
  absl::Status RunPop(const PopOp& op, const Function& fn, const LaneSet& lanes);
  absl::Status RunTapePush(const TapePushOp& op, const TapeSite& site, const LaneSet& lanes);
  absl::Status RunTapePop(const TapePopOp& op, const Function& fn, const TapeSite& site,
                          const LaneSet& lanes);
  // The compact copy of `v` for `lanes`, gathered on first use.
  Tensor* Read(VarId v, const LaneSet& lanes);
  // The compact copy of `v`, about to be overwritten in every running lane.
  Tensor* Write(VarId v, int64_t n);
  // Push for a compact block: the frame pushed must hold the value the
  // block wrote, so an unflushed copy goes to the storage first.
  absl::Status Push(VarId v, const Function& fn, const LaneSet& lanes);
  // Writes the copy of `v` back to its storage; the copy stays valid.
  void Flush(VarId v, const LaneSet& lanes);
  // The storage of `v` changed in the running lanes: its copy is stale.
  void Drop(VarId v) {
    copy_epoch_[v.value] = -1;
    dirty_epoch_[v.value] = -1;
  }

  const BlockPlan& plan_;
  StackStorage& storage_;
  FusedCalls& fused_;
  Budget& budget_;
  Backend& backend_;
  const KernelRegistry* kernels_;
  const CallOptions& options_;
  Profile& profile_;

  std::vector<int64_t> tile_lanes_;  // per global block: TileLanes
  // Per variable, a copy holding the running lanes, valid while
  // copy_epoch_ == epoch_ (one epoch per tile) and newer than the
  // variable's storage while dirty_epoch_ == epoch_.
  std::vector<Tensor> copies_;
  std::vector<int64_t> copy_epoch_;
  std::vector<int64_t> dirty_epoch_;
  std::vector<VarId> written_;  // the copies made dirty this epoch
  int64_t epoch_ = 0;
  LaneSet copy_lanes_;  // every lane of a compact copy (0..n-1)
  LaneSet tile_;        // the lanes of one tile
  std::vector<int64_t> taking_;  // RunStorageSelect's lanes
  std::vector<const Tensor*> in_ptrs_;
  std::vector<Tensor*> out_ptrs_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_COMPACT_H_
