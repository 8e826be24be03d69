// MpiCommunicator under mpirun (tests/support/CMakeLists.txt runs it with 2
// and with 3 ranks): each collective gives every rank what the
// single-process communicator gives one.
#include "support/mpi/mpi_communicator.h"

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/mpi_test_main.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;


// rank r's bytes: r + 1 copies of the letter 'a' + r, then its rank's number.
std::string BytesOf(int rank) {
  return absl::StrCat(std::string(static_cast<size_t>(rank + 1), static_cast<char>('a' + rank)),
                      rank);
}

TEST(MpiCommunicatorTest, RankAndSizeComeFromTheLauncher) {
  EXPECT_TRUE(StartedByMpiLauncher());
  EXPECT_GE(MpiWorld().size(), 2);
  EXPECT_LT(MpiWorld().rank(), MpiWorld().size());
  EXPECT_THAT(MpiWorld().Describe(), HasSubstr(absl::StrCat(MpiWorld().size(), " ranks")));
  EXPECT_TRUE(MpiWorld().Barrier().ok());
  // mpirun runs every rank of these tests on this machine.
  EXPECT_EQ(MpiWorld().ranks_on_node(), MpiWorld().size());
  EXPECT_EQ(ThreadsPerRank(&MpiWorld()),
            std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / MpiWorld().size()));
}

TEST(MpiCommunicatorTest, GatherCollectsEveryRanksBytesOnRootInRankOrder) {
  for (int root = 0; root < MpiWorld().size(); ++root) {
    absl::StatusOr<std::vector<std::string>> gathered = MpiWorld().Gather(BytesOf(MpiWorld().rank()), root);
    ASSERT_TRUE(gathered.ok()) << gathered.status();
    if (MpiWorld().rank() != root) {
      EXPECT_TRUE(gathered->empty());
      continue;
    }
    ASSERT_EQ(static_cast<int>(gathered->size()), MpiWorld().size());
    for (int r = 0; r < MpiWorld().size(); ++r) EXPECT_EQ((*gathered)[r], BytesOf(r));
  }
  // Empty contributions, and one rank with nothing to send.
  absl::StatusOr<std::vector<std::string>> some =
      MpiWorld().Gather(MpiWorld().rank() == 1 ? std::string() : std::string("x"), 0);
  ASSERT_TRUE(some.ok()) << some.status();
  if (MpiWorld().rank() == 0) {
    EXPECT_EQ((*some)[1], "");
  }
  EXPECT_FALSE(MpiWorld().Gather("x", MpiWorld().size()).ok());
}

TEST(MpiCommunicatorTest, BroadcastAndSumAll) {
  absl::StatusOr<std::string> got =
      MpiWorld().Broadcast(MpiWorld().rank() == 1 ? "from one" : "ignored", 1);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "from one");
  const std::vector<int64_t> mine = {1, MpiWorld().rank(), int64_t{1} << 40};
  absl::StatusOr<std::vector<int64_t>> sums = MpiWorld().SumAll(mine);
  ASSERT_TRUE(sums.ok()) << sums.status();
  const int64_t n = MpiWorld().size();
  EXPECT_EQ(*sums, (std::vector<int64_t>{n, n * (n - 1) / 2, n << 40}));
  // Different lengths on different ranks: an error on every rank, no hang.
  std::vector<int64_t> uneven(static_cast<size_t>(MpiWorld().rank() + 1), 1);
  EXPECT_THAT(std::string(MpiWorld().SumAll(uneven).status().message()),
              HasSubstr("every rank must pass as many"));
}

// Every rank gets the lowest failing rank's status, or OK.
TEST(MpiCommunicatorTest, AgreeOnStatusGivesEveryRankTheFirstFailure) {
  EXPECT_TRUE(MpiWorld().AgreeOnStatus(absl::OkStatus()).ok());
  const int last = MpiWorld().size() - 1;
  const absl::Status local = MpiWorld().rank() >= 1
                                 ? absl::NotFoundError(absl::StrCat("no file on ", MpiWorld().rank()))
                                 : absl::OkStatus();
  const absl::Status agreed = MpiWorld().AgreeOnStatus(local);
  EXPECT_EQ(agreed.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(agreed.message(), "rank 1: no file on 1");
  const absl::Status only_last = MpiWorld().AgreeOnStatus(
      MpiWorld().rank() == last ? absl::ResourceExhaustedError("full") : absl::OkStatus());
  EXPECT_EQ(only_last, absl::ResourceExhaustedError(absl::StrCat("rank ", last, ": full")));
}

}  // namespace
}  // namespace autobatch

