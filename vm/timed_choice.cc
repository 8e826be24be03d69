// Per block, one of two equivalent ways, chosen from measured times.
#include "vm/timed_choice.h"

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
  } else if (count <= TimedChoice::kTrials) {
    estimate = std::min(estimate, sample);
  } else {
    estimate += kWeight * (std::min(sample, kClip * estimate) - estimate);
  }
}

}  // namespace

bool TimedChoice::First(int64_t lanes) {
  const int64_t decision = decisions_++;
  if (first_runs_ < kTrials || second_runs_ < kTrials) {
    timed_ = true;
    return first_runs_ <= second_runs_;
  }
  const bool first_faster = FirstTime(lanes) <= SecondTime(lanes);
  const bool retry = decision % kRetryEvery == 0;
  timed_ = retry || decision % kTimeEvery == 0;
  return retry ? !first_faster : first_faster;
}

void TimedChoice::Record(bool first, int64_t lanes, int64_t nanoseconds) {
  const auto ns = static_cast<double>(nanoseconds);
  const auto per_lane = ns / static_cast<double>(std::max<int64_t>(lanes, 1));
  if (first) {
    Update(first_per_lane_, first_runs_, per_lane);
  } else {
    Update(second_per_unit_, second_runs_,
           second_cost_ == SecondCost::kPerExecution ? ns : per_lane);
  }
}

}  // namespace autobatch
