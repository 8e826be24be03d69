// Gradient check: a model's analytic gradient against central finite
// differences of its own log density, for users' models and ours.
#ifndef AUTOBATCH_MCMC_MODEL_GRADIENT_CHECK_H_
#define AUTOBATCH_MCMC_MODEL_GRADIENT_CHECK_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mcmc/model/model.h"

namespace autobatch::mcmc {

struct GradientCheckOptions {
  // Finite-difference half step: numeric_i = (f(q + h e_i) - f(q - h e_i)) /
  // ((q_i + h) - (q_i - h)), the denominator being the step actually taken
  // after rounding.
  double epsilon = 1e-6;
  // Coordinate i passes when |analytic - numeric| <= max(abs_tol,
  // rel_tol * max(|analytic|, |numeric|)); non-finite values never pass.
  // The numeric derivative itself carries a rounding error of about
  // |log density| * 1e-16 / epsilon in every coordinate, so at points where
  // |log density| is large (say > 1e4) check with a larger abs_tol.
  // Central differences also need the log density smooth around q: they
  // are meaningless across a kink or a jump.
  double rel_tol = 1e-5;
  double abs_tol = 1e-6;
};

// One unconstrained coordinate of the check.
struct GradientCheckEntry {
  int64_t index = 0;     // coordinate in q
  std::string name;      // its parameter element, CSV style ("tau", "eta.3")
  double analytic = 0;   // from LogDensityGradient
  double numeric = 0;    // central finite difference
  double abs_error = 0;  // |analytic - numeric|
  double tolerance = 0;  // the bound abs_error had to meet
  bool ok = false;
};

struct GradientCheckReport {
  double log_density = 0;  // at q
  std::vector<GradientCheckEntry> entries;  // one per coordinate, in order
  bool ok() const;  // every entry ok and log_density finite
  // A table, one line per coordinate ("index name analytic numeric error
  // tolerance ok/FAIL"), for users to print.
  std::string ToString() const;
};

// Evaluates the check at q. InvalidArgument when q.size() != dimension(),
// when q has a non-finite entry, when the options are not positive and
// finite, or when the log density at q is not finite (no derivative to
// check there). Calls LogDensityGradient 2 * dimension() + 1 times.
absl::StatusOr<GradientCheckReport> GradientCheckAt(
    const Model& model, std::span<const double> q,
    const GradientCheckOptions& options = {});

// OK when every coordinate passes; otherwise InvalidArgument naming the
// model and listing every failing coordinate (index, parameter name,
// analytic, numeric). Errors of GradientCheckAt pass through.
absl::Status CheckGradient(const Model& model, std::span<const double> q,
                           const GradientCheckOptions& options = {});

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_GRADIENT_CHECK_H_
