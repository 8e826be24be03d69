// Progress of a Sample() run: the event Sample() reports and a printer that
// shows it as a redrawn bar on a terminal or as occasional plain lines.
#ifndef AUTOBATCH_MCMC_OUTPUT_PROGRESS_H_
#define AUTOBATCH_MCMC_OUTPUT_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace autobatch::mcmc {

enum class SamplePhase : uint8_t { kWarmup, kSampling, kDone };
std::string_view SamplePhaseName(SamplePhase phase);  // "warmup", "sampling", "done"

// Where a run stands. Between VM calls every chain has done `iteration`
// iterations of the phase; while a call runs (reports from a helper thread,
// SampleOptions::progress_interval_seconds) chains progress unevenly and
// `iteration` is the draws recorded so far divided by the number of chains.
struct SampleProgress {
  SamplePhase phase = SamplePhase::kWarmup;
  int64_t num_chains = 0;
  // The processes the run is spread over (SampleOptions::communicator):
  // more than 1 only in rank 0's reports of a run over MPI ranks, which
  // combine every rank's (progress_relay.h).
  int num_processes = 1;
  // Iterations done per chain in this phase, and the phase's total.
  int64_t iteration = 0;
  int64_t phase_iterations = 0;
  // Iterations done per chain over the whole run (warmup + sampling), and
  // the run's total (num_warmup + num_samples).
  int64_t total_iteration = 0;
  int64_t total_iterations = 0;
  // Divergent transitions so far, over all chains (warmup and sampling).
  int64_t divergences = 0;
  // Model gradient evaluations so far, over all chains (leapfrogs and
  // step-size heuristic trials).
  int64_t gradient_evaluations = 0;
  // Batch utilization of the model kernel so far in this phase (leapfrogs
  // taken / leapfrogs computed); 1 before the kernel has run; NaN for a
  // model written as a program (not measured: printed "n/a").
  double utilization = 1.0;
  // Wall time since Sample() started, and of it, compiling the programs
  // before the first iteration.
  double elapsed_seconds = 0;
  double compile_seconds = 0;
  // The time the run's remaining iterations should take at its pace so far
  // (compilation left out); NaN before the first iteration is done, 0 at
  // kDone.
  double eta_seconds = 0;
};

// Called by Sample() after each VM call, while a long call runs (from a
// helper thread while Sample()'s thread waits in the VM: calls never
// overlap), and once with phase kDone. Must not throw. During a call the
// counts are live: iterations, divergences and gradient evaluations of the
// transitions completed so far, and the model kernel's utilization so far.
using ProgressCallback = std::function<void(const SampleProgress&)>;

// Prints SampleProgress to a stream (stderr in the CLI). Terminal mode:
// one line redrawn with '\r' at most every `min_redraw_seconds`, ended with
// '\n' at kDone. Plain mode (a log file, a pipe): one line each time the run
// passes another tenth of its iterations or `max_plain_silence_seconds`
// have passed since the last line, and one at kDone. Not thread-safe.
class ProgressPrinter {
 public:
  ProgressPrinter(std::FILE* out, bool terminal, double min_redraw_seconds = 0.1,
                  double max_plain_silence_seconds = 10);
  void Report(const SampleProgress& progress);
  // The text of one progress line (no '\r' or '\n'), e.g.
  // "sampling  1200/2000 (60%)  chains 1024  divergences 3  2.1e+06 grad/s
  //  utilization 87.5%  12.3 s  ETA 8 s" (grad/s leaves compilation out; at
  // kDone the ETA gives way to the compile time), with "chains 1024 on 3
  // ranks" in a run over processes.
  static std::string FormatLine(const SampleProgress& progress);
  ProgressCallback AsCallback();

 private:
  std::FILE* out_;
  bool terminal_;
  double min_redraw_seconds_;
  double max_plain_silence_seconds_;
  double last_redraw_ = -1e300;
  int last_tenth_ = -1;
  size_t last_width_ = 0;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_OUTPUT_PROGRESS_H_
