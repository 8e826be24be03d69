// Sample() over MPI ranks (run by mpirun with 2 and 3 ranks): every chain's
// draws, the summary and the run's counts are those of a one-process run,
// whatever the number of ranks, including more ranks than chains; rank 0
// reports the progress of all; an error on one rank is every rank's.
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mcmc/model/targets/registry.h"
#include "mcmc/sample.h"
#include "tests/support/mpi_test_main.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::unique_ptr<Target> EightSchools() {
  absl::StatusOr<std::unique_ptr<Target>> target =
      MakeTarget("eight_schools", nlohmann::json::object());
  EXPECT_TRUE(target.ok()) << target.status();
  return *std::move(target);
}

void ExpectSameDraws(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, const std::string& what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_EQ(a.cols(), b.cols()) << what;
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(SameBits(a.data()[i], b.data()[i])) << what << ", element " << i;
  }
}

SampleOptions Options(int64_t chains) {
  SampleOptions o;
  o.num_chains = chains;
  o.num_warmup = 80;
  o.num_samples = 60;
  o.seed = 99;
  o.thin = 2;
  o.save_warmup = true;
  return o;
}

void ExpectAsOneProcess(int64_t chains) {
  SCOPED_TRACE(absl::StrCat(chains, " chains"));
  std::unique_ptr<Target> model = EightSchools();
  const absl::StatusOr<SampleResult> one = Sample(*model, Options(chains));
  ASSERT_TRUE(one.ok()) << one.status();
  SampleOptions sharded = Options(chains);
  sharded.communicator = &MpiWorld();
  const absl::StatusOr<SampleResult> many = Sample(*model, sharded);
  ASSERT_TRUE(many.ok()) << many.status();
  const int rank = MpiWorld().rank(), size = MpiWorld().size();
  EXPECT_EQ(many->num_processes, size);
  const auto [first, last] = RankRange(chains, rank, size);
  EXPECT_EQ(many->own_first_chain, first);
  EXPECT_EQ(many->own_last_chain, last);
  if (rank != 0) {
    // Its own chains, as the one-process run has them.
    ASSERT_EQ(static_cast<int64_t>(many->chains.size()), last - first);
    for (int64_t k = first; k < last; ++k) {
      EXPECT_EQ(many->chains[k - first].chain_id, static_cast<uint64_t>(k));
      ExpectSameDraws(many->draws[k - first], one->draws[k], absl::StrCat("chain ", k));
    }
    EXPECT_TRUE(many->summary.empty());
    return;
  }
  ASSERT_EQ(many->chains.size(), one->chains.size());
  for (size_t k = 0; k < one->chains.size(); ++k) {
    ExpectSameDraws(many->draws[k], one->draws[k], absl::StrCat("chain ", k));
    ExpectSameDraws(many->warmup_draws[k], one->warmup_draws[k], absl::StrCat("warmup ", k));
    EXPECT_EQ(many->chains[k].step_size, one->chains[k].step_size);
    EXPECT_EQ(many->chains[k].inv_metric, one->chains[k].inv_metric);
    EXPECT_EQ(many->chains[k].sampling_divergences, one->chains[k].sampling_divergences);
    EXPECT_TRUE(SameBits(many->chains[k].ebfmi, one->chains[k].ebfmi));
  }
  EXPECT_EQ(many->gradient_evaluations, one->gradient_evaluations);
  EXPECT_EQ(many->sampling_leapfrogs_taken, one->sampling_leapfrogs_taken);
  EXPECT_EQ(many->total_divergences(), one->total_divergences());
  ASSERT_EQ(many->summary.size(), one->summary.size());
  for (size_t c = 0; c < one->summary.size(); ++c) {
    EXPECT_TRUE(SameBits(many->summary[c].mean, one->summary[c].mean)) << c;
    EXPECT_TRUE(SameBits(many->summary[c].ess_bulk, one->summary[c].ess_bulk)) << c;
    EXPECT_TRUE(SameBits(many->summary[c].rhat, one->summary[c].rhat)) << c;
  }
}

TEST(SampleMpiTest, EveryChainAsInOneProcess) { ExpectAsOneProcess(7); }

// Ranks past the last chain run nothing and still take part.
TEST(SampleMpiTest, MoreRanksThanChains) { ExpectAsOneProcess(2); }

// Rank 0's callback gets the whole run's progress, every rank's combined,
// on the thread that called Sample(); the other ranks' is never called.
TEST(SampleMpiTest, ProgressIsCombinedOverRanks) {
  std::unique_ptr<Target> model = EightSchools();
  SampleOptions o = Options(12);
  o.communicator = &MpiWorld();
  o.progress_interval_seconds = 0.001;
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<SampleProgress> seen;
  o.progress = [&](const SampleProgress& p) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    seen.push_back(p);
  };
  const absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  if (MpiWorld().rank() != 0) {
    EXPECT_TRUE(seen.empty());
    return;
  }
  ASSERT_GE(seen.size(), 2u);
  for (const SampleProgress& p : seen) {
    EXPECT_EQ(p.num_processes, MpiWorld().size());
    EXPECT_EQ(p.num_chains, 12);
  }
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].gradient_evaluations, seen[i - 1].gradient_evaluations) << i;
  }
  // Before the final report, one that counts every rank's whole part.
  const SampleProgress& all_ended = seen[seen.size() - 2];
  EXPECT_EQ(all_ended.phase, SamplePhase::kSampling);
  EXPECT_EQ(all_ended.total_iteration, o.num_warmup + o.num_samples);
  EXPECT_EQ(all_ended.gradient_evaluations, result->gradient_evaluations);
  EXPECT_EQ(seen.back().phase, SamplePhase::kDone);
  EXPECT_EQ(seen.back().gradient_evaluations, result->gradient_evaluations);
  EXPECT_THAT(ProgressPrinter::FormatLine(seen.back()),
              HasSubstr(absl::StrCat("chains 12 on ", MpiWorld().size(), " ranks")));
}

// Initial values outside the support for a chain of rank 1 only: every rank
// returns rank 1's error.
TEST(SampleMpiTest, AnErrorOnOneRankIsEveryRanksError) {
  std::unique_ptr<Target> model = EightSchools();
  SampleOptions o = Options(6);
  o.communicator = &MpiWorld();
  const auto [first, last] = RankRange(6, 1, MpiWorld().size());
  std::vector<double> good(static_cast<size_t>(model->constrained_size()), 0.5);
  o.init_values.assign(6, good);
  o.init_values[static_cast<size_t>(first)][1] = -1;  // tau < 0
  const absl::Status status = Sample(*model, o).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat("rank 1: chain ", first, ": initial values:")));
}

}  // namespace
}  // namespace autobatch::mcmc
