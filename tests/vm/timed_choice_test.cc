// TimedChoice: trials of both ways, then the faster, with retries.
#include "vm/timed_choice.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace autobatch {
namespace {

// Runs `runs` decisions for `lanes` lanes, recording first_ns_per_lane *
// lanes for a run of the first way and second_ns for the second; the
// decisions made.
std::vector<bool> Decide(TimedChoice& choice, int64_t runs, int64_t lanes,
                         int64_t first_ns_per_lane, int64_t second_ns) {
  std::vector<bool> decisions;
  for (int64_t i = 0; i < runs; ++i) {
    const bool first = choice.First(lanes);
    if (choice.Timed()) choice.Record(first, lanes, first ? first_ns_per_lane * lanes : second_ns);
    decisions.push_back(first);
  }
  return decisions;
}

int64_t Count(const std::vector<bool>& decisions, bool value) {
  int64_t n = 0;
  for (bool d : decisions) n += d == value ? 1 : 0;
  return n;
}

TEST(TimedChoiceTest, TriesBothWaysInTurnFirst) {
  TimedChoice choice;
  const std::vector<bool> first = Decide(choice, 2 * TimedChoice::kTrials, 100, 1, 1'000'000);
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], i % 2 == 0) << i;
}

TEST(TimedChoiceTest, KeepsTheFasterAndRetriesTheOther) {
  TimedChoice choice;
  Decide(choice, 2 * TimedChoice::kTrials, 500, 10, 2000);  // first 5000 ns, second 2000
  const std::vector<bool> later = Decide(choice, 4 * TimedChoice::kRetryEvery, 500, 10, 2000);
  EXPECT_EQ(Count(later, true), 4) << "one retry of the slower way per kRetryEvery";
}

TEST(TimedChoiceTest, TimesTheTrialsTheRetriesAndEveryFewOthers) {
  TimedChoice choice;
  int64_t timed = 0;
  for (int64_t i = 0; i < 2 * TimedChoice::kTrials; ++i) {
    const bool first = choice.First(500);
    EXPECT_TRUE(choice.Timed()) << "trial " << i;
    choice.Record(first, 500, first ? 5000 : 2000);
  }
  const int64_t runs = 64 * TimedChoice::kRetryEvery;
  for (int64_t i = 0; i < runs; ++i) {
    const bool first = choice.First(500);
    if (first) {
      EXPECT_TRUE(choice.Timed()) << "a retry is timed";
    }
    if (choice.Timed()) {
      ++timed;
      choice.Record(first, 500, first ? 5000 : 2000);
    }
  }
  EXPECT_EQ(timed, runs / TimedChoice::kTimeEvery);
}

TEST(TimedChoiceTest, PerExecutionSecondWayFavoursTheFirstForFewLanes) {
  TimedChoice choice(TimedChoice::SecondCost::kPerExecution);
  Decide(choice, 2 * TimedChoice::kTrials, 500, 10, 2000);
  // 10 ns per lane against 2000 per execution: the first way wins below
  // 200 lanes, whatever the second cost for 500.
  EXPECT_TRUE(choice.First(150) || choice.First(150));
  EXPECT_FALSE(choice.First(300) && choice.First(300));
}

TEST(TimedChoiceTest, PerLaneSecondWay) {
  TimedChoice choice(TimedChoice::SecondCost::kPerLane);
  // Second way 4 ns per lane (2000 ns for 500), first 10: the second at
  // any count.
  Decide(choice, 2 * TimedChoice::kTrials, 500, 10, 2000);
  EXPECT_FALSE(choice.First(150) && choice.First(150));
  EXPECT_FALSE(choice.First(5000) && choice.First(5000));
}

TEST(TimedChoiceTest, FollowsAChangeOfPhase) {
  TimedChoice choice;
  Decide(choice, 200, 500, 1, 2000);  // first 500 ns: the first way
  // It gets slow (say the program's phase changed): the retries of the
  // second see it, and within a few of them the second wins.
  const std::vector<bool> after = Decide(choice, 400, 500, 100, 2000);
  EXPECT_EQ(Count(std::vector<bool>(after.end() - 64, after.end()), true), 2);
}

TEST(TimedChoiceTest, OneSlowRunDoesNotDecide) {
  TimedChoice choice;
  Decide(choice, 2 * TimedChoice::kTrials, 500, 1, 2000);
  // A run of the first way interrupted for 1 ms moves its estimate by a
  // bounded step: it stays the choice.
  choice.Record(true, 500, 1'000'000);
  const std::vector<bool> after = Decide(choice, 64, 500, 1, 2000);
  EXPECT_GE(Count(std::vector<bool>(after.end() - 32, after.end()), true), 31);
}

}  // namespace
}  // namespace autobatch
