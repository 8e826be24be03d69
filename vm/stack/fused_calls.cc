// The stack VM's fused segments: indexed by block and op, called on gathered arguments.
#include "vm/stack/fused_calls.h"

#include <algorithm>

#include "vm/run_support.h"

namespace autobatch {

void FusedCalls::Reset(const BlockPlan& plan, const FusedProgram* fused) {
  plan_ = &plan;
  at_.assign(static_cast<size_t>(plan.num_blocks()), {});
  if (fused == nullptr) return;
  for (const FusedSegment& seg : fused->segments) {
    const int32_t gid = plan.Gid(FunctionId(seg.function), BlockId(seg.block));
    std::vector<const FusedSegment*>& at = at_[gid];
    if (at.empty()) {
      at.assign(plan.module().function(FunctionId(seg.function)).blocks[seg.block].ops.size(),
                nullptr);
    }
    at[seg.first_op] = &seg;
  }
}

void FusedCalls::ClearArgs() {
  in_.clear();
  in_lanes_.clear();
  out_.clear();
  out_lanes_.clear();
  chunk_in_lanes_.clear();
  chunk_out_lanes_.clear();
}

void FusedCalls::AddInput(const std::byte* data, const int64_t* lanes) {
  in_.push_back(data);
  in_lanes_.push_back(lanes);
  chunk_in_lanes_.push_back(nullptr);
}

void FusedCalls::AddOutput(std::byte* data, const int64_t* lanes) {
  out_.push_back(data);
  out_lanes_.push_back(lanes);
  chunk_out_lanes_.push_back(nullptr);
}

int64_t FusedCalls::SegmentLaneBytes(const FusedSegment& seg) const {
  int64_t bytes = 0;
  for (int32_t v : seg.inputs) bytes += plan_->var(VarId(v)).lane_bytes;
  for (int32_t v : seg.outputs) bytes += plan_->var(VarId(v)).lane_bytes;
  return bytes;
}

absl::Status FusedCalls::Call(const Block& block, const FusedSegment& seg, int64_t n,
                              bool new_execution, Profile& profile, Budget& budget) const {
  for (int32_t i = seg.first_op + 1; i < seg.end_op; ++i) {
    if (const auto* prim = std::get_if<PrimOp>(&block.ops[i])) {
      CountOpRun(*prim, n, new_execution, profile, [] {});
    }
  }
  int64_t chunk = n;
  const int64_t lane_bytes = budget.timed() ? SegmentLaneBytes(seg) : 0;
  if (budget.timed()) {
    // The lanes whose work (FusedSegmentWork less the per-call charge) is a
    // clock reading's worth.
    const int64_t lane_work = std::max<int64_t>(
        FusedSegmentWork(seg, 1, lane_bytes) - FusedSegmentWork(seg, 0, 0), 1);
    chunk = std::max<int64_t>(Budget::kClockWork / lane_work, 1);
  }
  absl::Status status;
  CountOpRun(std::get<PrimOp>(block.ops[seg.first_op]), n, new_execution, profile, [&] {
    for (int64_t begin = 0; begin < n && status.ok(); begin += chunk) {
      const int64_t size = std::min(chunk, n - begin);
      for (size_t k = 0; k < in_lanes_.size(); ++k) chunk_in_lanes_[k] = in_lanes_[k] + begin;
      for (size_t k = 0; k < out_lanes_.size(); ++k) chunk_out_lanes_[k] = out_lanes_[k] + begin;
      seg.run(FusedArgs{in_.data(), chunk_in_lanes_.data(), out_.data(),
                        chunk_out_lanes_.data(), size});
      status = budget.TickWork(FusedSegmentWork(seg, size, lane_bytes));
    }
  });
  return status;
}

}  // namespace autobatch
