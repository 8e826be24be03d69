// Banana (twisted Gaussian): strongly curved, non-linear correlation.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_BANANA_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_BANANA_H_

#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter x[2]: x_0 ~ N(0, 10^2), x_1 | x_0 ~ N(b (x_0^2 - 100), 1),
// b = curvature (0.03).
//   log p = -x_0^2 / 200 - (x_1 - b (x_0^2 - 100))^2 / 2.
// Means 0 (E x_0^2 = 100); Var x_0 = 100, Var x_1 = 1 + 2 10^4 b^2 (19 for
// b = 0.03). Exact draw: x_0 = 10 z_0, x_1 = b (x_0^2 - 100) + z_1.
class Banana final : public Target {
 public:
  struct Options {
    double curvature = 0.03;  // finite
  };
  static absl::StatusOr<std::unique_ptr<Banana>> Create(const Options& options);

  std::string name() const override { return "banana"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override { return 2; }
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

 private:
  explicit Banana(double curvature) : b_(curvature) {}
  double b_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_BANANA_H_
