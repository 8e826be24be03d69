// Target defaults.
#include "mcmc/model/targets/target.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch::mcmc {

KnownMoments Target::known_moments() const {
  return target_internal::UnknownMoments(
      static_cast<int64_t>(OutputColumnNames(*this).size()));
}

void Target::ExactDraw(std::span<const double> /*normals*/, std::span<double> /*q*/) const {
  AB_CHECK(false, "ExactDraw called on a target without an exact sampler "
                  "(exact_draw_normals() == 0)");
}

namespace target_internal {

KnownMoments UnknownMoments(int64_t columns) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return KnownMoments{std::vector<double>(columns, nan), std::vector<double>(columns, nan)};
}

absl::Status CheckDimension(std::string_view target, int64_t dimension, int64_t min,
                            int64_t max) {
  if (dimension >= min && dimension <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(std::string(target), ": dimension must be in [",
                                            min, ", ", max, "], got ", dimension));
}

absl::Status CheckFinite(std::string_view target, std::string_view option, double value) {
  if (std::isfinite(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(std::string(target), ": ", std::string(option),
                                            " must be finite, got ", value));
}

}  // namespace target_internal
}  // namespace autobatch::mcmc
