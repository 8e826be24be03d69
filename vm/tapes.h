// LaneTapes: the tapes of a batched executor (ir/ir.h, "Tapes"), one per-lane
// stack of values per tape variable, for the stackless and the stack VM.
//
// Layout: like the stack VM's frame stacks (vm/stack/storage.h), a tape's
// values are frames of one Tensor, frame-major: lane l's value number f is
// lane f * batch + l of `saved`, its depth the lane's count of values. A
// push copies the value into the lane's next frame, a pop copies the top
// frame out; every copy goes through the Backend (CopyLanes). A tape takes
// no memory until its first push; it then grows on demand (doubling, as a
// Full variable's frames do) to the depth of its deepest lane, over the
// whole batch: a tape costs max depth x batch x bytes per value.
//
// Limits (ResourceExhausted naming the tape, function, block, lane and the
// limit, and what to do): one tape's frames over the batch at most
// CallOptions::max_value_bytes, all tapes' frames together at most
// CallOptions::max_stack_bytes (per shard, like the stacks). Not
// max_stack_depth: a tape's depth counts loop iterations, not recursion.
//
// Balance (ir/ir.h): the executor says when lanes enter an activation of a
// function with tapes (Enter: at a call, and the entry's first activation
// needs none) and when they return from one (Leave). Each tape keeps per
// lane the depth the lane's current activation of its function began at
// (its floor; the callers' floors are saved frame-major like the values,
// one per recursion level, 8 bytes per lane and level). Popping at or below
// the floor (an empty tape, or the calling activations' values), returning
// above it, and a lane that ends (CheckEmpty) with values on a tape are
// FailedPrecondition naming the tape, function, block and lane.
#ifndef AUTOBATCH_VM_TAPES_H_
#define AUTOBATCH_VM_TAPES_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "support/memory.h"
#include "vm/options.h"

namespace autobatch {

// Where a tape op runs, for errors.
struct TapeSite {
  const Function& fn;
  BlockId block;
  const SourceLoc& loc;
  std::string ToString() const;  // "function 'f', block ^2 (loop) at f.cc:3"
};

class LaneTapes {
 public:
  // Every tape of `module` (a variable a tape op names) empty, for `batch`
  // lanes. `backend` and `options` must outlive this object's use.
  void Reset(const Module& module, int64_t batch, Backend& backend, const CallOptions& options);

  bool empty() const { return tapes_.empty(); }
  // The tapes of function f, in VarId order.
  const std::vector<VarId>& TapesOf(FunctionId f) const { return fn_tapes_[f.value]; }
  // The number of values lane `lane` holds on `tape`.
  int64_t depth(VarId tape, int64_t lane) const {
    return tapes_[index_[tape.value]].depth[static_cast<size_t>(lane)];
  }

  // For every i: pushes lane src_lanes[i] of `src` (the tape's type) on
  // lane lanes[i]'s stack of `tape`.
  absl::Status Push(VarId tape, const Tensor& src, std::span<const int64_t> src_lanes,
                    std::span<const int64_t> lanes, const TapeSite& site);

  // For every i: moves the top of lane lanes[i]'s stack of `tape` into lane
  // dst_lanes[i] of `dst`. Nothing moves if some lane cannot pop (its
  // current activation pushed nothing left on the tape).
  absl::Status Pop(VarId tape, std::span<const int64_t> lanes, Tensor* dst,
                   std::span<const int64_t> dst_lanes, const TapeSite& site);

  // `lanes` enter an activation of f: each of f's tapes' depth becomes the
  // lane's floor, the caller's saved.
  void Enter(FunctionId f, std::span<const int64_t> lanes);
  // `lanes` return from their activation of f (at `site`): each of f's
  // tapes must be back at the lane's floor, which then becomes the
  // caller's again.
  absl::Status Leave(FunctionId f, std::span<const int64_t> lanes, const TapeSite& site);

  // Every tape is empty in `lanes`, which end at `where` (a halt, or the
  // entry's return); else FailedPrecondition naming the lane, the tape and
  // its function.
  absl::Status CheckEmpty(std::span<const int64_t> lanes, const std::string& where) const;

 private:
  struct Tape {
    VarId var;
    int64_t lane_bytes = 0;
    int64_t frames = 0;          // capacity: values per lane `saved` holds
    Tensor saved;                // frames * batch lanes, frame-major
    CountedVector<int64_t> depth;  // per lane
    CountedVector<int64_t> floor;  // per lane: the depth its activation began at
    CountedVector<int32_t> nesting;       // per lane: the callers' floors saved
    CountedVector<int64_t> saved_floors;  // frame-major, nesting frames per lane
  };
  // Room in `tape` for `needed` values per lane, or ResourceExhausted.
  absl::Status Grow(Tape& tape, int64_t needed, int64_t lane, const TapeSite& site);

  const Module* module_ = nullptr;
  Backend* backend_ = nullptr;
  const CallOptions* options_ = nullptr;
  int64_t batch_ = 0;
  std::vector<Tape> tapes_;
  std::vector<int32_t> index_;                // per variable: index in tapes_, or -1
  std::vector<std::vector<VarId>> fn_tapes_;  // per function
  int64_t bytes_ = 0;                         // all tapes' `saved` together
  std::vector<int64_t> frame_lanes_;          // Push and Pop's frame lanes
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_TAPES_H_
