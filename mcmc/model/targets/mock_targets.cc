// Mock targets for exact tree arithmetic.
#include "mcmc/model/targets/mock_targets.h"

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<NeverUturn>> NeverUturn::Create(const Options& options) {
  AB_RETURN_IF_ERROR(target_internal::CheckDimension("never_uturn", options.dimension, 1,
                                                     target_internal::kMaxDimension));
  return std::unique_ptr<NeverUturn>(new NeverUturn(options.dimension));
}

std::vector<ParameterSpec> NeverUturn::parameters() const {
  return {{"x", {dimension_}, Transform::kIdentity}};
}

double NeverUturn::LogDensityGradient(std::span<const double> /*q*/,
                                      std::span<double> grad) const {
  for (int64_t i = 0; i < dimension_; ++i) grad[i] = 0.0;
  return 0.0;
}

absl::StatusOr<std::unique_ptr<EnergyJump>> EnergyJump::Create(const Options& options) {
  AB_RETURN_IF_ERROR(target_internal::CheckDimension("energy_jump", options.dimension, 1,
                                                     target_internal::kMaxDimension));
  if (std::isinf(options.height)) {
    return absl::InvalidArgumentError(
        absl::StrCat("energy_jump: height must not be infinite, got ", options.height));
  }
  return std::unique_ptr<EnergyJump>(new EnergyJump(options.dimension, options.height));
}

std::vector<ParameterSpec> EnergyJump::parameters() const {
  return {{"x", {dimension_}, Transform::kIdentity}};
}

double EnergyJump::LogDensityGradient(std::span<const double> q,
                                      std::span<double> grad) const {
  bool at_origin = true;
  for (int64_t i = 0; i < dimension_; ++i) {
    at_origin = at_origin && q[i] == 0.0;
    grad[i] = 0.0;
  }
  return at_origin ? 0.0 : -height_;
}

}  // namespace autobatch::mcmc
