// Ill-conditioned diagonal Gaussian target.
#include "mcmc/model/targets/ill_conditioned.h"

#include "absl/strings/str_cat.h"
#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<IllConditionedGaussian>> IllConditionedGaussian::Create(
    const Options& options) {
  AB_RETURN_IF_ERROR(target_internal::CheckDimension("ill_conditioned", options.dimension,
                                                     1, target_internal::kMaxDimension));
  for (double sd : {options.min_sd, options.max_sd}) {
    if (!(sd > 0) || !std::isfinite(sd)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ill_conditioned: min_sd and max_sd must be positive and finite, got ",
          options.min_sd, " and ", options.max_sd));
    }
  }
  const int64_t d = options.dimension;
  std::vector<double> sd(d, options.min_sd);
  const double log_min = math::Log(options.min_sd), log_max = math::Log(options.max_sd);
  for (int64_t i = 1; i < d; ++i) {
    sd[i] = math::Exp(log_min + static_cast<double>(i) / static_cast<double>(d - 1) *
                                   (log_max - log_min));
  }
  return std::unique_ptr<IllConditionedGaussian>(new IllConditionedGaussian(std::move(sd)));
}

IllConditionedGaussian::IllConditionedGaussian(std::vector<double> sd) : sd_(std::move(sd)) {
  precision_.reserve(sd_.size());
  for (double s : sd_) precision_.push_back(1.0 / (s * s));
}

std::vector<ParameterSpec> IllConditionedGaussian::parameters() const {
  return {{"x", {static_cast<int64_t>(sd_.size())}, Transform::kIdentity}};
}

double IllConditionedGaussian::LogDensityGradient(std::span<const double> q,
                                                  std::span<double> grad) const {
  const size_t d = sd_.size();
  double sum = 0;
  for (size_t i = 0; i < d; ++i) {
    const double scaled = q[i] * precision_[i];
    sum += q[i] * scaled;
    grad[i] = -scaled;
  }
  return -0.5 * sum;
}

KnownMoments IllConditionedGaussian::known_moments() const {
  std::vector<double> variance;
  for (double s : sd_) variance.push_back(s * s);
  return {std::vector<double>(sd_.size(), 0.0), std::move(variance)};
}

void IllConditionedGaussian::ExactDraw(std::span<const double> normals,
                                       std::span<double> q) const {
  for (size_t i = 0; i < sd_.size(); ++i) q[i] = sd_[i] * normals[i];
}

}  // namespace autobatch::mcmc
