// Per block, whether the stack VM runs the block's fused segments or the
// kernels one op at a time, chosen from the times the VM measures as it runs.
//
// Both give every lane the same bits (vm/fused_blocks.h), so the choice only
// decides speed, and it does not have one answer: over a dense block that
// some lanes are away from, a segment loops over the running lanes' indices
// while the kernels make contiguous passes over the whole batch. Which is
// faster depends on the block's ops, the widths of its values and how many
// lanes run it: the segments won on eight schools with an identity metric
// and lost with an adapted one (docs/BENCHMARKS.md, sessions 13 and 14). So
// each block measures both and keeps the faster, trying the other again now
// and then in case the program's phase has changed (warmup, then sampling).
#ifndef AUTOBATCH_VM_FUSED_CHOICE_H_
#define AUTOBATCH_VM_FUSED_CHOICE_H_

#include <cstdint>

namespace autobatch {

class FusedChoice {
 public:
  // How the kernels' time grows: over the whole batch (a dense block, whose
  // passes cost the same whatever the running lanes) or with the running
  // lanes (compact). A segment's time always grows with the running lanes.
  enum class KernelCost { kPerExecution, kPerLane };

  explicit FusedChoice(KernelCost kernel_cost = KernelCost::kPerExecution)
      : kernel_cost_(kernel_cost) {}

  // Whether the next execution, for `lanes` running lanes, runs the fused
  // segments. Each way runs kTrials times first (alternating); then the one
  // predicted faster for `lanes` runs, except that every kRetryEvery-th
  // decision runs the other.
  bool UseFused(int64_t lanes);

  // The time of an execution run as UseFused said (`fused`).
  void Record(bool fused, int64_t lanes, int64_t nanoseconds);

  static constexpr int64_t kTrials = 3;
  static constexpr int64_t kRetryEvery = 32;

 private:
  // Predicted nanoseconds for `lanes` lanes.
  double FusedTime(int64_t lanes) const { return fused_per_lane_ * static_cast<double>(lanes); }
  double KernelTime(int64_t lanes) const {
    return kernel_cost_ == KernelCost::kPerExecution
               ? kernel_per_unit_
               : kernel_per_unit_ * static_cast<double>(lanes);
  }

  KernelCost kernel_cost_;
  // Estimated nanoseconds per running lane (fused) and per execution or per
  // running lane (kernels, as kernel_cost_ says); see Update in the .cc.
  double fused_per_lane_ = 0;
  double kernel_per_unit_ = 0;
  int64_t fused_runs_ = 0;
  int64_t kernel_runs_ = 0;
  int64_t decisions_ = 0;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_FUSED_CHOICE_H_
