// BatchedSampler: runs K transitions of M chains in ONE batched VM call
// (free-running: each chain loops over its own transitions, so a chain with
// short trajectories never waits for a long one) and returns the draws, the
// statistics and the batch utilization.
//
// The program. The entry function `chain` is a per-example program:
//
//   chain(state: (q f64[d], logp f64, grad f64[d]), key u64, counter u64,
//         step_size f64, inv_metric f64[d], slot i64, num_draws i64)
//     -> (state, counter u64, leapfrogs i64, gradient_evaluations i64,
//         divergences i64, recorded i64)
//
//   sqrt_m = sqrt(inv_metric)
//   for iteration = 0 .. num_draws-1 (a While loop):
//     state, counter, stats = transition(state, key, counter, step_size,
//                                        inv_metric, sqrt_m)
//     record_draw(slot, iteration, state.q, stats)       (draw_recorder.h)
//     add up n_leapfrog, gradient evaluations, divergences and acks
//
// with the transition of the chosen algorithm (batched_nuts.h,
// batched_hmc.h, batched_rwmh.h; interface in model_kernel.h). Per chain,
// draws and statistics are bit-identical to ScalarNuts / ScalarHmc /
// ScalarRwmh run from the same state and stream, whatever the batch size,
// lane order, VM (stack, stackless, or the reference interpreter with
// dry_run) or backend — provided the model's batch_bit_stable() is true.
#ifndef AUTOBATCH_MCMC_BATCHED_BATCHED_SAMPLER_H_
#define AUTOBATCH_MCMC_BATCHED_BATCHED_SAMPLER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "frontend/context.h"
#include "ir/ir.h"
#include "mcmc/chain_rng.h"
#include "mcmc/batched/draw_recorder.h"
#include "mcmc/batched/model_kernel.h"
#include "mcmc/model/model.h"
#include "mcmc/sampler_config.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/warmup/initialize.h"
#include "mcmc/warmup/warmup_adapter.h"
#include "vm/options.h"
#include "vm/profile.h"

namespace autobatch::mcmc {

// Registers the whole sampler program on `ctx`: the model kernel and
// record_draw kernel are given; defines the transition of `algorithm` and
// the `chain` entry (above) and returns the entry. Requires
// config.Validate(dimension).ok() (checked).
// With `adapt_warmup` (the kernel of a WarmupAdapter, warmup_adapter.h),
// each iteration ends with
//     step_size, inv_metric, counter = adapt_warmup(slot, iteration,
//         state.q, state.logp, state.grad, key, counter, accept_stat)
//     sqrt_m = sqrt(inv_metric)
// so the next transition runs with the chain's adapted step size and metric.
BatchFunction DefineChainProgram(Context& ctx, Algorithm algorithm, const LogDensityFn& log_density,
                                 const Kernel& record_draw, int64_t dimension,
                                 const SamplerConfig& config,
                                 std::optional<Kernel> adapt_warmup = std::nullopt);

// Where one chain starts a run.
struct BatchedChain {
  uint64_t chain_id = 0;  // reported back (ScalarChainResult::chain_id)
  ChainState state;       // q, logp, grad at q (see MakeChainState)
  ChainRng rng;           // the stream at the counter of the first draw
  double step_size = 1.0;           // finite, > 0
  std::vector<double> inv_metric;   // dimension() values > 0; empty = ones
};

// Batch utilization of a run's model evaluations (MCMC.md: leapfrogs taken /
// leapfrogs computed). NUTS and HMC take one model evaluation per leapfrog;
// RWMH one per transition.
struct BatchUtilization {
  int64_t batch = 0;
  // Sum over chains of the model evaluations their transitions used.
  int64_t gradients_taken = 0;
  // Batched executions of the model kernel, and the lanes they ran for
  // (from the VM's Profile; equal to gradients_taken on the batched VMs).
  int64_t kernel_executions = 0;
  int64_t kernel_active_lanes = 0;
  // The lane slots of those executions: kernel_executions * batch, or with
  // CallOptions::shards the sum over shards of executions * shard size.
  int64_t kernel_lane_slots = 0;
  // gradients_taken / kernel_lane_slots; 1 if the kernel never ran batched
  // (no chains, no draws, or dry_run). NaN for a model written as a program:
  // its gradient is inlined into the sampler's blocks, so its executions are
  // not counted apart (the kernel_* counts stay 0).
  double utilization = 1.0;
  // The best any schedule can do: every kernel execution serves every chain
  // that still has evaluations to do, so there are (max over chains of its
  // evaluations) executions: gradients_taken / (that max * batch), with the
  // max and batch taken per shard when the call is sharded. The stack VM
  // reaches it for NUTS (batched_nuts.h orders the functions for this).
  double free_running_bound = 1.0;
  // What a lock-step run (every transition waits for the slowest chain,
  // as a vmap of one transition would) achieves on the same draws:
  // sum of evaluations / (sum over iterations of the max over chains * batch).
  double lock_step_utilization = 1.0;
};

struct BatchedRunResult {
  // One per chain, in the order given: draws, stats, final state and stream.
  std::vector<ScalarChainResult> chains;
  // Per chain: leapfrogs taken (sum of n_leapfrog__) and divergent draws.
  std::vector<int64_t> leapfrogs;
  std::vector<int64_t> divergences;
  // The VM's counters (empty for dry_run).
  Profile profile;
  BatchUtilization utilization;
  // The call was cancelled (CallOptions::cancel) part way: each chain holds
  // its first N draws and their stats, N the fewest any chain recorded (so
  // all chains have as many rows); leapfrogs and divergences count those
  // draws; final_state and final_rng are the chain's starting ones (the VM
  // stopped mid-transition, so there is nothing to continue from) and
  // utilization is not measured.
  bool cancelled = false;
};

// A compiled sampler program for one model, algorithm and config (max_depth,
// max_delta_h, jitter, num_leapfrog_steps; step size and metric are per
// chain). Not thread-safe. Keeps a reference to `model`.
class BatchedSampler {
 public:
  // InvalidArgument if config.Validate(model.dimension()) fails; the
  // program's build errors otherwise.
  // With `adapter`, the program adapts each chain after each transition
  // (DefineChainProgram's adapt_warmup): a warmup sampler. The adapter must
  // outlive the sampler and be Reset with the chains before each Run.
  static absl::StatusOr<std::unique_ptr<BatchedSampler>> Create(
      const Model& model, Algorithm algorithm, const SamplerConfig& config,
      WarmupAdapter* adapter = nullptr);
  BatchedSampler(const BatchedSampler&) = delete;
  BatchedSampler& operator=(const BatchedSampler&) = delete;

  // Runs num_draws transitions of every chain in one VM call (options: VM,
  // backend, limits; dry_run = the reference interpreter). Chain k runs in
  // lane k and records into slot k. InvalidArgument for num_draws < 0 or a
  // chain whose state, step size or metric has the wrong size or value
  // (naming the chain); ResourceExhausted if the draws would take more than
  // 64 GiB (chains x num_draws x (dimension + 8) doubles); the executor's
  // errors otherwise (e.g. options.max_steps, 1e8 block executions by
  // default, bounds very long runs: raise it or split the run). The program is
  // compiled once per executor and cached (Context::CompiledProgram /
  // LoweredProgram).
  // When options.cancel becomes true during the call, the result holds the
  // draws recorded so far, marked BatchedRunResult::cancelled (not an error).
  absl::StatusOr<BatchedRunResult> Run(std::span<const BatchedChain> chains,
                                       int64_t num_draws, const CallOptions& options = {});

  // Compiles now what Run(..., options) would compile on first use: the
  // executable program, the stack VM's block plan and, with
  // options.jit_fused_blocks, the JIT's fused blocks (codegen/jit.h), so that
  // a long run can fail before its work rather than after. Errors: the
  // pipeline's and the JIT's.
  absl::Status Prepare(const CallOptions& options);
  // An estimate of the bytes Run(chains, ..., options) holds as it starts
  // for `num_chains` chains: the executable program's variables and first
  // stack frames (StartingBytesPerLane, vm/inputs.h); compiles like
  // Prepare. Sample's pre-run memory check adds it to the draws.
  absl::StatusOr<double> StartingBytes(int64_t num_chains, const CallOptions& options);

  // What the Run in progress (or the last one) has done so far, over all
  // chains; safe to read from another thread during Run (progress reports).
  struct LiveCounts {
    // Transitions completed (draws recorded), the model evaluations they
    // took (n_leapfrog__; one per transition for RWMH) and their divergences.
    int64_t draws = 0;
    int64_t gradient_evaluations = 0;
    int64_t divergences = 0;
    // A hand-written model's kernel (KernelActivity): its batched executions
    // and the lanes they evaluated, in-progress transitions included. 0 for a
    // model written as a program, whose evaluations are not counted apart.
    int64_t kernel_executions = 0;
    int64_t kernel_active_lanes = 0;
  };
  LiveCounts live() const;
  // The untyped program (entry `chain`), e.g. to print or serialize it.
  const Program& program() const { return untyped_; }
  // The program an executor runs, compiled on first use and cached: the
  // lowered one (the stack VM's) or the typed one (the stackless VM's and
  // dry run's). The pipeline's errors otherwise, with the IR the failing
  // pass received if `dump_ir_on_error` (CallOptions::dump_ir_on_error).
  absl::StatusOr<const Program*> ExecutableProgram(bool lowered, bool dump_ir_on_error = false);
  int64_t dimension() const { return dimension_; }
  const SamplerConfig& config() const { return config_; }
  Algorithm algorithm() const { return algorithm_; }

 private:
  // Run, inside the memory scope Run opens.
  absl::StatusOr<BatchedRunResult> RunInScope(std::span<const BatchedChain> chains,
                                              int64_t num_draws, const CallOptions& options);
  BatchedSampler(const Model& model, Algorithm algorithm, SamplerConfig config);
  // The types of the entry's inputs (see the `chain` signature above).
  std::vector<TensorType> InputTypes() const;
  // Run's result when the VM call was cancelled (see BatchedRunResult).
  BatchedRunResult CancelledRun(std::span<const BatchedChain> chains, Profile profile) const;

  const Model& model_;
  Algorithm algorithm_;
  SamplerConfig config_;
  int64_t dimension_;
  Context ctx_;
  DrawRecorder recorder_;
  KernelActivity kernel_activity_;
  BatchFunction entry_;
  Program untyped_;
  std::vector<Tensor> data_;  // a program model's data: the last inputs
};

// The starting points of chains `chain_ids` as RunScalarChains makes them:
// stream MakeChainRng(seed, id); `inits` empty = InitializeChain on the host
// from that stream (advancing its counter), else MakeChainState(inits[k]);
// config.step_size and config.inv_metric for every chain. Errors as
// RunScalarChains (prefixed with the chain id).
absl::StatusOr<std::vector<BatchedChain>> MakeBatchedChains(
    const Model& model, const SamplerConfig& config, uint64_t seed,
    std::span<const uint64_t> chain_ids, std::span<const std::vector<double>> inits = {});

// Where one chain of MakeBatchedChains starts: its id, the seed of its
// stream (MakeChainRng(seed, chain_id)) and an unconstrained starting point
// (empty: InitializeChain with `init` from that stream).
struct ChainStart {
  uint64_t chain_id = 0;
  uint64_t seed = 0;
  std::vector<double> q;
};
// The general form: a seed and starting point per chain, and the random
// initialization's options (its radius: CmdStan's init=R).
absl::StatusOr<std::vector<BatchedChain>> MakeBatchedChains(const Model& model,
                                                            const SamplerConfig& config,
                                                            std::span<const ChainStart> starts,
                                                            const InitOptions& init = {});

// Options of RunBatchedChains (mirroring ScalarRunOptions).
struct BatchedRunOptions {
  Algorithm algorithm = Algorithm::kNuts;
  // Empty: each chain initializes itself with InitializeChain (default
  // InitOptions) from its own stream at counter 0, on the host, as
  // RunScalarChains does; otherwise one unconstrained point per chain.
  std::vector<std::vector<double>> inits;
  CallOptions call;
};

// RunScalarChains's batched twin: num_draws transitions of each chain in
// `chain_ids` (stream MakeChainRng(seed, id), config.step_size and
// config.inv_metric for every chain), all chains in ONE VM call. For a
// batch-bit-stable model, chains[k] equals RunScalarChains's result for
// chain_ids[k] bit for bit. Errors as RunScalarChains and BatchedSampler.
absl::StatusOr<BatchedRunResult> RunBatchedChains(const Model& model,
                                                  const SamplerConfig& config, uint64_t seed,
                                                  std::span<const uint64_t> chain_ids,
                                                  int64_t num_draws,
                                                  const BatchedRunOptions& options = {});

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_BATCHED_BATCHED_SAMPLER_H_
