// Tests of LaneSet: the index list and the mask always agree.
#include "backends/lane_set.h"

#include <vector>

#include "gtest/gtest.h"

namespace autobatch {
namespace {

std::vector<int64_t> Indices(const LaneSet& set) {
  return std::vector<int64_t>(set.indices().begin(), set.indices().end());
}

TEST(LaneSetTest, ConstructionFormsAgree) {
  const LaneSet empty(4);
  EXPECT_EQ(empty.batch(), 4);
  EXPECT_TRUE(empty.empty());
  EXPECT_FALSE(empty.full());
  const LaneSet all = LaneSet::All(4);
  EXPECT_TRUE(all.full());
  EXPECT_EQ(Indices(all), (std::vector<int64_t>{0, 1, 2, 3}));
  const std::vector<uint8_t> mask = {0, 7, 1, 0, 1};
  const LaneSet from_mask = LaneSet::FromMask(mask);
  EXPECT_EQ(Indices(from_mask), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(std::vector<uint8_t>(from_mask.mask().begin(), from_mask.mask().end()),
            (std::vector<uint8_t>{0, 1, 1, 0, 1}));
  const LaneSet from_indices = LaneSet::FromIndices(5, std::vector<int64_t>{4, 1, 2, 4});
  EXPECT_EQ(from_indices, from_mask);
  EXPECT_TRUE(from_indices.Contains(4));
  EXPECT_FALSE(from_indices.Contains(3));
  for (const LaneSet* s : {&empty, &all, &from_mask, &from_indices}) {
    EXPECT_TRUE(s->IsConsistent());
  }
  const LaneSet zero(0);
  EXPECT_TRUE(zero.empty());
  EXPECT_TRUE(zero.full());  // vacuously: every one of its zero lanes
}

// Clear zeroes the whole mask for a set of many lanes and only the set's
// lanes for a few; both leave an empty, consistent set.
TEST(LaneSetTest, ClearOfFewAndOfManyLanes) {
  for (int64_t every : {1, 2, 9, 40}) {
    LaneSet set(200);
    for (int64_t lane = 3; lane < 200; lane += every) set.Append(lane);
    set.Clear();
    EXPECT_TRUE(set.empty()) << every;
    EXPECT_TRUE(set.IsConsistent()) << every;
    EXPECT_FALSE(set.Contains(3)) << every;
    set.Append(7);
    EXPECT_EQ(Indices(set), std::vector<int64_t>{7});
  }
}

TEST(LaneSetTest, AppendClearAndReuse) {
  LaneSet set(6);
  set.Append(1);
  set.Append(4);
  EXPECT_EQ(Indices(set), (std::vector<int64_t>{1, 4}));
  EXPECT_TRUE(set.IsConsistent());
  set.Clear();
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.batch(), 6);
  EXPECT_TRUE(set.IsConsistent());
  set.SetAll();
  EXPECT_TRUE(set.full());
  EXPECT_TRUE(set.IsConsistent());
  const std::vector<uint8_t> mask = {1, 0, 0, 0, 0, 1};
  set.AssignMask(mask);
  EXPECT_EQ(Indices(set), (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(set.IsConsistent());
  set.Reset(3);
  EXPECT_EQ(set.batch(), 3);
  EXPECT_TRUE(set.empty());
  EXPECT_TRUE(set.IsConsistent());
}

TEST(LaneSetDeathTest, OutOfOrderAppendIsABug) {
#if AB_DCHECK_IS_ON
  LaneSet set(4);
  set.Append(2);
  EXPECT_DEATH(set.Append(1), "increasing order");
#else
  GTEST_SKIP() << "internal checks are off";
#endif
}

}  // namespace
}  // namespace autobatch
