// Ill-conditioned diagonal Gaussian: standard deviations log-spaced over two
// orders of magnitude (tests metric adaptation).
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_ILL_CONDITIONED_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_ILL_CONDITIONED_H_

#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter x[d], x_i ~ N(0, sd_i^2) independently, with
// sd_i = exp(log(min_sd) + i / (d - 1) * (log(max_sd) - log(min_sd))) for
// d > 1 (sd_0 = min_sd, sd_{d-1} = max_sd up to rounding) and sd_0 = min_sd
// for d = 1. log p = -sum x_i^2 / (2 sd_i^2). Exact draw: x_i = sd_i z_i.
class IllConditionedGaussian final : public Target {
 public:
  struct Options {
    int64_t dimension = 100;  // in [1, kMaxDimension]
    double min_sd = 1;        // 0 < min_sd, max_sd < inf
    double max_sd = 100;
  };
  static absl::StatusOr<std::unique_ptr<IllConditionedGaussian>> Create(
      const Options& options);

  std::string name() const override { return "ill_conditioned"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override { return dimension(); }
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

  const std::vector<double>& sd() const { return sd_; }

 private:
  explicit IllConditionedGaussian(std::vector<double> sd);
  std::vector<double> sd_;
  std::vector<double> precision_;  // 1 / sd^2
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_ILL_CONDITIONED_H_
