// The stack VM's storage: every variable's values over the batch, the Full
// variables' stacks (LaneStacks or frame stacks), the program counters'
// stacks, and the memory limits on them with their errors.
//
// Register, Temporary and Null variables are one Tensor each. A Full
// variable is a LaneStack (a contiguous top, pushed into saved frames), or,
// from CallOptions::frame_stack_min_lane_bytes per lane, a frame stack:
// every frame in `saved`, lane l's frame f at lane f * batch + l, its
// current value the frame at the lane's depth. A push makes the next frame
// current (the op that pushed writes it), a pop the one below: neither
// copies a value, where a separate top is copied into a frame on a push and
// back on a pop (for f64[100] values, 15% of NUTS's time on AR(1)); but
// every read and write goes through the lanes' depths.
//
// Tapes (ir/ir.h, "Tapes") are LaneTapes (vm/tapes.h): per-lane stacks
// that only tape ops move, read from and written to the variables' current
// values here.
//
// Limits (each a ResourceExhausted naming it and what to do): a stack holds
// at most StackDepthLimit frames: max_stack_depth, no more than
// max_value_bytes for its frames over the batch, no more than
// max_stack_bytes for a frame of every stack over the batch, and what an
// int32 depth counts.
#ifndef AUTOBATCH_VM_STACK_STORAGE_H_
#define AUTOBATCH_VM_STACK_STORAGE_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "support/status.h"
#include "vm/fused_blocks.h"
#include "vm/options.h"
#include "vm/stack/block_plan.h"
#include "vm/tapes.h"

namespace autobatch {

class StackStorage {
 public:
  StackStorage(const BlockPlan& plan, Backend& backend, const CallOptions& options)
      : plan_(plan), module_(plan.module()), backend_(backend), options_(options) {}

  // Before anything is allocated: ResourceExhausted if the stacks' first
  // frames (kInitialFrames of every stack over `batch` lanes) pass
  // max_stack_bytes.
  absl::Status CheckStackBytes(int64_t batch) const;

  // Allocates every variable and stack for `batch` lanes, then fills the
  // plan's constant temporaries (VarFacts::constant_writer) for every lane:
  // those whose fill succeeds are constant() and their ops are skipped (a
  // bad literal keeps failing where the op runs).
  void Allocate(int64_t batch, const KernelRegistry* kernels);

  int64_t batch() const { return batch_; }
  const LaneSet& all_lanes() const { return all_lanes_; }
  // 0, 1, ..., n - 1 (n <= batch).
  std::span<const int64_t> Iota(int64_t n) const {
    return std::span<const int64_t>(iota_).first(static_cast<size_t>(n));
  }

  // Whether `v` is a constant temporary, filled for every lane by Allocate.
  bool constant(VarId v) const { return constant_[v.value]; }
  // Whether `op` only refills a constant temporary.
  bool SkipsOp(const PrimOp& op) const {
    return op.outputs.size() == 1 && constant_[op.outputs[0].value];
  }
  // Whether `v` is uniform: one Tensor::Uniform lane for the whole batch.
  bool uniform(VarId v) const { return module_.var(v).uniform; }
  // Bytes of every variable's storage (values, stack tops and saved frames).
  int64_t StorageBytes() const;
  // Whether `v` is a Full variable kept as a frame stack.
  bool frame_stack(VarId v) const { return frame_stack_[v.value]; }

  // The contiguous storage of `v`: its value, or its stack's top. Not for
  // frame stacks (DenseRead, Gather, Scatter).
  Tensor* Contiguous(VarId v) {
    AB_DCHECK(!frame_stack_[v.value]);
    return module_.var(v).storage == StorageClass::kFull ? &stacks_[v.value].top
                                                         : &values_[v.value];
  }

  // Where a compiled program finds `v` (vm/fused_blocks.h): valid until the
  // next push of `v`.
  CompiledVar Compiled(VarId v) {
    CompiledVar out;
    if (module_.var(v).storage == StorageClass::kFull) {
      LaneStack& stack = stacks_[v.value];
      const int64_t frames = stack.saved.batch() / std::max<int64_t>(batch_, 1);
      out.stack_depth = stack.depth.data();
      out.frames = frames;
      out.depth_limit = depth_limit_[v.value];
      if (frame_stack_[v.value]) {
        out.data = stack.saved.bytes();
        out.depth = stack.depth.data();
        return out;
      }
      out.saved = stack.saved.bytes();
    }
    out.data = Contiguous(v)->bytes();
    return out;
  }
  // The same for the program counters' stacks.
  CompiledReturns CompiledPcs() {
    return {pc_depth_.data(), pc_saved_.data(),
            static_cast<int64_t>(pc_saved_.size()) / std::max<int64_t>(batch_, 1),
            pc_depth_limit_};
  }

  // `v` over the whole batch, contiguous, current in `lanes` (the other
  // lanes of a frame stack's top buffer hold old values: junk, as inactive
  // lanes may).
  Tensor* DenseRead(VarId v, const LaneSet& lanes) {
    if (!frame_stack_[v.value]) return Contiguous(v);
    LaneStack& stack = stacks_[v.value];
    backend_.CopyLanes(stack.saved, FrameLanes(v, lanes.indices(), 0), &stack.top,
                       lanes.indices());
    return &stack.top;
  }
  // Where a dense op writes `v` over the whole batch: a frame stack's top
  // buffer (then CommitDense), else Contiguous.
  Tensor* DenseWrite(VarId v) {
    return frame_stack_[v.value] ? &stacks_[v.value].top : Contiguous(v);
  }
  // After a dense op wrote DenseWrite(v): a frame stack's `lanes` go from
  // its top buffer to their current frames.
  void CommitDense(VarId v, const LaneSet& lanes) {
    if (!frame_stack_[v.value]) return;
    backend_.CopyLanes(stacks_[v.value].top, lanes.indices(), &stacks_[v.value].saved,
                       FrameLanes(v, lanes.indices(), 0));
  }
  // Lane i of `src` into the current frame of lane lanes[i] of `v` (a frame
  // stack).
  void WriteFrames(const Tensor& src, std::span<const int64_t> lanes, VarId v) {
    backend_.CopyLanes(src, Iota(static_cast<int64_t>(lanes.size())), &stacks_[v.value].saved,
                       FrameLanes(v, lanes, 0));
  }
  // dst lane i = `v` in lane lanes.indices()[i] (Backend::Gather).
  void Gather(VarId v, const LaneSet& lanes, Tensor* dst) {
    if (!frame_stack_[v.value]) return backend_.Gather(*Contiguous(v), lanes, dst);
    backend_.CopyLanes(stacks_[v.value].saved, FrameLanes(v, lanes.indices(), 0), dst,
                       Iota(lanes.size()));
  }
  // `v` in lane lanes.indices()[i] = src lane i (Backend::Scatter).
  void Scatter(const Tensor& src, const LaneSet& lanes, VarId v) {
    if (!frame_stack_[v.value]) return backend_.Scatter(src, lanes, Contiguous(v));
    WriteFrames(src, lanes.indices(), v);
  }
  // `dst` = `src` in `lanes`, storage to storage: each variable's current
  // value, its storage or (a frame stack) its current frame.
  void CopyCurrentLanes(VarId src, std::span<const int64_t> lanes, VarId dst);

  // Pushes a frame of Full variable `v` for `lanes`; ResourceExhausted past
  // its StackDepthLimit, naming `fn`, the variable and the limit that binds.
  absl::Status Push(VarId v, const Function& fn, const LaneSet& lanes);
  // Pops a frame of each Full variable of `op` for `lanes`;
  // FailedPrecondition for an empty stack (a lowered program that breaks
  // the stack discipline, which the verifier does not check).
  absl::Status Pop(const PopOp& op, const Function& fn, const LaneSet& lanes);

  // The program counters' stacks: pushes `return_gid` for every lane of
  // `lanes` about to call `callee` from `caller`; ResourceExhausted past
  // their depth limit (naming the lane and both functions).
  absl::Status PushReturns(const LaneSet& lanes, int32_t return_gid, const Function& callee,
                           const Function& caller);
  // Pops `lane`'s return address, or -1 if its stack is empty (a return
  // from the entry).
  int32_t PopReturn(int64_t lane) {
    int32_t& depth = pc_depth_[static_cast<size_t>(lane)];
    if (depth == 0) return -1;
    --depth;
    return pc_saved_[static_cast<size_t>(depth) * batch_ + lane];
  }

  // Pushes the current value of op.value in `lanes` on op.tape.
  absl::Status TapePush(const TapePushOp& op, const TapeSite& site, const LaneSet& lanes);
  // Pops op.tape in `lanes` into the current value of op.result (for a Full
  // result, the caller pushed its frame first).
  absl::Status TapePop(const TapePopOp& op, const TapeSite& site, const LaneSet& lanes);
  LaneTapes& tapes() { return tapes_; }

  // The stacks start with up to this many frames each.
  static constexpr int64_t kInitialFrames = 5;

 private:
  // The frame lanes of frame stack `v` for `lanes`, in `slot` (0 or 1: two
  // may be in use at once).
  std::span<const int64_t> FrameLanes(VarId v, std::span<const int64_t> lanes, int slot) {
    const int32_t* depth = stacks_[v.value].depth.data();
    std::vector<int64_t>& out = frame_lanes_[slot];
    out.resize(lanes.size());
    for (size_t i = 0; i < lanes.size(); ++i) out[i] = depth[lanes[i]] * batch_ + lanes[i];
    return out;
  }
  absl::Status PushFrames(VarId v, const LaneSet& lanes);
  absl::Status PopFrames(VarId v, const LaneSet& lanes);
  void HoistConstants(const KernelRegistry* kernels);

  int64_t StackDepthLimit(int64_t lane_bytes) const;
  int64_t DepthByValueBytes(int64_t lane_bytes) const;
  int64_t DepthByStackBytes() const;
  // Why a stack of that limit overflowed, and what to do.
  std::string OverflowReason(int64_t limit, int64_t lane_bytes) const;

  const BlockPlan& plan_;
  const Module& module_;
  Backend& backend_;
  const CallOptions& options_;

  int64_t batch_ = 0;
  LaneSet all_lanes_;
  std::vector<Tensor> values_;     // non-Full variables
  std::vector<LaneStack> stacks_;  // Full variables
  std::vector<bool> frame_stack_;  // per variable: a Full one kept as a frame stack
  std::vector<bool> constant_;     // per variable: a constant temporary, filled
  // The frames each Full variable's stack may hold (StackDepthLimit).
  std::vector<int64_t> depth_limit_;
  // The program counters' stacks, frame-major like a LaneStack's saved
  // frames: lane l's return addresses are pc_saved_[f * batch_ + l] for
  // f < pc_depth_[l], the last one on top. (One vector per lane cost a
  // pointer chase and a capacity check per lane and call.)
  CountedVector<int32_t> pc_depth_;
  CountedVector<int32_t> pc_saved_;
  int64_t pc_depth_limit_ = 0;
  LaneTapes tapes_;
  std::vector<int64_t> iota_;            // 0, 1, ..., batch_ - 1
  std::vector<int64_t> frame_lanes_[2];  // FrameLanes' results
  std::vector<const Tensor*> in_ptrs_;   // HoistConstants' inputs
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_STORAGE_H_
