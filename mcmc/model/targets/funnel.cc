// Neal's funnel target.
#include "mcmc/model/targets/funnel.h"

#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<Funnel>> Funnel::Create(const Options& options) {
  AB_RETURN_IF_ERROR(target_internal::CheckDimension("funnel", options.dimension, 1,
                                                     target_internal::kMaxDimension));
  return std::unique_ptr<Funnel>(new Funnel(options.dimension));
}

std::vector<ParameterSpec> Funnel::parameters() const {
  return {{"x", {dimension_}, Transform::kIdentity}};
}

double Funnel::LogDensityGradient(std::span<const double> q,
                                  std::span<double> grad) const {
  const double v = q[0];
  const double inv_var = math::Exp(-v);
  double sum_sq = 0;
  for (int64_t i = 1; i < dimension_; ++i) {
    sum_sq += q[i] * q[i];
    grad[i] = -q[i] * inv_var;
  }
  const double others = static_cast<double>(dimension_ - 1);
  grad[0] = -v / 9.0 + 0.5 * sum_sq * inv_var - 0.5 * others;
  return -v * v / 18.0 - 0.5 * sum_sq * inv_var - 0.5 * others * v;
}

KnownMoments Funnel::known_moments() const {
  std::vector<double> variance(dimension_, math::Exp(4.5));
  variance[0] = 9.0;
  return {std::vector<double>(dimension_, 0.0), std::move(variance)};
}

void Funnel::ExactDraw(std::span<const double> normals, std::span<double> q) const {
  q[0] = 3.0 * normals[0];
  const double sd = math::Exp(q[0] / 2.0);
  for (int64_t i = 1; i < dimension_; ++i) q[i] = sd * normals[i];
}

}  // namespace autobatch::mcmc
