// Sample(): a whole CmdStan-style run of many chains on the batched VM —
// initialization, adaptive warmup, sampling — and its outputs: per-chain
// draws with Stan's columns, diagnostics, Stan CSV files, the summary table
// and its JSON form.
//
// Chains are ids 0 .. num_chains-1 with streams MakeChainRng(seed, id),
// initialized as MakeBatchedChains does (Stan style, InitializeChain).
//
// WARMUP is FREE-RUNNING: after the first step-size heuristic (on the host,
// per chain), all warmup iterations run in one VM call whose program calls
// the WarmupAdapter kernel (warmup_adapter.h) after each transition: each
// chain's own DualAveraging, WelfordVariance, (shared, identical)
// WindowSchedule and, at window ends, the step-size heuristic with the
// chain's own stream — exactly RunScalarWarmup's steps in its order
// (scalar_warmup.h), between that chain's transitions, while other chains
// run on. So for a batch-bit-stable model a chain's adapted step size and
// inverse metric, and its state and stream after warmup, are bit for bit
// RunScalarWarmup's for the same chain, whatever num_chains, and no chain
// waits for another. Without adaptation (adapt off, or rwmh) warmup is plain
// burn-in, in num_chunks calls.
//
// SAMPLING is free-running too: num_samples transitions in `num_chunks` VM
// calls (one by default; each chain loops over its own transitions within a
// call). Splitting into chunks does not change any bit: a chain continues
// from its state and stream. Progress is reported while a call runs.
//
// GENERATED QUANTITIES (Model::generated_names, model.h) are computed after
// each sampling call by Model::GenerateBatch, batched over (chain, draw)
// lanes, each draw with its own stream GeneratedQuantitiesRng(seed, chain
// id, draw) (chain_rng.h), never the sampler's: they never change a draw,
// and they do not depend on num_chunks or call.shards. Model::CheckGenerated
// runs before any work.
#ifndef AUTOBATCH_MCMC_SAMPLE_H_
#define AUTOBATCH_MCMC_SAMPLE_H_

#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mcmc/output/diagnostics.h"
#include "mcmc/model/model.h"
#include "mcmc/output/progress.h"
#include "mcmc/sampler_config.h"
#include "mcmc/scalar/scalar_warmup.h"
#include "mcmc/output/stan_csv.h"
#include "support/communicator.h"
#include "vm/options.h"

namespace autobatch::mcmc {

// Warmup adaptation (CmdStan's "adapt" arguments).
struct AdaptationOptions {
  // false: no adaptation at all (CmdStan adapt engaged=0): warmup is burn-in
  // with SampleOptions::sampler's step size and metric.
  bool engaged = true;
  double delta = 0.8;
  double gamma = 0.05;
  double kappa = 0.75;
  double t0 = 10;
  int64_t init_buffer = 75;
  int64_t term_buffer = 50;
  int64_t window = 25;
  // Either can be turned off alone (a fixed step size or a fixed metric).
  bool adapt_step_size = true;
  bool adapt_metric = true;
  StepSizeHeuristicOptions heuristic;
  // A file written by SaveAdaptation (scalar_warmup.h). Non-empty: its step
  // size and inverse metric replace sampler.step_size and
  // sampler.inv_metric as the starting values of every chain (adaptation,
  // if engaged, starts from them; with engaged = false they are used as is).
  std::string load_path;
};

// SampleOptions::call.shards: chosen by Sample() (DefaultShards).
inline constexpr int kAutoShards = 0;

struct SampleOptions {
  Algorithm algorithm = Algorithm::kNuts;
  int64_t num_chains = 4;      // >= 1
  int64_t num_warmup = 1000;   // >= 0; 0 requires adaptation off
  int64_t num_samples = 1000;  // >= 1
  uint64_t seed = 1;
  // Per-chain seeds (cmdstanpy's seed list): empty = `seed` for every
  // chain; otherwise num_chains values, chain k's stream being
  // MakeChainRng(chain_seeds[k], k) (and its generated quantities' keyed
  // the same way).
  std::vector<uint64_t> chain_seeds;
  // Initial values (CmdStan's init=). With `init_values` empty, each chain
  // starts at uniform(-init_radius, init_radius) on every unconstrained
  // coordinate (0: at the origin), retried until the log density and
  // gradient are finite (InitializeChain). Otherwise the chains start at
  // these constrained values, mapped through the inverse transforms: every
  // parameter's values flattened in parameters() order (constrained_size()
  // of them; ReadInitValues reads them from CmdStan JSON), one vector for
  // every chain or one per chain. A value outside its parameter's support,
  // or a point where the log density or gradient is not finite, is an error
  // naming the chain.
  double init_radius = 2.0;
  std::vector<std::vector<double>> init_values;
  // Keep every thin-th transition: iterations 0, thin, 2 thin, ... of each
  // phase (CmdStan's thin=), so ceil(num_samples / thin) draws per chain.
  // >= 1. The kept draws are bit for bit the unthinned run's rows
  // 0, thin, 2 thin, ... (generated quantities included); divergence and
  // tree-depth counts cover every transition.
  int64_t thin = 1;
  // Keep the warmup draws too (CmdStan's save_warmup=1), thinned the same
  // way: SampleResult::warmup_draws, written before the adaptation block of
  // each CSV file as CmdStan does. The summary covers sampling draws only.
  bool save_warmup = false;
  // max_depth, max_delta_h, jitter, num_leapfrog_steps as configured; the
  // step size and inverse metric are the starting (or, without adaptation,
  // fixed) values of every chain.
  SamplerConfig sampler;
  AdaptationOptions adaptation;
  // Which VM and backend run the batch, and their limits. The stack VM's
  // block policy defaults to most-lanes here: a sampler program is many
  // cheap blocks around one model kernel (docs/BENCHMARKS.md, "Block policy").
  // call.shards defaults to kAutoShards: DefaultShards(num_chains,
  // dimension, hardware threads) for a batch-bit-stable model (one shard
  // otherwise), as the CLI's --shards auto, the threads being divided among
  // the ranks on the node in a run over processes (ThreadsPerRank,
  // support/communicator.h); draws do not depend on it.
  CallOptions call{
      .vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes, .shards = kAutoShards};
  // Sampling (and adaptation-free warmup) is split into at most this many
  // VM calls. >= 1. Each chunk boundary makes every chain wait for the
  // slowest one, so more chunks cost utilization; progress does not need
  // them (see progress_interval_seconds).
  int64_t num_chunks = 1;
  // Optional; see progress.h.
  ProgressCallback progress;
  // While a VM call of more than one iteration runs, `progress` is called
  // about this often, from a helper thread (Sample()'s own thread waits in
  // the VM meanwhile, so calls never overlap). <= 0: only between VM calls.
  double progress_interval_seconds = 0.25;
  // Optional: a flag that interrupts the run when it becomes true (a SIGINT
  // handler's, say: a relaxed store is async-signal-safe). Read relaxed,
  // never written; must outlive Sample(). The VM calls check it every few
  // dozen block executions (CallOptions::cancel), Sample() between calls.
  // Set during sampling: Sample() stops and returns the draws so far,
  // SampleResult::interrupted, the same number for every chain (the fewest
  // any chain completed). Set before or during warmup, or before any chain
  // completed a draw: Cancelled, saying so (there are no draws to keep).
  const std::atomic<bool>* cancel = nullptr;
  // The processes the run is spread over (support/communicator.h: MPI ranks
  // under mpirun; null = this process alone). Every process calls Sample()
  // with the same options. Process r runs chains RankRange(num_chains, r,
  // size) with their global ids — so every chain's draws are those of a
  // one-process run — on call.shards threads of its own; a process past the
  // last chain runs none. The processes agree on the outcome (an error on
  // one is the error of all, naming its rank), and rank 0 gathers every
  // chain and summarizes them: its SampleResult is the one-process run's
  // (figures summed over processes; times the longest). Another rank's
  // holds its own chains and no summary. Each process runs its chains on a
  // thread of its own while the calling thread (the one that may call MPI)
  // posts their progress to rank 0 (mcmc/output/progress_relay.h); rank 0's
  // `progress` gets reports of the whole run, every process's combined, on
  // the calling thread, at progress_interval_seconds (0.25 s if <= 0);
  // other processes' `progress` is not called.
  Communicator* communicator = nullptr;
};

// Per-chain outcome.
struct ChainSummary {
  uint64_t chain_id = 0;
  double step_size = 0;            // adapted (or fixed) step size
  std::vector<double> inv_metric;  // adapted (or fixed) inverse metric
  int64_t warmup_divergences = 0;
  int64_t sampling_divergences = 0;
  // Sampling transitions whose treedepth__ reached max_depth (NUTS only).
  int64_t max_depth_hits = 0;
  double ebfmi = 0;  // of the sampling energies; NaN when undefined
  int64_t heuristic_trials = 0;
};

struct SampleResult {
  std::string model_name;
  SampleOptions options;  // as given (the progress callback dropped)
  // kDrawStatNames, then OutputColumnNames(model): constrained parameters,
  // then generated quantities.
  std::vector<std::string> column_names;
  // The chains this process ran: ids own_first_chain .. own_last_chain - 1
  // (all of them without a communicator), and how many processes ran the
  // run (SampleOptions::communicator).
  int64_t own_first_chain = 0;
  int64_t own_last_chain = 0;
  int num_processes = 1;
  // One per chain (chain ids 0..M-1 in order, or this process's own on a
  // rank other than 0): ceil(num_samples / thin) x columns.
  std::vector<Eigen::MatrixXd> draws;
  // With options.save_warmup, the warmup draws likewise (ceil(num_warmup /
  // thin) rows each); otherwise empty.
  std::vector<Eigen::MatrixXd> warmup_draws;
  std::vector<ChainSummary> chains;
  // One row per column: Summarize over all chains' draws of that column.
  // MCSE, ESS and R-hat are NaN (not computed) for the sampler statistics
  // accept_stat__, stepsize__, treedepth__, n_leapfrog__ and divergent__ —
  // they differ between chains because each chain has its own step size and
  // metric, which is not a convergence failure — and for any column in which
  // every chain is constant. lp__ and energy__ get every column.
  std::vector<SummaryRow> summary;
  // Run figures. Gradient evaluations: leapfrogs (one per model
  // evaluation) plus step-size heuristic trials, over all chains.
  int64_t warmup_gradient_evaluations = 0;
  int64_t sampling_gradient_evaluations = 0;
  int64_t gradient_evaluations = 0;  // the sum of the two
  // Model evaluations the chains used ("taken") and the lanes the batched
  // kernel ran ("computed" = kernel executions x batch), per phase.
  int64_t warmup_leapfrogs_taken = 0;
  int64_t warmup_leapfrogs_computed = 0;
  int64_t sampling_leapfrogs_taken = 0;
  int64_t sampling_leapfrogs_computed = 0;
  // taken / computed (1 when nothing was computed; NaN when not measured: a
  // model written as a program is inlined into the sampling program).
  double warmup_utilization = 1.0;
  double sampling_utilization = 1.0;
  // Wall time of each phase. The programs (and, with
  // call.jit_fused_blocks, their fused blocks) are compiled before warmup, in
  // compile_seconds, so warmup and sampling times and ESS per second do not
  // include compilation.
  double compile_seconds = 0;
  double warmup_seconds = 0;
  double sampling_seconds = 0;
  int64_t vm_calls = 0;
  // Sampling was interrupted (SampleOptions::cancel): every chain has
  // num_draws() < options.num_samples rows; summary, E-BFMI and counts are of
  // those. `interrupted_by` names the cause in the CSV files' note and the
  // summary ("SampleOptions::cancel" unless the caller names it, e.g. "SIGINT").
  bool interrupted = false;
  std::string interrupted_by;

  // Draws per chain (rows of each draws matrix).
  int64_t num_draws() const { return draws.empty() ? 0 : draws[0].rows(); }
  Eigen::Index ColumnIndex(std::string_view name) const;  // -1 if absent
  // Column `col` of every chain: num_samples x num_chains.
  Eigen::MatrixXd Column(Eigen::Index col) const;
  int64_t total_divergences() const;
  int64_t total_max_depth_hits() const;
};

// Constrained values of every parameter of `model` from CmdStan JSON (an
// init file, CmdStan's init=FILE, or `autobatch model --log-prob --at`):
// each parameter by name with its shape, real numbers, read as ReadData
// (mcmc/model/data.h) reads data, with its errors (missing parameter, wrong
// shape, not a number), each line starting with `source_name`. Returns
// them flattened in parameters() order: SampleOptions::init_values'
// layout. Whether they are inside their supports is checked by Unconstrain.
absl::StatusOr<std::vector<double>> ReadInitValues(const Model& model,
                                                   std::string_view json_text,
                                                   std::string_view source_name);

// A shard count (CallOptions::shards) for `num_chains` chains of a model of
// `dimension` coordinates on `threads` hardware threads: at least one shard
// per thread, and shards of at most max(32, 6400 / dimension) chains. The
// sampler's working set is a few dozen d-vectors per chain plus their
// stacks, and a batch whose working set leaves the L2 cache runs slower per
// chain, while every shard pays the per-block costs again; the bound fits
// the measurements on the 2-core development machine (d = 100: 16 shards of
// 64 chains ran 1024 chains 1.7x faster than 2 shards; d = 10: 2 shards of
// 512 beat 4 of 256 on the full README demo; docs/BENCHMARKS.md, "Shards per
// run").
// Draws do not depend on it.
int DefaultShards(int64_t num_chains, int64_t dimension, int threads);

// Sample(model, options)'s peak memory in bytes, estimated in floating point
// (so no product can overflow) from the three big buffers of a run:
//   - the draws it returns, SampleResult::draws: num_chains x num_samples x
//     (kNumDrawStats + dimension + generated quantities) doubles;
//   - its largest VM call (the adaptive warmup is one call of num_warmup
//     transitions; burn-in and sampling are num_chunks calls), which
//     records, then unpacks, every draw (BatchedSampler::Run): per chain and
//     transition 2 x dimension + kNumDrawStats doubles, a byte and a
//     DrawStats;
//   - the summary's working set: about 12 doubles per draw of one column
//     (its copies, splits, sort order and FFT), on each of
//     min(call.shards, columns) threads.
// No warmup draws are kept (Stan's save_warmup = 0). Requires
// options.num_chains, num_warmup, num_samples and num_chunks to be in the
// ranges Sample() accepts.
double SampleMemoryBytes(const Model& model, const SampleOptions& options);

// The memory limit of a run: options.call.max_memory_bytes, or by default
// DefaultMemoryLimit() (support/memory.h: 3/4 of the smallest of physical
// memory, RLIMIT_AS and the cgroup's memory.max). Everything Sample()
// holds counts against it: the draws (reserved up front, by
// SampleMemoryBytes) and every VM call's values, stacks and scratch.
int64_t SampleMemoryLimit(const SampleOptions& options);

// OK if SampleMemoryBytes(model, options) fits SampleMemoryLimit(options),
// else ResourceExhausted saying how much the run needs and what to lower
// (Sample() checks this first; a caller may check it before other
// preparations). Sample() checks again once its programs are compiled,
// adding what the sampler's program holds as it starts (its variables and
// first stack frames for every chain), so a run that would not fit stops
// before its first iteration rather than part way.
absl::Status CheckSampleMemory(const Model& model, const SampleOptions& options);

// Runs the chains as described at the top.
// Errors: InvalidArgument for bad options (naming the field and its value),
// a bad sampler config (SamplerConfig::Validate), or a loaded adaptation
// file of the wrong dimension; ResourceExhausted, before any work, for a run
// too big for its memory limit (CheckSampleMemory), and during the run when
// a VM call would pass it (never std::bad_alloc); NotFound / InvalidArgument from
// LoadAdaptation; initialization errors prefixed with the chain id;
// FailedPrecondition naming the chain and the warmup iteration when its
// adaptation fails (step-size heuristic, non-finite metric or step size);
// Cancelled when interrupted before there are draws (SampleOptions::cancel);
// the JIT's errors with call.jit_fused_blocks, before warmup (every program
// the run needs is compiled before its first iteration); the VM's errors
// (e.g. CallOptions::max_steps) otherwise.
absl::StatusOr<SampleResult> Sample(const Model& model, const SampleOptions& options);

// ---------------------------------------------------------------------------
// Outputs.

// Chain `chain`'s Stan CSV contents: CmdStan's config echo (model, method,
// num_samples, num_warmup, adapt settings, algorithm, max_depth, metric,
// stepsize, id = chain id + 1, seed, plus the VM and backend), the header
// (result.column_names), the adaptation block (step size and inverse
// metric; present also without adaptation, as the values used), the draws
// and the elapsed-time block (the run's warmup and sampling wall time —
// chains run together, so every chain reports the same times). An
// interrupted run's file ends with the note "Sampling interrupted by <cause>
// after N of M draws" (a comment, so Stan CSV readers still load the draws).
// Requires chain < result.chains.size() (checked).
StanCsv MakeChainCsv(const SampleResult& result, size_t chain);

// Where chain `chain_id`'s Stan CSV file goes in `dir`:
// `<dir>/output_<chain_id + 1>.csv` (CmdStan's naming of multi-chain runs).
std::string ChainCsvPath(const std::string& dir, uint64_t chain_id);

// Checks, before a run, that WriteChainCsvFiles can write the files of
// chains 0 .. num_chains - 1 (Sample()'s chain ids) in `dir`: creates `dir`
// if needed (as the writer would), and checks that it can be written in and
// that no chain's path (ChainCsvPath) is a directory, another non-file (a
// pipe would block the writer) or a file that cannot be written.
// FailedPrecondition naming the directory or the first bad path, its chain
// and what to do; a symbolic link is refused. (The checks cannot see the
// future: a disk that fills up still fails the writer.)
absl::Status CheckChainCsvFiles(const std::string& dir, int64_t num_chains);

// Removes, from `dir`, the CSV writer's files that a run of `num_chains`
// chains will not write: `output_<n>.csv` with n > num_chains (a run with
// more chains wrote them; left, they would be read as this run's) and
// temporary files `output_<n>.csv.tmp.<pid>` of a killed run. Nothing else is
// touched. Returns the removed names, sorted. Call it only while holding the
// directory (OutputDirectoryLock, support/output_file.h) and before the run,
// so a failed run does not leave a mix of two runs. FailedPrecondition
// naming the directory or file if it cannot be listed or removed.
absl::StatusOr<std::vector<std::string>> RemoveStaleChainCsvFiles(const std::string& dir,
                                                                  int64_t num_chains);

// Writes one file per chain at ChainCsvPath(dir, chain id) (in a run over
// several processes, per chain this process ran), creating `dir`
// if needed, on `threads` threads (0: one per hardware thread). Each file is
// replaced whole or not at all (WriteStanCsv). Returns the paths, in chain
// order. FailedPrecondition naming the directory if it cannot be created, or
// naming EVERY chain whose file cannot be written, each with its path and
// reason; such a chain's path is left absent (an earlier run's file there is
// removed), so no file in `dir` looks complete but is not this run's.
absl::StatusOr<std::vector<std::string>> WriteChainCsvFiles(
    const SampleResult& result, const std::string& dir,
    int sig_figs = kStanCsvDefaultSigFigs, int threads = 0);

// Every chain's draws in one Stan CSV (MCMC.md, "Output": "one file with a
// chain__ column"): the columns are chain__ (the chain id + 1, the `id` of
// its own file) then result.column_names; the rows are each chain's file's
// draws, chain after chain in result.chains order. The config echo is
// chain 0's without its `id` and `chain_id` lines, plus one saying how many
// chains the file holds; the elapsed-time block follows. There is no
// adaptation block, as every chain has its own step size and metric: they
// are notes after the timing block, one per chain, "chain <id + 1>: step
// size = X; inverse metric diagonal = a, b, ..." (6 significant digits;
// exact in the chains' own files and SummaryJson). An interrupted run's note
// comes first. Requires result.chains non-empty (checked).
StanCsv MakeCombinedCsv(const SampleResult& result);

// MakeCombinedCsv(result) written to `path`, replaced whole or not at all
// (WriteStanCsv; a symbolic link is refused). Errors: WriteStanCsv's, and
// ResourceExhausted when the copy of the draws does not fit in memory.
absl::Status WriteCombinedCsvFile(const SampleResult& result, const std::string& path,
                                  int sig_figs = kStanCsvDefaultSigFigs);

// The summary as CmdStan's stansummary prints it: one row per column with
// Mean, MCSE, StdDev, MAD, 5%, 50%, 95%, ESS_bulk, ESS_tail, R_hat, then
// lines for divergences, sampling's and warmup's apart (each with the chains
// affected, the first 10 ids with their counts, and when nonzero a note on
// what they mean: warmup's are expected while the step size adapts,
// sampling's may bias the draws), max tree
// depth hits, chains with E-BFMI below 0.3, gradient evaluations, ESS per
// second (bulk ESS of lp__ / sampling wall time) and per sampling gradient
// evaluation, and batch utilization. An interrupted run's summary starts with
// a line saying so and how many draws it covers.
std::string FormatSummary(const SampleResult& result);

// The same as JSON, its keys in this order: the run, the per-column
// summary, the run's totals, then the per-chain details:
//   {"model", "algorithm", "num_chains", "num_warmup", "num_samples",
//    "num_draws" (per chain), "seed", "interrupted" (false, or the cause,
//    e.g. "SIGINT"),
//    "columns": [{"name", "mean", "mcse", "stddev", "mad", "q5", "q50",
//                 "q95", "ess_bulk", "ess_tail", "rhat"}, ...],
//    "divergences": {"sampling", "sampling_chains", "warmup", "warmup_chains",
//                    "warmup_note"} (counts, chains affected, and what
//                   warmup divergences mean),
//    "max_depth_hits", "low_ebfmi_chains",
//    "gradient_evaluations", "warmup_gradient_evaluations",
//    "sampling_gradient_evaluations", "leapfrogs_taken", "leapfrogs_computed"
//    ({"warmup", "sampling"} each), "utilization" ({"warmup", "sampling"}),
//    "compile_seconds", "warmup_seconds", "sampling_seconds", "vm_calls",
//    "num_processes", "ess_bulk_lp_per_second", "ess_bulk_lp_per_gradient",
//    "chains": [{"chain_id", "step_size", "warmup_divergences",
//                "sampling_divergences", "max_depth_hits", "ebfmi",
//                "inv_metric"}, ...]}
// Non-finite numbers are the strings "nan", "inf", "-inf".
nlohmann::ordered_json SummaryJson(const SampleResult& result);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_SAMPLE_H_
