// Beta-Bernoulli through the logit transform: a conjugate model whose
// posterior is known exactly — it tests the kLogit transform and Jacobian.
// The default data are Stan's `bernoulli` example, so the log density equals
// CmdStan's lp__ for that model.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_BETA_BERNOULLI_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_BETA_BERNOULLI_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter theta in (0, 1) (kLogit, u = logit theta).
//   theta ~ Beta(a, b), y_i ~ Bernoulli(theta), i = 1..n, s = sum y.
// With A = a + s, B = b + n - s, including the Jacobian theta (1 - theta):
//   log p(u) = A log(theta) + B log(1 - theta)
// (Stan's lp__ with `~` statements). Posterior theta ~ Beta(A, B): mean
// A / (A + B), variance A B / ((A + B)^2 (A + B + 1)).
// Exact draw when 2A and 2B are integers (each <= kMaxExactNormals / 2):
// u = log(sum_{j<2A} z_j^2) - log(sum_{j<2A+2B, j>=2A} z_j^2) (a ratio of
// chi-square variables).
class BetaBernoulli final : public Target {
 public:
  struct Options {
    double a = 1;  // positive, finite
    double b = 1;  // positive, finite
    std::vector<int> y = {0, 1, 0, 0, 0, 0, 0, 0, 0, 1};  // 0/1, at most 10^6
  };
  static constexpr int64_t kMaxExactNormals = 10000;
  static absl::StatusOr<std::unique_ptr<BetaBernoulli>> Create(const Options& options);

  std::string name() const override { return "beta_bernoulli"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override;
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

  // The posterior is Beta(posterior_a(), posterior_b()).
  double posterior_a() const { return a_post_; }
  double posterior_b() const { return b_post_; }
  double posterior_mean() const;
  double posterior_variance() const;

 private:
  BetaBernoulli(double a_post, double b_post) : a_post_(a_post), b_post_(b_post) {}
  double a_post_, b_post_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_BETA_BERNOULLI_H_
