// Tests of LaneSet: the index list and the mask always agree.
#include "backends/lane_set.h"

#include <utility>
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

// AppendBits appends a word of a bitset: the same set as Append of each set
// bit, after lanes already there, up to the last (partial) word of a batch.
TEST(LaneSetTest, AppendBitsIsAppendOfEachBit) {
  LaneSet by_bits(150);
  LaneSet by_lane(150);
  by_bits.Append(2);
  by_lane.Append(2);
  const std::vector<std::pair<int64_t, uint64_t>> words = {
      {0, uint64_t{0xF0}}, {64, 0}, {64, ~uint64_t{0}}, {128, (uint64_t{1} << 21) | 1}};
  for (const auto& [first, bits] : words) {
    by_bits.AppendBits(first, bits);
    for (int k = 0; k < 64; ++k) {
      if ((bits >> k) & 1) by_lane.Append(first + k);
    }
  }
  EXPECT_EQ(Indices(by_bits), Indices(by_lane));
  EXPECT_EQ(by_bits.size(), 1 + 4 + 64 + 2);
  EXPECT_TRUE(by_bits.IsConsistent());
}

// Split sorts each lane by its condition byte (any nonzero is true) into
// two consistent sets, whatever they held before and whatever their batch.
TEST(LaneSetTest, SplitByConditionBytes) {
  const std::vector<uint8_t> cond = {0, 1, 0, 7, 1, 1, 0, 0, 3, 0};
  LaneSet lanes(10);
  for (int64_t lane : {0, 1, 3, 4, 6, 8, 9}) lanes.Append(lane);
  LaneSet yes = LaneSet::All(10);
  LaneSet no(4);
  for (int round = 0; round < 2; ++round) {  // the second reuses the outputs
    LaneSet::Split(lanes, cond.data(), &yes, &no);
    EXPECT_EQ(Indices(yes), (std::vector<int64_t>{1, 3, 4, 8}));
    EXPECT_EQ(Indices(no), (std::vector<int64_t>{0, 6, 9}));
    EXPECT_EQ(yes.batch(), 10);
    EXPECT_EQ(no.batch(), 10);
    EXPECT_TRUE(yes.IsConsistent());
    EXPECT_TRUE(no.IsConsistent());
  }
  LaneSet::Split(LaneSet(10), cond.data(), &yes, &no);
  EXPECT_TRUE(yes.empty() && no.empty() && yes.IsConsistent() && no.IsConsistent());
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
