// The single-process Communicator and the rank ranges of a sharded run.
#include "support/communicator.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

// Contiguous, in rank order, covering [0, total), sizes differing by at
// most one, the larger first; ranks past total get empty ranges at the end.
TEST(CommunicatorTest, RankRangesCoverEveryItemOnce) {
  for (int size = 1; size <= 7; ++size) {
    for (int64_t total : {0, 1, 2, 3, 5, 6, 7, 100, 1024, 1025}) {
      int64_t next = 0, smallest = total, largest = 0;
      for (int rank = 0; rank < size; ++rank) {
        const auto [first, last] = RankRange(total, rank, size);
        EXPECT_EQ(first, next) << total << " items, rank " << rank << " of " << size;
        EXPECT_LE(first, last);
        smallest = std::min(smallest, last - first);
        largest = std::max(largest, last - first);
        next = last;
      }
      EXPECT_EQ(next, total);
      EXPECT_LE(largest - smallest, 1);
    }
  }
  EXPECT_EQ(RankRange(10, 0, 3), std::make_pair(int64_t{0}, int64_t{4}));
  EXPECT_EQ(RankRange(10, 2, 3), std::make_pair(int64_t{7}, int64_t{10}));
  EXPECT_EQ(RankRange(2, 2, 3), std::make_pair(int64_t{2}, int64_t{2}));
}

TEST(CommunicatorTest, OneProcessIsRankZeroOfOne) {
  Communicator& one = SingleProcess();
  EXPECT_EQ(one.rank(), 0);
  EXPECT_EQ(one.size(), 1);
  EXPECT_EQ(one.Describe(), "single process");
  EXPECT_TRUE(one.Barrier().ok());
  EXPECT_EQ(one.AgreeOnStatus(absl::NotFoundError("x")), absl::NotFoundError("x"));
  absl::StatusOr<std::vector<std::string>> gathered = one.Gather("abc", 0);
  ASSERT_TRUE(gathered.ok());
  EXPECT_THAT(*gathered, ::testing::ElementsAre("abc"));
  EXPECT_EQ(*one.Broadcast("xyz", 0), "xyz");
  const std::vector<int64_t> values = {1, -2, 3};
  EXPECT_EQ(*one.SumAll(values), values);
  EXPECT_THAT(std::string(one.Gather("abc", 1).status().message()),
              HasSubstr("root 1 is not a rank of this run (0 .. 0)"));
}

}  // namespace
}  // namespace autobatch
