// Banana target.
#include "mcmc/model/targets/banana.h"

#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<Banana>> Banana::Create(const Options& options) {
  AB_RETURN_IF_ERROR(target_internal::CheckFinite("banana", "curvature", options.curvature));
  return std::unique_ptr<Banana>(new Banana(options.curvature));
}

std::vector<ParameterSpec> Banana::parameters() const {
  return {{"x", {2}, Transform::kIdentity}};
}

double Banana::LogDensityGradient(std::span<const double> q,
                                  std::span<double> grad) const {
  const double r = q[1] - b_ * (q[0] * q[0] - 100.0);
  grad[0] = -q[0] / 100.0 + r * 2.0 * b_ * q[0];
  grad[1] = -r;
  return -q[0] * q[0] / 200.0 - 0.5 * r * r;
}

KnownMoments Banana::known_moments() const {
  return {{0.0, 0.0}, {100.0, 1.0 + 2.0e4 * b_ * b_}};
}

void Banana::ExactDraw(std::span<const double> normals, std::span<double> q) const {
  q[0] = 10.0 * normals[0];
  q[1] = b_ * (q[0] * q[0] - 100.0) + normals[1];
}

}  // namespace autobatch::mcmc
