// Per block, which of two equivalent ways the stack VM runs it, chosen from
// the times the VM measures as it runs.
//
// The stack VM has two such choices, each between ways that give every lane
// the same bits, so that only speed is at stake, and neither has one answer:
// - a dense block that some lanes are away from runs its fused segments
//   (vm/fused_blocks.h), a loop over the running lanes' indices, or the
//   kernels' contiguous passes over the whole batch: the segments won on
//   eight schools with an identity metric and lost with an adapted one;
// - a block that many but not all lanes run runs compact (gather the running
//   lanes, run, scatter back) or dense (every op over the whole batch, the
//   results kept where the mask is set): the fixed share of the batch at
//   which dense wins (CallOptions::dense_fraction) was measured on small
//   values, and depends on the block's ops and values' widths.
// Which is faster depends on the block, its values and its lanes
// (docs/BENCHMARKS.md, "Fused blocks" and "Dense or compact, chosen by
// time"), so each block measures both ways and
// keeps the faster, trying the other again now and then in case the
// program's phase has changed (warmup, then sampling).
#ifndef AUTOBATCH_VM_TIMED_CHOICE_H_
#define AUTOBATCH_VM_TIMED_CHOICE_H_

#include <cstdint>

namespace autobatch {

class TimedChoice {
 public:
  // How the second way's time grows: per execution (a dense block, whose
  // passes cost the same whatever the running lanes) or with the running
  // lanes. The first way's time always grows with the running lanes (the
  // fused segments; compact).
  enum class SecondCost { kPerExecution, kPerLane };

  explicit TimedChoice(SecondCost second_cost = SecondCost::kPerExecution)
      : second_cost_(second_cost) {}

  // Whether the next execution, for `lanes` running lanes, takes the first
  // way. Each way runs kTrials times first (alternating); then the one
  // predicted faster for `lanes` runs, except that every kRetryEvery-th
  // decision runs the other.
  bool First(int64_t lanes);

  // Whether the execution First just decided is to be timed: the trials,
  // the retries, and every kTimeEvery-th other one (reading the clock
  // twice costs about 40 ns, a tenth of a small block's run).
  bool Timed() const { return timed_; }

  // The time of an execution run the way First said (`first`).
  void Record(bool first, int64_t lanes, int64_t nanoseconds);

  static constexpr int64_t kTrials = 3;
  static constexpr int64_t kRetryEvery = 32;
  static constexpr int64_t kTimeEvery = 8;

 private:
  // Predicted nanoseconds for `lanes` lanes.
  double FirstTime(int64_t lanes) const { return first_per_lane_ * static_cast<double>(lanes); }
  double SecondTime(int64_t lanes) const {
    return second_cost_ == SecondCost::kPerExecution
               ? second_per_unit_
               : second_per_unit_ * static_cast<double>(lanes);
  }

  SecondCost second_cost_;
  // Estimated nanoseconds per running lane (first way) and per execution or
  // per running lane (second way, as second_cost_ says); see Update in the
  // .cc.
  double first_per_lane_ = 0;
  double second_per_unit_ = 0;
  int64_t first_runs_ = 0;
  int64_t second_runs_ = 0;
  int64_t decisions_ = 0;
  bool timed_ = true;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_TIMED_CHOICE_H_
