// Shared machinery of the executors: budgets, input checks, op dispatch.
#ifndef AUTOBATCH_VM_RUN_SUPPORT_H_
#define AUTOBATCH_VM_RUN_SUPPORT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "ir/primitives.h"
#include "support/deadline.h"
#include "vm/options.h"
#include "vm/profile.h"

namespace autobatch {

// The batch size of checked inputs (CheckInputs, vm/inputs.h). A program
// without inputs runs for one example, as on the reference interpreter.
inline int64_t BatchOf(std::span<const Tensor> inputs) {
  return inputs.empty() ? 1 : inputs.front().batch();
}

// The call's time budget: none unless CallOptions::timeout_seconds > 0;
// then CallOptions::deadline if set, else timeout_seconds from now.
Deadline CallDeadline(const CallOptions& options);

// Counts steps (block executions) against a step limit, and the work done
// since the clock was last read against a deadline, so that a program that
// never halts is an error, never a hang, and a deadline binds within about a
// millisecond plus the longest single op (a user kernel, a matrix product, an
// elementwise op on a huge value, or a fused segment's chunk of lanes: none
// is interrupted). The batched VMs count a step per block they run for some
// lanes, the reference interpreter one per block it enters; every executor
// also charges each op it runs (ChargeOp), so that a block of many heavy ops
// reads the clock many times.
//
// Why work and not steps or ops: a clock reading costs about 20-80 ns (vDSO
// steady_clock, measured on the build machine), as much as a small block,
// so reading it per op would slow the small blocks of a recursive program;
// reading it every 64 blocks let one heavy block (0.25 s) push a 0.5 s
// deadline to 16 s. Work since the last reading is a fixed charge per block
// and per op plus the bytes an op touches, and the clock is read once it
// reaches kClockWork: every 64 small blocks, every 256 small ops, or every
// ~1 MiB of operands (about a millisecond of the slowest elementwise
// kernels); an expensive op (IsExpensive, ir/primitives.h: a matrix product
// or a user kernel) is followed by a reading. The charging and the clock
// are a Deadline's (support/deadline.h), which the compiler's passes share.
class Budget {
 public:
  // Work between two readings of the clock, and the charges (in the same
  // unit, bytes of operands) of a block and of an op's dispatch.
  static constexpr int64_t kClockWork = Deadline::kClockWork;
  static constexpr int64_t kBlockWork = kClockWork / 64;
  static constexpr int64_t kOpWork = kClockWork / 256;
  // Steps between two readings of CallOptions::cancel.
  static constexpr int64_t kCancelInterval = 64;
  static_assert((kCancelInterval & (kCancelInterval - 1)) == 0, "a power of two");

  // What Step found.
  enum class Outcome : uint8_t { kWithin, kOutOfSteps, kOutOfTime, kCancelled };

  // max_steps <= 0: no step limit; no deadline: no time limit.
  Budget(int64_t max_steps, std::optional<std::chrono::steady_clock::time_point> deadline);
  // CallOptions::max_steps, CallDeadline(options) and CallOptions::cancel
  // (read every kCancelInterval steps).
  explicit Budget(const CallOptions& options);

  // Counts one step; whether a budget has run out.
  Outcome Step() {
    ++steps_;
    if (max_steps_ > 0 && steps_ > max_steps_) [[unlikely]] return Outcome::kOutOfSteps;
    // The cancel flag (CallOptions::cancel), every kCancelInterval steps: a
    // relaxed load is cheap, but not free on the smallest blocks.
    if (cancel_ != nullptr && (steps_ & (kCancelInterval - 1)) == 0 &&
        cancel_->load(std::memory_order_relaxed)) [[unlikely]] {
      return Outcome::kCancelled;
    }
    return Charge(kBlockWork);
  }

  // Charges `work` (kClockWork or more: read the clock now); kOutOfTime if
  // that reading finds the deadline passed.
  Outcome Charge(int64_t work) {
    return deadline_.Charge(work) ? Outcome::kOutOfTime : Outcome::kWithin;
  }

  // Charges an op just run that touched `bytes` of operands: kOpWork plus
  // them, or a clock reading after an expensive op.
  Outcome ChargeOp(const PrimOp& op, int64_t bytes) {
    if (!deadline_.set()) return Outcome::kWithin;
    return Charge(IsExpensive(op.prim) ? kClockWork : kOpWork + bytes);
  }
  // ChargeOp for an op run over `lanes` lanes of `inputs` and `outputs`.
  Outcome ChargeOp(const PrimOp& op, std::span<const Tensor* const> inputs,
                   std::span<Tensor* const> outputs, int64_t lanes) {
    if (!deadline_.set()) return Outcome::kWithin;  // no need to add up the bytes
    int64_t lane_bytes = 0;
    for (const Tensor* t : inputs) lane_bytes += t->lane_bytes();
    for (const Tensor* t : outputs) lane_bytes += t->lane_bytes();
    return ChargeOp(op, lanes * lane_bytes);
  }

  // ChargeOp for the batched VMs: OK or DeadlineExceeded, as Tick.
  absl::Status TickOp(const PrimOp& op, std::span<const Tensor* const> inputs,
                      std::span<Tensor* const> outputs, int64_t lanes) {
    const Outcome outcome = ChargeOp(op, inputs, outputs, lanes);
    if (outcome == Outcome::kWithin) [[likely]] return absl::OkStatus();
    return Exhausted(outcome);
  }

  // Charge for the batched VMs: OK or DeadlineExceeded, as Tick.
  absl::Status TickWork(int64_t work) {
    const Outcome outcome = Charge(work);
    if (outcome == Outcome::kWithin) [[likely]] return absl::OkStatus();
    return Exhausted(outcome);
  }

  // Step for the batched VMs: OK, or ResourceExhausted (steps) or
  // DeadlineExceeded (time) saying which CallOptions to raise, or Cancelled
  // (CallOptions::cancel).
  absl::Status Tick() {
    const Outcome outcome = Step();
    if (outcome == Outcome::kWithin) [[likely]] return absl::OkStatus();
    return Exhausted(outcome);
  }

  // The error of an executor that knows where it stopped (`at`, e.g.
  // "function 'spin', block ^1 (loop)"): ResourceExhausted or
  // DeadlineExceeded naming it, the steps run and the option to raise.
  // `outcome` is not kWithin.
  absl::Status ExhaustedAt(Outcome outcome, std::string_view at) const;

  int64_t steps() const { return steps_; }
  // Whether there is a deadline (else charging work does nothing).
  bool timed() const { return deadline_.set(); }

 private:
  absl::Status Exhausted(Outcome outcome) const;

  int64_t steps_ = 0;
  int64_t max_steps_;
  Deadline deadline_;  // its seconds() for the message; 0 when given a time point
  const std::atomic<bool>* cancel_ = nullptr;
};

// OK unless a function of `program` is a gradient stub (Function::
// gradient_of, ir/ir.h), which has no body yet and which no executor runs:
// then InvalidArgument naming it and its primal and saying to run the
// differentiate pass. Every executor checks this before it runs.
absl::Status CheckNoGradientStubs(const Program& program);

// Whether a block should run compact for `active` of `batch` lanes: compact
// when active < fraction * batch, with options.dense_fraction_heavy for
// heavy blocks (RunsExpensiveKernel, ir/ir.h) and options.dense_fraction for
// the others.
inline ExecMode ChooseMode(int64_t active, int64_t batch, bool heavy,
                           const CallOptions& options) {
  const double fraction =
      heavy ? options.dense_fraction_heavy : options.dense_fraction;
  return static_cast<double>(active) < fraction * static_cast<double>(batch)
             ? ExecMode::kCompact
             : ExecMode::kDense;
}

// Counts a run of `op` in `profile` as RunCountedOp does (`active` useful
// lanes; `new_execution` as there) and calls `run()`, timed if
// profile.timing. For VMs that run an op other than through
// Backend::RunOp (e.g. a copy between stack frames).
template <typename Run>
void CountOpRun(const PrimOp& op, int64_t active, bool new_execution, Profile& profile,
                Run&& run) {
  PrimitiveCounters& counters = profile.CountersFor(op);
  if (new_execution) {
    ++counters.executions;
    counters.lane_slots += profile.batch;
  }
  counters.active_lanes += active;
  if (!profile.timing) {
    run();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  run();
  counters.nanoseconds += std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
}

// Runs one PrimOp through the backend for `lanes`, counting it in `profile`
// as `active` useful lanes (lanes.size() when negative; a VM that runs an op
// over more lanes than need it, or over a compacted copy, passes the real
// count). `new_execution` false: the run continues the op's current
// execution for more of its lanes (a block run in tiles), so only the active
// lanes are counted. Errors get the function name and the op's source
// location prepended.
absl::Status RunCountedOp(Backend& backend, const PrimOp& op,
                          std::span<const Tensor* const> inputs,
                          std::span<Tensor* const> outputs,
                          const LaneSet& lanes, ExecMode mode,
                          const KernelRegistry* kernels, Profile& profile,
                          const Function& fn, int64_t active = -1,
                          bool new_execution = true);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_RUN_SUPPORT_H_
