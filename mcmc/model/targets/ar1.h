// AR(1) Gaussian, Sigma_ij = rho^|i-j|: the standard divergent-control-flow
// workload (NUTS tree depths 3-8 with an identity metric), in three
// computational variants for the benchmarks.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_AR1_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_AR1_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// Parameter x[d] ~ N(0, Sigma), Sigma_ij = rho^|i-j| (a stationary AR(1)
// with unit marginal variance). Its precision P is tridiagonal:
// P_00 = P_{d-1,d-1} = 1/(1-rho^2), P_ii = (1+rho^2)/(1-rho^2) inside,
// P_{i,i+1} = -rho/(1-rho^2) (P = [1] when d = 1).
//
// Variants (same density, different arithmetic):
//   kTridiagonal  "ar1"          O(d): log p = -x0^2/2 - sum_{i>=1}
//                                (x_i - rho x_{i-1})^2 / (2 (1 - rho^2)).
//   kDense        "ar1_dense"    O(d^2): log p = -x.(P x)/2 with the full
//                                d x d matrix P, one per-lane matrix-vector
//                                product in a fixed order (bit-stable).
//   kBatched      "ar1_batched"  per lane as kDense; LogDensityGradientBatch
//                                is one Eigen GEMM P [x_lanes] over the
//                                active lanes, so batch_bit_stable() is false.
// Mean 0, variance 1. Exact draw: x0 = z0, x_i = rho x_{i-1} +
// sqrt(1 - rho^2) z_i.
class Ar1Gaussian final : public Target {
 public:
  enum class Variant { kTridiagonal, kDense, kBatched };
  struct Options {
    int64_t dimension = 100;  // [1, kMaxDimension]; [1, kMaxDenseDimension] dense
    double rho = 0.9;         // in (-1, 1)
  };
  // The dense variants store d^2 doubles.
  static constexpr int64_t kMaxDenseDimension = 4096;

  static absl::StatusOr<std::unique_ptr<Ar1Gaussian>> Create(Variant variant,
                                                             const Options& options);

  std::string name() const override;
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;
  void LogDensityGradientBatch(const double* q, double* logp, double* grad,
                               int64_t lanes, const uint8_t* active) const override;
  bool batch_bit_stable() const override { return variant_ != Variant::kBatched; }
  KnownMoments known_moments() const override;
  int64_t exact_draw_normals() const override { return options_.dimension; }
  void ExactDraw(std::span<const double> normals, std::span<double> q) const override;

  Variant variant() const { return variant_; }
  // Row-major d x d precision matrix (empty for kTridiagonal).
  const std::vector<double>& precision() const { return precision_; }

 private:
  Ar1Gaussian(Variant variant, const Options& options);
  double TridiagonalLogDensity(std::span<const double> q, std::span<double> grad) const;
  double DenseLogDensity(std::span<const double> q, std::span<double> grad) const;

  Variant variant_;
  Options options_;
  std::vector<double> precision_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_AR1_H_
