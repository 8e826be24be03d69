// Bimodal target: an equal mixture of two well-separated unit Gaussians —
// chains started in different modes must give R-hat > 1.1.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_BIMODAL_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_BIMODAL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter x[d] ~ 0.5 N(-m 1, I) + 0.5 N(+m 1, I), m = offset (modes at
// x_i = -m and x_i = +m for every i; distance 2 m sqrt(d)).
//   log p = log(exp(-|x - m 1|^2 / 2) + exp(-|x + m 1|^2 / 2)) (stable
//   log-sum-exp). Mean 0, variance 1 + m^2 per coordinate.
// Exact draw (d + 1 normals): x_i = s m + z_i, s = +1 if z_d > 0 else -1.
class Bimodal final : public Target {
 public:
  struct Options {
    int64_t dimension = 2;  // in [1, kMaxDimension]
    double offset = 4;      // finite; 4 in 2-d puts the modes ~11 sd apart
  };
  static absl::StatusOr<std::unique_ptr<Bimodal>> Create(const Options& options);

  std::string name() const override { return "bimodal"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override { return dimension_ + 1; }
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

  double offset() const { return offset_; }

 private:
  Bimodal(int64_t dimension, double offset) : dimension_(dimension), offset_(offset) {}
  int64_t dimension_;
  double offset_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_BIMODAL_H_
