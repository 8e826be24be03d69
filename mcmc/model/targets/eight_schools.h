// Eight schools, non-centred parameterization (Rubin 1981; Stan's
// eight_schools_noncentered): a hierarchical model with a log-transformed
// scale. Sample it with adapt delta >= 0.9.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_EIGHT_SCHOOLS_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_EIGHT_SCHOOLS_H_

#include <array>
#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameters mu, tau (> 0, kLog), eta[8]; generated theta.1..theta.8 with
// theta_j = mu + tau eta_j.
//   mu ~ N(0, 5^2), tau ~ half-Cauchy(0, 5), eta_j ~ N(0, 1),
//   y_j ~ N(theta_j, sigma_j^2).
// On the unconstrained scale (u = log tau, Jacobian + u):
//   log p = -mu^2/50 - log(1 + (tau/5)^2) + u - sum eta_j^2 / 2
//           - sum (y_j - theta_j)^2 / (2 sigma_j^2).
// No closed-form moments (all NaN), no exact sampler.
class EightSchools final : public Target {
 public:
  static constexpr std::array<double, 8> kY = {28, 8, -3, 7, -1, 1, 18, 12};
  static constexpr std::array<double, 8> kSigma = {15, 10, 16, 11, 9, 11, 10, 18};

  static std::unique_ptr<EightSchools> Create();

  std::string name() const override { return "eight_schools"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  std::vector<std::string> generated_names() const override;
  void Generate(std::span<const double> q, std::span<double> out) const override;

 private:
  EightSchools() = default;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_EIGHT_SCHOOLS_H_
