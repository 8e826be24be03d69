// Tests for Stan-style chain initialization.
#include "mcmc/warmup/initialize.h"

#include <cmath>
#include <limits>

#include "backends/random.h"
#include "gtest/gtest.h"

namespace autobatch::mcmc {
namespace {

// x[3] with log p = -|x|^2/2, except: where x_0 < 0 the log density is -inf
// (kLogDensity) or the gradient of x.2 is NaN (kGradient); kAlways fails
// everywhere.
class Picky : public Model {
 public:
  enum class Fail { kNever, kLogDensity, kGradient, kAlways };
  explicit Picky(Fail fail) : fail_(fail) {}
  std::string name() const override { return "picky"; }
  std::vector<ParameterSpec> parameters() const override {
    return {{"x", {3}, Transform::kIdentity}};
  }
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override {
    double lp = 0;
    for (int i = 0; i < 3; ++i) {
      lp -= 0.5 * q[i] * q[i];
      grad[i] = -q[i];
    }
    const bool bad = fail_ == Fail::kAlways || (fail_ != Fail::kNever && q[0] < 0);
    if (bad && fail_ == Fail::kGradient) grad[1] = std::numeric_limits<double>::quiet_NaN();
    if (bad && fail_ != Fail::kGradient) lp = -std::numeric_limits<double>::infinity();
    return lp;
  }

 private:
  Fail fail_;
};

constexpr uint64_t kKey = 0x5eed0000000000abULL;

TEST(InitializeChainTest, DrawsArePhiloxUniformsAtCounterAndCoordinate) {
  Picky model(Picky::Fail::kNever);
  uint64_t counter = 17;
  absl::StatusOr<InitialPoint> point = InitializeChain(model, kKey, &counter);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_EQ(point->attempts, 1);
  EXPECT_EQ(counter, 18u);
  ASSERT_EQ(point->q.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(point->q[i], 2.0 * (2.0 * PhiloxUniform(kKey, 17, i) - 1.0)) << i;
    EXPECT_GT(point->q[i], -2.0);
    EXPECT_LT(point->q[i], 2.0);
    EXPECT_EQ(point->gradient[i], -point->q[i]);
  }
  std::vector<double> grad(3);
  EXPECT_EQ(point->log_density, model.LogDensityGradient(point->q, grad));

  // Same (key, counter): same bits. Different key or counter: different point.
  uint64_t again = 17;
  absl::StatusOr<InitialPoint> same = InitializeChain(model, kKey, &again);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->q, point->q);
  uint64_t other = 17;
  absl::StatusOr<InitialPoint> other_key = InitializeChain(model, kKey + 1, &other);
  ASSERT_TRUE(other_key.ok());
  EXPECT_NE(other_key->q, point->q);
  absl::StatusOr<InitialPoint> next = InitializeChain(model, kKey, &counter);
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next->q, point->q);
  EXPECT_EQ(counter, 19u);
}

// Replays the documented draws: the first attempt a with x_0 >= 0 wins.
int ExpectedAttempts(uint64_t base) {
  for (int a = 0; a < 100; ++a) {
    if (2.0 * (2.0 * PhiloxUniform(kKey, base + a, 0) - 1.0) >= 0) return a + 1;
  }
  return -1;
}

void CheckRetries(Picky::Fail fail) {
  Picky model(fail);
  // Counters whose first draws fail, found by replaying the stream.
  int checked = 0;
  for (uint64_t base = 0; base < 64 && checked < 3; ++base) {
    const int expected = ExpectedAttempts(base);
    if (expected < 3) continue;
    ++checked;
    uint64_t counter = base;
    absl::StatusOr<InitialPoint> point = InitializeChain(model, kKey, &counter);
    ASSERT_TRUE(point.ok()) << point.status();
    EXPECT_EQ(point->attempts, expected);
    EXPECT_EQ(counter, base + expected);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(point->q[i],
                2.0 * (2.0 * PhiloxUniform(kKey, base + expected - 1, i) - 1.0));
    }
    EXPECT_GE(point->q[0], 0.0);
    EXPECT_TRUE(std::isfinite(point->gradient[1]));
  }
  EXPECT_EQ(checked, 3) << "no counter in [0, 64) needs 3 attempts";
}

TEST(InitializeChainTest, RetriesWhileLogDensityIsNotFinite) {
  CheckRetries(Picky::Fail::kLogDensity);
}

TEST(InitializeChainTest, RetriesWhileGradientIsNotFinite) {
  CheckRetries(Picky::Fail::kGradient);
}

TEST(InitializeChainTest, GivesUpWithAClearErrorAndKeepsCounter) {
  Picky model(Picky::Fail::kAlways);
  uint64_t counter = 5;
  absl::StatusOr<InitialPoint> point = InitializeChain(model, kKey, &counter);
  ASSERT_FALSE(point.ok());
  EXPECT_EQ(point.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(point.status().message());
  EXPECT_NE(message.find("'picky'"), std::string::npos) << message;
  EXPECT_NE(message.find("all 100 random points"), std::string::npos) << message;
  EXPECT_NE(message.find("(-2, 2)"), std::string::npos) << message;
  EXPECT_NE(message.find("log density -inf"), std::string::npos) << message;
  EXPECT_NE(message.find("initial values"), std::string::npos) << message;
  EXPECT_EQ(counter, 5u);

  Picky nan_gradient(Picky::Fail::kGradient);
  InitOptions tiny{.radius = 2.0, .max_attempts = 1};
  // Find a counter whose single attempt fails.
  uint64_t base = 0;
  while (ExpectedAttempts(base) == 1) ++base;
  counter = base;
  point = InitializeChain(nan_gradient, kKey, &counter, tiny);
  ASSERT_FALSE(point.ok());
  EXPECT_NE(point.status().message().find("gradient entry 1 (x.2) nan"), std::string_view::npos)
      << point.status();
}

TEST(InitializeTest, RadiusScalesTheBox) {
  Picky model(Picky::Fail::kNever);
  uint64_t counter = 0;
  absl::StatusOr<InitialPoint> point =
      InitializeChain(model, kKey, &counter, {.radius = 0.5});
  ASSERT_TRUE(point.ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(point->q[i], 0.5 * (2.0 * PhiloxUniform(kKey, 0, i) - 1.0));
  }
}

TEST(InitializeTest, RadiusZeroIsTheOriginWithoutDraws) {
  Picky model(Picky::Fail::kNever);
  absl::StatusOr<InitialPoint> point = Initialize(
      model,
      [](int64_t, int64_t) {
        ADD_FAILURE() << "uniform must not be called for radius 0";
        return 0.5;
      },
      {.radius = 0});
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->attempts, 1);
  for (double v : point->q) {
    EXPECT_EQ(v, 0.0);
    EXPECT_FALSE(std::signbit(v));
  }
  uint64_t counter = 9;
  ASSERT_TRUE(InitializeChain(model, kKey, &counter, {.radius = 0}).ok());
  EXPECT_EQ(counter, 10u);
  // The origin fails for kAlways: one attempt, then the error.
  Picky bad(Picky::Fail::kAlways);
  absl::StatusOr<InitialPoint> failed =
      Initialize(bad, [](int64_t, int64_t) { return 0.5; }, {.radius = 0});
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(failed.status().message().find("origin"), std::string_view::npos);
}

TEST(InitializeTest, PassesAttemptAndCoordinateToTheSource) {
  Picky model(Picky::Fail::kLogDensity);
  std::vector<std::pair<int64_t, int64_t>> calls;
  // Attempt 0 puts x_0 at -1 (rejected), attempt 1 at +1.
  absl::StatusOr<InitialPoint> point = Initialize(model, [&](int64_t a, int64_t i) {
    calls.emplace_back(a, i);
    return a == 0 ? 0.25 : 0.75;
  });
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->attempts, 2);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 0}, {0, 1}, {0, 2},
                                                             {1, 0}, {1, 1}, {1, 2}};
  EXPECT_EQ(calls, expected);
  EXPECT_EQ(point->q, (std::vector<double>{1.0, 1.0, 1.0}));
}

TEST(InitializeTest, BadOptionsAreInvalidArgument) {
  Picky model(Picky::Fail::kNever);
  auto uniform = [](int64_t, int64_t) { return 0.5; };
  EXPECT_EQ(Initialize(model, uniform, {.radius = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Initialize(model, uniform, {.radius = std::nan("")}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Initialize(model, uniform, {.radius = 2, .max_attempts = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(InitializeAtTest, ValidatesTheGivenPoint) {
  Picky model(Picky::Fail::kLogDensity);
  std::vector<double> good = {0.5, -1, 2};
  absl::StatusOr<InitialPoint> point = InitializeAt(model, good);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_EQ(point->q, good);
  EXPECT_EQ(point->log_density, -0.5 * (0.25 + 1 + 4));
  EXPECT_EQ(point->attempts, 1);

  std::vector<double> short_q = {0.5};
  EXPECT_EQ(InitializeAt(model, short_q).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<double> inf_q = {0.5, std::numeric_limits<double>::infinity(), 0};
  absl::Status status = InitializeAt(model, inf_q).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("x.2"), std::string_view::npos) << status;
  std::vector<double> outside = {-0.5, 0, 0};
  status = InitializeAt(model, outside).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("given initial point"), std::string_view::npos) << status;
}

}  // namespace
}  // namespace autobatch::mcmc
