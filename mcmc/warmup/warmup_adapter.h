// WarmupAdapter: CmdStan's per-iteration warmup adaptation as a side-effecting
// user kernel, so that a batched program adapts every chain between its own
// transitions and warmup runs free-running in one VM call.
//
// After each warmup transition the chain program calls
//
//   adapt_warmup(slot i64, iteration i64, q f64[d], logp f64, grad f64[d],
//                key u64, counter u64, accept_stat f64)
//       -> (step_size f64, inv_metric f64[d], counter u64)
//
// which runs, for chain `slot` after its transition number `iteration`,
// exactly the host steps of RunScalarWarmup (scalar_warmup.h) for that
// iteration: the dual-averaging update, the Welford window, and at a window
// end the regularized metric and the step-size heuristic (drawing from the
// chain's stream at `counter`, returned advanced). It returns what the
// chain's next transition uses: ClampStepSize of the step size, the metric
// and the counter. Each chain's state lives here on the host, indexed by
// slot, and only that chain's calls touch it: a chain's adaptation does not
// depend on the other chains, the batch or the schedule, so its bits are
// RunScalarWarmup's (sample_test.cc checks this).
//
// What happens before the first transition (da.Restart with the configured
// step size, the first heuristic) and after the last (FinalStepSize) is the
// caller's: Reset takes each chain's state at the start of warmup.
//
// Errors (the VM call fails with them, naming chain and warmup iteration as
// Sample() does): a metric estimate that is not finite, a failed heuristic,
// a NaN step size before a transition; OutOfRange for a slot or iteration
// outside the sizes given to Reset. Lanes are only ever read when active.
// Calls for different chains may run concurrently (threaded backend): each
// touches only its own chain's state.
#ifndef AUTOBATCH_MCMC_WARMUP_WARMUP_ADAPTER_H_
#define AUTOBATCH_MCMC_WARMUP_WARMUP_ADAPTER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/kernel_registry.h"
#include "frontend/context.h"
#include "mcmc/warmup/adaptation.h"
#include "mcmc/model/model.h"
#include "mcmc/warmup/step_size_heuristic.h"

namespace autobatch::mcmc {

inline constexpr char kAdaptWarmupKernelName[] = "adapt_warmup";

// `s` with "chain <chain_id>, warmup iteration <iteration>: " before its
// message (the code kept): how warmup errors name where they happened.
absl::Status AtWarmupIteration(uint64_t chain_id, int64_t iteration, const absl::Status& s);
// FailedPrecondition: dual averaging produced a NaN step size for the
// transition of warmup iteration `iteration`.
absl::Status NanStepSizeError(uint64_t chain_id, int64_t iteration);

class WarmupAdapter {
 public:
  // One chain's adaptation state.
  struct Chain {
    uint64_t chain_id = 0;  // for error messages
    DualAveraging da;
    WelfordVariance welford{0};
    double step_size = 0;            // unclamped (dual averaging's iterate)
    std::vector<double> inv_metric;  // dimension values
    int64_t heuristic_trials = 0;
  };

  struct Settings {
    WindowSchedule schedule;  // its num_warmup() is the warmup length
    bool adapt_step_size = true;
    bool adapt_metric = true;  // and the schedule has windows
    StepSizeHeuristicOptions heuristic;
  };

  // Keeps a reference to `model` (the heuristic evaluates it).
  WarmupAdapter(const Model& model, Settings settings);
  WarmupAdapter(const WarmupAdapter&) = delete;
  WarmupAdapter& operator=(const WarmupAdapter&) = delete;

  // The chains at the start of warmup, slot k = chains[k].
  void Reset(std::vector<Chain> chains) {
    chains_ = std::move(chains);
    heuristic_trials_.store(0, std::memory_order_relaxed);
  }
  const std::vector<Chain>& chains() const { return chains_; }
  // The step-size heuristic's trials since Reset, over all chains; may be
  // read from another thread while a run adapts (progress reports).
  int64_t heuristic_trials() const { return heuristic_trials_.load(std::memory_order_relaxed); }

  // The kernel's signature (see the file comment); bit_stable.
  KernelSignature Signature() const;
  absl::Status Adapt(const KernelCall& call);
  // Registers Adapt as kernel `name` on ctx. The adapter must outlive every
  // run of ctx's programs.
  Kernel Register(Context& ctx, std::string name = kAdaptWarmupKernelName);

 private:
  absl::Status AdaptChain(Chain& chain, int64_t iteration, std::span<const double> q,
                          double logp, std::span<const double> grad, uint64_t key,
                          uint64_t* counter, double accept_stat) const;

  const Model& model_;
  Settings settings_;
  int64_t dimension_;
  KernelSignature signature_;  // Signature(), checked on every call
  std::vector<Chain> chains_;
  std::atomic<int64_t> heuristic_trials_{0};
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_WARMUP_WARMUP_ADAPTER_H_
