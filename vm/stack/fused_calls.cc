// The stack VM's fused segments: indexed by block and op, called on gathered arguments.
#include "vm/stack/fused_calls.h"

#include "vm/run_support.h"

namespace autobatch {

void FusedCalls::Reset(const BlockPlan& plan, const FusedProgram* fused) {
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
}

void FusedCalls::AddInput(const std::byte* data, const int64_t* lanes) {
  in_.push_back(data);
  in_lanes_.push_back(lanes);
}

void FusedCalls::AddOutput(std::byte* data, const int64_t* lanes) {
  out_.push_back(data);
  out_lanes_.push_back(lanes);
}

void FusedCalls::Call(const Block& block, const FusedSegment& seg, int64_t n,
                      bool new_execution, Profile& profile) const {
  for (int32_t i = seg.first_op + 1; i < seg.end_op; ++i) {
    if (const auto* prim = std::get_if<PrimOp>(&block.ops[i])) {
      CountOpRun(*prim, n, new_execution, profile, [] {});
    }
  }
  const FusedArgs args{in_.data(), in_lanes_.data(), out_.data(), out_lanes_.data(), n};
  CountOpRun(std::get<PrimOp>(block.ops[seg.first_op]), n, new_execution, profile,
             [&] { seg.run(args); });
}

}  // namespace autobatch
