// Progress of a Sample() run over processes (SampleOptions::communicator,
// MPI ranks): each process runs its own chains on a thread of its own while
// its main thread, the one that may call MPI (MPI_THREAD_FUNNELED), posts
// the latest report of those chains to rank 0 at intervals; rank 0 combines
// every process's latest into one report of the whole run and passes it to
// the user's callback, on its main thread. Point-to-point posts, not
// collectives: the processes need not report equally often, and one that
// finished or failed early only has to say so once.
#ifndef AUTOBATCH_MCMC_OUTPUT_PROGRESS_RELAY_H_
#define AUTOBATCH_MCMC_OUTPUT_PROGRESS_RELAY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mcmc/output/progress.h"
#include "support/communicator.h"

namespace autobatch::mcmc {

// One process's report as posted: its latest SampleProgress (of its own
// chains) and whether its part of the run has ended (finished or failed).
struct RankProgress {
  SampleProgress progress;
  bool ended = false;
};
std::string EncodeRankProgress(const RankProgress& report);
absl::StatusOr<RankProgress> DecodeRankProgress(std::string_view bytes);

// Rank 0's view of the whole run from every process's latest report.
class ProgressCombiner {
 public:
  // The run's chains, spread over `num_processes` by RankRange, and its
  // phases' lengths.
  ProgressCombiner(int64_t num_chains, int num_processes, int64_t num_warmup,
                   int64_t num_samples);

  void Update(int rank, const RankProgress& report);
  bool AllEnded() const;

  // The whole run at `elapsed_seconds` (rank 0's, since Sample() started):
  // iterations are the chain-weighted mean of the processes' (a process not
  // yet heard from at 0), and the phase is where that mean stands;
  // divergences and gradient evaluations are sums; utilization is the
  // chain-weighted mean (NaN if any process's is: not measured); compile
  // time and ETA are the longest of the processes still running (the run
  // ends with its slowest process).
  SampleProgress Combined(double elapsed_seconds) const;

 private:
  int64_t num_chains_;
  int64_t num_warmup_;
  int64_t num_samples_;
  std::vector<int64_t> chains_;  // per process
  std::vector<RankProgress> latest_;
  std::vector<bool> heard_;
};

struct RelayOptions {
  // How often each process posts its latest report, and how often rank 0
  // passes the combined one on (at most); <= 0 means 0.25 s.
  double interval_seconds = 0.25;
  int64_t num_chains = 0;
  int64_t num_warmup = 0;
  int64_t num_samples = 0;
  // When Sample() started, for the combined report's elapsed time.
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

// Runs `run` — this process's part of the run, given the callback its own
// reports go to — on a new thread (with this thread's memory budget,
// support/memory.h), and relays progress on this one as the header
// describes, calling `progress` (rank 0's; may be null) with combined
// reports — the last once every process has ended, counting the whole run
// — but never with SamplePhase::kDone (the gathered run's final report is
// Sample()'s). Returns once `run` has returned and, on rank 0, every
// process has said its part ended, so the collective steps after it find
// every process there; an exception from `run` is rethrown then. The
// status is the relay's own (an MPI failure); `run` keeps its outcome.
// Collective in effect: every process of `comm` calls it.
absl::Status RelayProgress(Communicator& comm, const RelayOptions& options,
                           const ProgressCallback& progress,
                           const std::function<void(const ProgressCallback& local)>& run);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_OUTPUT_PROGRESS_RELAY_H_
