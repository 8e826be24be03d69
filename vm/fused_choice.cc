// Per block, fused segments or kernels, chosen from measured times.
#include "vm/fused_choice.h"

#include <algorithm>

namespace autobatch {
namespace {

// The estimate of a time from its samples. Timing noise only ever adds (an
// interrupt, a page fault, a cold cache on a block's first run), so the
// trials keep their minimum, and later samples move a moving average by
// 1/8 of their difference, counting at most kClip times the average: one
// slow run shifts it by a bounded step, while a real change of phase (say,
// shallower trees after warmup) shows within a few samples.
void Update(double& estimate, int64_t& count, double sample) {
  constexpr double kWeight = 1.0 / 8;
  constexpr double kClip = 4.0;
  ++count;
  if (count == 1) {
    estimate = sample;
  } else if (count <= FusedChoice::kTrials) {
    estimate = std::min(estimate, sample);
  } else {
    estimate += kWeight * (std::min(sample, kClip * estimate) - estimate);
  }
}

}  // namespace

bool FusedChoice::UseFused(int64_t lanes) {
  const int64_t decision = decisions_++;
  if (fused_runs_ < kTrials || kernel_runs_ < kTrials) return fused_runs_ <= kernel_runs_;
  const bool fused_faster = FusedTime(lanes) <= KernelTime(lanes);
  return decision % kRetryEvery == 0 ? !fused_faster : fused_faster;
}

void FusedChoice::Record(bool fused, int64_t lanes, int64_t nanoseconds) {
  const auto ns = static_cast<double>(nanoseconds);
  const auto per_lane = ns / static_cast<double>(std::max<int64_t>(lanes, 1));
  if (fused) {
    Update(fused_per_lane_, fused_runs_, per_lane);
  } else {
    Update(kernel_per_unit_, kernel_runs_,
            kernel_cost_ == KernelCost::kPerExecution ? ns : per_lane);
  }
}

}  // namespace autobatch
