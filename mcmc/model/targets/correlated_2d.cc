// Two-dimensional correlated Gaussian target.
#include "mcmc/model/targets/correlated_2d.h"

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<Correlated2d>> Correlated2d::Create(const Options& options) {
  for (int i = 0; i < 2; ++i) {
    AB_RETURN_IF_ERROR(target_internal::CheckFinite("correlated_2d", "mean", options.mean[i]));
    if (!(options.sd[i] > 0) || !std::isfinite(options.sd[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "correlated_2d: sd entries must be positive and finite, got ", options.sd[i]));
    }
  }
  if (!(options.rho > -1 && options.rho < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("correlated_2d: rho must be in (-1, 1), got ", options.rho));
  }
  return std::unique_ptr<Correlated2d>(new Correlated2d(options));
}

std::vector<ParameterSpec> Correlated2d::parameters() const {
  return {{"x", {2}, Transform::kIdentity}};
}

double Correlated2d::LogDensityGradient(std::span<const double> q,
                                        std::span<double> grad) const {
  const double r = options_.rho;
  const double c = 1.0 / (1.0 - r * r);
  const double z0 = (q[0] - options_.mean[0]) / options_.sd[0];
  const double z1 = (q[1] - options_.mean[1]) / options_.sd[1];
  grad[0] = -c * (z0 - r * z1) / options_.sd[0];
  grad[1] = -c * (z1 - r * z0) / options_.sd[1];
  return -0.5 * c * (z0 * z0 - 2.0 * r * z0 * z1 + z1 * z1);
}

KnownMoments Correlated2d::known_moments() const {
  return {{options_.mean[0], options_.mean[1]},
          {options_.sd[0] * options_.sd[0], options_.sd[1] * options_.sd[1]}};
}

void Correlated2d::ExactDraw(std::span<const double> normals, std::span<double> q) const {
  const double r = options_.rho;
  q[0] = options_.mean[0] + options_.sd[0] * normals[0];
  q[1] = options_.mean[1] +
         options_.sd[1] * (r * normals[0] + std::sqrt(1.0 - r * r) * normals[1]);
}

}  // namespace autobatch::mcmc
