// Logistic regression target and its synthetic data.
#include "mcmc/model/targets/logistic_regression.h"

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fully specified, portable.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // In [0, 1), a multiple of 2^-53: exact.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }

 private:
  uint64_t state_;
};

constexpr double kBetaPattern[] = {1.0, -0.75, 0.5, -0.25, 0.0};

}  // namespace

LogisticRegression::Data LogisticRegression::GenerateData(int64_t rows, int64_t features,
                                                          uint64_t seed) {
  Data data;
  data.rows = rows;
  data.features = features;
  data.true_alpha = 0.25;
  for (int64_t j = 0; j < features; ++j) data.true_beta.push_back(kBetaPattern[j % 5]);
  SplitMix64 rng(seed);
  data.x.reserve(rows * features);
  for (int64_t i = 0; i < rows; ++i) {
    double eta = data.true_alpha;
    for (int64_t j = 0; j < features; ++j) {
      double sum = 0;
      for (int k = 0; k < 12; ++k) sum += rng.Uniform();
      const double x = sum - 6.0;
      data.x.push_back(x);
      eta += x * data.true_beta[j];
    }
    data.y.push_back(rng.Uniform() < target_internal::Logistic(eta) ? 1.0 : 0.0);
  }
  return data;
}

absl::StatusOr<std::unique_ptr<LogisticRegression>> LogisticRegression::Create(
    const Options& options) {
  if (options.rows < 1 || options.rows > 1000000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logistic_regression: rows must be in [1, 1000000], got ", options.rows));
  }
  if (options.features < 1 || options.features > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logistic_regression: features must be in [1, 1000], got ", options.features));
  }
  if (!(options.prior_sd > 0) || !std::isfinite(options.prior_sd)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logistic_regression: prior_sd must be positive and finite, got ", options.prior_sd));
  }
  return std::unique_ptr<LogisticRegression>(new LogisticRegression(
      GenerateData(options.rows, options.features, options.seed), options.prior_sd));
}

std::vector<ParameterSpec> LogisticRegression::parameters() const {
  return {{"alpha", {}, Transform::kIdentity},
          {"beta", {data_.features}, Transform::kIdentity}};
}

double LogisticRegression::LogDensityGradient(std::span<const double> q,
                                              std::span<double> grad) const {
  using target_internal::Logistic;
  using target_internal::Softplus;
  const int64_t k = data_.features;
  const double alpha = q[0];
  const double* beta = q.data() + 1;
  double logp = -alpha * alpha;
  grad[0] = -alpha * prior_precision_;
  for (int64_t j = 0; j < k; ++j) {
    logp -= beta[j] * beta[j];
    grad[1 + j] = -beta[j] * prior_precision_;
  }
  logp *= 0.5 * prior_precision_;
  const double* x = data_.x.data();
  for (int64_t i = 0; i < data_.rows; ++i, x += k) {
    double eta = alpha;
    for (int64_t j = 0; j < k; ++j) eta += x[j] * beta[j];
    // y log s(eta) + (1 - y) log s(-eta), and its derivative y - s(eta).
    double residual;
    if (data_.y[i] != 0) {
      logp -= Softplus(-eta);
      residual = Logistic(-eta);
    } else {
      logp -= Softplus(eta);
      residual = -Logistic(eta);
    }
    grad[0] += residual;
    for (int64_t j = 0; j < k; ++j) grad[1 + j] += residual * x[j];
  }
  return logp;
}

}  // namespace autobatch::mcmc
