// Progress of a run over processes: posted reports, combined on rank 0.
#include "mcmc/output/progress_relay.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "support/memory.h"
#include "support/number_message.h"
#include "support/status.h"

namespace autobatch::mcmc {

std::string EncodeRankProgress(const RankProgress& report) {
  const SampleProgress& p = report.progress;
  NumberWriter out;
  out.Add(int64_t{report.ended ? 1 : 0});
  out.Add(static_cast<int64_t>(p.phase));
  for (const int64_t count : {p.num_chains, p.iteration, p.phase_iterations, p.total_iteration,
                              p.total_iterations, p.divergences, p.gradient_evaluations}) {
    out.Add(count);
  }
  for (const double value : {p.utilization, p.elapsed_seconds, p.compile_seconds, p.eta_seconds}) {
    out.Add(value);
  }
  return out.Bytes();
}

absl::StatusOr<RankProgress> DecodeRankProgress(std::string_view bytes) {
  NumberReader in(bytes, "a progress report");
  RankProgress report;
  SampleProgress& p = report.progress;
  AB_ASSIGN_OR_RETURN(const int64_t ended, in.NextInt());
  report.ended = ended != 0;
  AB_ASSIGN_OR_RETURN(const int64_t phase, in.NextInt());
  if (phase < 0 || phase > static_cast<int64_t>(SamplePhase::kDone)) {
    return absl::InternalError(absl::StrCat("a progress report names phase ", phase));
  }
  p.phase = static_cast<SamplePhase>(phase);
  for (int64_t* count : {&p.num_chains, &p.iteration, &p.phase_iterations, &p.total_iteration,
                         &p.total_iterations, &p.divergences, &p.gradient_evaluations}) {
    AB_ASSIGN_OR_RETURN(*count, in.NextInt());
  }
  for (double* value : {&p.utilization, &p.elapsed_seconds, &p.compile_seconds, &p.eta_seconds}) {
    AB_ASSIGN_OR_RETURN(*value, in.Next());
  }
  return report;
}

ProgressCombiner::ProgressCombiner(int64_t num_chains, int num_processes, int64_t num_warmup,
                                   int64_t num_samples)
    : num_chains_(num_chains),
      num_warmup_(num_warmup),
      num_samples_(num_samples),
      chains_(static_cast<size_t>(num_processes)),
      latest_(static_cast<size_t>(num_processes)),
      heard_(static_cast<size_t>(num_processes), false) {
  for (int r = 0; r < num_processes; ++r) {
    const auto [first, last] = RankRange(num_chains, r, num_processes);
    chains_[static_cast<size_t>(r)] = last - first;
  }
}

void ProgressCombiner::Update(int rank, const RankProgress& report) {
  if (rank < 0 || rank >= static_cast<int>(latest_.size())) return;
  latest_[static_cast<size_t>(rank)] = report;
  heard_[static_cast<size_t>(rank)] = true;
}

bool ProgressCombiner::AllEnded() const {
  return std::all_of(latest_.begin(), latest_.end(),
                     [](const RankProgress& r) { return r.ended; });
}

SampleProgress ProgressCombiner::Combined(double elapsed_seconds) const {
  SampleProgress all;
  all.num_chains = num_chains_;
  all.num_processes = static_cast<int>(latest_.size());
  all.total_iterations = num_warmup_ + num_samples_;
  all.elapsed_seconds = elapsed_seconds;
  all.eta_seconds = 0;
  double weighted_iterations = 0;
  double weighted_utilization = 0;
  for (size_t r = 0; r < latest_.size(); ++r) {
    const SampleProgress& p = latest_[r].progress;
    const double chains = static_cast<double>(chains_[r]);
    all.divergences += p.divergences;
    all.gradient_evaluations += p.gradient_evaluations;
    all.compile_seconds = std::max(all.compile_seconds, p.compile_seconds);
    if (chains_[r] == 0) continue;
    // Before a process's first report: no iterations, and no ETA yet.
    weighted_iterations += chains * static_cast<double>(heard_[r] ? p.total_iteration : 0);
    weighted_utilization += chains * (heard_[r] ? p.utilization : 1.0);
    if (latest_[r].ended) continue;
    const double eta =
        heard_[r] ? p.eta_seconds : std::numeric_limits<double>::quiet_NaN();
    all.eta_seconds = std::isnan(eta) || std::isnan(all.eta_seconds)
                          ? std::numeric_limits<double>::quiet_NaN()
                          : std::max(all.eta_seconds, eta);
  }
  const double chains = static_cast<double>(std::max<int64_t>(num_chains_, 1));
  all.total_iteration = std::min(all.total_iterations,
                                 static_cast<int64_t>(std::floor(weighted_iterations / chains)));
  all.utilization = num_chains_ > 0 ? weighted_utilization / chains : 1.0;
  if (all.total_iteration < num_warmup_) {
    all.phase = SamplePhase::kWarmup;
    all.iteration = all.total_iteration;
    all.phase_iterations = num_warmup_;
  } else {
    all.phase = SamplePhase::kSampling;
    all.iteration = all.total_iteration - num_warmup_;
    all.phase_iterations = num_samples_;
  }
  return all;
}

namespace {

// Rank 0: every report that has arrived, into `combiner`; whether any had.
absl::StatusOr<bool> ReceiveReports(Communicator& comm, ProgressCombiner& combiner) {
  bool any = false;
  while (true) {
    AB_ASSIGN_OR_RETURN(std::optional<Communicator::Posted> posted, comm.TryReceive());
    if (!posted.has_value()) return any;
    AB_ASSIGN_OR_RETURN(const RankProgress report, DecodeRankProgress(posted->bytes));
    combiner.Update(posted->source, report);
    any = true;
  }
}

}  // namespace

absl::Status RelayProgress(Communicator& comm, const RelayOptions& options,
                           const ProgressCallback& progress,
                           const std::function<void(const ProgressCallback& local)>& run) {
  using Clock = std::chrono::steady_clock;
  const std::chrono::duration<double> interval(
      options.interval_seconds > 0 ? options.interval_seconds : 0.25);
  std::mutex mu;
  std::condition_variable changed;
  RankProgress latest;  // guarded by mu
  bool fresh = false;   // guarded by mu: latest not posted yet
  std::exception_ptr thrown;
  const ProgressCallback local = [&](const SampleProgress& p) {
    const std::lock_guard<std::mutex> lock(mu);
    latest.progress = p;
    fresh = true;
  };
  MemoryBudget* const budget = CurrentMemoryBudget();
  std::thread worker([&] {
    try {
      const MemoryScope memory(budget);
      run(local);
    } catch (...) {
      thrown = std::current_exception();
    }
    const std::lock_guard<std::mutex> lock(mu);
    latest.ended = true;
    fresh = true;
    changed.notify_all();
  });

  std::optional<ProgressCombiner> combiner;
  if (comm.rank() == 0) {
    combiner.emplace(options.num_chains, comm.size(), options.num_warmup, options.num_samples);
  }
  absl::Status status;
  bool ended_seen = false;  // once seen, rank 0 waits out each interval
  while (status.ok()) {
    std::optional<RankProgress> report;
    {
      std::unique_lock<std::mutex> lock(mu);
      changed.wait_for(lock, interval, [&] { return latest.ended && !ended_seen; });
      ended_seen = latest.ended;
      if (fresh) report = latest;
      fresh = false;
    }
    if (!combiner.has_value()) {
      if (report.has_value()) status = comm.Post(0, EncodeRankProgress(*report));
      if (report.has_value() && report->ended) break;
      continue;
    }
    if (report.has_value()) combiner->Update(0, *report);
    const absl::StatusOr<bool> received = ReceiveReports(comm, *combiner);
    status = received.status();
    const bool news = report.has_value() || (received.ok() && *received);
    // The last report, once every process has ended, counts the whole run.
    if (news && progress) {
      progress(combiner->Combined(
          std::chrono::duration<double>(Clock::now() - options.start).count()));
    }
    if (combiner->AllEnded()) break;
  }
  worker.join();
  if (status.ok() && !combiner.has_value()) status = comm.FinishPosts();
  if (thrown) std::rethrow_exception(thrown);
  return status;
}

}  // namespace autobatch::mcmc
