// Tests of the warmup adaptation math: dual averaging against hand-computed
// values, the window schedule (against the documented windows and a
// step-by-step model of Stan's window counter), Welford and the regularized
// metric.
#include "mcmc/warmup/adaptation.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace autobatch::mcmc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------
// Dual averaging.

TEST(DualAveragingTest, MatchesHandComputedValues) {
  // delta 0.8, gamma 0.05, kappa 0.75, t0 10, mu = log(10):
  // t=1, a=0.5: s_bar = 0.3 / 11 = 3/110; x = log 10 - (3/110) / 0.05
  //             = log 10 - 6/11; x_bar = x (weight 1^-0.75 = 1).
  // t=2, a=0.9: s_bar = (11/12)(3/110) + (1/12)(-0.1) = 1/40 - 1/120 = 1/60;
  //             x = log 10 - (1/60) sqrt(2) / 0.05 = log 10 - sqrt(2)/3;
  //             x_bar = (1 - 2^-0.75) x_1 + 2^-0.75 x_2.
  // t=3, a=1.3 (capped at 1): s_bar = (12/13)(1/60) + (1/13)(-0.2) = 0;
  //             x = log 10 exactly in exact arithmetic: step 10.
  DualAveraging da;
  da.Restart(std::log(10.0));
  const double x1 = std::log(10.0) - 6.0 / 11.0;
  EXPECT_NEAR(da.Update(0.5), std::exp(x1), 1e-12);
  EXPECT_NEAR(da.s_bar, 3.0 / 110.0, 1e-15);
  EXPECT_NEAR(da.x_bar, x1, 1e-14);
  EXPECT_NEAR(std::exp(x1), 5.795782787848097, 1e-12);  // by hand: e^1.7571305...

  const double x2 = std::log(10.0) - std::sqrt(2.0) / 3.0;
  const double w2 = std::pow(2.0, -0.75);
  EXPECT_NEAR(da.Update(0.9), std::exp(x2), 1e-12);
  EXPECT_NEAR(da.s_bar, 1.0 / 60.0, 1e-15);
  EXPECT_NEAR(da.x_bar, (1 - w2) * x1 + w2 * x2, 1e-14);

  EXPECT_NEAR(da.Update(1.3), 10.0, 1e-12);
  EXPECT_NEAR(da.s_bar, 0.0, 1e-15);
  EXPECT_EQ(da.t, 3.0);
  const double w3 = std::pow(3.0, -0.75);
  const double x_bar3 = (1 - w3) * ((1 - w2) * x1 + w2 * x2) + w3 * std::log(10.0);
  EXPECT_NEAR(da.FinalStepSize(/*current=*/123.0), std::exp(x_bar3), 1e-12);
  EXPECT_NEAR(std::exp(x_bar3), 7.546858479093265, 1e-9);
}

TEST(DualAveragingTest, StepSizeMovesTowardTheTarget) {
  // Accepting more than delta raises the step size, less lowers it.
  DualAveraging high, low;
  high.Restart(0.0);
  low.Restart(0.0);
  EXPECT_GT(high.Update(1.0), 1.0);
  EXPECT_LT(low.Update(0.0), 1.0);
  // Exactly delta leaves x at mu.
  DualAveraging on_target;
  on_target.Restart(std::log(2.0));
  EXPECT_DOUBLE_EQ(on_target.Update(0.8), 2.0);
}

TEST(DualAveragingTest, RestartClearsAndNaNCountsAsRejection) {
  DualAveraging da;
  da.Restart(1.0);
  da.Update(0.3);
  da.Update(0.6);
  da.Restart(2.0);
  EXPECT_EQ(da.mu, 2.0);
  EXPECT_EQ(da.t, 0.0);
  EXPECT_EQ(da.s_bar, 0.0);
  EXPECT_EQ(da.x_bar, 0.0);
  // t == 0: the step size in use is kept (Stan would return exp(0) = 1).
  EXPECT_EQ(da.FinalStepSize(0.25), 0.25);

  DualAveraging with_nan, with_zero;
  with_nan.Restart(0.5);
  with_zero.Restart(0.5);
  EXPECT_EQ(with_nan.Update(kNaN), with_zero.Update(0.0));
  EXPECT_EQ(with_nan.x_bar, with_zero.x_bar);
}

TEST(DualAveragingTest, MuIsLogOfTenSteps) {
  // The `log` primitive is within 3 ulps of the correctly rounded log.
  for (const double step : {1.0, 0.5, 1e-3, 123.456, 1e-300, 1e300}) {
    const double want = std::log(10.0 * step);
    const double ulp = std::nextafter(std::abs(want), kInf) - std::abs(want);
    EXPECT_NEAR(DualAveragingMu(step), want, 3 * ulp) << step;
  }
  EXPECT_NEAR(DualAveragingMu(1.0), 2.302585092994046, 1e-15);
  EXPECT_EQ(DualAveragingMu(0.0), -kInf);
  EXPECT_EQ(DualAveragingMu(kInf), kInf);
  EXPECT_TRUE(std::isnan(DualAveragingMu(kNaN)));
}

TEST(DualAveragingTest, OptionsValidate) {
  EXPECT_TRUE(DualAveragingOptions{}.Validate().ok());
  const struct {
    DualAveragingOptions options;
    const char* field;
  } bad[] = {
      {{.delta = 1.0}, "delta"},  {{.delta = 0.0}, "delta"},   {{.delta = kNaN}, "delta"},
      {{.gamma = 0.0}, "gamma"},  {{.gamma = kInf}, "gamma"},  {{.kappa = -1}, "kappa"},
      {{.t0 = 0.0}, "t0"},        {{.t0 = kNaN}, "t0"},
  };
  for (const auto& b : bad) {
    const absl::Status s = b.options.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << b.field;
    EXPECT_NE(s.message().find(b.field), std::string::npos) << s.message();
  }
}

TEST(ClampStepSizeTest, KeepsStepsFiniteAndPositive) {
  EXPECT_EQ(ClampStepSize(0.5), 0.5);
  EXPECT_EQ(ClampStepSize(0.0), std::numeric_limits<double>::min());
  EXPECT_EQ(ClampStepSize(1e-320), std::numeric_limits<double>::min());
  EXPECT_EQ(ClampStepSize(kInf), std::numeric_limits<double>::max());
  EXPECT_TRUE(std::isnan(ClampStepSize(kNaN)));
}

// ---------------------------------------------------------------------------
// Window schedule.

WindowSchedule MakeSchedule(int64_t num_warmup, int64_t init_buffer = 75,
                            int64_t term_buffer = 50, int64_t window = 25) {
  absl::StatusOr<WindowSchedule> s =
      WindowSchedule::Create({num_warmup, init_buffer, term_buffer, window});
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

TEST(WindowScheduleTest, CmdStanDefaultsFor1000) {
  const WindowSchedule s = MakeSchedule(1000);
  EXPECT_FALSE(s.used_fallback());
  EXPECT_EQ(s.init_buffer(), 75);
  EXPECT_EQ(s.term_buffer(), 50);
  EXPECT_EQ(s.window(), 25);
  // Windows [75,100) [100,150) [150,250) [250,450) [450,950): 25, 50, 100,
  // 200 and 500 (the last stretched to the start of the terminal buffer).
  EXPECT_EQ(s.window_ends(), (std::vector<int64_t>{99, 149, 249, 449, 949}));
  EXPECT_FALSE(s.InWindow(74));
  EXPECT_TRUE(s.InWindow(75));
  EXPECT_TRUE(s.InWindow(949));
  EXPECT_FALSE(s.InWindow(950));
  EXPECT_FALSE(s.InWindow(999));
  EXPECT_TRUE(s.IsWindowEnd(99));
  EXPECT_FALSE(s.IsWindowEnd(100));
  EXPECT_TRUE(s.IsWindowEnd(949));
  EXPECT_FALSE(s.IsWindowEnd(999));
  int64_t in_window = 0;
  for (int64_t i = 0; i < 1000; ++i) in_window += s.InWindow(i);
  EXPECT_EQ(in_window, 875);
}

TEST(WindowScheduleTest, FallbackFor100And20) {
  const WindowSchedule s100 = MakeSchedule(100);
  EXPECT_TRUE(s100.used_fallback());
  EXPECT_EQ(s100.init_buffer(), 15);
  EXPECT_EQ(s100.window(), 75);
  EXPECT_EQ(s100.term_buffer(), 10);
  EXPECT_EQ(s100.window_ends(), (std::vector<int64_t>{89}));
  EXPECT_FALSE(s100.InWindow(14));
  EXPECT_TRUE(s100.InWindow(15));
  EXPECT_TRUE(s100.InWindow(89));
  EXPECT_FALSE(s100.InWindow(90));

  const WindowSchedule s20 = MakeSchedule(20);
  EXPECT_TRUE(s20.used_fallback());
  EXPECT_EQ(s20.init_buffer(), 3);
  EXPECT_EQ(s20.window(), 15);
  EXPECT_EQ(s20.term_buffer(), 2);
  EXPECT_EQ(s20.window_ends(), (std::vector<int64_t>{17}));
  EXPECT_FALSE(s20.InWindow(2));
  EXPECT_TRUE(s20.InWindow(3));
  EXPECT_TRUE(s20.InWindow(17));
  EXPECT_FALSE(s20.InWindow(18));
}

TEST(WindowScheduleTest, OtherLengths) {
  // Below 20: no metric adaptation at all.
  const WindowSchedule s19 = MakeSchedule(19);
  EXPECT_FALSE(s19.adapts_metric());
  EXPECT_TRUE(s19.window_ends().empty());
  for (int64_t i = 0; i < 19; ++i) EXPECT_FALSE(s19.InWindow(i) || s19.IsWindowEnd(i));
  EXPECT_FALSE(MakeSchedule(0).adapts_metric());
  // 150 = 75 + 25 + 50 fits exactly: one window [75, 100).
  EXPECT_EQ(MakeSchedule(150).window_ends(), (std::vector<int64_t>{99}));
  EXPECT_FALSE(MakeSchedule(150).used_fallback());
  // 149 does not: 22 | 113 | 14 (0.15 * 149 = 22.35, 0.10 * 149 = 14.9).
  const WindowSchedule s149 = MakeSchedule(149);
  EXPECT_EQ(s149.init_buffer(), 22);
  EXPECT_EQ(s149.term_buffer(), 14);
  EXPECT_EQ(s149.window_ends(), (std::vector<int64_t>{134}));
  // 2000: 25, 50, 100, 200, 400, then 1100 stretched to 1950.
  EXPECT_EQ(MakeSchedule(2000).window_ends(),
            (std::vector<int64_t>{99, 149, 249, 449, 849, 1949}));
  // 200: [75, 100) and [100, 150), which ends the slow phase exactly.
  EXPECT_EQ(MakeSchedule(200).window_ends(), (std::vector<int64_t>{99, 149}));
  // window 0: no windows, the initial metric is kept.
  EXPECT_FALSE(MakeSchedule(1000, 75, 50, 0).adapts_metric());
}

// A step-by-step model of Stan's windowed_adaptation: a window counter that
// advances once per iteration, the next window end, and the current window
// size, doubled at each end (with the 15/75/10 fallback restarted, as the
// manual documents).
struct StanWindowCounter {
  int64_t num_warmup, init, term, base;
  int64_t counter = 0, size = 0, next = 0;
  bool active = true;

  StanWindowCounter(int64_t n, int64_t init_buffer, int64_t term_buffer, int64_t window)
      : num_warmup(n), init(init_buffer), term(term_buffer), base(window) {
    if (n < 20) {
      active = false;
      return;
    }
    if (init + base + term > n) {
      init = static_cast<int64_t>(0.15 * static_cast<double>(n));
      term = static_cast<int64_t>(0.10 * static_cast<double>(n));
      base = n - (init + term);
    }
    size = base;
    next = init + size - 1;
    if (base == 0) active = false;
  }
  bool InWindow() const { return active && counter >= init && counter < num_warmup - term; }
  bool End() const { return active && counter == next && counter != num_warmup; }
  void ComputeNext() {
    const int64_t last = num_warmup - term - 1;
    if (next == last) return;
    size *= 2;
    next = counter + size;
    if (next == last) return;
    if (next + 2 * size >= num_warmup - term) next = last;
  }
};

TEST(WindowScheduleTest, AgreesWithAStepByStepWindowCounter) {
  const int64_t settings[][3] = {{75, 50, 25}, {10, 10, 5}, {0, 0, 1}, {100, 20, 30},
                                 {5, 0, 7},    {0, 30, 3}};
  for (const auto& [init, term, window] : settings) {
    for (int64_t n = 0; n <= 2500; n += (n < 300 ? 1 : 37)) {
      const WindowSchedule s = MakeSchedule(n, init, term, window);
      StanWindowCounter stan(n, init, term, window);
      int64_t ends = 0;
      for (int64_t i = 0; i < n; ++i, ++stan.counter) {
        ASSERT_EQ(s.InWindow(i), stan.InWindow()) << n << " " << init << " " << i;
        ASSERT_EQ(s.IsWindowEnd(i), stan.End()) << n << " " << init << " " << i;
        if (stan.End()) {
          stan.ComputeNext();
          ++ends;
        }
      }
      ASSERT_EQ(ends, static_cast<int64_t>(s.window_ends().size()));
      // The last window always ends where the slow phase ends.
      if (!s.window_ends().empty()) {
        EXPECT_EQ(s.window_ends().back(), n - s.term_buffer() - 1);
      }
    }
  }
}

TEST(WindowScheduleTest, RejectsBadOptions) {
  for (const WindowScheduleOptions& o :
       {WindowScheduleOptions{.num_warmup = -1}, WindowScheduleOptions{.init_buffer = -1},
        WindowScheduleOptions{.term_buffer = -5}, WindowScheduleOptions{.window = -1},
        WindowScheduleOptions{.num_warmup = int64_t{1} << 40}}) {
    const absl::StatusOr<WindowSchedule> s = WindowSchedule::Create(o);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("out of range"), std::string::npos);
  }
}

// ---------------------------------------------------------------------------
// Welford and the regularized metric.

TEST(WelfordVarianceTest, SmallExampleByHand) {
  // {1, 2, 4}: mean 7/3, variance ((4/3)^2 + (1/3)^2 + (5/3)^2) / 2 = 7/3.
  WelfordVariance w(1);
  std::vector<double> var = {-1.0};
  EXPECT_FALSE(w.SampleVariance(var));
  w.Add(std::vector<double>{1.0});
  EXPECT_FALSE(w.SampleVariance(var));
  EXPECT_EQ(var[0], -1.0);  // left unchanged
  w.Add(std::vector<double>{2.0});
  w.Add(std::vector<double>{4.0});
  EXPECT_EQ(w.num_samples(), 3);
  EXPECT_NEAR(w.mean()[0], 7.0 / 3.0, 1e-15);
  ASSERT_TRUE(w.SampleVariance(var));
  EXPECT_NEAR(var[0], 7.0 / 3.0, 1e-15);
  w.Restart();
  EXPECT_EQ(w.num_samples(), 0);
  EXPECT_EQ(w.mean()[0], 0.0);
  EXPECT_FALSE(w.SampleVariance(var));
}

TEST(WelfordVarianceTest, MatchesTwoPassVarianceWithLargeOffsets) {
  // Welford exists for this case: a large mean and a small spread.
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal;
  const int64_t d = 3, n = 5000;
  const double offset[] = {0.0, 1e6, -3e8};
  const double scale[] = {1.0, 0.01, 5.0};
  std::vector<std::vector<double>> xs(n, std::vector<double>(d));
  WelfordVariance w(d);
  for (auto& x : xs) {
    for (int64_t i = 0; i < d; ++i) x[i] = offset[i] + scale[i] * normal(gen);
    w.Add(x);
  }
  std::vector<double> var(d);
  ASSERT_TRUE(w.SampleVariance(var));
  for (int64_t i = 0; i < d; ++i) {
    long double mean = 0, ss = 0;
    for (const auto& x : xs) mean += x[i];
    mean /= n;
    for (const auto& x : xs) ss += (x[i] - mean) * (x[i] - mean);
    const double two_pass = static_cast<double>(ss / (n - 1));
    // Rounding of Welford's updates: ~ eps * |x| * |delta| / var, 6e-9 for
    // the -3e8 offset; the naive sum of squares would be off by
    // ~ eps * x^2 / var ~ 40% there.
    EXPECT_NEAR(var[i], two_pass, 1e-7 * two_pass) << i;
    EXPECT_NEAR(w.mean()[i], static_cast<double>(mean), 1e-12 * (1 + std::abs(offset[i])));
  }
}

TEST(RegularizedMetricTest, StanFormula) {
  // n = 3, var 7/3: (3/8)(7/3) + 1e-3 (5/8) = 0.875 + 0.000625.
  WelfordVariance w(2);
  for (double x : {1.0, 2.0, 4.0}) w.Add(std::vector<double>{x, 10 * x});
  const std::vector<double> current = {5.0, 5.0};
  std::vector<double> out(2);
  ASSERT_TRUE(RegularizedMetric(w, current, out).ok());
  EXPECT_NEAR(out[0], 0.875625, 1e-15);
  EXPECT_NEAR(out[1], (3.0 / 8.0) * 700.0 / 3.0 + 0.000625, 1e-12);
  // In place.
  std::vector<double> in_place = current;
  ASSERT_TRUE(RegularizedMetric(w, in_place, in_place).ok());
  EXPECT_EQ(in_place, out);
}

TEST(RegularizedMetricTest, FewSamplesShrinkTheCurrentMetric) {
  // n = 0: 0 * current + 1e-3 * 1; n = 1: current / 6 + 1e-3 * 5/6 (Stan
  // regularizes the metric in use when there is no variance estimate).
  WelfordVariance w(2);
  const std::vector<double> current = {6.0, 0.5};
  std::vector<double> out(2);
  ASSERT_TRUE(RegularizedMetric(w, current, out).ok());
  EXPECT_EQ(out, (std::vector<double>{1e-3, 1e-3}));
  w.Add(std::vector<double>{3.0, 4.0});
  ASSERT_TRUE(RegularizedMetric(w, current, out).ok());
  EXPECT_NEAR(out[0], 1.0 + 1e-3 * 5.0 / 6.0, 1e-15);
  EXPECT_NEAR(out[1], 0.5 / 6.0 + 1e-3 * 5.0 / 6.0, 1e-15);
}

TEST(RegularizedMetricTest, ConstantCoordinateStaysPositive) {
  WelfordVariance w(1);
  for (int k = 0; k < 10; ++k) w.Add(std::vector<double>{2.5});
  std::vector<double> out = {1.0};
  ASSERT_TRUE(RegularizedMetric(w, out, out).ok());
  EXPECT_EQ(out[0], 1e-3 * (5.0 / 15.0));
  EXPECT_GT(out[0], 0);
}

TEST(RegularizedMetricTest, OverflowIsAnError) {
  WelfordVariance w(2);
  w.Add(std::vector<double>{0.0, 1e300});
  w.Add(std::vector<double>{1.0, -1e300});
  std::vector<double> out = {1.0, 1.0};
  const absl::Status s = RegularizedMetric(w, out, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("coordinate 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not finite"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace autobatch::mcmc
