// MCMC convergence diagnostics: rank-normalized split R-hat, bulk/tail ESS,
// MCSE, E-BFMI and CmdStan-style summary rows.
//
// The definitions are those of Vehtari, Gelman, Simpson, Carpenter and
// Bürkner (2021), "Rank-normalization, folding, and localization: an improved
// R-hat for assessing convergence of MCMC", with the conventions of Stan's
// `stan/analyze/mcmc` and R's `posterior` package, so that numbers agree with
// CmdStan, cmdstanr/posterior and ArviZ users' expectations.
//
// Shapes. The draws of ONE scalar quantity are a matrix with one row per draw
// and one column per chain: N draws x M chains.
//
// Splitting. "Split" diagnostics cut every chain into a first and a second
// half (when N is odd the middle draw is dropped, as `posterior` does), giving
// 2M chains of floor(N/2) draws.
//
// Degenerate input. Every diagnostic returns NaN instead of a number when it
// is undefined:
//   - a chain (after splitting, for the split diagnostics) has fewer than
//     kMinDrawsPerChain draws, or there are no chains;
//   - any draw is NaN or infinite;
//   - all draws are identical (e.g. `divergent__` of a run without
//     divergences). A single stuck chain among moving ones is NOT degenerate:
//     it is a convergence failure and shows as a large R-hat / small ESS.
// Nothing here throws, asserts on user data or crashes on such input.
//
// All functions are pure (no shared state), so callers may summarize many
// quantities in parallel. Cost: rank normalization sorts all N M draws
// (SortedOrder); Summarize() sorts the split draws once (and the draws
// again for the quantiles when chains have an odd number of draws, or are
// degenerate), and takes about 0.1 s for
// 1000 x 1024 and 0.6 s for 1000 x 4096 on one core (bench/summary_bench).
#ifndef AUTOBATCH_MCMC_OUTPUT_DIAGNOSTICS_H_
#define AUTOBATCH_MCMC_OUTPUT_DIAGNOSTICS_H_

#include <Eigen/Core>
#include <array>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

namespace autobatch::mcmc {

// Chains (after splitting, for split diagnostics) shorter than this give NaN.
inline constexpr Eigen::Index kMinDrawsPerChain = 4;

// E-BFMI below this suggests the momentum resampling cannot explore the
// energy distribution (Betancourt); CmdStan warns.
inline constexpr double kLowEbfmiThreshold = 0.3;

// Standard normal quantile function Phi^-1(p): Acklam's rational
// approximation refined by one Halley step on erf/erfc, relative error below
// 4e-16 (about 1.5 ulp) whenever min(p, 1 - p) >= DBL_MIN, and about 1e-9
// for subnormal p. Returns -inf at p = 0, +inf at p = 1 and NaN for p
// outside [0, 1] or NaN.
double InverseNormalCdf(double p);

// Sample quantile of all entries of `draws` (pooled over chains), R's default
// type 7: linear interpolation between order statistics at (S - 1) p, where S
// is the number of entries; when the two neighbouring order statistics are
// equal the result is exactly that value (so ties stay ties). Also used for
// the summary's 5%/50%/95% columns. NaN if `draws` is empty, any entry is
// NaN, or p is outside [0, 1].
double Quantile(const Eigen::MatrixXd& draws, double p);

// Splits each of the M chains into halves: column 2m is the first half of
// chain m, column 2m+1 the second. The result has floor(N/2) rows and 2M
// columns; the middle draw of an odd-length chain is dropped.
Eigen::MatrixXd SplitChains(const Eigen::MatrixXd& draws);

// Rank-normalizes all entries jointly: each entry is replaced by
// Phi^-1((r - 3/8) / (S + 1/4)), where r is its rank among all S entries
// (from 1; tied entries share the average of their ranks). Same shape as the
// input. If any entry is NaN every output entry is NaN; infinities rank as
// the extreme values they are.
Eigen::MatrixXd RankNormalize(const Eigen::MatrixXd& draws);

// Classic potential scale reduction on the chains as given (no splitting, no
// rank normalization): with n draws per chain, B = n/(M-1) sum_m (mean_m -
// mean)^2, W = mean of the within-chain variances (divisor n-1),
// var+ = (n-1)/n W + B/n, R-hat = sqrt(var+/W). NaN if fewer than 2 chains or
// the input is degenerate (see top); +inf if every chain is constant but the
// chains differ.
double Rhat(const Eigen::MatrixXd& chains);

// The R-hat CmdStan and posterior report: the maximum of Rhat() of the
// rank-normalized split draws and of the rank-normalized split *folded*
// draws |x - median(x)| (median over all draws). If the folded draws are
// constant while the draws are not (two values symmetric about the median)
// the folded R-hat is undefined and the rank-normalized one is returned.
// NaN if degenerate.
double SplitRhat(const Eigen::MatrixXd& draws);

// Effective sample size of the chains as given (no splitting, no rank
// normalization). Autocorrelations combine all chains,
// rho_t = 1 - (W - mean_m acov_{t,m}) / var+, with biased autocovariances
// (divisor n); they are summed with Geyer's initial positive sequence made
// monotone, tau = -1 + 2 sum_{t<T} rho_t + max(rho_T, 0), and
// tau = max(tau, 1/log10(S)) caps the ESS at S log10(S) for S = n M draws.
// ESS = S / tau. NaN if the input is degenerate (see top).
double Ess(const Eigen::MatrixXd& chains);

// Bulk-ESS: Ess() of the rank-normalized split draws. NaN if degenerate.
double EssBulk(const Eigen::MatrixXd& draws);

// Tail-ESS: the minimum of Ess() of the split indicator chains
// I(x <= q05) and I(x >= q95), with q05/q95 the Quantile()s of all draws.
// When one indicator is constant (possible only with heavy ties, e.g. a
// quantity that is mostly at one value) its ESS is undefined and the other
// is returned, as Stan does. NaN if the draws are degenerate.
double EssTail(const Eigen::MatrixXd& draws);

// Monte Carlo standard error of the mean: sd / sqrt(Ess(SplitChains(draws))),
// with sd the sample standard deviation of all draws (divisor S - 1).
// NaN if degenerate.
double McseMean(const Eigen::MatrixXd& draws);

// Energy Bayesian fraction of missing information, one value per chain
// (column) of `energies` (the `energy__` sampler statistic):
// sum_{n>=1} (E_n - E_{n-1})^2 / sum_n (E_n - mean E)^2. About 2 for
// independent energies, near 0 when the energy random-walks. A chain's
// value is NaN if it has fewer than 2 draws, a non-finite energy, or
// constant energy.
Eigen::VectorXd Ebfmi(const Eigen::MatrixXd& energies);

// One row of CmdStan's `stansummary` table for one quantity. MCSE, ESS and
// R-hat are NaN when undefined for the draws (see top). Mean, StdDev, MAD and
// the quantiles are plain statistics of all draws in IEEE arithmetic: NaN if
// the draws are empty or contain NaN (StdDev also for a single draw or an
// infinite one), infinite where an infinite draw makes them so.
struct SummaryRow {
  double mean = std::numeric_limits<double>::quiet_NaN();
  double mcse = std::numeric_limits<double>::quiet_NaN();    // McseMean()
  double stddev = std::numeric_limits<double>::quiet_NaN();  // divisor S - 1
  // 1.4826 * median(|x - median(x)|), R's and posterior's `mad`.
  double mad = std::numeric_limits<double>::quiet_NaN();
  double q5 = std::numeric_limits<double>::quiet_NaN();   // Quantile(, 0.05)
  double q50 = std::numeric_limits<double>::quiet_NaN();  // Quantile(, 0.5)
  double q95 = std::numeric_limits<double>::quiet_NaN();  // Quantile(, 0.95)
  double ess_bulk = std::numeric_limits<double>::quiet_NaN();  // EssBulk()
  double ess_tail = std::numeric_limits<double>::quiet_NaN();  // EssTail()
  double rhat = std::numeric_limits<double>::quiet_NaN();      // SplitRhat()
};

// Column headers of SummaryRow, in field order, as CmdStan prints them.
inline constexpr std::array<std::string_view, 10> kSummaryColumnNames = {
    "Mean", "MCSE", "StdDev",   "MAD",      "5%",
    "50%",  "95%",  "ESS_bulk", "ESS_tail", "R_hat"};

// Computes every column of SummaryRow for the draws of one quantity.
SummaryRow Summarize(const Eigen::MatrixXd& draws);

// The entries of `draws` (value, index in storage order) in ascending order
// of value and then index: the order std::sort gives such pairs, where -0.0
// and +0.0 are equal values. The order rank normalization assigns ranks in;
// a stable radix sort, about twice as fast as std::sort at 10^6 draws
// (bench/summary_bench). A NaN entry, which has no place in that order, goes
// after +inf (before -inf if its sign bit is set).
std::vector<std::pair<double, Eigen::Index>> SortedOrder(const Eigen::MatrixXd& draws);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_OUTPUT_DIAGNOSTICS_H_
