// Bimodal mixture target.
#include "mcmc/model/targets/bimodal.h"

#include <algorithm>

#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<Bimodal>> Bimodal::Create(const Options& options) {
  AB_RETURN_IF_ERROR(target_internal::CheckDimension("bimodal", options.dimension, 1,
                                                     target_internal::kMaxDimension));
  AB_RETURN_IF_ERROR(target_internal::CheckFinite("bimodal", "offset", options.offset));
  return std::unique_ptr<Bimodal>(new Bimodal(options.dimension, options.offset));
}

std::vector<ParameterSpec> Bimodal::parameters() const {
  return {{"x", {dimension_}, Transform::kIdentity}};
}

double Bimodal::LogDensityGradient(std::span<const double> q,
                                   std::span<double> grad) const {
  const double m = offset_;
  double ss_plus = 0, ss_minus = 0;  // |x - m 1|^2, |x + m 1|^2
  for (int64_t i = 0; i < dimension_; ++i) {
    const double a = q[i] - m, b = q[i] + m;
    ss_plus += a * a;
    ss_minus += b * b;
  }
  const double lp_plus = -0.5 * ss_plus, lp_minus = -0.5 * ss_minus;
  // Responsibilities of the two components; grad = -x + m (w+ - w-).
  const double w_plus = target_internal::Logistic(lp_plus - lp_minus);
  const double w_minus = target_internal::Logistic(lp_minus - lp_plus);
  const double pull = m * (w_plus - w_minus);
  for (int64_t i = 0; i < dimension_; ++i) grad[i] = -q[i] + pull;
  const double hi = std::max(lp_plus, lp_minus), lo = std::min(lp_plus, lp_minus);
  return hi + math::Log1p(math::Exp(lo - hi));
}

KnownMoments Bimodal::known_moments() const {
  return {std::vector<double>(dimension_, 0.0),
          std::vector<double>(dimension_, 1.0 + offset_ * offset_)};
}

void Bimodal::ExactDraw(std::span<const double> normals, std::span<double> q) const {
  const double center = normals[dimension_] > 0 ? offset_ : -offset_;
  for (int64_t i = 0; i < dimension_; ++i) q[i] = center + normals[i];
}

}  // namespace autobatch::mcmc
