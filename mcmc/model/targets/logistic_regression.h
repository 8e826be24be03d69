// Bayesian logistic regression on synthetic data generated in code from a
// fixed seed (identical on every machine; no data files).
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_LOGISTIC_REGRESSION_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_LOGISTIC_REGRESSION_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameters alpha (intercept), beta[k].
//   alpha ~ N(0, s^2), beta_j ~ N(0, s^2) (s = prior_sd, 2.5),
//   y_i ~ Bernoulli(logistic(alpha + x_i . beta)), i = 1..n.
//   log p = sum_i [y_i eta_i - log(1 + exp(eta_i))] - (alpha^2 + |beta|^2) / (2 s^2)
// computed stably (softplus) in row order.
//
// Data (see GenerateData): a SplitMix64 stream seeded with `seed` drives,
// row by row, k features x_ij = (sum of 12 uniforms) - 6 (Irwin-Hall,
// mean 0, variance 1; only additions, so every machine gets the same bits),
// then one uniform v_i, y_i = 1 if v_i < logistic(eta_i) at the true
// coefficients alpha = 0.25, beta_j = {1, -0.75, 0.5, -0.25, 0}[j mod 5].
// Moments unknown in closed form (NaN), no exact sampler.
class LogisticRegression final : public Target {
 public:
  struct Options {
    int64_t rows = 200;             // n in [1, 10^6]
    int64_t features = 5;           // k in [1, 1000]
    uint64_t seed = 20240601;       // data seed
    double prior_sd = 2.5;          // positive, finite
  };
  struct Data {
    int64_t rows = 0, features = 0;
    std::vector<double> x;  // rows x features, row-major
    std::vector<double> y;  // 0 or 1
    double true_alpha = 0;
    std::vector<double> true_beta;
  };
  static Data GenerateData(int64_t rows, int64_t features, uint64_t seed);

  static absl::StatusOr<std::unique_ptr<LogisticRegression>> Create(const Options& options);

  std::string name() const override { return "logistic_regression"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;

  const Data& data() const { return data_; }
  double prior_precision() const { return prior_precision_; }  // 1 / prior_sd^2

 private:
  LogisticRegression(Data data, double prior_sd)
      : data_(std::move(data)), prior_precision_(1.0 / (prior_sd * prior_sd)) {}
  Data data_;
  double prior_precision_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_LOGISTIC_REGRESSION_H_
