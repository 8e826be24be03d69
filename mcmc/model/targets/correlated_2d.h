// Two-dimensional correlated Gaussian: mean (0, 3), sd (1, 2), rho 0.75.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_CORRELATED_2D_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_CORRELATED_2D_H_

#include <array>
#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter x[2] ~ N(mean, Sigma), Sigma = [[s0^2, r s0 s1], [r s0 s1, s1^2]].
// With z_i = (x_i - mean_i) / sd_i:
//   log p = -(z0^2 - 2 r z0 z1 + z1^2) / (2 (1 - r^2)).
// Exact draw: x0 = m0 + s0 z0, x1 = m1 + s1 (r z0 + sqrt(1 - r^2) z1).
class Correlated2d final : public Target {
 public:
  struct Options {
    std::array<double, 2> mean = {0, 3};  // finite
    std::array<double, 2> sd = {1, 2};    // positive, finite
    double rho = 0.75;                    // in (-1, 1)
  };
  static absl::StatusOr<std::unique_ptr<Correlated2d>> Create(const Options& options);

  std::string name() const override { return "correlated_2d"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override { return 2; }
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

  const Options& options() const { return options_; }

 private:
  explicit Correlated2d(const Options& options) : options_(options) {}
  Options options_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_CORRELATED_2D_H_
