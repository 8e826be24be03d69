// iid Gaussian target.
#include "mcmc/model/targets/iid_gaussian.h"

#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<IidGaussian>> IidGaussian::Create(const Options& options) {
  AB_RETURN_IF_ERROR(target_internal::CheckDimension("iid_gaussian", options.dimension, 1,
                                                     target_internal::kMaxDimension));
  return std::unique_ptr<IidGaussian>(new IidGaussian(options.dimension));
}

std::vector<ParameterSpec> IidGaussian::parameters() const {
  return {{"x", {dimension_}, Transform::kIdentity}};
}

double IidGaussian::LogDensityGradient(std::span<const double> q,
                                       std::span<double> grad) const {
  double sum = 0;
  for (int64_t i = 0; i < dimension_; ++i) {
    sum += q[i] * q[i];
    grad[i] = -q[i];
  }
  return -0.5 * sum;
}

KnownMoments IidGaussian::known_moments() const {
  return {std::vector<double>(dimension_, 0.0), std::vector<double>(dimension_, 1.0)};
}

void IidGaussian::ExactDraw(std::span<const double> normals, std::span<double> q) const {
  for (int64_t i = 0; i < dimension_; ++i) q[i] = normals[i];
}

}  // namespace autobatch::mcmc
