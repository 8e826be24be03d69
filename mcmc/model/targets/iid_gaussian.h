// iid Gaussian N(0, I_d): every chain takes the same tree depth (throughput
// workload).
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_IID_GAUSSIAN_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_IID_GAUSSIAN_H_

#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter x[d]; log p(x) = -|x|^2 / 2. Mean 0, variance 1 (and
// Var[x_i^2] = 2). Exact draw: x = z.
class IidGaussian final : public Target {
 public:
  struct Options {
    int64_t dimension = 100;  // in [1, kMaxDimension]
  };
  static absl::StatusOr<std::unique_ptr<IidGaussian>> Create(const Options& options);

  std::string name() const override { return "iid_gaussian"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override { return dimension_; }
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

 private:
  explicit IidGaussian(int64_t dimension) : dimension_(dimension) {}
  int64_t dimension_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_IID_GAUSSIAN_H_
