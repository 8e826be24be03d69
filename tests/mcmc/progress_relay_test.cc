// The progress of a run over processes (mcmc/output/progress_relay.h): the
// reports' wire form, rank 0's combination of every process's latest, and
// the relay's thread and message discipline, with a scripted communicator
// (tests/mcmc/sample_mpi_test.cc runs it over real MPI ranks).
#include "mcmc/output/progress_relay.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/memory.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

SampleProgress Report(SamplePhase phase, int64_t total_iteration, int64_t gradients) {
  SampleProgress p;
  p.phase = phase;
  p.total_iteration = total_iteration;
  p.gradient_evaluations = gradients;
  p.divergences = 1;
  p.utilization = 0.5;
  p.eta_seconds = 10;
  p.compile_seconds = 2;
  return p;
}

TEST(ProgressRelayTest, ReportsRoundTripThroughTheirBytes) {
  RankProgress sent{Report(SamplePhase::kSampling, 1234, 99), /*ended=*/true};
  sent.progress.num_chains = 7;
  sent.progress.utilization = std::nan("");
  const absl::StatusOr<RankProgress> back = DecodeRankProgress(EncodeRankProgress(sent));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->ended);
  EXPECT_EQ(back->progress.phase, SamplePhase::kSampling);
  EXPECT_EQ(back->progress.num_chains, 7);
  EXPECT_EQ(back->progress.total_iteration, 1234);
  EXPECT_EQ(back->progress.gradient_evaluations, 99);
  EXPECT_TRUE(std::isnan(back->progress.utilization));
  EXPECT_EQ(back->progress.eta_seconds, 10);
}

TEST(ProgressRelayTest, AShortOrGarbledReportIsAnError) {
  const std::string bytes = EncodeRankProgress(RankProgress{});
  EXPECT_THAT(std::string(DecodeRankProgress(bytes.substr(0, 20)).status().message()),
              HasSubstr("fewer numbers than a progress report need"));
  std::string bad_phase = bytes;
  const double phase = 7;
  std::memcpy(bad_phase.data() + sizeof(double), &phase, sizeof phase);
  EXPECT_THAT(std::string(DecodeRankProgress(bad_phase).status().message()),
              HasSubstr("phase 7"));
}

// 10 chains over 3 processes: 4, 3 and 3.
TEST(ProgressRelayTest, CombinesEveryProcesssLatestReport) {
  ProgressCombiner combiner(/*num_chains=*/10, /*num_processes=*/3, /*num_warmup=*/100,
                            /*num_samples=*/50);
  // Nothing heard: no iterations, no ETA yet.
  SampleProgress none = combiner.Combined(1.0);
  EXPECT_EQ(none.num_processes, 3);
  EXPECT_EQ(none.num_chains, 10);
  EXPECT_EQ(none.total_iteration, 0);
  EXPECT_EQ(none.total_iterations, 150);
  EXPECT_EQ(none.phase, SamplePhase::kWarmup);
  EXPECT_TRUE(std::isnan(none.eta_seconds));
  EXPECT_FALSE(combiner.AllEnded());

  combiner.Update(0, {Report(SamplePhase::kSampling, 120, 1000), false});
  combiner.Update(1, {Report(SamplePhase::kWarmup, 90, 500), false});
  RankProgress last = {Report(SamplePhase::kDone, 150, 700), /*ended=*/true};
  last.progress.eta_seconds = 0;
  last.progress.compile_seconds = 5;
  combiner.Update(2, last);
  combiner.Update(2, last);  // a repeat changes nothing
  const SampleProgress all = combiner.Combined(3.5);
  // (4 * 120 + 3 * 90 + 3 * 150) / 10 = 120: 20 iterations into sampling.
  EXPECT_EQ(all.total_iteration, 120);
  EXPECT_EQ(all.phase, SamplePhase::kSampling);
  EXPECT_EQ(all.iteration, 20);
  EXPECT_EQ(all.phase_iterations, 50);
  EXPECT_EQ(all.gradient_evaluations, 2200);
  EXPECT_EQ(all.divergences, 3);
  EXPECT_DOUBLE_EQ(all.utilization, 0.5);
  EXPECT_EQ(all.compile_seconds, 5);  // the longest
  EXPECT_EQ(all.eta_seconds, 10);     // of those still running
  EXPECT_EQ(all.elapsed_seconds, 3.5);

  // A process whose utilization is not measured makes the whole not measured.
  RankProgress unmeasured = {Report(SamplePhase::kSampling, 130, 1100), false};
  unmeasured.progress.utilization = std::nan("");
  combiner.Update(0, unmeasured);
  EXPECT_TRUE(std::isnan(combiner.Combined(4).utilization));
  combiner.Update(0, {Report(SamplePhase::kDone, 150, 1200), true});
  combiner.Update(1, {Report(SamplePhase::kDone, 150, 800), true});
  EXPECT_TRUE(combiner.AllEnded());
  EXPECT_EQ(combiner.Combined(5).total_iteration, 150);
  EXPECT_EQ(combiner.Combined(5).eta_seconds, 0);
}

TEST(ProgressRelayTest, AProcessWithoutChainsDoesNotWeigh) {
  ProgressCombiner combiner(/*num_chains=*/2, /*num_processes=*/3, 10, 10);
  combiner.Update(0, {Report(SamplePhase::kSampling, 16, 5), false});
  combiner.Update(1, {Report(SamplePhase::kSampling, 12, 5), false});
  combiner.Update(2, {SampleProgress{}, true});  // no chains: ended at once
  EXPECT_EQ(combiner.Combined(1).total_iteration, 14);
}

// Two processes, as one of them sees it: messages it posts are recorded,
// messages "from rank 1" are handed out as scripted.
class ScriptedCommunicator final : public Communicator {
 public:
  ScriptedCommunicator(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int ranks_on_node() const override { return size_; }
  std::string Describe() const override { return "scripted"; }
  absl::Status Barrier() override { return Unexpected(); }
  absl::Status AgreeOnStatus(const absl::Status&) override { return Unexpected(); }
  absl::StatusOr<std::vector<std::string>> Gather(std::string_view, int) override {
    return Unexpected();
  }
  absl::StatusOr<std::string> Broadcast(std::string_view, int) override { return Unexpected(); }
  absl::StatusOr<std::vector<int64_t>> SumAll(std::span<const int64_t>) override {
    return Unexpected();
  }
  absl::Status Post(int dest, std::string_view bytes) override {
    EXPECT_EQ(std::this_thread::get_id(), main_);
    const std::lock_guard<std::mutex> lock(mu_);
    posted_.push_back({dest, std::string(bytes)});  // `source` holds the destination
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<Posted>> TryReceive() override {
    EXPECT_EQ(std::this_thread::get_id(), main_);
    const std::lock_guard<std::mutex> lock(mu_);
    ++polls_;
    if (inbox_.empty()) return std::nullopt;
    Posted next = std::move(inbox_.front());
    inbox_.pop_front();
    return next;
  }
  absl::Status FinishPosts() override {
    finished_posts_ = true;
    return absl::OkStatus();
  }
  [[noreturn]] void Abort(int) override { std::abort(); }

  void Deliver(int source, const RankProgress& report) {
    const std::lock_guard<std::mutex> lock(mu_);
    inbox_.push_back({source, EncodeRankProgress(report)});
  }
  std::vector<Posted> posted() {
    const std::lock_guard<std::mutex> lock(mu_);
    return posted_;
  }
  bool finished_posts() const { return finished_posts_; }
  int polls() {
    const std::lock_guard<std::mutex> lock(mu_);
    return polls_;
  }

 private:
  static absl::Status Unexpected() {
    ADD_FAILURE() << "the relay made a collective call";
    return absl::InternalError("unexpected");
  }
  int rank_;
  int size_;
  std::thread::id main_ = std::this_thread::get_id();
  std::mutex mu_;
  std::deque<Posted> inbox_;
  std::vector<Posted> posted_;
  bool finished_posts_ = false;
  int polls_ = 0;
};

RelayOptions Relay() {
  return RelayOptions{.interval_seconds = 0.005, .num_chains = 4, .num_warmup = 10,
                      .num_samples = 10};
}

TEST(ProgressRelayTest, RankZeroWaitsForEveryProcessAndReportsOnItsOwnThread) {
  ScriptedCommunicator comm(/*rank=*/0, /*size=*/2);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<SampleProgress> seen;
  const ProgressCallback progress = [&](const SampleProgress& p) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    seen.push_back(p);
  };
  const MemoryScope memory = MemoryScope::ForRun(int64_t{1} << 30);
  MemoryBudget* const budget = CurrentMemoryBudget();
  std::atomic<bool> own_part_ended{false};
  // Rank 1 reports once, then ends well after this process's part has.
  std::thread rank1([&] {
    comm.Deliver(1, {Report(SamplePhase::kWarmup, 4, 8), false});
    while (!own_part_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    comm.Deliver(1, {Report(SamplePhase::kDone, 20, 35), true});
  });
  const absl::Status status =
      RelayProgress(comm, Relay(), progress, [&](const ProgressCallback& local) {
        EXPECT_NE(std::this_thread::get_id(), caller);
        EXPECT_EQ(CurrentMemoryBudget(), budget);
        local(Report(SamplePhase::kWarmup, 5, 10));
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        local(Report(SamplePhase::kDone, 20, 40));
        own_part_ended = true;
      });
  rank1.join();
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(comm.posted().empty());
  ASSERT_FALSE(seen.empty());
  for (const SampleProgress& p : seen) {
    EXPECT_NE(p.phase, SamplePhase::kDone);
    EXPECT_EQ(p.num_processes, 2);
    EXPECT_EQ(p.num_chains, 4);
  }
  // The last report came once both had ended, and counts both.
  EXPECT_EQ(seen.back().gradient_evaluations, 75);
  EXPECT_EQ(seen.back().total_iteration, 20);
  EXPECT_EQ(seen.back().eta_seconds, 0);
  // Waiting for rank 1 after its own part ended, rank 0 polls once an
  // interval (5 ms over about 80 ms), never in a busy loop.
  EXPECT_LT(comm.polls(), 200);
}

TEST(ProgressRelayTest, AnotherRankPostsItsReportsToRankZeroAndEndsWithOne) {
  ScriptedCommunicator comm(/*rank=*/1, /*size=*/2);
  int called = 0;
  const absl::Status status = RelayProgress(
      comm, Relay(), [&](const SampleProgress&) { ++called; },
      [&](const ProgressCallback& local) {
        local(Report(SamplePhase::kWarmup, 5, 10));
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        local(Report(SamplePhase::kSampling, 15, 30));
      });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(called, 0);  // only rank 0 reports
  EXPECT_TRUE(comm.finished_posts());
  const std::vector<Communicator::Posted> posted = comm.posted();
  ASSERT_GE(posted.size(), 2u);
  for (const Communicator::Posted& p : posted) EXPECT_EQ(p.source, 0);  // dest 0
  const absl::StatusOr<RankProgress> first = DecodeRankProgress(posted.front().bytes);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->ended);
  EXPECT_EQ(first->progress.total_iteration, 5);
  const absl::StatusOr<RankProgress> last = DecodeRankProgress(posted.back().bytes);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(last->ended);
  EXPECT_EQ(last->progress.total_iteration, 15);
  EXPECT_EQ(last->progress.gradient_evaluations, 30);
}

// An exception leaves the run's thread, is reported as the part's end (so
// rank 0 does not wait for it) and comes back out of the relay.
TEST(ProgressRelayTest, AnExceptionEndsThePartAndIsRethrown) {
  ScriptedCommunicator comm(/*rank=*/1, /*size=*/2);
  EXPECT_THROW(RelayProgress(comm, Relay(), nullptr,
                             [](const ProgressCallback&) { throw std::runtime_error("boom"); })
                   .IgnoreError(),
               std::runtime_error);
  const std::vector<Communicator::Posted> posted = comm.posted();
  ASSERT_EQ(posted.size(), 1u);
  const absl::StatusOr<RankProgress> last = DecodeRankProgress(posted.back().bytes);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(last->ended);
}

}  // namespace
}  // namespace autobatch::mcmc
