// MCMC convergence diagnostics (R-hat, ESS, MCSE, E-BFMI, summary rows).
#include "mcmc/output/diagnostics.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unsupported/Eigen/FFT>
#include <utility>
#include <vector>

namespace autobatch::mcmc {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Acklam's rational approximation of Phi^-1 on the lower half, q in
// (0, 0.5]; relative error below 1.15e-9, refined by the caller.
double AcklamLowerHalf(double q) {
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                          -2.759285104469687e+02, 1.383577518672690e+02,
                          -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                          -1.556989798598866e+02, 6.680131188771972e+01,
                          -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                          -2.400758277161838e+00, -2.549732539343734e+00,
                          4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                          2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kCentralBoundary = 0.02425;
  if (q < kCentralBoundary) {
    const double t = std::sqrt(-2.0 * std::log(q));
    return (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t +
            c[5]) /
           ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1.0);
  }
  const double u = q - 0.5;
  const double r = u * u;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
         u /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

bool AllEqual(const Eigen::MatrixXd& m) {
  return m.size() == 0 || (m.array() == m(0, 0)).all();
}

// True when a diagnostic on these chains is undefined (see the header).
bool IsDegenerate(const Eigen::MatrixXd& chains) {
  return chains.cols() == 0 || chains.rows() < kMinDrawsPerChain ||
         !chains.allFinite() || AllEqual(chains);
}

double SampleVariance(const Eigen::Ref<const Eigen::ArrayXd>& x) {
  if (x.size() < 2) return kNaN;
  return (x - x.mean()).square().sum() / static_cast<double>(x.size() - 1);
}

double SampleStdDev(const Eigen::MatrixXd& draws) {
  return std::sqrt(SampleVariance(draws.reshaped().array()));
}

// Type-7 quantile of an ascending vector (see Quantile()).
double QuantileOfSorted(const std::vector<double>& sorted, double p) {
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = static_cast<std::size_t>(std::ceil(h));
  if (sorted[lo] == sorted[hi]) return sorted[lo];
  const double frac = h - static_cast<double>(lo);
  return (1.0 - frac) * sorted[lo] + frac * sorted[hi];
}

// Mean over chains of the biased (divisor n) lag-t autocovariances of
// already-centred chains. The Geyer sequence usually stops after a few lags,
// so the first kDirectLags lags are summed directly (O(n M) each); the first
// request beyond them computes every lag by FFT (O(n log n M)) instead, which
// bounds the worst case for slowly mixing chains.
class MeanAutocovariance {
 public:
  explicit MeanAutocovariance(const Eigen::MatrixXd& centered)
      : centered_(centered) {}

  double At(Eigen::Index lag) {
    if (lag < kDirectLags && all_lags_.size() == 0) {
      const Eigen::Index n = centered_.rows();
      const double sum = (centered_.topRows(n - lag).array() *
                          centered_.bottomRows(n - lag).array())
                             .sum();
      return sum / static_cast<double>(n * centered_.cols());
    }
    if (all_lags_.size() == 0) ComputeAllLagsByFft();
    return all_lags_(lag);
  }

 private:
  static constexpr Eigen::Index kDirectLags = 32;

  void ComputeAllLagsByFft() {
    const Eigen::Index n = centered_.rows();
    // Zero padding to at least 2n turns the FFT's circular correlation into
    // the linear one; a power of two (>= 4) keeps kissfft on its fast path.
    Eigen::Index nfft = 4;
    while (nfft < 2 * n) nfft *= 2;
    Eigen::FFT<double> fft;
    fft.SetFlag(Eigen::FFT<double>::HalfSpectrum);
    std::vector<double> signal(static_cast<std::size_t>(nfft), 0.0);
    std::vector<std::complex<double>> spectrum(
        static_cast<std::size_t>(nfft / 2 + 1));
    std::vector<double> correlation(static_cast<std::size_t>(nfft));
    all_lags_ = Eigen::VectorXd::Zero(n);
    for (Eigen::Index m = 0; m < centered_.cols(); ++m) {
      std::copy(centered_.col(m).begin(), centered_.col(m).end(),
                signal.begin());
      fft.fwd(spectrum.data(), signal.data(), nfft);
      for (std::complex<double>& bin : spectrum) bin = std::norm(bin);
      fft.inv(correlation.data(), spectrum.data(), nfft);
      all_lags_ += Eigen::Map<const Eigen::VectorXd>(correlation.data(), n);
    }
    all_lags_ /= static_cast<double>(n * centered_.cols());
  }

  const Eigen::MatrixXd& centered_;
  Eigen::VectorXd all_lags_;  // Empty until a lag >= kDirectLags is needed.
};

// (value, index) of every element of a matrix, ascending: the order rank
// normalization assigns ranks in.
using Order = std::vector<std::pair<double, Eigen::Index>>;

// An unsigned key that orders doubles as `<` does (no NaN): the sign bit
// flipped for positives, every bit for negatives; -0.0 gets +0.0's key, since
// the two compare equal.
uint64_t OrderedKey(double x) {
  constexpr uint64_t kSign = uint64_t{1} << 63;
  const uint64_t bits = std::bit_cast<uint64_t>(x == 0.0 ? 0.0 : x);
  return (bits & kSign) != 0 ? ~bits : bits | kSign;
}

// z(r) = InverseNormalCdf((r - 3/8) / (size + 1/4)) for whole ranks r, each
// computed on first use and kept per thread while `size` stays the same:
// every column of a summary has the same number of draws, and most ranks are
// whole (no ties), so its columns share the evaluations (seconds for 10^6
// draws per column).
double WholeRankZ(Eigen::Index rank, Eigen::Index size) {
  thread_local std::vector<double> table;  // NaN: not computed yet
  thread_local Eigen::Index table_size = -1;
  if (table_size != size) {
    table.assign(static_cast<std::size_t>(size) + 1, kNaN);
    table_size = size;
  }
  double& z = table[static_cast<std::size_t>(rank)];
  if (std::isnan(z)) {
    z = InverseNormalCdf((static_cast<double>(rank) - 0.375) /
                         (static_cast<double>(size) + 0.25));
  }
  return z;
}

// RankNormalize() given the matrix's SortedOrder(), which must hold no NaN.
Eigen::MatrixXd NormalizeInOrder(const Order& order, Eigen::Index rows, Eigen::Index cols) {
  const auto size = static_cast<Eigen::Index>(order.size());
  Eigen::MatrixXd normalized(rows, cols);
  const double denominator = static_cast<double>(size) + 0.25;
  for (Eigen::Index first = 0; first < size;) {
    Eigen::Index last = first + 1;  // One past the run of tied values.
    while (last < size && order[last].first == order[first].first) ++last;
    // Ranks first+1 .. last share their average, (first + 1 + last) / 2:
    // whole when the run has odd length.
    const Eigen::Index twice_rank = first + 1 + last;
    const double z = twice_rank % 2 == 0
                         ? WholeRankZ(twice_rank / 2, size)
                         : InverseNormalCdf((0.5 * static_cast<double>(twice_rank) - 0.375) /
                                            denominator);
    for (Eigen::Index k = first; k < last; ++k) {
      normalized.data()[order[k].second] = z;
    }
    first = last;
  }
  return normalized;
}

// The SortedOrder() of |x - median| over a matrix whose SortedOrder() is
// `order` (finite values, finite median), without sorting again: below the
// median |x - median| falls as x rises, above it rises, so the order is a
// merge of the lower part read downwards with the upper part read upwards.
Order FoldedOrder(const Order& order, double median) {
  const auto below = static_cast<std::ptrdiff_t>(
      std::lower_bound(order.begin(), order.end(), median,
                       [](const std::pair<double, Eigen::Index>& a, double m) {
                         return a.first < m;
                       }) -
      order.begin());
  auto folded = [median](const std::pair<double, Eigen::Index>& a) {
    return std::pair<double, Eigen::Index>{std::fabs(a.first - median), a.second};
  };
  Order out;
  out.reserve(order.size());
  std::ptrdiff_t down = below - 1;
  auto up = static_cast<std::size_t>(below);
  while (down >= 0 || up < order.size()) {
    if (up == order.size() ||
        (down >= 0 && folded(order[static_cast<std::size_t>(down)]) < folded(order[up]))) {
      out.push_back(folded(order[static_cast<std::size_t>(down--)]));
    } else {
      out.push_back(folded(order[up++]));
    }
  }
  return out;
}

// Rhat() of the split draws and of their folded version, as SplitRhat()
// defines; `ranked_split` is RankNormalize(split) and `order` the split's
// SortedOrder().
double SplitRhatOf(const Eigen::MatrixXd& split, const Eigen::MatrixXd& ranked_split,
                   const Order& order, double median) {
  const double bulk = Rhat(ranked_split);
  const double tail =
      std::isfinite(median)
          ? Rhat(NormalizeInOrder(FoldedOrder(order, median), split.rows(), split.cols()))
          : Rhat(RankNormalize((split.array() - median).abs().matrix()));
  // Folded draws can be constant while the draws are not (two values
  // symmetric about the median); the tail R-hat then carries no information.
  if (std::isnan(tail)) return bulk;
  return std::max(bulk, tail);
}

// EssTail() given the split draws and the quantiles of all draws.
double EssTailOf(const Eigen::MatrixXd& split, double q05, double q95) {
  const double ess_low = Ess((split.array() <= q05).cast<double>().matrix());
  const double ess_high = Ess((split.array() >= q95).cast<double>().matrix());
  if (std::isnan(ess_low)) return ess_high;
  if (std::isnan(ess_high)) return ess_low;
  return std::min(ess_low, ess_high);
}

double McseMeanOf(const Eigen::MatrixXd& draws, const Eigen::MatrixXd& split) {
  return SampleStdDev(draws) / std::sqrt(Ess(split));
}

}  // namespace

double InverseNormalCdf(double p) {
  if (!(p >= 0.0 && p <= 1.0)) return kNaN;
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  // Work on the lower half: 1 - p is exact for p >= 0.5, and erfc keeps full
  // relative precision in the lower tail.
  const bool upper = p > 0.5;
  const double q = upper ? 1.0 - p : p;
  double x = AcklamLowerHalf(q);
  // Below DBL_MIN, erfc and exp(x^2/2) lose precision or overflow; keep
  // Acklam's 1e-9 there (never reached by RankNormalize()).
  if (q >= std::numeric_limits<double>::min()) {
    constexpr double kSqrt2 = 1.41421356237309504880;
    constexpr double kSqrt2Pi = 2.50662827463100050242;
    // residual = Phi(x) - q. Near the centre, 0.5 - q is exact and erf keeps
    // relative precision, so the residual stays accurate as x -> 0.
    const double residual = q > 0.25 ? (0.5 - q) - 0.5 * std::erf(-x / kSqrt2)
                                     : 0.5 * std::erfc(-x / kSqrt2) - q;
    // One Halley step: cubic convergence takes 1e-9 to full precision.
    const double u = residual * kSqrt2Pi * std::exp(0.5 * x * x);
    x -= u / (1.0 + 0.5 * x * u);
  }
  return upper ? -x : x;
}

double Quantile(const Eigen::MatrixXd& draws, double p) {
  if (draws.size() == 0 || !(p >= 0.0 && p <= 1.0) || draws.hasNaN()) {
    return kNaN;
  }
  std::vector<double> values(draws.data(), draws.data() + draws.size());
  const double h = static_cast<double>(values.size() - 1) * p;
  const auto lo = static_cast<std::ptrdiff_t>(std::floor(h));
  const auto hi = static_cast<std::ptrdiff_t>(std::ceil(h));
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const double below = values[lo];
  if (hi == lo) return below;
  const double above = *std::min_element(values.begin() + hi, values.end());
  if (below == above) return below;
  const double frac = h - static_cast<double>(lo);
  return (1.0 - frac) * below + frac * above;
}

Eigen::MatrixXd SplitChains(const Eigen::MatrixXd& draws) {
  const Eigen::Index n = draws.rows();
  const Eigen::Index half = n / 2;
  Eigen::MatrixXd split(half, 2 * draws.cols());
  for (Eigen::Index m = 0; m < draws.cols(); ++m) {
    split.col(2 * m) = draws.col(m).head(half);
    split.col(2 * m + 1) = draws.col(m).tail(half);
  }
  return split;
}

Eigen::MatrixXd RankNormalize(const Eigen::MatrixXd& draws) {
  if (draws.hasNaN()) {
    return Eigen::MatrixXd::Constant(draws.rows(), draws.cols(), kNaN);
  }
  return NormalizeInOrder(SortedOrder(draws), draws.rows(), draws.cols());
}

double Rhat(const Eigen::MatrixXd& chains) {
  if (chains.cols() < 2 || IsDegenerate(chains)) return kNaN;
  const auto n = static_cast<double>(chains.rows());
  const Eigen::RowVectorXd means = chains.colwise().mean();
  const double between = n * SampleVariance(means.transpose().array());
  const double within =
      (chains.rowwise() - means).colwise().squaredNorm().mean() / (n - 1.0);
  if (within == 0.0) return kInf;  // Constant chains that disagree.
  return std::sqrt((between / within + n - 1.0) / n);
}

double SplitRhat(const Eigen::MatrixXd& draws) {
  const Eigen::MatrixXd split = SplitChains(draws);
  if (IsDegenerate(split)) return kNaN;
  const Order order = SortedOrder(split);  // finite: not degenerate
  return SplitRhatOf(split, NormalizeInOrder(order, split.rows(), split.cols()), order,
                     Quantile(draws, 0.5));
}

double Ess(const Eigen::MatrixXd& chains) {
  if (IsDegenerate(chains)) return kNaN;
  const Eigen::Index n = chains.rows();
  const auto n_double = static_cast<double>(n);
  const Eigen::RowVectorXd means = chains.colwise().mean();
  const Eigen::MatrixXd centered = chains.rowwise() - means;
  const double within =
      centered.colwise().squaredNorm().mean() / (n_double - 1.0);
  double var_plus = within * (n_double - 1.0) / n_double;
  if (chains.cols() > 1) var_plus += SampleVariance(means.transpose().array());

  MeanAutocovariance autocovariance(centered);
  auto rho = [&](Eigen::Index lag) {
    return 1.0 - (within - autocovariance.At(lag)) / var_plus;
  };
  // rho_hat[t] is the autocorrelation estimate at lag t; lags past the
  // truncation point stay 0.
  std::vector<double> rho_hat(static_cast<std::size_t>(n), 0.0);
  double rho_even = 1.0;
  double rho_odd = rho(1);
  rho_hat[0] = rho_even;
  rho_hat[1] = rho_odd;
  // Geyer's initial positive sequence over pairs (t, t+1), t even.
  Eigen::Index t = 0;
  while (t + 5 < n && rho_even + rho_odd > 0.0) {
    t += 2;
    rho_even = rho(t);
    rho_odd = rho(t + 1);
    if (rho_even + rho_odd >= 0.0) {
      rho_hat[t] = rho_even;
      rho_hat[t + 1] = rho_odd;
    }
  }
  const Eigen::Index max_t = t;
  // The last even lag still counts if positive (helps antithetic chains).
  if (rho_even > 0.0) rho_hat[max_t] = rho_even;
  // Make the pair sums monotone (Geyer's initial monotone sequence).
  for (Eigen::Index s = 2; s + 2 <= max_t; s += 2) {
    const double previous = rho_hat[s - 2] + rho_hat[s - 1];
    if (rho_hat[s] + rho_hat[s + 1] > previous) {
      rho_hat[s] = previous / 2.0;
      rho_hat[s + 1] = previous / 2.0;
    }
  }
  double sum = 0.0;
  for (Eigen::Index s = 0; s < max_t; ++s) sum += rho_hat[s];
  const auto total = static_cast<double>(chains.size());
  const double tau =
      std::max(-1.0 + 2.0 * sum + rho_hat[max_t], 1.0 / std::log10(total));
  return total / tau;
}

double EssBulk(const Eigen::MatrixXd& draws) {
  const Eigen::MatrixXd split = SplitChains(draws);
  if (IsDegenerate(split)) return kNaN;
  return Ess(RankNormalize(split));
}

double EssTail(const Eigen::MatrixXd& draws) {
  const Eigen::MatrixXd split = SplitChains(draws);
  if (IsDegenerate(split)) return kNaN;
  return EssTailOf(split, Quantile(draws, 0.05), Quantile(draws, 0.95));
}

double McseMean(const Eigen::MatrixXd& draws) {
  const Eigen::MatrixXd split = SplitChains(draws);
  if (IsDegenerate(split)) return kNaN;
  return McseMeanOf(draws, split);
}

Eigen::VectorXd Ebfmi(const Eigen::MatrixXd& energies) {
  Eigen::VectorXd ebfmi(energies.cols());
  for (Eigen::Index m = 0; m < energies.cols(); ++m) {
    const Eigen::VectorXd energy = energies.col(m);
    const Eigen::Index n = energy.size();
    if (n < 2 || !energy.allFinite()) {
      ebfmi(m) = kNaN;
      continue;
    }
    const double numerator =
        (energy.tail(n - 1) - energy.head(n - 1)).squaredNorm();
    const double denominator =
        (energy.array() - energy.mean()).matrix().squaredNorm();
    ebfmi(m) = denominator > 0.0 ? numerator / denominator : kNaN;
  }
  return ebfmi;
}

// A stable least-significant-digit radix sort of the OrderedKey()s, a byte
// a pass, so equal values keep their index order.
Order SortedOrder(const Eigen::MatrixXd& draws) {
  constexpr int kDigitBits = 8;
  constexpr int kPasses = (64 + kDigitBits - 1) / kDigitBits;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
  const auto n = static_cast<std::size_t>(draws.size());
  using Keyed = std::pair<uint64_t, Eigen::Index>;
  std::vector<Keyed> keyed(n);
  std::vector<Keyed> scratch(n);
  std::vector<std::array<std::size_t, kBuckets>> counts(kPasses);
  for (auto& c : counts) c.fill(0);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t key = OrderedKey(draws.data()[i]);
    keyed[i] = {key, static_cast<Eigen::Index>(i)};
    for (int pass = 0; pass < kPasses; ++pass) {
      ++counts[pass][(key >> (pass * kDigitBits)) & (kBuckets - 1)];
    }
  }
  for (int pass = 0; pass < kPasses; ++pass) {
    std::array<std::size_t, kBuckets>& count = counts[pass];
    // A digit every key shares orders nothing (the exponent's top bits,
    // usually).
    if (std::find(count.begin(), count.end(), n) != count.end()) continue;
    std::size_t start = 0;
    for (std::size_t& c : count) start += std::exchange(c, start);
    for (const Keyed& k : keyed) {
      scratch[count[(k.first >> (pass * kDigitBits)) & (kBuckets - 1)]++] = k;
    }
    keyed.swap(scratch);
  }
  Order order(n);
  for (std::size_t k = 0; k < n; ++k) {
    order[k] = {draws.data()[keyed[k].second], keyed[k].second};
  }
  return order;
}

SummaryRow Summarize(const Eigen::MatrixXd& draws) {
  SummaryRow row;
  if (draws.size() == 0) return row;
  row.mean = draws.mean();
  row.stddev = SampleStdDev(draws);
  const Eigen::MatrixXd split = SplitChains(draws);
  const bool degenerate = IsDegenerate(split);
  // The split draws in order, sorted once for the ranks, the folded ranks
  // and, when no middle draw was dropped (an even number per chain, so the
  // split draws are all the draws), the quantiles.
  Order order;
  if (!degenerate) order = SortedOrder(split);
  if (!draws.hasNaN()) {
    std::vector<double> sorted;
    if (!degenerate && draws.rows() % 2 == 0) {
      sorted.reserve(order.size());
      for (const auto& [value, index] : order) sorted.push_back(value);
    } else {
      sorted.assign(draws.data(), draws.data() + draws.size());
      std::sort(sorted.begin(), sorted.end());
    }
    row.q5 = QuantileOfSorted(sorted, 0.05);
    row.q50 = QuantileOfSorted(sorted, 0.5);
    row.q95 = QuantileOfSorted(sorted, 0.95);
    constexpr double kMadToSd = 1.4826;  // 1/Phi^-1(3/4), as R rounds it.
    row.mad =
        kMadToSd * Quantile((draws.array() - row.q50).abs().matrix(), 0.5);
  }
  if (degenerate) return row;
  const Eigen::MatrixXd ranked_split = NormalizeInOrder(order, split.rows(), split.cols());
  row.mcse = McseMeanOf(draws, split);
  row.ess_bulk = Ess(ranked_split);
  row.ess_tail = EssTailOf(split, row.q5, row.q95);
  row.rhat = SplitRhatOf(split, ranked_split, order, row.q50);
  return row;
}

}  // namespace autobatch::mcmc
