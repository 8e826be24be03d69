// Tests for mcmc/output/diagnostics: golden values on Stan's bern files,
// hand-checked small cases, synthetic chains and the NaN rules.
#include "mcmc/output/diagnostics.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mcmc/output/stan_csv.h"

namespace autobatch::mcmc {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// Data helpers.

// The four bern chains (CmdStan 2.35, Stan's own test data), one quantity.
Eigen::MatrixXd BernColumn(const std::string& name) {
  std::vector<StanCsv> chains;
  for (int i = 1; i <= 4; ++i) {
    const std::string path = std::string(AUTOBATCH_SOURCE_DIR "/tests/mcmc/data/bern") + std::to_string(i) +
                             ".csv";
    absl::StatusOr<StanCsv> csv = ReadStanCsv(path);
    EXPECT_TRUE(csv.ok()) << csv.status();
    if (!csv.ok()) return {};
    chains.push_back(*std::move(csv));
  }
  absl::StatusOr<Eigen::MatrixXd> column = ColumnAcrossChains(chains, name);
  EXPECT_TRUE(column.ok()) << column.status();
  return column.ok() ? *column : Eigen::MatrixXd();
}

Eigen::MatrixXd IidNormal(Eigen::Index draws, Eigen::Index chains,
                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(draws, chains);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
  return x;
}

// Stationary AR(1) chains x_n = phi x_{n-1} + sqrt(1 - phi^2) e_n, whose
// integrated autocorrelation time is (1 + phi) / (1 - phi).
Eigen::MatrixXd Ar1(double phi, Eigen::Index draws, Eigen::Index chains,
                    std::uint64_t seed) {
  Eigen::MatrixXd x = IidNormal(draws, chains, seed);
  const double scale = std::sqrt(1.0 - phi * phi);
  for (Eigen::Index m = 0; m < chains; ++m) {
    for (Eigen::Index n = 1; n < draws; ++n) {
      x(n, m) = phi * x(n - 1, m) + scale * x(n, m);
    }
  }
  return x;
}

// ---------------------------------------------------------------------------
// InverseNormalCdf.

TEST(InverseNormalCdfTest, MatchesHighPrecisionReference) {
  // Reference values: 50-digit mpmath root of Phi(x) = p for the double p.
  struct Case {
    double p;
    double expected;
  };
  const Case cases[] = {
      {0.975, 1.9599639845400538556},
      {0.3, -0.52440051270804081597},
      {1e-10, -6.3613409024040561991},
      {1e-300, -37.047096299361199237},
      {0.5000001, 2.5066282733116483012e-7},
      {0.02425, -1.9729610513118848376},  // Acklam's region boundary.
      {0.9, 1.2815515655446005935},
      {1e-5, -4.2648907939228246102},
  };
  for (const Case& c : cases) {
    EXPECT_NEAR(InverseNormalCdf(c.p), c.expected, 4e-16 * std::abs(c.expected))
        << "p = " << c.p;
  }
  EXPECT_EQ(InverseNormalCdf(0.5), 0.0);
}

TEST(InverseNormalCdfTest, InvertsTheNormalCdfAcrossTheRange) {
  // Phi(x (1 + d)) ~ p (1 + x^2 d) in the tail, so a relative error d in x
  // shows in p amplified by about 1 + x^2.
  for (double log10_p = -300.0; log10_p < -0.31; log10_p += 0.37) {
    const double p = std::pow(10.0, log10_p);
    const double x = InverseNormalCdf(p);
    const double back = 0.5 * std::erfc(-x / std::sqrt(2.0));
    EXPECT_NEAR(back, p, 4e-16 * (1.0 + x * x) * p) << "p = " << p;
  }
}

TEST(InverseNormalCdfTest, IsOddAboutOneHalf) {
  // Dyadic p, so that 1 - p is exact.
  for (int k = 1; k < 1024; ++k) {
    const double p = k / 1024.0;
    EXPECT_EQ(InverseNormalCdf(1.0 - p), -InverseNormalCdf(p)) << p;
  }
}

TEST(InverseNormalCdfTest, EdgesAndInvalidInput) {
  EXPECT_EQ(InverseNormalCdf(0.0), -kInf);
  EXPECT_EQ(InverseNormalCdf(1.0), kInf);
  EXPECT_TRUE(std::isnan(InverseNormalCdf(-0.1)));
  EXPECT_TRUE(std::isnan(InverseNormalCdf(1.1)));
  EXPECT_TRUE(std::isnan(InverseNormalCdf(kNaN)));
  // Subnormal p: finite, ordered and close to the asymptotic answer.
  const double tiny = InverseNormalCdf(4.9406564584124654e-324);
  EXPECT_TRUE(std::isfinite(tiny));
  EXPECT_LT(tiny, InverseNormalCdf(1e-300));
  EXPECT_NEAR(tiny, -38.4674, 1e-3);
}

// ---------------------------------------------------------------------------
// Building blocks on hand-checked examples.

TEST(QuantileTest, InterpolatesLikeRType7) {
  Eigen::MatrixXd x(2, 2);
  x << 4, 1,  //
      2, 3;
  EXPECT_DOUBLE_EQ(Quantile(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Quantile(x, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(Quantile(x, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile(x, 0.05), 1.15);  // h = 3 * 0.05 = 0.15.
  EXPECT_DOUBLE_EQ(Quantile(x, 0.95), 3.85);
}

TEST(QuantileTest, TiesGiveTheTiedValueExactly) {
  Eigen::MatrixXd x(5, 1);
  x << 0.1, 0.1, 0.1, 0.7, 0.1;
  EXPECT_EQ(Quantile(x, 0.3), 0.1);
  EXPECT_EQ(Quantile(x, 0.75), 0.1);
}

TEST(QuantileTest, NanOnBadInput) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 2);
  EXPECT_TRUE(std::isnan(Quantile(x, -0.01)));
  EXPECT_TRUE(std::isnan(Quantile(x, 1.01)));
  EXPECT_TRUE(std::isnan(Quantile(Eigen::MatrixXd(0, 3), 0.5)));
  x(1, 1) = kNaN;
  EXPECT_TRUE(std::isnan(Quantile(x, 0.5)));
  x(1, 1) = kInf;
  EXPECT_EQ(Quantile(x, 1.0), kInf);
  EXPECT_EQ(Quantile(x, 0.5), 1.0);
}

TEST(SplitChainsTest, HalvesEachChainAndDropsTheMiddleDraw) {
  Eigen::MatrixXd x(5, 2);
  x << 1, 10,  //
      2, 20,   //
      3, 30,   //
      4, 40,   //
      5, 50;
  Eigen::MatrixXd expected(2, 4);
  expected << 1, 4, 10, 40,  //
      2, 5, 20, 50;
  EXPECT_EQ(SplitChains(x), expected);
  EXPECT_EQ(SplitChains(x.topRows(4)).col(1), Eigen::Vector2d(3, 4));
  EXPECT_EQ(SplitChains(x.topRows(1)).rows(), 0);
}

TEST(RankNormalizeTest, AverageRanksThroughBlomOffsets) {
  Eigen::MatrixXd x(2, 2);
  x << 3, 2,  //
      1, 2;
  // Ranks 4, 1, 2.5, 2.5 of S = 4: z = Phi^-1((r - 3/8) / 4.25).
  const Eigen::MatrixXd z = RankNormalize(x);
  EXPECT_DOUBLE_EQ(z(0, 0), InverseNormalCdf(3.625 / 4.25));
  EXPECT_DOUBLE_EQ(z(1, 0), InverseNormalCdf(0.625 / 4.25));
  EXPECT_DOUBLE_EQ(z(0, 1), InverseNormalCdf(2.125 / 4.25));
  EXPECT_EQ(z(0, 1), z(1, 1));
  EXPECT_DOUBLE_EQ(z(0, 0), -z(1, 0));
}

TEST(RankNormalizeTest, InfinitiesRankAndNanPoisons) {
  Eigen::MatrixXd x(3, 1);
  x << kInf, 0.0, -kInf;
  const Eigen::MatrixXd z = RankNormalize(x);
  EXPECT_TRUE(z.allFinite());
  EXPECT_GT(z(0, 0), z(1, 0));
  EXPECT_GT(z(1, 0), z(2, 0));
  x(1, 0) = kNaN;
  EXPECT_TRUE(RankNormalize(x).array().isNaN().all());
}

TEST(RhatTest, MatchesHandComputation) {
  Eigen::MatrixXd x(4, 2);
  x << 1, 2,  //
      2, 4,   //
      3, 6,   //
      4, 8;
  // Means 2.5 and 5; B = 4 * 3.125 = 12.5; W = (5/3 + 20/3) / 2 = 25/6.
  // var+ = 3/4 W + B/4 = 6.25; R-hat = sqrt(6.25 / (25/6)) = sqrt(1.5).
  EXPECT_NEAR(Rhat(x), std::sqrt(1.5), 1e-15);
}

TEST(RhatTest, ConstantChainsThatDisagreeAreInfinitelyBad) {
  Eigen::MatrixXd x(4, 2);
  x.col(0).setConstant(1.0);
  x.col(1).setConstant(2.0);
  EXPECT_EQ(Rhat(x), kInf);
  EXPECT_TRUE(std::isnan(Rhat(x.leftCols(1))));  // One chain: no B.
}

TEST(EssTest, ShortChainsAreCappedAtSLog10S) {
  // Four draws: the Geyer sequence stops before its first pair, tau = 0,
  // and the cap 1/log10(S) applies.
  const Eigen::MatrixXd x = IidNormal(4, 3, /*seed=*/11);
  EXPECT_NEAR(Ess(x), 12.0 * std::log10(12.0), 1e-12);
}

// The same estimator written as plainly as possible: every autocovariance by
// a direct O(n^2) sum, then Geyer's sequences as in R's posterior package.
// An oracle for the lazy direct/FFT autocovariances of Ess().
double PlainEss(const Eigen::MatrixXd& chains) {
  const Eigen::Index n = chains.rows();
  const Eigen::Index m = chains.cols();
  std::vector<double> mean_acov(n, 0.0);
  Eigen::VectorXd means(m);
  Eigen::VectorXd variances(m);
  for (Eigen::Index c = 0; c < m; ++c) {
    means(c) = chains.col(c).mean();
    const Eigen::VectorXd y = chains.col(c).array() - means(c);
    variances(c) = y.squaredNorm() / (n - 1);
    for (Eigen::Index lag = 0; lag < n; ++lag) {
      double sum = 0.0;
      for (Eigen::Index i = 0; i + lag < n; ++i) sum += y(i) * y(i + lag);
      mean_acov[lag] += sum / n / m;
    }
  }
  const double w = variances.mean();
  const double b_over_n =
      (means.array() - means.mean()).square().sum() / (m - 1);
  const double var_plus = w * (n - 1) / n + b_over_n;
  std::vector<double> rho(n, 0.0);
  auto rho_at = [&](Eigen::Index t) {
    return 1.0 - (w - mean_acov[t]) / var_plus;
  };
  double even = 1.0;
  double odd = rho_at(1);
  rho[0] = even;
  rho[1] = odd;
  Eigen::Index t = 0;
  while (t < n - 5 && even + odd > 0) {
    t += 2;
    even = rho_at(t);
    odd = rho_at(t + 1);
    if (even + odd >= 0) {
      rho[t] = even;
      rho[t + 1] = odd;
    }
  }
  const Eigen::Index max_t = t;
  if (even > 0) rho[max_t] = even;
  for (Eigen::Index s = 2; s <= max_t - 2; s += 2) {
    if (rho[s] + rho[s + 1] > rho[s - 2] + rho[s - 1]) {
      rho[s] = rho[s + 1] = (rho[s - 2] + rho[s - 1]) / 2;
    }
  }
  double tau = -1.0 + rho[max_t];
  for (Eigen::Index s = 0; s < max_t; ++s) tau += 2.0 * rho[s];
  const double total = static_cast<double>(n * m);
  return total / std::max(tau, 1.0 / std::log10(total));
}

TEST(EssTest, MatchesThePlainEstimatorOnShortAndLongCorrelations) {
  // iid: the sequence ends within the directly summed lags. AR(1) with
  // phi = 0.97: it runs for hundreds of lags, through the FFT.
  const Eigen::MatrixXd iid = IidNormal(1000, 4, /*seed=*/21);
  EXPECT_NEAR(Ess(iid) / PlainEss(iid), 1.0, 1e-12);
  const Eigen::MatrixXd slow = Ar1(0.97, 2000, 4, /*seed=*/22);
  EXPECT_NEAR(Ess(slow) / PlainEss(slow), 1.0, 1e-10);
  EXPECT_LT(Ess(slow), 0.05 * slow.size());  // Really slow: long sequence.
  // Chains that disagree: W is small against var+, rho stays high.
  Eigen::MatrixXd apart = IidNormal(500, 4, /*seed=*/23);
  apart.col(0).array() += 5.0;
  EXPECT_NEAR(Ess(apart) / PlainEss(apart), 1.0, 1e-10);
}

TEST(EssTest, Ar1WithLongCorrelationMatchesTheory) {
  // phi = 0.95: tau = 39, far beyond the directly summed lags.
  const Eigen::MatrixXd x = Ar1(0.95, /*draws=*/20000, /*chains=*/4,
                                /*seed=*/5);
  EXPECT_NEAR(Ess(x) / (x.size() / 39.0), 1.0, 0.2);
}

// ---------------------------------------------------------------------------
// Golden values: Stan's own tests on the four bern chains (R's posterior
// package agrees).

TEST(BernGoldenTest, BulkAndTailEss) {
  const Eigen::MatrixXd lp = BernColumn("lp__");
  const Eigen::MatrixXd theta = BernColumn("theta");
  ASSERT_EQ(lp.rows(), 1000);
  ASSERT_EQ(lp.cols(), 4);
  EXPECT_NEAR(EssBulk(lp), 1512.7684, 1e-4);
  EXPECT_NEAR(EssTail(lp), 1591.9707, 1e-4);
  EXPECT_NEAR(EssBulk(theta), 1407.5124, 1e-4);
  EXPECT_NEAR(EssTail(theta), 1291.7131, 1e-4);
}

TEST(BernGoldenTest, RankNormalizedSplitRhat) {
  EXPECT_NEAR(SplitRhat(BernColumn("lp__")), 1.000730, 1e-6);
  EXPECT_NEAR(SplitRhat(BernColumn("theta")), 1.0067897, 1e-6);
}

TEST(BernGoldenTest, McseOfTheMean) {
  // posterior::mcse_mean, as quoted by Stan's mcse_test.cpp.
  EXPECT_NEAR(McseMean(BernColumn("lp__")), 0.02016, 1e-5);
  EXPECT_NEAR(McseMean(BernColumn("theta")), 0.00323, 1e-5);
}

TEST(BernGoldenTest, SummaryAgreesWithCmdStanAndTheOtherFunctions) {
  // Mean and StdDev: CmdStan 2.35's stansummary of these files (Stan's test
  // data). Its quantiles used an older definition, so 5%/50%/95% and MAD
  // come from Python's statistics.quantiles(method='inclusive') (= R type 7)
  // and statistics.median, computed on the same files.
  const Eigen::MatrixXd theta = BernColumn("theta");
  const SummaryRow row = Summarize(theta);
  EXPECT_NEAR(row.mean, 0.251297410482, 1e-12);
  EXPECT_NEAR(row.stddev, 0.121546686658, 1e-12);
  EXPECT_NEAR(row.q5, 0.07716935, 1e-12);
  EXPECT_NEAR(row.q50, 0.237476, 1e-12);
  EXPECT_NEAR(row.q95, 0.47388505, 1e-12);
  EXPECT_NEAR(row.mad, 0.1230906411, 1e-12);
  // The other columns are exactly the single-purpose functions.
  EXPECT_EQ(row.mcse, McseMean(theta));
  EXPECT_EQ(row.ess_bulk, EssBulk(theta));
  EXPECT_EQ(row.ess_tail, EssTail(theta));
  EXPECT_EQ(row.rhat, SplitRhat(theta));
  EXPECT_EQ(row.q50, Quantile(theta, 0.5));

  const SummaryRow lp = Summarize(BernColumn("lp__"));
  EXPECT_NEAR(lp.mean, -7.2867579275, 1e-10);
  EXPECT_NEAR(lp.stddev, 0.738616062616, 1e-12);
  EXPECT_NEAR(lp.q5, -8.7823005, 1e-12);
  EXPECT_NEAR(lp.q50, -6.990215, 1e-12);
  EXPECT_NEAR(lp.q95, -6.7502995, 1e-12);
  EXPECT_NEAR(lp.mad, 0.329574567, 1e-12);
}

TEST(SummarizeTest, MadOfASmallSample) {
  Eigen::MatrixXd x(5, 1);
  x << 1, 2, 3, 4, 100;
  // median 3; |x - 3| = 2 1 0 1 97, median 1.
  EXPECT_DOUBLE_EQ(Summarize(x).mad, 1.4826);
}

// SortedOrder is std::sort of (value, index) pairs, for values over the
// whole range of doubles (signed zeros, subnormals, infinities, ties) and
// sizes that take several radix passes.
TEST(SortedOrderTest, IsStdSortOfValueIndexPairs) {
  std::mt19937_64 gen(11);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> pick(0, 9);
  constexpr double kSpecial[] = {-0.0, 0.0, INFINITY, -INFINITY, 4e-320, -4e-320,
                                 1e300, -1e300, 3.0, -3.0};
  for (Eigen::Index size : {0, 1, 2, 7, 1000, 20000}) {
    SCOPED_TRACE(size);
    Eigen::MatrixXd x(size, 1);
    for (Eigen::Index i = 0; i < size; ++i) {
      x(i) = i % 2 == 0 ? kSpecial[pick(gen)] : normal(gen) * std::exp2(pick(gen) * 100 - 500);
    }
    std::vector<std::pair<double, Eigen::Index>> expected;
    for (Eigen::Index i = 0; i < size; ++i) expected.emplace_back(x(i), i);
    std::sort(expected.begin(), expected.end());
    const std::vector<std::pair<double, Eigen::Index>> got = SortedOrder(x);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].second, expected[k].second) << k;
      ASSERT_EQ(std::bit_cast<uint64_t>(got[k].first), std::bit_cast<uint64_t>(expected[k].first));
    }
  }
  // NaN has no place in that order: it goes after +inf, or before -inf with
  // its sign bit set.
  Eigen::MatrixXd x(4, 1);
  x << 1.0, NAN, INFINITY, -NAN;
  const std::vector<std::pair<double, Eigen::Index>> got = SortedOrder(x);
  std::vector<Eigen::Index> indices;
  for (const auto& [value, index] : got) indices.push_back(index);
  EXPECT_EQ(indices, (std::vector<Eigen::Index>{3, 0, 2, 1}));
}

// Rank normalization straight from its definition: sort (value, index),
// average the ranks of ties, z = Phi^-1((r - 3/8) / (S + 1/4)).
Eigen::MatrixXd RankNormalizeBySorting(const Eigen::MatrixXd& x) {
  if (x.hasNaN()) return Eigen::MatrixXd::Constant(x.rows(), x.cols(), NAN);
  std::vector<std::pair<double, Eigen::Index>> order;
  for (Eigen::Index i = 0; i < x.size(); ++i) order.emplace_back(x.data()[i], i);
  std::sort(order.begin(), order.end());
  Eigen::MatrixXd z(x.rows(), x.cols());
  const auto size = static_cast<Eigen::Index>(order.size());
  for (Eigen::Index first = 0, last = 0; first < size; first = last) {
    for (last = first; last < size && order[last].first == order[first].first;) ++last;
    const double rank = 0.5 * static_cast<double>(first + 1 + last);
    for (Eigen::Index k = first; k < last; ++k) {
      z.data()[order[k].second] =
          InverseNormalCdf((rank - 0.375) / (static_cast<double>(size) + 0.25));
    }
  }
  return z;
}

bool SameOrBothNan(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Summarize sorts the split draws once (for the ranks, the folded ranks via
// a merge, and the quantiles when no middle draw is dropped) and shares
// whole ranks' z values between columns: every number is still exactly the
// definition's, with ties (discrete draws, draws at the median), odd and
// even chain lengths, and a non-finite middle draw.
TEST(SummarizeTest, OneSortGivesTheDefinitionsBitForBit) {
  std::mt19937_64 gen(3);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> die(1, 6);
  struct Case {
    const char* name;
    Eigen::Index rows;
    // 0 continuous, 1 discrete, 2 half at one value, 3 inf middle, 4 NaN middle,
    // 5 signed zeros, subnormals and both signs over the whole exponent range
    // (the sort orders keys made from the bits), 6 half of them -0.0 or 0.0
    int kind;
  };
  constexpr double kWide[] = {-0.0,   0.0,  -1e300, 1e300, 4e-320, -4e-320,
                              2.5,    -2.5, 1e-5,   -7e10, 7.0};
  for (const Case& c : {Case{"continuous even", 100, 0}, Case{"continuous odd", 101, 0},
                        Case{"discrete", 60, 1}, Case{"discrete odd", 61, 1},
                        Case{"many at the median", 80, 2}, Case{"inf middle draw", 41, 3},
                        Case{"NaN middle draw", 41, 4}, Case{"wide range", 90, 5},
                        Case{"wide range odd", 91, 5}, Case{"signed zeros at the median", 80, 6}}) {
    SCOPED_TRACE(c.name);
    for (Eigen::Index cols : {1, 4}) {
      Eigen::MatrixXd x(c.rows, cols);
      for (Eigen::Index i = 0; i < x.size(); ++i) {
        x.data()[i] = c.kind == 1                ? die(gen)
                      : c.kind == 2 && i % 2 == 0 ? 0.5
                      : c.kind == 5 && i % 3 != 0 ? kWide[die(gen) + die(gen) - 2]
                      : c.kind == 6 && i % 2 == 0 ? (die(gen) % 2 == 0 ? 0.0 : -0.0)
                                                  : normal(gen);
      }
      if (c.kind == 3) x(c.rows / 2, 0) = INFINITY;
      if (c.kind == 4) x(c.rows / 2, 0) = NAN;
      const SummaryRow row = Summarize(x);
      const Eigen::MatrixXd split = SplitChains(x);
      const bool nan = x.hasNaN();
      EXPECT_TRUE(SameOrBothNan(row.q5, nan ? NAN : Quantile(x, 0.05)));
      EXPECT_TRUE(SameOrBothNan(row.q50, nan ? NAN : Quantile(x, 0.5)));
      EXPECT_TRUE(SameOrBothNan(row.q95, nan ? NAN : Quantile(x, 0.95)));
      ASSERT_TRUE(std::isfinite(row.ess_bulk)) << "the case must reach the ranks";
      EXPECT_EQ(row.ess_bulk, Ess(RankNormalizeBySorting(split)));
      const double bulk = Rhat(RankNormalizeBySorting(split));
      const double tail =
          Rhat(RankNormalizeBySorting((split.array() - row.q50).abs().matrix()));
      EXPECT_TRUE(SameOrBothNan(row.rhat, std::isnan(tail) ? bulk : std::max(bulk, tail)))
          << row.rhat << " " << bulk << " " << tail;
      EXPECT_EQ(RankNormalize(split), RankNormalizeBySorting(split));
      if (!nan) {
        EXPECT_EQ(row.rhat, SplitRhat(x));
      }
      if (c.rows % 2 == 0) {
        // Even chains: the quantiles come from the order of (value, index),
        // down to the sign of a zero.
        std::vector<std::pair<double, Eigen::Index>> order;
        for (Eigen::Index i = 0; i < split.size(); ++i) order.emplace_back(split.data()[i], i);
        std::sort(order.begin(), order.end());
        for (const auto& [p, q] : {std::pair{0.05, row.q5}, {0.5, row.q50}, {0.95, row.q95}}) {
          const double h = static_cast<double>(order.size() - 1) * p;
          const auto lo = static_cast<size_t>(std::floor(h));
          const auto hi = static_cast<size_t>(std::ceil(h));
          if (order[lo].first != order[hi].first) continue;  // interpolated
          EXPECT_EQ(std::signbit(q), std::signbit(order[lo].first)) << p;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Synthetic chains. Bands are about four Monte Carlo standard errors of the
// estimator for the given sizes (sd of tau-hat ~ 2 sqrt(lags / S)).

TEST(SyntheticTest, IidNormalChainsLookConverged) {
  const Eigen::MatrixXd x = IidNormal(/*draws=*/2500, /*chains=*/8,
                                      /*seed=*/20240601);
  const double s = static_cast<double>(x.size());
  EXPECT_LT(std::abs(SplitRhat(x) - 1.0), 0.005);
  EXPECT_LT(std::abs(Rhat(x) - 1.0), 0.005);
  EXPECT_NEAR(EssBulk(x) / s, 1.0, 0.1);
  EXPECT_NEAR(Ess(x) / s, 1.0, 0.1);
  EXPECT_NEAR(EssTail(x) / s, 1.0, 0.15);
  EXPECT_NEAR(McseMean(x) * std::sqrt(s), 1.0, 0.1);
}

TEST(SyntheticTest, Ar1EssMatchesTheAutocorrelationTime) {
  // tau = (1 + phi) / (1 - phi) = 3 for phi = 0.5.
  const Eigen::MatrixXd x = Ar1(0.5, /*draws=*/5000, /*chains=*/8, /*seed=*/7);
  const double expected = static_cast<double>(x.size()) / 3.0;
  EXPECT_NEAR(EssBulk(x) / expected, 1.0, 0.1);
  EXPECT_NEAR(Ess(x) / expected, 1.0, 0.1);
  EXPECT_LT(SplitRhat(x), 1.01);
}

TEST(SyntheticTest, AntitheticChainsExceedS) {
  // phi = -0.5: tau = 1/3, ESS ~ 3 S, below the S log10 S cap.
  const Eigen::MatrixXd x = Ar1(-0.5, /*draws=*/5000, /*chains=*/4, /*seed=*/9);
  const double s = static_cast<double>(x.size());
  EXPECT_NEAR(Ess(x) / (3.0 * s), 1.0, 0.15);
  EXPECT_LE(Ess(x), s * std::log10(s));
}

TEST(SyntheticTest, ShiftedChainFailsRhat) {
  Eigen::MatrixXd x = IidNormal(1000, 4, /*seed=*/3);
  x.col(3).array() += 3.0;
  EXPECT_GT(SplitRhat(x), 1.1);
  EXPECT_GT(Rhat(x), 1.1);
  EXPECT_LT(EssBulk(x), 0.5 * x.size());
}

TEST(SyntheticTest, ChainWithDifferentScaleFailsOnlyTheFoldedRhat) {
  // Same location, 3x the spread: invisible to the bulk R-hat, caught by
  // the folded one.
  Eigen::MatrixXd x = IidNormal(1000, 4, /*seed=*/4);
  x.col(0) *= 3.0;
  const Eigen::MatrixXd split = SplitChains(x);
  EXPECT_LT(Rhat(RankNormalize(split)), 1.02);
  EXPECT_GT(SplitRhat(x), 1.1);
}

TEST(SyntheticTest, StuckChainIsAFailureNotNan) {
  Eigen::MatrixXd x = IidNormal(1000, 4, /*seed=*/8);
  x.col(2).setConstant(0.0);
  const double rhat = SplitRhat(x);
  EXPECT_TRUE(std::isfinite(rhat));
  EXPECT_GT(rhat, 1.1);
  EXPECT_TRUE(std::isfinite(EssBulk(x)));
}

TEST(SyntheticTest, TrendWithinChainsFailsSplitRhat) {
  // Every chain drifts the same way: plain R-hat misses it, split R-hat
  // compares the halves and does not.
  Eigen::MatrixXd x = IidNormal(1000, 4, /*seed=*/6);
  for (Eigen::Index n = 0; n < x.rows(); ++n) x.row(n).array() += 4e-3 * n;
  EXPECT_LT(Rhat(x), 1.01);
  EXPECT_GT(SplitRhat(x), 1.1);
}

// ---------------------------------------------------------------------------
// NaN rules.

TEST(NanRulesTest, SplitChainsShorterThanFourDraws) {
  const Eigen::MatrixXd x = IidNormal(8, 4, /*seed=*/1);
  EXPECT_FALSE(std::isnan(SplitRhat(x)));
  EXPECT_FALSE(std::isnan(EssBulk(x)));
  // Seven draws: halves of three.
  const Eigen::MatrixXd short_x = x.topRows(7);
  EXPECT_TRUE(std::isnan(SplitRhat(short_x)));
  EXPECT_TRUE(std::isnan(EssBulk(short_x)));
  EXPECT_TRUE(std::isnan(EssTail(short_x)));
  EXPECT_TRUE(std::isnan(McseMean(short_x)));
  EXPECT_TRUE(std::isnan(Ess(x.topRows(3))));
  EXPECT_TRUE(std::isnan(Rhat(x.topRows(3))));
  EXPECT_TRUE(std::isnan(SplitRhat(Eigen::MatrixXd(100, 0))));
  EXPECT_TRUE(std::isnan(Ess(Eigen::MatrixXd(100, 0))));
}

TEST(NanRulesTest, NonFiniteDraws) {
  for (double bad : {kNaN, kInf, -kInf}) {
    Eigen::MatrixXd x = IidNormal(100, 4, /*seed=*/2);
    x(17, 2) = bad;
    EXPECT_TRUE(std::isnan(SplitRhat(x))) << bad;
    EXPECT_TRUE(std::isnan(Rhat(x))) << bad;
    EXPECT_TRUE(std::isnan(Ess(x))) << bad;
    EXPECT_TRUE(std::isnan(EssBulk(x))) << bad;
    EXPECT_TRUE(std::isnan(EssTail(x))) << bad;
    EXPECT_TRUE(std::isnan(McseMean(x))) << bad;
    const SummaryRow row = Summarize(x);
    EXPECT_TRUE(std::isnan(row.rhat)) << bad;
    EXPECT_TRUE(std::isnan(row.ess_bulk)) << bad;
    EXPECT_EQ(std::isnan(row.q50), std::isnan(bad)) << bad;
  }
}

TEST(NanRulesTest, AllConstantDraws) {
  // divergent__ of a run without divergences.
  const Eigen::MatrixXd divergent = BernColumn("divergent__");
  ASSERT_EQ(divergent.size(), 4000);
  const SummaryRow row = Summarize(divergent);
  EXPECT_EQ(row.mean, 0.0);
  EXPECT_EQ(row.stddev, 0.0);
  EXPECT_EQ(row.mad, 0.0);
  EXPECT_EQ(row.q5, 0.0);
  EXPECT_EQ(row.q95, 0.0);
  EXPECT_TRUE(std::isnan(row.mcse));
  EXPECT_TRUE(std::isnan(row.ess_bulk));
  EXPECT_TRUE(std::isnan(row.ess_tail));
  EXPECT_TRUE(std::isnan(row.rhat));
  EXPECT_TRUE(std::isnan(Rhat(divergent)));
  EXPECT_TRUE(std::isnan(Ess(divergent)));
}

TEST(NanRulesTest, TailEssFallsBackWhenOneIndicatorIsConstant) {
  // 97% of draws sit at the maximum: I(x <= q05) is all ones, while
  // I(x >= q95) still varies.
  Eigen::MatrixXd x = Eigen::MatrixXd::Constant(1000, 4, 1.0);
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<Eigen::Index> pick(0, x.size() - 1);
  for (int i = 0; i < 120; ++i) x.data()[pick(rng)] = 0.0;
  ASSERT_EQ(Quantile(x, 0.05), 1.0);
  const Eigen::MatrixXd split = SplitChains(x);
  const double high = Ess((split.array() >= 1.0).cast<double>().matrix());
  EXPECT_TRUE(std::isfinite(high));
  EXPECT_EQ(EssTail(x), high);
}

TEST(NanRulesTest, EmptyInputSummarizesToNan) {
  const SummaryRow row = Summarize(Eigen::MatrixXd(0, 4));
  EXPECT_TRUE(std::isnan(row.mean));
  EXPECT_TRUE(std::isnan(row.stddev));
  EXPECT_TRUE(std::isnan(row.q50));
  EXPECT_TRUE(std::isnan(row.rhat));
}

// ---------------------------------------------------------------------------
// E-BFMI.

TEST(EbfmiTest, IidEnergiesGiveAboutTwo) {
  // E[(E_n - E_{n-1})^2] = 2 var(E); the ratio's sd is ~ 2/sqrt(N).
  const Eigen::VectorXd ebfmi = Ebfmi(IidNormal(10000, 3, /*seed=*/31));
  ASSERT_EQ(ebfmi.size(), 3);
  for (Eigen::Index m = 0; m < 3; ++m) EXPECT_NEAR(ebfmi(m), 2.0, 0.1);
}

TEST(EbfmiTest, RandomWalkEnergyIsLow) {
  Eigen::MatrixXd energy = IidNormal(1000, 2, /*seed=*/32);
  for (Eigen::Index n = 1; n < energy.rows(); ++n) {
    energy.row(n) += energy.row(n - 1);
  }
  const Eigen::VectorXd ebfmi = Ebfmi(energy);
  EXPECT_LT(ebfmi(0), 0.05);
  EXPECT_LT(ebfmi(1), 0.05);
  EXPECT_LT(ebfmi.maxCoeff(), kLowEbfmiThreshold);
}

TEST(EbfmiTest, HandComputedAndDegenerateChains) {
  Eigen::MatrixXd energy(4, 4);
  energy << 1, 5, 1, 1,  //
      2, 5, kNaN, 2,     //
      3, 5, 3, 3,        //
      4, 5, 4, kInf;
  const Eigen::VectorXd ebfmi = Ebfmi(energy);
  // Differences 1,1,1 -> 3; deviations 1.5,0.5,0.5,1.5 -> 5.
  EXPECT_DOUBLE_EQ(ebfmi(0), 3.0 / 5.0);
  EXPECT_TRUE(std::isnan(ebfmi(1)));  // Constant.
  EXPECT_TRUE(std::isnan(ebfmi(2)));  // NaN energy.
  EXPECT_TRUE(std::isnan(ebfmi(3)));  // Infinite energy.
  EXPECT_TRUE(std::isnan(Ebfmi(energy.topRows(1))(0)));
}

}  // namespace
}  // namespace autobatch::mcmc
