// MpiCommunicator under mpirun (tests/support/CMakeLists.txt runs it with 2
// and with 3 ranks): each collective gives every rank what the
// single-process communicator gives one.
#include "support/mpi/mpi_communicator.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

MpiCommunicator* world = nullptr;

// rank r's bytes: r + 1 copies of the letter 'a' + r, then its rank's number.
std::string BytesOf(int rank) {
  return absl::StrCat(std::string(static_cast<size_t>(rank + 1), static_cast<char>('a' + rank)),
                      rank);
}

TEST(MpiCommunicatorTest, RankAndSizeComeFromTheLauncher) {
  EXPECT_TRUE(StartedByMpiLauncher());
  EXPECT_GE(world->size(), 2);
  EXPECT_LT(world->rank(), world->size());
  EXPECT_THAT(world->Describe(), HasSubstr(absl::StrCat(world->size(), " ranks")));
  EXPECT_TRUE(world->Barrier().ok());
}

TEST(MpiCommunicatorTest, GatherCollectsEveryRanksBytesOnRootInRankOrder) {
  for (int root = 0; root < world->size(); ++root) {
    absl::StatusOr<std::vector<std::string>> gathered = world->Gather(BytesOf(world->rank()), root);
    ASSERT_TRUE(gathered.ok()) << gathered.status();
    if (world->rank() != root) {
      EXPECT_TRUE(gathered->empty());
      continue;
    }
    ASSERT_EQ(static_cast<int>(gathered->size()), world->size());
    for (int r = 0; r < world->size(); ++r) EXPECT_EQ((*gathered)[r], BytesOf(r));
  }
  // Empty contributions, and one rank with nothing to send.
  absl::StatusOr<std::vector<std::string>> some =
      world->Gather(world->rank() == 1 ? std::string() : std::string("x"), 0);
  ASSERT_TRUE(some.ok()) << some.status();
  if (world->rank() == 0) {
    EXPECT_EQ((*some)[1], "");
  }
  EXPECT_FALSE(world->Gather("x", world->size()).ok());
}

TEST(MpiCommunicatorTest, BroadcastAndSumAll) {
  absl::StatusOr<std::string> got =
      world->Broadcast(world->rank() == 1 ? "from one" : "ignored", 1);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "from one");
  const std::vector<int64_t> mine = {1, world->rank(), int64_t{1} << 40};
  absl::StatusOr<std::vector<int64_t>> sums = world->SumAll(mine);
  ASSERT_TRUE(sums.ok()) << sums.status();
  const int64_t n = world->size();
  EXPECT_EQ(*sums, (std::vector<int64_t>{n, n * (n - 1) / 2, n << 40}));
  // Different lengths on different ranks: an error on every rank, no hang.
  std::vector<int64_t> uneven(static_cast<size_t>(world->rank() + 1), 1);
  EXPECT_THAT(std::string(world->SumAll(uneven).status().message()),
              HasSubstr("every rank must pass as many"));
}

// Every rank gets the lowest failing rank's status, or OK.
TEST(MpiCommunicatorTest, AgreeOnStatusGivesEveryRankTheFirstFailure) {
  EXPECT_TRUE(world->AgreeOnStatus(absl::OkStatus()).ok());
  const int last = world->size() - 1;
  const absl::Status local = world->rank() >= 1
                                 ? absl::NotFoundError(absl::StrCat("no file on ", world->rank()))
                                 : absl::OkStatus();
  const absl::Status agreed = world->AgreeOnStatus(local);
  EXPECT_EQ(agreed.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(agreed.message(), "rank 1: no file on 1");
  const absl::Status only_last = world->AgreeOnStatus(
      world->rank() == last ? absl::ResourceExhaustedError("full") : absl::OkStatus());
  EXPECT_EQ(only_last, absl::ResourceExhaustedError(absl::StrCat("rank ", last, ": full")));
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::StatusOr<std::unique_ptr<autobatch::MpiCommunicator>> world =
      autobatch::MpiCommunicator::Create(&argc, &argv);
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", std::string(world.status().message()).c_str());
    return 1;
  }
  autobatch::world = world->get();
  // Only rank 0 prints gtest's report; every rank's failures still fail it.
  if ((*world)->rank() != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  // Every rank's outcome decides the exit status of each.
  absl::StatusOr<std::vector<int64_t>> failures = (*world)->SumAll(std::vector<int64_t>{failed});
  const int status = failures.ok() && (*failures)[0] == 0 ? 0 : 1;
  world->reset();
  return status;
}
