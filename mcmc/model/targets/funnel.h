// Neal's funnel: the worst case for NUTS (divergences, very uneven tree
// depths) — used to test divergence reporting and batch utilization.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_FUNNEL_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_FUNNEL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter x[d]: x_0 ~ N(0, 3^2), x_i ~ N(0, exp(x_0/2)^2) for i >= 1.
//   log p = -x_0^2/18 - sum_{i>=1} (x_i^2 exp(-x_0) / 2 + x_0 / 2).
// Means 0; Var x_0 = 9, Var x_i = E[exp(x_0)] = exp(9/2) (sd exp(9/4) ~
// 9.4877). Exact draw: x_0 = 3 z_0, x_i = exp(x_0 / 2) z_i.
class Funnel final : public Target {
 public:
  struct Options {
    int64_t dimension = 10;  // in [1, kMaxDimension]; x_0 plus d-1 others
  };
  static absl::StatusOr<std::unique_ptr<Funnel>> Create(const Options& options);

  std::string name() const override { return "funnel"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override { return dimension_; }
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

 private:
  explicit Funnel(int64_t dimension) : dimension_(dimension) {}
  int64_t dimension_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_FUNNEL_H_
