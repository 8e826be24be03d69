// Sample(): free-running adaptive warmup and sampling on the batched VM, and
// the run's CSV files, summary table and JSON.
#include "mcmc/sample.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/run_on_threads.h"
#include "support/memory.h"
#include "support/number_message.h"
#include "support/status.h"
#include "mcmc/warmup/adaptation.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/chain_rng.h"
#include "mcmc/draw_stats.h"
#include "mcmc/output/progress_relay.h"
#include "mcmc/model/data.h"
#include "mcmc/warmup/step_size_heuristic.h"
#include "mcmc/warmup/warmup_adapter.h"

namespace autobatch::mcmc {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

absl::Status BadOption(std::string_view field, const std::string& value,
                       std::string_view requirement) {
  return absl::InvalidArgumentError(absl::StrCat("Sample: ", std::string(field), " = ", value,
                                                 "; ", std::string(requirement)));
}

absl::Status ForChain(uint64_t chain_id, const absl::Status& s) {
  return absl::Status(s.code(),
                      absl::StrCat("chain ", chain_id, ": ", std::string(s.message())));
}

// ResourceExhausted: the run needs `bytes` (of which `what`), more than its
// memory limit, `limit`.
absl::Status SampleTooBig(const Model& model, const SampleOptions& options, double bytes,
                          int64_t limit, std::string_view what) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "Sample: ", options.num_chains, " chains x ", options.num_samples,
      " draws (num_chains x num_samples) of ",
      kNumDrawStats + model.constrained_size() +
          static_cast<int64_t>(model.generated_names().size()),
      " columns need about ", FormatBytes(static_cast<int64_t>(std::min(bytes, 9e18))), " (",
      std::string(what), "), more than the memory limit allows (max_memory_bytes = ", limit,
      ", ", FormatBytes(limit),
      options.call.max_memory_bytes > 0 ? "" : ": 3/4 of the smallest of physical memory, "
                                               "RLIMIT_AS and the cgroup's memory.max",
      "). Every draw is kept in memory until the end: lower num_samples (--samples) or "
      "num_chains (--chains), or raise CallOptions::max_memory_bytes (--max-memory) if the "
      "memory is there"));
}

absl::Status ValidateOptions(const Model& model, const SampleOptions& o) {
  if (o.num_chains < 1) {
    return BadOption("num_chains", absl::StrCat(o.num_chains), "give at least 1 chain");
  }
  if (o.num_warmup < 0 || o.num_warmup > (int64_t{1} << 31) - 1) {
    return BadOption("num_warmup", absl::StrCat(o.num_warmup), "it must be in [0, 2^31 - 1]");
  }
  if (o.num_samples < 1 || o.num_samples > (int64_t{1} << 31) - 1) {
    return BadOption("num_samples", absl::StrCat(o.num_samples),
                     "it must be in [1, 2^31 - 1]");
  }
  if (o.call.communicator != nullptr) {
    return BadOption("call.communicator", "set",
                     "a run over processes splits its chains, not each VM call's lanes: set "
                     "SampleOptions::communicator instead");
  }
  if (o.num_chunks < 1) {
    return BadOption("num_chunks", absl::StrCat(o.num_chunks), "it must be >= 1");
  }
  if (o.thin < 1 || o.thin > (int64_t{1} << 31) - 1) {
    return BadOption("thin", absl::StrCat(o.thin), "it must be in [1, 2^31 - 1]");
  }
  if (!std::isfinite(o.init_radius) || o.init_radius < 0) {
    return BadOption("init_radius", absl::StrCat(o.init_radius),
                     "it must be a finite number >= 0 (0 starts every chain at the origin)");
  }
  if (!o.chain_seeds.empty() && static_cast<int64_t>(o.chain_seeds.size()) != o.num_chains) {
    return BadOption("chain_seeds", absl::StrCat(o.chain_seeds.size(), " seeds"),
                     absl::StrCat("give one per chain (", o.num_chains,
                                  "), or none to use `seed` for every chain"));
  }
  if (o.init_values.size() > 1 && static_cast<int64_t>(o.init_values.size()) != o.num_chains) {
    return BadOption("init_values", absl::StrCat(o.init_values.size(), " points"),
                     absl::StrCat("give one point for every chain or one per chain (",
                                  o.num_chains, ")"));
  }
  for (size_t k = 0; k < o.init_values.size(); ++k) {
    if (static_cast<int64_t>(o.init_values[k].size()) != model.constrained_size()) {
      return BadOption(absl::StrCat("init_values[", k, "]"),
                       absl::StrCat(o.init_values[k].size(), " values"),
                       absl::StrCat("model '", model.name(), "' has ", model.constrained_size(),
                                    " constrained values (every parameter, flattened in "
                                    "order; ReadInitValues reads them from JSON)"));
    }
  }
  if (o.call.shards < 0) {
    return BadOption("call.shards", absl::StrCat(o.call.shards),
                     "give a number of shards >= 1, or kAutoShards (0)");
  }
  AB_RETURN_IF_ERROR(ValidateParameters(model));
  AB_RETURN_IF_ERROR(model.CheckGenerated());
  AB_RETURN_IF_ERROR(CheckSampleMemory(model, o));
  AB_RETURN_IF_ERROR(o.sampler.Validate(model.dimension()));
  return absl::OkStatus();
}

// Leapfrog counts of one phase, summed over VM calls.
struct PhaseCounts {
  int64_t taken = 0;
  int64_t computed = 0;
  int64_t divergences = 0;
  void Add(const BatchUtilization& u) {
    taken += u.gradients_taken;
    computed += u.kernel_lane_slots;
  }
  // NaN when evaluations were taken but none counted (a model written as a
  // program: BatchUtilization::utilization).
  double utilization() const {
    if (computed == 0 && taken > 0) return std::numeric_limits<double>::quiet_NaN();
    return computed > 0 ? static_cast<double>(taken) / static_cast<double>(computed) : 1.0;
  }
};

// Draws kept of `iterations` transitions thinned by `thin`: iterations 0,
// thin, 2 thin, ...
int64_t KeptDraws(int64_t iterations, int64_t thin) {
  return iterations <= 0 ? 0 : (iterations - 1) / thin + 1;
}

// The seed of chain k's stream (SampleOptions::chain_seeds).
uint64_t ChainSeed(const SampleOptions& o, size_t k) {
  return o.chain_seeds.empty() ? o.seed : o.chain_seeds[k];
}

// Splits `total` iterations into at most `chunks` nearly equal VM calls.
std::vector<int64_t> ChunkSizes(int64_t total, int64_t chunks) {
  const int64_t n = std::min(total, chunks);
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < n; ++i) sizes.push_back(total / n + (i < total % n ? 1 : 0));
  return sizes;
}

// Lanes per call of Model::GenerateBatch: bounds its buffers (a lane's
// values do not depend on it).
constexpr int64_t kGeneratedLanesPerCall = 4096;

// Counts of a VM call in progress, added to the finished calls' in a
// progress report.
struct Live {
  int64_t divergences = 0;
  int64_t gradient_evaluations = 0;
};

// Where a VM call in progress stands: the iterations per chain and the
// phase's utilization so far, and the counts to add to the finished calls'.
struct InCall {
  int64_t iteration = 0;
  double utilization = 1.0;
  Live live;
};

// The run in progress: the chains, the compiled sampler and the counters.
class Runner {
 public:
  Runner(const Model& model, const SampleOptions& options, BatchedSampler& sampler,
         std::vector<BatchedChain> chains, SampleResult& result)
      : model_(model),
        options_(options),
        sampler_(sampler),
        chains_(std::move(chains)),
        result_(result),
        start_(Clock::now()) {}

  // Compiles every program the run needs (the generated quantities', the
  // warmup sampler's, the sampler's and, with call.jit_fused_blocks, their
  // fused blocks) before the first iteration: a compile failure must not
  // throw finished warmup away.
  absl::Status Prepare();
  // ResourceExhausted if the samplers' starting memory (StartingBytes) does
  // not fit what the memory limit leaves (the draws are reserved already).
  absl::Status CheckStartingMemory();
  absl::Status Warmup();
  absl::Status Sampling();
  void ReportDone() {
    Report(SamplePhase::kDone, result_.num_draws(), sampling_.utilization());
  }
  std::vector<BatchedChain>& chains() { return chains_; }
  // The chains this process runs (SampleOptions::communicator): >= 1.
  int64_t own_chains() const { return std::max<int64_t>(1, static_cast<int64_t>(chains_.size())); }

 private:
  // One VM call of `draws` transitions of `sampler`, the phase's `done`
  // iterations before it; chains continue from where it ends. With a
  // progress callback, a ticker thread reports the draws recorded so far
  // while the call runs.
  absl::StatusOr<BatchedRunResult> Run(BatchedSampler& sampler, int64_t draws,
                                       SamplePhase phase, int64_t done, PhaseCounts& counts);
  absl::Status AdaptiveWarmup();
  absl::Status BurnIn();
  // The kept draws (SampleOptions::thin) among transitions done .. done +
  // size - 1 of the phase (`run`'s) of every chain, into `out` (the sampling
  // or saved warmup draws): statistics and constrained values, then their
  // generated quantities.
  absl::Status StoreDraws(const BatchedRunResult& run, int64_t done, int64_t size, bool warmup);
  absl::Status Generate(const BatchedRunResult& run, int64_t done, int64_t size, bool warmup);
  // Transitions of a call starting at phase iteration `done` that are kept:
  // the first one's index in the call (maybe >= size: none) and how many.
  std::pair<int64_t, int64_t> KeptInCall(int64_t done, int64_t size) const {
    const int64_t first = (options_.thin - done % options_.thin) % options_.thin;
    return {first, first < size ? (size - 1 - first) / options_.thin + 1 : 0};
  }
  void Report(SamplePhase phase, int64_t iteration, double utilization,
              const Live& live = {});
  // Where `sampler`'s call in progress stands (its phase's `counts` and
  // `done` iterations before it).
  InCall Progress(const BatchedSampler& sampler, const PhaseCounts& counts, int64_t done) const;
  bool Cancelled() const {
    return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed);
  }
  // The Cancelled error of a run interrupted in warmup after `done` of its
  // iterations: nothing to keep.
  absl::Status InterruptedInWarmup(int64_t done) const {
    return absl::CancelledError(absl::StrCat(
        "Sample: interrupted during warmup (", done, " of ", options_.num_warmup,
        " iterations done); there are no draws yet, so nothing was kept"));
  }

  const Model& model_;
  const SampleOptions& options_;
  BatchedSampler& sampler_;
  std::vector<BatchedChain> chains_;
  SampleResult& result_;
  Clock::time_point start_;
  PhaseCounts warmup_, sampling_;
  int64_t heuristic_trials_ = 0;
  // Whether warmup adapts, and what (set by Prepare).
  bool adapts_ = false;
  bool adapt_step_ = false;
  bool adapt_metric_ = false;
  // The adaptive warmup's adapter and sampler (Prepare; null without
  // adaptation). The adapter outlives the sampler, which calls its kernel.
  std::unique_ptr<WarmupAdapter> adapter_;
  std::unique_ptr<BatchedSampler> warmup_sampler_;
};

void Runner::Report(SamplePhase phase, int64_t iteration, double utilization,
                    const Live& live) {
  if (!options_.progress) return;
  SampleProgress p;
  p.phase = phase;
  p.num_chains = own_chains();
  p.iteration = iteration;
  p.phase_iterations =
      phase == SamplePhase::kWarmup ? options_.num_warmup : options_.num_samples;
  p.total_iterations = options_.num_warmup + options_.num_samples;
  p.total_iteration =
      phase == SamplePhase::kWarmup ? iteration : options_.num_warmup + iteration;
  p.divergences = warmup_.divergences + sampling_.divergences + live.divergences;
  p.gradient_evaluations =
      warmup_.taken + sampling_.taken + heuristic_trials_ + live.gradient_evaluations;
  p.utilization = utilization;
  p.elapsed_seconds = SecondsSince(start_);
  p.compile_seconds = result_.compile_seconds;
  // The iterations' pace so far, compilation left out.
  const double iterating = p.elapsed_seconds - p.compile_seconds;
  p.eta_seconds = phase == SamplePhase::kDone ? 0.0
                  : p.total_iteration > 0
                      ? iterating * static_cast<double>(p.total_iterations - p.total_iteration) /
                            static_cast<double>(p.total_iteration)
                      : std::numeric_limits<double>::quiet_NaN();
  options_.progress(p);
}

InCall Runner::Progress(const BatchedSampler& sampler, const PhaseCounts& counts,
                        int64_t done) const {
  const BatchedSampler::LiveCounts now = sampler.live();
  InCall at;
  at.live.divergences = now.divergences;
  at.live.gradient_evaluations = now.gradient_evaluations;
  if (&sampler == warmup_sampler_.get()) {
    at.live.gradient_evaluations += adapter_->heuristic_trials();
  }
  at.iteration = done + now.draws / own_chains();
  // Lane slots so far: the kernel's executions times its shard's size (the
  // shards' sizes differ by at most one chain).
  const int64_t shards = std::clamp<int64_t>(options_.call.shards, 1, own_chains());
  const double lane_slots = static_cast<double>(counts.computed) +
                            static_cast<double>(now.kernel_executions) *
                                static_cast<double>(own_chains()) /
                                static_cast<double>(shards);
  if (model_.AsProgram() != nullptr) {
    // Not measured (PhaseCounts::utilization).
    at.utilization = now.draws > 0 ? std::numeric_limits<double>::quiet_NaN()
                                   : counts.utilization();
  } else if (lane_slots > 0) {
    at.utilization =
        std::min(1.0, static_cast<double>(counts.taken + now.kernel_active_lanes) / lane_slots);
  } else {
    at.utilization = counts.utilization();
  }
  return at;
}

absl::StatusOr<BatchedRunResult> Runner::Run(BatchedSampler& sampler, int64_t draws,
                                             SamplePhase phase, int64_t done,
                                             PhaseCounts& counts) {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::thread ticker;
  absl::StatusOr<BatchedRunResult> result;
  const auto interval = std::chrono::duration<double>(options_.progress_interval_seconds);
  if (options_.progress && draws > 1 && interval.count() > 0) {
    // Report only reads counters that change after the call returns.
    ticker = std::thread([&] {
      std::unique_lock<std::mutex> lock(mu);
      while (!cv.wait_for(lock, interval, [&] { return finished; })) {
        const InCall at = Progress(sampler, counts, done);
        Report(phase, at.iteration, at.utilization, at.live);
      }
    });
  }
  {
    // The ticker stops on every way out, an exception's included (a
    // joinable std::thread destroyed would end the process).
    const absl::Cleanup stop_ticker = [&] {
      if (!ticker.joinable()) return;
      {
        std::lock_guard<std::mutex> lock(mu);
        finished = true;
      }
      cv.notify_all();
      ticker.join();
    };
    result = sampler.Run(chains_, draws, options_.call);
  }
  AB_ASSIGN_OR_RETURN(BatchedRunResult run, std::move(result));
  ++result_.vm_calls;
  if (run.cancelled) {
    // Stopped mid-transition: no state to continue from, no utilization.
    for (size_t k = 0; k < chains_.size(); ++k) {
      counts.divergences += run.divergences[k];
      counts.taken += run.leapfrogs[k];
    }
    return run;
  }
  counts.Add(run.utilization);
  for (size_t k = 0; k < chains_.size(); ++k) {
    chains_[k].state = run.chains[k].final_state;
    chains_[k].rng = run.chains[k].final_rng;
    counts.divergences += run.divergences[k];
  }
  return run;
}

absl::Status Runner::Prepare() {
  if (!model_.generated_names().empty()) {
    CallOptions generate_call = options_.call;
    generate_call.cancel = nullptr;
    AB_RETURN_IF_ERROR(model_.PrepareGenerate(generate_call));
  }
  const AdaptationOptions& a = options_.adaptation;
  adapts_ = a.engaged && (a.adapt_step_size || a.adapt_metric) &&
            options_.algorithm != Algorithm::kRwmh;
  if (adapts_) {
    AB_ASSIGN_OR_RETURN(WindowSchedule schedule,
                        WindowSchedule::Create({options_.num_warmup, a.init_buffer,
                                                a.term_buffer, a.window}));
    adapt_step_ = a.adapt_step_size;
    adapt_metric_ = a.adapt_metric && schedule.adapts_metric();
    adapter_ = std::make_unique<WarmupAdapter>(
        model_, WarmupAdapter::Settings{std::move(schedule), adapt_step_, adapt_metric_,
                                        a.heuristic});
    AB_ASSIGN_OR_RETURN(warmup_sampler_,
                        BatchedSampler::Create(model_, options_.algorithm, options_.sampler,
                                               adapter_.get()));
    AB_RETURN_IF_ERROR(warmup_sampler_->Prepare(options_.call));
  }
  AB_RETURN_IF_ERROR(sampler_.Prepare(options_.call));
  return CheckStartingMemory();
}

absl::Status Runner::CheckStartingMemory() {
  // One sampler runs at a time; each call's storage is freed when it returns.
  AB_ASSIGN_OR_RETURN(double starting,
                      sampler_.StartingBytes(own_chains(), options_.call));
  if (warmup_sampler_ != nullptr) {
    AB_ASSIGN_OR_RETURN(const double warmup,
                        warmup_sampler_->StartingBytes(own_chains(), options_.call));
    starting = std::max(starting, warmup);
  }
  const MemoryBudget* budget = CurrentMemoryBudget();
  const double in_use = static_cast<double>(budget->used());
  if (in_use + starting <= static_cast<double>(budget->limit())) return absl::OkStatus();
  return SampleTooBig(
      model_, options_, in_use + starting, budget->limit(),
      absl::StrCat("of which the sampler's program holds about ",
                   FormatBytes(static_cast<int64_t>(std::min(starting, 9e18))),
                   " as it starts: its variables and first stack frames for every chain"));
}

absl::Status Runner::Warmup() {
  const Clock::time_point compile_start = Clock::now();
  absl::Status status = Prepare();
  result_.compile_seconds = SecondsSince(compile_start);
  const Clock::time_point t = Clock::now();
  if (status.ok() && Cancelled()) status = InterruptedInWarmup(0);
  if (status.ok()) status = adapts_ ? AdaptiveWarmup() : BurnIn();
  result_.warmup_seconds = SecondsSince(t);
  result_.warmup_leapfrogs_taken = warmup_.taken;
  result_.warmup_leapfrogs_computed = warmup_.computed;
  result_.warmup_utilization = warmup_.utilization();
  result_.warmup_gradient_evaluations = warmup_.taken + heuristic_trials_;
  return status;
}

absl::Status Runner::BurnIn() {
  for (size_t k = 0; k < chains_.size(); ++k) {
    ChainSummary& c = result_.chains[k];
    c.step_size = chains_[k].step_size;
    c.inv_metric = chains_[k].inv_metric;
  }
  int64_t done = 0;
  for (const int64_t size : ChunkSizes(options_.num_warmup, options_.num_chunks)) {
    if (Cancelled()) return InterruptedInWarmup(done);
    AB_ASSIGN_OR_RETURN(const BatchedRunResult run, Run(sampler_, size, SamplePhase::kWarmup, done, warmup_));
    if (run.cancelled) {
      return InterruptedInWarmup(done + static_cast<int64_t>(run.chains.front().stats.size()));
    }
    for (size_t k = 0; k < chains_.size(); ++k) {
      result_.chains[k].warmup_divergences += run.divergences[k];
    }
    if (options_.save_warmup) AB_RETURN_IF_ERROR(StoreDraws(run, done, size, /*warmup=*/true));
    done += size;
    Report(SamplePhase::kWarmup, done, warmup_.utilization());
  }
  return absl::OkStatus();
}

// RunScalarWarmup's steps (scalar_warmup.h) per chain: the first heuristic
// on the host, then every warmup transition and its adaptation in ONE
// free-running VM call (the program calls the WarmupAdapter kernel after
// each transition), then the final step size on the host.
absl::Status Runner::AdaptiveWarmup() {
  const AdaptationOptions& a = options_.adaptation;
  const int64_t d = model_.dimension();
  const DualAveragingOptions da_options{a.delta, a.gamma, a.kappa, a.t0};
  const bool adapt_step = adapt_step_;
  const bool adapt_metric = adapt_metric_;
  const size_t m = chains_.size();

  std::vector<DualAveraging> da(m, DualAveraging{da_options});
  std::vector<double> eps(m, options_.sampler.step_size);
  if (adapt_step) {
    for (size_t k = 0; k < m; ++k) {
      BatchedChain& c = chains_[k];
      da[k].Restart(DualAveragingMu(eps[k]));  // CmdStan: mu from the configured step
      absl::StatusOr<StepSizeHeuristicResult> found =
          InitialStepSize(model_, c.state, c.inv_metric, eps[k], c.rng, a.heuristic);
      if (!found.ok()) return AtWarmupIteration(c.chain_id, 0, found.status());
      eps[k] = found->step_size;
      heuristic_trials_ += found->trials;
      result_.chains[k].heuristic_trials += found->trials;
    }
  }

  if (Cancelled()) return InterruptedInWarmup(0);
  WarmupAdapter& adapter = *adapter_;
  std::vector<WarmupAdapter::Chain> adapting(m);
  for (size_t k = 0; k < m; ++k) {
    BatchedChain& c = chains_[k];
    if (eps[k] != eps[k]) return NanStepSizeError(c.chain_id, 0);
    c.step_size = ClampStepSize(eps[k]);
    adapting[k].chain_id = c.chain_id;
    adapting[k].da = da[k];
    adapting[k].welford = WelfordVariance(adapt_metric ? d : 0);
    adapting[k].step_size = eps[k];
    adapting[k].inv_metric = c.inv_metric;
  }
  adapter.Reset(std::move(adapting));
  AB_ASSIGN_OR_RETURN(const BatchedRunResult run,
                      Run(*warmup_sampler_, options_.num_warmup, SamplePhase::kWarmup,
                          /*done=*/0, warmup_));
  if (run.cancelled) {
    return InterruptedInWarmup(static_cast<int64_t>(run.chains.front().stats.size()));
  }
  for (size_t k = 0; k < m; ++k) {
    const WarmupAdapter::Chain& adapted = adapter.chains()[k];
    result_.chains[k].warmup_divergences += run.divergences[k];
    heuristic_trials_ += adapted.heuristic_trials;
    result_.chains[k].heuristic_trials += adapted.heuristic_trials;
    da[k] = adapted.da;
    eps[k] = adapted.step_size;
    chains_[k].inv_metric = adapted.inv_metric;
  }
  if (options_.save_warmup) {
    AB_RETURN_IF_ERROR(StoreDraws(run, /*done=*/0, options_.num_warmup, /*warmup=*/true));
  }
  Report(SamplePhase::kWarmup, options_.num_warmup, warmup_.utilization());

  for (size_t k = 0; k < m; ++k) {
    BatchedChain& c = chains_[k];
    const double step = adapt_step ? da[k].FinalStepSize(eps[k]) : options_.sampler.step_size;
    if (!(std::isfinite(step) && step > 0)) {
      return ForChain(c.chain_id,
                      absl::FailedPreconditionError(absl::StrCat(
                          "the adapted step size is ", step, " after ", options_.num_warmup,
                          " warmup iterations; adaptation failed (look for divergences)")));
    }
    c.step_size = step;
    result_.chains[k].step_size = step;
    result_.chains[k].inv_metric = c.inv_metric;
  }
  return absl::OkStatus();
}

absl::Status Runner::Sampling() {
  const Clock::time_point t = Clock::now();
  int64_t done = 0;
  for (int64_t size : ChunkSizes(options_.num_samples, options_.num_chunks)) {
    if (Cancelled()) {
      result_.interrupted = true;
      break;
    }
    AB_ASSIGN_OR_RETURN(const BatchedRunResult run, Run(sampler_, size, SamplePhase::kSampling, done, sampling_));
    if (run.cancelled) {
      // Every chain keeps as many draws as the slowest completed.
      result_.interrupted = true;
      size = static_cast<int64_t>(run.chains.front().stats.size());
    }
    for (size_t k = 0; k < chains_.size(); ++k) {
      ChainSummary& summary = result_.chains[k];
      for (int64_t n = 0; n < size; ++n) {
        const DrawStats& stats = run.chains[k].stats[static_cast<size_t>(n)];
        summary.sampling_divergences += stats.divergent ? 1 : 0;
        if (options_.algorithm == Algorithm::kNuts &&
            stats.treedepth >= options_.sampler.max_depth) {
          ++summary.max_depth_hits;
        }
      }
    }
    AB_RETURN_IF_ERROR(StoreDraws(run, done, size, /*warmup=*/false));
    done += size;
    Report(SamplePhase::kSampling, done, sampling_.utilization());
    if (run.cancelled) break;
  }
  if (result_.interrupted) {
    if (done == 0) {
      return absl::CancelledError(
          "Sample: interrupted at the start of sampling, before every chain had completed a "
          "draw; there are no draws to keep");
    }
    const Eigen::Index cols = static_cast<Eigen::Index>(result_.column_names.size());
    for (auto& draws : result_.draws) draws.conservativeResize(KeptDraws(done, options_.thin), cols);
  }
  result_.sampling_seconds = SecondsSince(t);
  result_.sampling_leapfrogs_taken = sampling_.taken;
  result_.sampling_leapfrogs_computed = sampling_.computed;
  result_.sampling_utilization = sampling_.utilization();
  result_.sampling_gradient_evaluations = sampling_.taken;
  return absl::OkStatus();
}

absl::Status Runner::StoreDraws(const BatchedRunResult& run, int64_t done, int64_t size,
                                bool warmup) {
  const int64_t d = model_.dimension();
  const int64_t constrained_size = model_.constrained_size();
  std::vector<Eigen::MatrixXd>& out = warmup ? result_.warmup_draws : result_.draws;
  std::vector<double> constrained(static_cast<size_t>(constrained_size));
  const auto [first, kept] = KeptInCall(done, size);
  for (size_t k = 0; k < chains_.size(); ++k) {
    const ScalarChainResult& chain = run.chains[k];
    for (int64_t i = 0; i < kept; ++i) {
      const int64_t n = first + i * options_.thin;
      const Eigen::Index row = (done + n) / options_.thin;
      const auto values = DrawStatValues(chain.stats[static_cast<size_t>(n)]);
      for (int j = 0; j < kNumDrawStats; ++j) out[k](row, j) = values[static_cast<size_t>(j)];
      const std::span<const double> q(chain.draws.data() + n * d, static_cast<size_t>(d));
      Constrain(model_, q, constrained);
      for (int64_t j = 0; j < constrained_size; ++j) {
        out[k](row, kNumDrawStats + j) = constrained[static_cast<size_t>(j)];
      }
    }
  }
  if (model_.generated_names().empty() || kept == 0) return absl::OkStatus();
  return Generate(run, done, size, warmup);
}

// The generated quantities of the kept draws among done .. done + size - 1
// of every chain (`run`'s), in calls of at most kGeneratedLanesPerCall
// lanes, one lane per (chain, draw), each with its own stream
// (GeneratedQuantitiesRng, or WarmupGeneratedQuantitiesRng for warmup
// draws); the constrained values are already in the draws.
absl::Status Runner::Generate(const BatchedRunResult& run, int64_t done, int64_t size,
                              bool warmup) {
  const int64_t d = model_.dimension();
  const int64_t c = model_.constrained_size();
  const int64_t g = static_cast<int64_t>(model_.generated_names().size());
  std::vector<Eigen::MatrixXd>& draws = warmup ? result_.warmup_draws : result_.draws;
  const auto [first, per_chain] = KeptInCall(done, size);
  const int64_t total = static_cast<int64_t>(chains_.size()) * per_chain;
  const int64_t batch = std::min(total, kGeneratedLanesPerCall);
  std::vector<double> q(static_cast<size_t>(batch * d));
  std::vector<double> constrained(static_cast<size_t>(batch * c));
  std::vector<uint64_t> keys(static_cast<size_t>(batch)), counters(static_cast<size_t>(batch));
  std::vector<double> out(static_cast<size_t>(batch * g));
  // Lane l's chain, its transition's index in the call and its iteration.
  auto lane = [&, first = first, per_chain = per_chain](int64_t l) {
    const size_t k = static_cast<size_t>(l / per_chain);
    const int64_t n = first + (l % per_chain) * options_.thin;
    return std::tuple<size_t, int64_t, int64_t>{k, n, done + n};
  };
  // The draws of an interrupted call are kept with their generated
  // quantities, so these calls ignore the (already set) interrupt flag.
  CallOptions generate_call = options_.call;
  generate_call.cancel = nullptr;
  for (int64_t begin = 0; begin < total; begin += batch) {
    const int64_t lanes = std::min(batch, total - begin);
    for (int64_t l = 0; l < lanes; ++l) {
      const auto [k, n, iteration] = lane(begin + l);
      const Eigen::Index row = iteration / options_.thin;
      std::copy_n(run.chains[k].draws.data() + n * d, d, q.data() + l * d);
      for (int64_t j = 0; j < c; ++j) constrained[l * c + j] = draws[k](row, kNumDrawStats + j);
      const uint64_t seed = ChainSeed(options_, k);
      const ChainRng rng = warmup ? WarmupGeneratedQuantitiesRng(seed, chains_[k].chain_id, iteration)
                                  : GeneratedQuantitiesRng(seed, chains_[k].chain_id, iteration);
      keys[l] = rng.key;
      counters[l] = rng.counter;
    }
    AB_RETURN_IF_ERROR(model_.GenerateBatch(
        {.lanes = lanes, .q = q.data(), .constrained = constrained.data(),
         .rng_keys = keys.data(), .rng_counters = counters.data()},
        out.data(), generate_call));
    for (int64_t l = 0; l < lanes; ++l) {
      const auto [k, n, iteration] = lane(begin + l);
      const Eigen::Index row = iteration / options_.thin;
      for (int64_t j = 0; j < g; ++j) draws[k](row, kNumDrawStats + c + j) = out[l * g + j];
    }
  }
  return absl::OkStatus();
}

// Whether MCSE, ESS and R-hat mean something for a column (see sample.h).
bool HasChainDiagnostics(std::string_view name, const Eigen::MatrixXd& column) {
  if (name == "accept_stat__" || name == "stepsize__" || name == "treedepth__" ||
      name == "n_leapfrog__" || name == "divergent__") {
    return false;
  }
  for (Eigen::Index k = 0; k < column.cols(); ++k) {
    if ((column.col(k).array() != column(0, k)).any()) return true;
  }
  return false;  // every chain constant (possibly at different values)
}

// "Sampling interrupted by <cause> after N of M draws" (per chain).
std::string InterruptedNote(const SampleResult& r) {
  return absl::StrCat("Sampling interrupted by ",
                      r.interrupted_by.empty() ? "SampleOptions::cancel" : r.interrupted_by,
                      " after ", r.num_draws(), " of ", r.options.num_samples, " draws");
}

nlohmann::ordered_json Number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------
// SampleResult.

Eigen::Index SampleResult::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < column_names.size(); ++i) {
    if (column_names[i] == name) return static_cast<Eigen::Index>(i);
  }
  return -1;
}

Eigen::MatrixXd SampleResult::Column(Eigen::Index col) const {
  AB_CHECK(col >= 0 && col < static_cast<Eigen::Index>(column_names.size()));
  const Eigen::Index n = draws.empty() ? 0 : draws[0].rows();
  Eigen::MatrixXd out(n, static_cast<Eigen::Index>(draws.size()));
  for (size_t k = 0; k < draws.size(); ++k) out.col(static_cast<Eigen::Index>(k)) = draws[k].col(col);
  return out;
}

int64_t SampleResult::total_divergences() const {
  int64_t n = 0;
  for (const ChainSummary& c : chains) n += c.warmup_divergences + c.sampling_divergences;
  return n;
}

int64_t SampleResult::total_max_depth_hits() const {
  int64_t n = 0;
  for (const ChainSummary& c : chains) n += c.max_depth_hits;
  return n;
}

// ---------------------------------------------------------------------------
// Memory.

double SampleMemoryBytes(const Model& model, const SampleOptions& options) {
  constexpr double kDouble = sizeof(double);
  // Summarize's copies of a column: the column, its split, the sort order
  // (value and index) and the radix sort's two key buffers, the sorted
  // values, the ranks, and Ess's centered draws and FFT buffers.
  constexpr double kSummaryDoublesPerDraw = 12;
  const double d = static_cast<double>(model.dimension());
  const double columns = kNumDrawStats + static_cast<double>(model.constrained_size()) +
                         static_cast<double>(model.generated_names().size());
  const double chains = static_cast<double>(options.num_chains);
  const int64_t thin = std::max<int64_t>(options.thin, 1);
  // The draws kept: sampling, and saved warmup.
  const double samples = static_cast<double>(KeptDraws(options.num_samples, thin));
  const double kept = samples + (options.save_warmup
                                     ? static_cast<double>(KeptDraws(options.num_warmup, thin))
                                     : 0.0);
  // The largest of ChunkSizes(total, num_chunks), the first.
  auto largest_chunk = [&options](int64_t total) -> double {
    if (total <= 0) return 0;
    const int64_t chunks = std::clamp<int64_t>(options.num_chunks, 1, total);
    return static_cast<double>(total / chunks + (total % chunks != 0 ? 1 : 0));
  };
  const AdaptationOptions& a = options.adaptation;
  const bool adapts = a.engaged && (a.adapt_step_size || a.adapt_metric) &&
                      options.algorithm != Algorithm::kRwmh;
  const double warmup_call =
      adapts ? static_cast<double>(options.num_warmup) : largest_chunk(options.num_warmup);
  const double largest_call = std::max(warmup_call, largest_chunk(options.num_samples));
  const double call_bytes_per_draw =
      (2 * d + kNumDrawStats) * kDouble + 1 + static_cast<double>(sizeof(DrawStats));
  const double summary_threads =
      std::clamp(static_cast<double>(options.call.shards), 1.0, columns);
  return chains * kept * columns * kDouble + chains * largest_call * call_bytes_per_draw +
         summary_threads * kSummaryDoublesPerDraw * samples * chains * kDouble;
}

int64_t SampleMemoryLimit(const SampleOptions& options) {
  return options.call.max_memory_bytes > 0 ? options.call.max_memory_bytes
                                           : DefaultMemoryLimit();
}


absl::Status CheckSampleMemory(const Model& model, const SampleOptions& options) {
  const double bytes = SampleMemoryBytes(model, options);
  const int64_t limit = SampleMemoryLimit(options);
  if (bytes <= static_cast<double>(limit)) return absl::OkStatus();
  return SampleTooBig(model, options, bytes, limit,
                      "the draws, what a VM call records and the summary's working set");
}

// ---------------------------------------------------------------------------
// Sample.

namespace {

void SetEbfmi(SampleResult& result);
absl::Status SummarizeColumns(SampleResult& result, int threads);

absl::StatusOr<SampleResult> SampleInScope(const Model& model, const SampleOptions& options_given) {
  SampleOptions options_in = options_given;
  if (options_in.call.shards == kAutoShards) {
    // A model whose kernel is not bit-stable cannot be sharded (vm/options.h).
    options_in.call.shards =
        model.batch_bit_stable()
            ? DefaultShards(options_in.num_chains, model.dimension(),
                            ThreadsPerRank(options_in.communicator))
            : 1;
  }
  AB_RETURN_IF_ERROR(ValidateOptions(model, options_in));
  // The draws are kept in plain vectors, which the allocator does not
  // charge: their estimate is reserved instead, so the VM calls' values and
  // stacks count against what it leaves.
  MemoryBudget* const budget = CurrentMemoryBudget();
  const int64_t reserved =
      static_cast<int64_t>(std::min(SampleMemoryBytes(model, options_in), 9e18));
  if (!budget->TryCharge(reserved)) {
    return SampleTooBig(model, options_in, static_cast<double>(budget->used() + reserved),
                        budget->limit(),
                        "the draws, with the memory of the run this one is part of");
  }
  const absl::Cleanup release = [budget, reserved] { budget->Release(reserved); };
  SampleOptions options = options_in;
  const int64_t d = model.dimension();
  if (!options.adaptation.load_path.empty()) {
    AB_ASSIGN_OR_RETURN(const AdaptedParameters loaded,
                        LoadAdaptation(options.adaptation.load_path, d));
    options.sampler.step_size = loaded.step_size;
    options.sampler.inv_metric = loaded.inv_metric;
  }
  if (options.sampler.inv_metric.empty()) options.sampler.inv_metric.assign(d, 1.0);
  const AdaptationOptions& a = options.adaptation;
  const bool adapts = a.engaged && (a.adapt_step_size || a.adapt_metric) &&
                      options.algorithm != Algorithm::kRwmh;
  if (adapts) {
    AB_RETURN_IF_ERROR((DualAveragingOptions{a.delta, a.gamma, a.kappa, a.t0}.Validate()));
    AB_RETURN_IF_ERROR(
        WindowSchedule::Create({options.num_warmup, a.init_buffer, a.term_buffer, a.window})
            .status());
    if (options.num_warmup == 0) {
      return absl::InvalidArgumentError(
          "Sample: num_warmup is 0 but adaptation is on; give num_warmup > 0, or turn "
          "adaptation off to sample with the configured (or loaded) step size and metric");
    }
  }

  // This process's chains (all of them without a communicator), with their
  // global ids: chain k's stream, seed and initial values are the same
  // whichever process runs it.
  Communicator& comm = options.communicator != nullptr ? *options.communicator : SingleProcess();
  const auto [own_first, own_last] = RankRange(options.num_chains, comm.rank(), comm.size());
  std::vector<ChainStart> starts(static_cast<size_t>(own_last - own_first));
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t k = static_cast<size_t>(own_first) + i;
    starts[i].chain_id = k;
    starts[i].seed = ChainSeed(options, k);
    if (options.init_values.empty()) continue;
    const std::vector<double>& given =
        options.init_values[options.init_values.size() == 1 ? 0 : k];
    starts[i].q.resize(static_cast<size_t>(d));
    if (absl::Status s = Unconstrain(model, given, starts[i].q); !s.ok()) {
      return ForChain(k, absl::Status(s.code(), absl::StrCat("initial values: ", s.message())));
    }
  }
  AB_ASSIGN_OR_RETURN(
      std::vector<BatchedChain> chains,
      MakeBatchedChains(model, options.sampler, starts, InitOptions{.radius = options.init_radius}));
  std::vector<uint64_t> ids(starts.size());
  std::iota(ids.begin(), ids.end(), static_cast<uint64_t>(own_first));
  AB_ASSIGN_OR_RETURN(std::unique_ptr<BatchedSampler> sampler,
                      BatchedSampler::Create(model, options.algorithm, options.sampler));

  options.call.cancel = options.cancel;

  SampleResult result;
  result.model_name = model.name();
  result.options = options;
  result.options.progress = nullptr;
  // The flag need not outlive Sample().
  result.options.cancel = nullptr;
  result.options.call.cancel = nullptr;
  result.options.communicator = nullptr;
  result.own_first_chain = own_first;
  result.own_last_chain = own_last;
  result.num_processes = comm.size();
  for (const std::string_view name : kDrawStatNames) result.column_names.emplace_back(name);
  for (std::string& name : OutputColumnNames(model)) result.column_names.push_back(std::move(name));
  const Eigen::Index cols = static_cast<Eigen::Index>(result.column_names.size());
  result.draws.assign(ids.size(), Eigen::MatrixXd(KeptDraws(options.num_samples, options.thin), cols));
  if (options.save_warmup) {
    result.warmup_draws.assign(ids.size(),
                               Eigen::MatrixXd(KeptDraws(options.num_warmup, options.thin), cols));
  }
  result.chains.resize(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) result.chains[k].chain_id = ids[k];

  // A process with no chains (more processes than chains) has nothing to run.
  Runner runner(model, options, *sampler, std::move(chains), result);
  if (!ids.empty()) {
    AB_RETURN_IF_ERROR(runner.Warmup());
    AB_RETURN_IF_ERROR(runner.Sampling());
  }
  result.gradient_evaluations =
      result.warmup_gradient_evaluations + result.sampling_gradient_evaluations;
  if (result.interrupted) result.interrupted_by = "SampleOptions::cancel";
  if (comm.size() == 1) {
    SetEbfmi(result);
    AB_RETURN_IF_ERROR(SummarizeColumns(result, options.call.shards));
    runner.ReportDone();
  }
  return result;
}

// Each chain's E-BFMI, from its sampling energies.
void SetEbfmi(SampleResult& result) {
  if (result.chains.empty()) return;
  const Eigen::VectorXd ebfmi = Ebfmi(result.Column(result.ColumnIndex("energy__")));
  for (size_t k = 0; k < result.chains.size(); ++k) {
    result.chains[k].ebfmi = ebfmi(static_cast<Eigen::Index>(k));
  }
}

// Every column's summary over all chains, on up to `threads` threads.
absl::Status SummarizeColumns(SampleResult& result, int threads) {
  // The columns' summaries are independent (each sorts its draws several
  // times: seconds for 1024 chains x 1000 draws), so they are computed on as
  // many threads as the VM calls' shards (at most one per hardware thread).
  const size_t num_columns = result.column_names.size();
  result.summary.assign(num_columns, SummaryRow{});
  std::atomic<size_t> next_column{0};
  auto summarize_columns = [&result, &next_column, num_columns] {
    for (size_t c = next_column++; c < num_columns; c = next_column++) {
      const Eigen::MatrixXd column = result.Column(static_cast<Eigen::Index>(c));
      SummaryRow row = Summarize(column);
      if (!HasChainDiagnostics(result.column_names[c], column)) {
        row.mcse = row.ess_bulk = row.ess_tail = row.rhat =
            std::numeric_limits<double>::quiet_NaN();
      }
      result.summary[c] = row;
    }
  };
  return RunOnThreads(
      static_cast<int>(std::clamp<int64_t>(threads, 1, static_cast<int64_t>(num_columns))),
      summarize_columns);
}

// The run figures every process counted for its own chains, in a fixed
// order: summed over processes, except times and VM calls (the processes ran
// at once: the longest counts).
constexpr int kSummedFigures = 6;
std::array<int64_t*, kSummedFigures> SummedFigures(SampleResult& r) {
  return {&r.warmup_gradient_evaluations, &r.sampling_gradient_evaluations,
          &r.warmup_leapfrogs_taken,      &r.warmup_leapfrogs_computed,
          &r.sampling_leapfrogs_taken,    &r.sampling_leapfrogs_computed};
}

// taken / computed as PhaseCounts::utilization.
double Utilization(int64_t taken, int64_t computed) {
  return PhaseCounts{.taken = taken, .computed = computed}.utilization();
}

// Every process of a sharded run (Sample's `communicator`) ran its own
// chains into `local`. They agree on the outcome, keep the same number of
// draws (an interrupted run's fewest), and send their chains, draws and
// figures to rank 0, which summarizes all of them.
absl::StatusOr<SampleResult> GatherRun(Communicator& comm, absl::StatusOr<SampleResult> local,
                                       const SampleOptions& options) {
  AB_RETURN_IF_ERROR(comm.AgreeOnStatus(local.status()));
  SampleResult& r = *local;
  const bool has_chains = !r.chains.empty();
  // The draws every chain keeps: the fewest any process kept (they differ
  // only when sampling was interrupted).
  NumberWriter facts;
  facts.Add(has_chains ? r.num_draws() : int64_t{-1});
  facts.Add(int64_t{r.interrupted ? 1 : 0});
  AB_ASSIGN_OR_RETURN(const std::vector<std::string> all_facts, comm.Gather(facts.Bytes(), 0));
  NumberWriter agreed;
  if (comm.rank() == 0) {
    int64_t fewest = -1;
    bool interrupted = false;
    for (const std::string& bytes : all_facts) {
      NumberReader in(bytes, "a rank's draw count");
      AB_ASSIGN_OR_RETURN(const int64_t kept, in.NextInt());
      AB_ASSIGN_OR_RETURN(const int64_t stopped, in.NextInt());
      if (kept >= 0 && (fewest < 0 || kept < fewest)) fewest = kept;
      interrupted = interrupted || stopped != 0;
    }
    agreed.Add(fewest);
    agreed.Add(int64_t{interrupted ? 1 : 0});
  }
  AB_ASSIGN_OR_RETURN(const std::string agreed_bytes, comm.Broadcast(agreed.Bytes(), 0));
  // Rows of every chain's draws once agreed.
  Eigen::Index rows = KeptDraws(options.num_samples, options.thin);
  {
    NumberReader in(agreed_bytes, "the agreed draws");
    AB_ASSIGN_OR_RETURN(const int64_t fewest, in.NextInt());
    AB_ASSIGN_OR_RETURN(const int64_t interrupted, in.NextInt());
    if (interrupted != 0) {
      rows = fewest;
      r.interrupted = true;
      if (r.interrupted_by.empty()) r.interrupted_by = "SampleOptions::cancel";
      for (Eigen::MatrixXd& draws : r.draws) draws.conservativeResize(fewest, draws.cols());
    }
  }
  SetEbfmi(r);

  // Chains (summaries, draws, saved warmup) and figures to rank 0.
  NumberWriter out;
  for (int64_t* figure : SummedFigures(r)) out.Add(*figure);
  out.Add(r.compile_seconds);
  out.Add(r.warmup_seconds);
  out.Add(r.sampling_seconds);
  out.Add(r.vm_calls);
  out.Add(static_cast<int64_t>(r.chains.size()));
  for (size_t k = 0; k < r.chains.size(); ++k) {
    const ChainSummary& c = r.chains[k];
    out.Add(static_cast<int64_t>(c.chain_id));
    out.Add(c.step_size);
    out.Add(static_cast<int64_t>(c.inv_metric.size()));
    out.Add(c.inv_metric);
    out.Add(c.warmup_divergences);
    out.Add(c.sampling_divergences);
    out.Add(c.max_depth_hits);
    out.Add(c.ebfmi);
    out.Add(c.heuristic_trials);
    out.Add(std::span<const double>(r.draws[k].data(), static_cast<size_t>(r.draws[k].size())));
    if (!r.warmup_draws.empty()) {
      out.Add(std::span<const double>(r.warmup_draws[k].data(),
                                      static_cast<size_t>(r.warmup_draws[k].size())));
    }
  }
  AB_ASSIGN_OR_RETURN(const std::vector<std::string> gathered, comm.Gather(out.Bytes(), 0));
  if (comm.rank() != 0) return local;  // its own chains; no summary

  SampleResult all = std::move(r);
  all.chains.clear();
  all.draws.clear();
  all.warmup_draws.clear();
  for (int64_t* figure : SummedFigures(all)) *figure = 0;
  all.vm_calls = 0;
  const Eigen::Index cols = static_cast<Eigen::Index>(all.column_names.size());
  const Eigen::Index warmup_rows = KeptDraws(options.num_warmup, options.thin);
  for (const std::string& bytes : gathered) {
    NumberReader in(bytes, "a rank's figures and chains");
    for (int64_t* figure : SummedFigures(all)) {
      AB_ASSIGN_OR_RETURN(const int64_t value, in.NextInt());
      *figure += value;
    }
    for (double* seconds : {&all.compile_seconds, &all.warmup_seconds, &all.sampling_seconds}) {
      AB_ASSIGN_OR_RETURN(const double value, in.Next());
      *seconds = std::max(*seconds, value);
    }
    AB_ASSIGN_OR_RETURN(const int64_t vm_calls, in.NextInt());
    all.vm_calls = std::max(all.vm_calls, vm_calls);
    AB_ASSIGN_OR_RETURN(const int64_t chains, in.NextInt());
    for (int64_t k = 0; k < chains; ++k) {
      ChainSummary c;
      AB_ASSIGN_OR_RETURN(const int64_t id, in.NextInt());
      c.chain_id = static_cast<uint64_t>(id);
      AB_ASSIGN_OR_RETURN(c.step_size, in.Next());
      AB_ASSIGN_OR_RETURN(const int64_t metric_size, in.NextInt());
      c.inv_metric.resize(static_cast<size_t>(metric_size));
      AB_RETURN_IF_ERROR(in.Fill(c.inv_metric.data(), c.inv_metric.size()));
      AB_ASSIGN_OR_RETURN(c.warmup_divergences, in.NextInt());
      AB_ASSIGN_OR_RETURN(c.sampling_divergences, in.NextInt());
      AB_ASSIGN_OR_RETURN(c.max_depth_hits, in.NextInt());
      AB_ASSIGN_OR_RETURN(c.ebfmi, in.Next());
      AB_ASSIGN_OR_RETURN(c.heuristic_trials, in.NextInt());
      all.chains.push_back(std::move(c));
      all.draws.emplace_back(rows, cols);
      AB_RETURN_IF_ERROR(
          in.Fill(all.draws.back().data(), static_cast<size_t>(all.draws.back().size())));
      if (options.save_warmup) {
        all.warmup_draws.emplace_back(warmup_rows, cols);
        AB_RETURN_IF_ERROR(in.Fill(all.warmup_draws.back().data(),
                                   static_cast<size_t>(all.warmup_draws.back().size())));
      }
    }
  }
  all.gradient_evaluations = all.warmup_gradient_evaluations + all.sampling_gradient_evaluations;
  all.warmup_utilization = Utilization(all.warmup_leapfrogs_taken, all.warmup_leapfrogs_computed);
  all.sampling_utilization =
      Utilization(all.sampling_leapfrogs_taken, all.sampling_leapfrogs_computed);
  // Every chain's E-BFMI came with it; the columns are summarized here, on
  // the threads of every rank of this node (the others have finished their
  // chains; some may still write their CSV files).
  AB_RETURN_IF_ERROR(
      SummarizeColumns(all, std::max(1, all.options.call.shards) * comm.ranks_on_node()));
  if (options.progress) {
    SampleProgress done;
    done.phase = SamplePhase::kDone;
    done.num_chains = options.num_chains;
    done.num_processes = comm.size();
    done.iteration = done.phase_iterations = options.num_samples;
    done.total_iteration = done.total_iterations = options.num_warmup + options.num_samples;
    done.divergences = all.total_divergences();
    done.gradient_evaluations = all.gradient_evaluations;
    done.utilization = all.sampling_utilization;
    done.compile_seconds = all.compile_seconds;
    done.elapsed_seconds = all.compile_seconds + all.warmup_seconds + all.sampling_seconds;
    options.progress(done);
  }
  return all;
}

}  // namespace

absl::StatusOr<SampleResult> Sample(const Model& model, const SampleOptions& options) {
  const Clock::time_point start = Clock::now();
  auto run_here = [&model](const SampleOptions& o) -> absl::StatusOr<SampleResult> {
    if (o.call.max_memory_bytes < 0) {
      return BadOption("call.max_memory_bytes", absl::StrCat(o.call.max_memory_bytes),
                       "use 0 (the default limit) or a number of bytes");
    }
    MemoryScope memory = MemoryScope::ForRun(o.call.max_memory_bytes);
    return CatchResourceErrors("Sample", [&] { return SampleInScope(model, o); });
  };
  if (options.communicator == nullptr || options.communicator->size() == 1) {
    return run_here(options);
  }
  // Over processes: this process's chains run on a thread of their own
  // while this one, which may call MPI, relays their progress to rank 0.
  Communicator& comm = *options.communicator;
  absl::StatusOr<SampleResult> local = absl::InternalError("Sample: the run did not start");
  const RelayOptions relay{.interval_seconds = options.progress_interval_seconds,
                           .num_chains = options.num_chains,
                           .num_warmup = options.num_warmup,
                           .num_samples = options.num_samples,
                           .start = start};
  const absl::Status relayed =
      RelayProgress(comm, relay, options.progress, [&](const ProgressCallback& report) {
        SampleOptions own = options;
        own.progress = report;
        local = run_here(own);
      });
  if (!relayed.ok() && local.ok()) local = relayed;
  return GatherRun(comm, std::move(local), options);
}

// ---------------------------------------------------------------------------
// Stan CSV.

absl::StatusOr<std::vector<double>> ReadInitValues(const Model& model,
                                                   std::string_view json_text,
                                                   std::string_view source_name) {
  // The parameters' constrained values read like data: one f64 entry each.
  std::vector<DataSpec> specs;
  for (const ParameterSpec& p : model.parameters()) {
    specs.push_back({.name = p.name,
                     .dtype = DType::kF64,
                     .shape = std::vector<Extent>(p.shape.begin(), p.shape.end())});
  }
  AB_ASSIGN_OR_RETURN(std::vector<Tensor> values, ReadData(json_text, specs, source_name));
  std::vector<double> constrained;
  for (const Tensor& t : values) {
    const std::vector<double> v = t.ToVector<double>();
    constrained.insert(constrained.end(), v.begin(), v.end());
  }
  return constrained;
}

int DefaultShards(int64_t num_chains, int64_t dimension, int threads) {
  const int64_t per_shard = std::max<int64_t>(32, 6400 / std::max<int64_t>(dimension, 1));
  const int64_t by_size = (std::max<int64_t>(num_chains, 1) + per_shard - 1) / per_shard;
  return static_cast<int>(std::clamp<int64_t>(std::max<int64_t>(threads, by_size), 1, 256));
}

StanCsv MakeChainCsv(const SampleResult& result, size_t chain) {
  AB_CHECK(chain < result.chains.size());
  const SampleOptions& o = result.options;
  const AdaptationOptions& a = o.adaptation;
  const ChainSummary& c = result.chains[chain];
  const bool engaged = a.engaged && o.algorithm != Algorithm::kRwmh;
  StanCsv csv;
  auto line = [&](std::string text) { csv.config.push_back(std::move(text)); };
  line("autobatch = batched MCMC (Stan CSV layout)");
  line(absl::StrCat("model = ", result.model_name));
  line("method = sample");
  line("  sample");
  line(absl::StrCat("    num_samples = ", o.num_samples));
  line(absl::StrCat("    num_warmup = ", o.num_warmup));
  line(absl::StrCat("    save_warmup = ", o.save_warmup ? 1 : 0));
  line(absl::StrCat("    thin = ", o.thin));
  line("    adapt");
  line(absl::StrCat("      engaged = ", engaged ? 1 : 0));
  line(absl::StrCat("      gamma = ", a.gamma));
  line(absl::StrCat("      delta = ", a.delta));
  line(absl::StrCat("      kappa = ", a.kappa));
  line(absl::StrCat("      t0 = ", a.t0));
  line(absl::StrCat("      init_buffer = ", a.init_buffer));
  line(absl::StrCat("      term_buffer = ", a.term_buffer));
  line(absl::StrCat("      window = ", a.window));
  switch (o.algorithm) {
    case Algorithm::kNuts:
      line("    algorithm = hmc");
      line("      hmc");
      line("        engine = nuts");
      line("          nuts");
      line(absl::StrCat("            max_depth = ", o.sampler.max_depth));
      line("        metric = diag_e");
      line(absl::StrCat("        stepsize = ", o.sampler.step_size));
      line(absl::StrCat("        stepsize_jitter = ", o.sampler.step_size_jitter));
      break;
    case Algorithm::kHmc:
      line("    algorithm = hmc");
      line("      hmc");
      line("        engine = static");
      line(absl::StrCat("          num_leapfrog_steps = ", o.sampler.num_leapfrog_steps));
      line("        metric = diag_e");
      line(absl::StrCat("        stepsize = ", o.sampler.step_size));
      line(absl::StrCat("        stepsize_jitter = ", o.sampler.step_size_jitter));
      break;
    case Algorithm::kRwmh:
      line("    algorithm = rwmh");
      line(absl::StrCat("      scale = ", o.sampler.step_size));
      break;
  }
  line(absl::StrCat("    num_chains = ", o.num_chains));
  line(absl::StrCat("id = ", c.chain_id + 1));
  line(absl::StrCat("chain_id = ", c.chain_id));
  line("random");
  line(absl::StrCat("  seed = ", ChainSeed(o, chain)));
  line(o.init_values.empty() ? absl::StrCat("init = ", o.init_radius) : "init = user values");
  line(absl::StrCat("vm = ", o.call.vm == Vm::kStack ? "stack" : "stackless"));
  line(absl::StrCat("backend = ", o.call.backend));
  csv.column_names = result.column_names;
  StanAdaptation adaptation;
  if (result.warmup_draws.empty()) {
    csv.draws = result.draws[chain];
  } else {
    // CmdStan's layout: the saved warmup draws, the adaptation block, the
    // sampling draws.
    const Eigen::MatrixXd& warmup = result.warmup_draws[chain];
    const Eigen::MatrixXd& sampling = result.draws[chain];
    csv.draws.resize(warmup.rows() + sampling.rows(), sampling.cols());
    csv.draws << warmup, sampling;
    adaptation.draws_before = warmup.rows();
  }
  adaptation.step_size = c.step_size;
  adaptation.inverse_metric_diagonal =
      Eigen::Map<const Eigen::VectorXd>(c.inv_metric.data(),
                                        static_cast<Eigen::Index>(c.inv_metric.size()));
  csv.adaptation = adaptation;
  csv.timing = StanTiming{result.warmup_seconds, result.sampling_seconds,
                          result.warmup_seconds + result.sampling_seconds};
  if (result.interrupted) csv.notes.push_back(InterruptedNote(result));
  return csv;
}

namespace {

// Creates `dir` and its parents unless it is a directory already.
absl::Status MakeOutputDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::error_code is_dir_ec;
  if (ec || !std::filesystem::is_directory(dir, is_dir_ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create output directory '", dir, "'", ec ? ": " + ec.message() : std::string(),
        "; give a directory that exists or can be created"));
  }
  return absl::OkStatus();
}

// Whether `name` is one of the CSV writer's own files that a run of
// `num_chains` chains will not write: `output_<n>.csv` with n > num_chains,
// or any `output_<n>.csv.tmp.<pid>` (WriteFileAtomically's temporary file,
// left by a run that was killed). Nothing else in the directory is touched.
bool IsStaleChainCsvName(absl::string_view name, int64_t num_chains) {
  if (!absl::ConsumePrefix(&name, "output_")) return false;
  const size_t digits = name.find_first_not_of("0123456789");
  // No leading zero: the writer's numbers have none (output_01.csv is not its).
  if (digits == 0 || digits == absl::string_view::npos || name[0] == '0') return false;
  const absl::string_view number = name.substr(0, digits);
  name.remove_prefix(digits);
  if (!absl::ConsumePrefix(&name, ".csv")) return false;
  if (name.empty()) {
    int64_t n = 0;
    // A number too large for int64 is beyond every run's chains.
    return !absl::SimpleAtoi(number, &n) || n > num_chains;
  }
  return absl::ConsumePrefix(&name, ".tmp.") && !name.empty() &&
         name.find_first_not_of("0123456789") == absl::string_view::npos;
}

}  // namespace

std::string ChainCsvPath(const std::string& dir, uint64_t chain_id) {
  return (std::filesystem::path(dir) / absl::StrCat("output_", chain_id + 1, ".csv")).string();
}

absl::Status CheckChainCsvFiles(const std::string& dir, int64_t num_chains) {
  AB_RETURN_IF_ERROR(MakeOutputDirectory(dir));
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write in output directory '", dir, "': ", std::strerror(errno),
                     "; make it writable or give another directory"));
  }
  for (int64_t k = 0; k < num_chains; ++k) {
    const std::string path = ChainCsvPath(dir, static_cast<uint64_t>(k));
    auto bad = [&](const std::string& problem) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot write the CSV file of chain ", k, ": '", path, "' ", problem,
                       "; remove or rename it, or give another output directory"));
    };
    std::error_code ec;
    // symlink_status: a link is never followed (its target would be overwritten).
    const std::filesystem::file_status status = std::filesystem::symlink_status(path, ec);
    switch (status.type()) {
      case std::filesystem::file_type::not_found:
        break;  // the writer creates it; the directory is writable
      case std::filesystem::file_type::symlink:
        return bad("is a symbolic link (outputs are never written through one)");
      case std::filesystem::file_type::directory:
        return bad("is a directory");
      case std::filesystem::file_type::regular:
        if (access(path.c_str(), W_OK) != 0) {
          return bad(absl::StrCat("exists and cannot be written (", std::strerror(errno), ")"));
        }
        break;
      case std::filesystem::file_type::none:
      case std::filesystem::file_type::unknown:
        return bad(absl::StrCat("cannot be examined (", ec.message(), ")"));
      default:
        return bad("is not a regular file");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> RemoveStaleChainCsvFiles(const std::string& dir,
                                                                  int64_t num_chains) {
  std::vector<std::string> removed;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot list output directory '", dir, "': ", ec.message(),
        "; make it readable or give another directory"));
  }
  for (const std::filesystem::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!IsStaleChainCsvName(name, num_chains)) continue;
    if (unlink(entry.path().c_str()) != 0 && errno != ENOENT) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot remove '", entry.path().string(), "', an earlier run's file: ",
                       std::strerror(errno), "; remove it or give another output directory"));
    }
    removed.push_back(name);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

absl::StatusOr<std::vector<std::string>> WriteChainCsvFiles(const SampleResult& result,
                                                            const std::string& dir,
                                                            int sig_figs, int threads) {
  AB_RETURN_IF_ERROR(MakeOutputDirectory(dir));
  // This process's chains: all of them, or in a run over several processes
  // (rank 0 holds every chain) those it ran.
  std::vector<size_t> chains;
  for (size_t k = 0; k < result.chains.size(); ++k) {
    const auto id = static_cast<int64_t>(result.chains[k].chain_id);
    if (result.num_processes <= 1 || (id >= result.own_first_chain && id < result.own_last_chain)) {
      chains.push_back(k);
    }
  }
  // Each chain's file is independent: formatting 10^6 draws of 25 columns
  // takes seconds, so the chains are shared among threads.
  const size_t n = chains.size();
  std::vector<std::string> paths(n);
  std::vector<absl::Status> errors(n);
  std::atomic<size_t> next{0};
  AB_RETURN_IF_ERROR(CatchResourceErrors("writing the chains' CSV files", [&] {
    return RunOnThreads(threads > 0 ? threads : HardwareThreads(), [&] {
      for (size_t i = next++; i < n; i = next++) {
        paths[i] = ChainCsvPath(dir, result.chains[chains[i]].chain_id);
        errors[i] = WriteStanCsv(paths[i], MakeChainCsv(result, chains[i]), sig_figs);
      }
    });
  }));
  // Every failing chain is named. A failed file was not written at all
  // (WriteFileAtomically), but an earlier run's file may stand at its path:
  // it is removed, so no chain's file in `dir` looks complete but is not this
  // run's.
  std::string failures;
  int64_t failed = 0;
  for (size_t k = 0; k < n; ++k) {
    if (errors[k].ok()) continue;
    ++failed;
    std::string removed;
    struct stat st;
    if (lstat(paths[k].c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        unlink(paths[k].c_str()) == 0) {
      removed = absl::StrCat(" (the earlier run's '", paths[k], "' was removed)");
    }
    absl::StrAppend(&failures, "; writing the CSV file of chain ", result.chains[chains[k]].chain_id,
                    ": ", std::string(errors[k].message()), removed);
  }
  if (failed > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        failed, " of ", n, " chains' CSV files could not be written and are absent", failures));
  }
  return paths;
}

StanCsv MakeCombinedCsv(const SampleResult& result) {
  AB_CHECK(!result.chains.empty());
  StanCsv combined = MakeChainCsv(result, 0);
  // Chain 0's echo without the lines that name one chain.
  std::erase_if(combined.config, [](const std::string& line) {
    return absl::StartsWith(line, "id = ") || absl::StartsWith(line, "chain_id = ");
  });
  combined.config.push_back(absl::StrCat("chains = ", result.chains.size(),
                                         ", all in this file: chain__ is each draw's chain id "
                                         "(1-based, the id of its own file)"));
  combined.column_names.insert(combined.column_names.begin(), "chain__");
  combined.adaptation.reset();
  // Each chain's sampling draws (saved warmup draws are in the chains' own
  // files only: one file has no place to mark where each chain's warmup
  // ends).
  if (!result.warmup_draws.empty()) {
    combined.config.push_back("save_warmup: the warmup draws are in each chain's own file only");
  }
  Eigen::Index rows = 0;
  for (const Eigen::MatrixXd& draws : result.draws) rows += draws.rows();
  const Eigen::Index columns = static_cast<Eigen::Index>(result.column_names.size());
  combined.draws.resize(rows, columns + 1);
  Eigen::Index row = 0;
  for (size_t k = 0; k < result.chains.size(); ++k) {
    const Eigen::MatrixXd& draws = result.draws[k];
    combined.draws.block(row, 0, draws.rows(), 1).setConstant(
        static_cast<double>(result.chains[k].chain_id + 1));
    combined.draws.block(row, 1, draws.rows(), columns) = draws;
    row += draws.rows();
    // Each chain has its own adaptation; a Stan CSV file holds one block,
    // so here they are notes.
    const ChainSummary& c = result.chains[k];
    combined.notes.push_back(absl::StrCat("chain ", c.chain_id + 1, ": step size = ", c.step_size,
                                          "; inverse metric diagonal = ",
                                          absl::StrJoin(c.inv_metric, ", ")));
  }
  return combined;
}

absl::Status WriteCombinedCsvFile(const SampleResult& result, const std::string& path,
                                  int sig_figs) {
  return CatchResourceErrors("writing the combined CSV file", [&] {
    return WriteStanCsv(path, MakeCombinedCsv(result), sig_figs);
  });
}

// ---------------------------------------------------------------------------
// Summary.

namespace {

struct RunFigures {
  int64_t warmup_divergences = 0, sampling_divergences = 0;
  int64_t chains_with_divergences = 0, chains_with_max_depth = 0;
  int64_t chains_with_warmup_divergences = 0;
  int64_t max_depth_hits = 0;
  std::vector<uint64_t> low_ebfmi;
  double ess_bulk_lp = std::numeric_limits<double>::quiet_NaN();
  double ess_per_second = std::numeric_limits<double>::quiet_NaN();
  double ess_per_gradient = std::numeric_limits<double>::quiet_NaN();
};

RunFigures Figures(const SampleResult& r) {
  RunFigures f;
  for (const ChainSummary& c : r.chains) {
    f.warmup_divergences += c.warmup_divergences;
    f.sampling_divergences += c.sampling_divergences;
    f.chains_with_divergences += c.sampling_divergences > 0 ? 1 : 0;
    f.chains_with_warmup_divergences += c.warmup_divergences > 0 ? 1 : 0;
    f.max_depth_hits += c.max_depth_hits;
    f.chains_with_max_depth += c.max_depth_hits > 0 ? 1 : 0;
    if (c.ebfmi < kLowEbfmiThreshold) f.low_ebfmi.push_back(c.chain_id);
  }
  const Eigen::Index lp = r.ColumnIndex("lp__");
  if (lp >= 0 && static_cast<size_t>(lp) < r.summary.size()) {
    f.ess_bulk_lp = r.summary[static_cast<size_t>(lp)].ess_bulk;
    if (r.sampling_seconds > 0) f.ess_per_second = f.ess_bulk_lp / r.sampling_seconds;
    if (r.sampling_gradient_evaluations > 0) {
      f.ess_per_gradient =
          f.ess_bulk_lp / static_cast<double>(r.sampling_gradient_evaluations);
    }
  }
  return f;
}

// What divergences mean, in the summary and its JSON. Warmup's are
// expected: until the step size has adapted, early steps are too large
// for the curvature they meet.
constexpr char kWarmupDivergencesNote[] =
    ": expected while the step size adapts (early steps are too large); a concern only if "
    "divergences continue during sampling";
constexpr char kSamplingDivergencesNote[] =
    ": the step size cannot follow the posterior's curvature there, so the draws may be "
    "biased; raise adapt delta (e.g. 0.95) or reparameterize";

// "; ids 0: 3, 2: 1": the chains with a nonzero `count` and their counts,
// the first 10 ("" if none).
std::string ChainCounts(const SampleResult& r, int64_t ChainSummary::*count) {
  std::string ids;
  int64_t shown = 0;
  for (const ChainSummary& c : r.chains) {
    if (c.*count == 0) continue;
    if (shown++ == 10) {
      ids += ", ...";
      break;
    }
    absl::StrAppend(&ids, ids.empty() ? "; ids " : ", ", c.chain_id, ": ", c.*count);
  }
  return ids;
}

std::string Cell(double v, const char* format) {
  if (std::isnan(v)) return "nan";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, v);
  return buffer;
}

}  // namespace

std::string FormatSummary(const SampleResult& r) {
  const SampleOptions& o = r.options;
  std::string out;
  if (r.interrupted) {
    absl::StrAppend(&out, InterruptedNote(r), ": the summary covers those draws\n");
  }
  absl::StrAppendFormat(
      &out, "Model %s: %s, %d chains, %d warmup + %d sampling iterations each, seed %d\n\n",
      r.model_name, std::string(AlgorithmName(o.algorithm)), o.num_chains, o.num_warmup,
      o.num_samples, o.seed);
  size_t name_width = 4;
  for (const std::string& n : r.column_names) name_width = std::max(name_width, n.size());
  absl::StrAppendFormat(&out, "%-*s", static_cast<int>(name_width), "");
  for (const std::string_view c : kSummaryColumnNames) {
    absl::StrAppendFormat(&out, " %10s", std::string(c));
  }
  out += "\n";
  for (size_t i = 0; i < r.column_names.size() && i < r.summary.size(); ++i) {
    const SummaryRow& s = r.summary[i];
    absl::StrAppendFormat(&out, "%-*s", static_cast<int>(name_width), r.column_names[i]);
    for (const double v : {s.mean, s.mcse, s.stddev, s.mad, s.q5, s.q50, s.q95}) {
      absl::StrAppendFormat(&out, " %10s", Cell(v, "%.4g"));
    }
    absl::StrAppendFormat(&out, " %10s %10s %10s\n", Cell(s.ess_bulk, "%.0f"),
                          Cell(s.ess_tail, "%.0f"), Cell(s.rhat, "%.4f"));
  }
  const RunFigures f = Figures(r);
  out += "\n";
  absl::StrAppendFormat(&out, "Divergences: %d during sampling (%d of %d chains%s)%s\n",
                        f.sampling_divergences, f.chains_with_divergences, o.num_chains,
                        ChainCounts(r, &ChainSummary::sampling_divergences),
                        f.sampling_divergences > 0 ? kSamplingDivergencesNote : "");
  absl::StrAppendFormat(&out, "             %d during warmup (%d of %d chains%s)%s\n",
                        f.warmup_divergences, f.chains_with_warmup_divergences, o.num_chains,
                        ChainCounts(r, &ChainSummary::warmup_divergences),
                        f.warmup_divergences > 0 ? kWarmupDivergencesNote : "");
  if (o.algorithm == Algorithm::kNuts) {
    absl::StrAppendFormat(&out, "Max tree depth %d reached: %d transitions (%d chains)\n",
                          o.sampler.max_depth, f.max_depth_hits, f.chains_with_max_depth);
  }
  if (f.low_ebfmi.empty()) {
    absl::StrAppendFormat(&out, "E-BFMI: no chain below %.1f\n", kLowEbfmiThreshold);
  } else {
    std::string ids;
    for (size_t i = 0; i < f.low_ebfmi.size() && i < 10; ++i) {
      absl::StrAppend(&ids, i ? ", " : "", f.low_ebfmi[i]);
    }
    if (f.low_ebfmi.size() > 10) absl::StrAppend(&ids, ", ...");
    absl::StrAppendFormat(&out,
                          "Warning: E-BFMI below %.1f in %d chains (ids %s): the momentum "
                          "resampling may not explore the energy distribution\n",
                          kLowEbfmiThreshold, f.low_ebfmi.size(), ids);
  }
  absl::StrAppendFormat(&out, "Gradient evaluations: %d (warmup %d, sampling %d)\n",
                        r.gradient_evaluations, r.warmup_gradient_evaluations,
                        r.sampling_gradient_evaluations);
  absl::StrAppendFormat(&out, "Wall time: %.3f s compiling, %.3f s warmup, %.3f s sampling",
                        r.compile_seconds, r.warmup_seconds, r.sampling_seconds);
  if (r.num_processes > 1) {
    absl::StrAppendFormat(&out, " (the longest of %d processes)", r.num_processes);
  }
  out += "\n";
  absl::StrAppendFormat(&out,
                        "ESS_bulk(lp__): %s; per second of sampling %s; per sampling gradient "
                        "evaluation %s\n",
                        Cell(f.ess_bulk_lp, "%.1f"), Cell(f.ess_per_second, "%.4g"),
                        Cell(f.ess_per_gradient, "%.4g"));
  if (r.sampling_leapfrogs_computed == 0 && r.sampling_leapfrogs_taken > 0) {
    absl::StrAppend(&out,
                    "Batch utilization: not measured (the model is a program inlined into the "
                    "sampling program, so its executions are not counted apart); "
                    "free-running\n");
  } else {
    absl::StrAppendFormat(&out,
                          "Batch utilization (leapfrogs taken / computed): sampling %.1f%% "
                          "(%d / %d), warmup %.1f%% (%d / %d); both free-running\n",
                          100.0 * r.sampling_utilization, r.sampling_leapfrogs_taken,
                          r.sampling_leapfrogs_computed, 100.0 * r.warmup_utilization,
                          r.warmup_leapfrogs_taken, r.warmup_leapfrogs_computed);
  }
  return out;
}

nlohmann::ordered_json SummaryJson(const SampleResult& r) {
  using json = nlohmann::ordered_json;
  const SampleOptions& o = r.options;
  json j;
  // The run, in a few keys; then the per-column summary, what a reader
  // looks for first; then the run's totals; per-chain details last.
  j["model"] = r.model_name;
  j["algorithm"] = std::string(AlgorithmName(o.algorithm));
  j["num_chains"] = o.num_chains;
  j["num_warmup"] = o.num_warmup;
  j["num_samples"] = o.num_samples;
  j["num_draws"] = r.num_draws();
  j["seed"] = o.seed;
  j["interrupted"] = r.interrupted ? json(r.interrupted_by) : json(false);
  j["columns"] = json::array();
  for (size_t i = 0; i < r.column_names.size() && i < r.summary.size(); ++i) {
    const SummaryRow& s = r.summary[i];
    j["columns"].push_back({{"name", r.column_names[i]},
                            {"mean", Number(s.mean)},
                            {"mcse", Number(s.mcse)},
                            {"stddev", Number(s.stddev)},
                            {"mad", Number(s.mad)},
                            {"q5", Number(s.q5)},
                            {"q50", Number(s.q50)},
                            {"q95", Number(s.q95)},
                            {"ess_bulk", Number(s.ess_bulk)},
                            {"ess_tail", Number(s.ess_tail)},
                            {"rhat", Number(s.rhat)}});
  }
  const RunFigures f = Figures(r);
  j["divergences"] = {
      {"sampling", f.sampling_divergences},
      {"sampling_chains", f.chains_with_divergences},
      {"warmup", f.warmup_divergences},
      {"warmup_chains", f.chains_with_warmup_divergences},
      // Without the leading ": " of the text summary.
      {"warmup_note", std::string(kWarmupDivergencesNote + 2)},
  };
  j["max_depth_hits"] = f.max_depth_hits;
  j["low_ebfmi_chains"] = f.low_ebfmi;
  j["gradient_evaluations"] = r.gradient_evaluations;
  j["warmup_gradient_evaluations"] = r.warmup_gradient_evaluations;
  j["sampling_gradient_evaluations"] = r.sampling_gradient_evaluations;
  j["leapfrogs_taken"] = {{"warmup", r.warmup_leapfrogs_taken},
                          {"sampling", r.sampling_leapfrogs_taken}};
  j["leapfrogs_computed"] = {{"warmup", r.warmup_leapfrogs_computed},
                             {"sampling", r.sampling_leapfrogs_computed}};
  j["utilization"] = {{"warmup", Number(r.warmup_utilization)},
                      {"sampling", Number(r.sampling_utilization)}};
  j["compile_seconds"] = r.compile_seconds;
  j["warmup_seconds"] = r.warmup_seconds;
  j["sampling_seconds"] = r.sampling_seconds;
  j["vm_calls"] = r.vm_calls;
  j["num_processes"] = r.num_processes;
  j["ess_bulk_lp_per_second"] = Number(f.ess_per_second);
  j["ess_bulk_lp_per_gradient"] = Number(f.ess_per_gradient);
  j["chains"] = json::array();
  for (const ChainSummary& c : r.chains) {
    json metric = json::array();
    for (const double v : c.inv_metric) metric.push_back(Number(v));
    j["chains"].push_back({{"chain_id", c.chain_id},
                           {"step_size", Number(c.step_size)},
                           {"warmup_divergences", c.warmup_divergences},
                           {"sampling_divergences", c.sampling_divergences},
                           {"max_depth_hits", c.max_depth_hits},
                           {"ebfmi", Number(c.ebfmi)},
                           {"inv_metric", metric}});
  }
  return j;
}

}  // namespace autobatch::mcmc
