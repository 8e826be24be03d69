// FusedChoice: trials of both ways, then the faster, with retries.
#include "vm/fused_choice.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace autobatch {
namespace {

// Runs `runs` decisions for `lanes` lanes, recording fused_ns_per_lane *
// lanes for a fused run and kernel_ns for the kernels; the decisions made.
std::vector<bool> Decide(FusedChoice& choice, int64_t runs, int64_t lanes,
                         int64_t fused_ns_per_lane,
                      int64_t kernel_ns) {
  std::vector<bool> decisions;
  for (int64_t i = 0; i < runs; ++i) {
    const bool fused = choice.UseFused(lanes);
    choice.Record(fused, lanes, fused ? fused_ns_per_lane * lanes : kernel_ns);
    decisions.push_back(fused);
  }
  return decisions;
}

int64_t Count(const std::vector<bool>& decisions, bool value) {
  int64_t n = 0;
  for (bool d : decisions) n += d == value ? 1 : 0;
  return n;
}

TEST(FusedChoiceTest, TriesBothWaysInTurnFirst) {
  FusedChoice choice;
  const std::vector<bool> first = Decide(choice, 2 * FusedChoice::kTrials, 100, 1, 1'000'000);
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], i % 2 == 0) << i;
}

TEST(FusedChoiceTest, KeepsTheFasterAndRetriesTheOther) {
  FusedChoice choice;
  Decide(choice, 2 * FusedChoice::kTrials, 500, 10, 2000);  // fused 5000 ns, kernels 2000
  const std::vector<bool> later = Decide(choice, 4 * FusedChoice::kRetryEvery, 500, 10, 2000);
  EXPECT_EQ(Count(later, true), 4) << "one retry of the slower way per kRetryEvery";
}

TEST(FusedChoiceTest, DenseKernelsCostPerExecutionSoFewLanesFavourTheSegments) {
  FusedChoice choice(FusedChoice::KernelCost::kPerExecution);
  Decide(choice, 2 * FusedChoice::kTrials, 500, 10, 2000);
  // 10 ns per lane: fused wins below 200 lanes, whatever the kernels did
  // for 500.
  EXPECT_TRUE(choice.UseFused(150) || choice.UseFused(150));
  EXPECT_FALSE(choice.UseFused(300) && choice.UseFused(300));
}

TEST(FusedChoiceTest, CompactKernelsCostPerLane) {
  FusedChoice choice(FusedChoice::KernelCost::kPerLane);
  // Kernels 4 ns per lane (2000 ns for 500), fused 10: kernels at any count.
  Decide(choice, 2 * FusedChoice::kTrials, 500, 10, 2000);
  EXPECT_FALSE(choice.UseFused(150) && choice.UseFused(150));
  EXPECT_FALSE(choice.UseFused(5000) && choice.UseFused(5000));
}

TEST(FusedChoiceTest, FollowsAChangeOfPhase) {
  FusedChoice choice;
  Decide(choice, 200, 500, 1, 2000);  // fused 500 ns: fused
  // The segments get slow (say the program's phase changed): the retries of
  // the kernels see it, and within a few of them the kernels win.
  const std::vector<bool> after = Decide(choice, 400, 500, 100, 2000);
  EXPECT_EQ(Count(std::vector<bool>(after.end() - 64, after.end()), true), 2);
}

TEST(FusedChoiceTest, OneSlowRunDoesNotDecide) {
  FusedChoice choice;
  Decide(choice, 2 * FusedChoice::kTrials, 500, 1, 2000);
  // A fused run interrupted for 1 ms moves the estimate by a bounded step:
  // the segments stay the choice.
  choice.Record(true, 500, 1'000'000);
  const std::vector<bool> after = Decide(choice, 64, 500, 1, 2000);
  EXPECT_GE(Count(std::vector<bool>(after.end() - 32, after.end()), true), 31);
}

}  // namespace
}  // namespace autobatch
