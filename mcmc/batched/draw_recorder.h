// DrawRecorder: a host-side buffer of draws and their statistics that a
// batched sampler program writes through a side-effecting user kernel.
//
// A per-example program cannot cheaply hold N x d draws in a variable (every
// value is carried, and on the stack VM pushed, with the lane), so the chain
// loop hands each draw to the kernel
//
//   record_draw(slot i64, iteration i64, q f64[d], stats f64[7]) -> ack i64
//
// which copies it into cell (slot, iteration) of this buffer and returns
// ack = 1 (the program sums the acks, so the op is live and the count is
// checkable). stats are DrawStatValues order (draw_stats.h): lp__,
// accept_stat__, stepsize__, treedepth__, n_leapfrog__, divergent__ (0/1),
// energy__.
//
// Safety: the kernel reads only ACTIVE lanes (inactive ones may hold junk),
// in any lane order. A slot outside [0, num_slots), an iteration outside
// [0, num_iterations), or a cell written twice is an OutOfRange /
// FailedPrecondition error naming the lane, slot and iteration — never a
// write out of bounds. Lanes of one call that write different cells may run
// concurrently (each touches only its own cell); two lanes must not share a
// slot.
#ifndef AUTOBATCH_MCMC_BATCHED_DRAW_RECORDER_H_
#define AUTOBATCH_MCMC_BATCHED_DRAW_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/kernel_registry.h"
#include "frontend/context.h"
#include "mcmc/draw_stats.h"

namespace autobatch::mcmc {

inline constexpr char kRecordDrawKernelName[] = "record_draw";

class DrawRecorder {
 public:
  // Room for num_slots x num_iterations draws of `dimension` coordinates
  // (8 * (dimension + 7) bytes each, plus one byte). Requires
  // dimension >= 1, num_slots >= 0, num_iterations >= 0 (checked).
  DrawRecorder(int64_t dimension, int64_t num_slots = 0, int64_t num_iterations = 0);

  DrawRecorder(const DrawRecorder&) = delete;
  DrawRecorder& operator=(const DrawRecorder&) = delete;

  // Empties the buffer and resizes it (dimension is fixed).
  void Reset(int64_t num_slots, int64_t num_iterations);

  // The kernel's signature: see the file comment. bit_stable (a lane's ack
  // does not depend on the batch).
  KernelSignature Signature() const;
  // The kernel's implementation (see the file comment for the errors).
  absl::Status Record(const KernelCall& call);
  // Registers Record as kernel `name` on ctx. The recorder must outlive
  // every run of ctx's programs.
  Kernel Register(Context& ctx, std::string name = kRecordDrawKernelName);

  int64_t dimension() const { return dimension_; }
  int64_t num_slots() const { return num_slots_; }
  int64_t num_iterations() const { return num_iterations_; }

  // Accessors; slot and iteration must be in range (checked).
  bool recorded(int64_t slot, int64_t iteration) const;
  // The draw's unconstrained point (dimension() values).
  std::span<const double> draw(int64_t slot, int64_t iteration) const;
  // The draw's statistics (DrawStatValues order, kNumDrawStats values).
  std::span<const double> stat_values(int64_t slot, int64_t iteration) const;
  DrawStats stats(int64_t slot, int64_t iteration) const;
  // How many cells of `slot` were written.
  int64_t count(int64_t slot) const;
  // How many cells were written since the last Reset, over all slots. May be
  // read from another thread while a run records (e.g. for progress).
  int64_t total_recorded() const { return total_recorded_.load(std::memory_order_relaxed); }
  // The sums of n_leapfrog__ and of divergent__ over those draws, readable
  // the same way: live counts for progress reports.
  int64_t total_leapfrogs() const { return total_leapfrogs_.load(std::memory_order_relaxed); }
  int64_t total_divergences() const {
    return total_divergences_.load(std::memory_order_relaxed);
  }

 private:
  size_t Cell(int64_t slot, int64_t iteration) const;

  int64_t dimension_;
  int64_t num_slots_ = 0;
  int64_t num_iterations_ = 0;
  std::vector<double> draws_;    // cell-major: cell c at c * dimension_
  std::vector<double> stats_;    // cell c at c * kNumDrawStats
  std::vector<uint8_t> written_;  // one byte per cell
  std::atomic<int64_t> total_recorded_{0};
  std::atomic<int64_t> total_leapfrogs_{0};
  std::atomic<int64_t> total_divergences_{0};
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_BATCHED_DRAW_RECORDER_H_
