// Gradient check by central finite differences.
#include "mcmc/model/gradient_check.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace autobatch::mcmc {

bool GradientCheckReport::ok() const {
  if (!std::isfinite(log_density)) return false;
  return std::all_of(entries.begin(), entries.end(),
                     [](const GradientCheckEntry& e) { return e.ok; });
}

std::string GradientCheckReport::ToString() const {
  std::string out = absl::StrFormat("log density %.17g\n", log_density);
  absl::StrAppendFormat(&out, "%6s  %-16s %24s %24s %12s %12s\n", "index", "name",
                        "analytic", "numeric", "abs_error", "tolerance");
  for (const GradientCheckEntry& e : entries) {
    absl::StrAppendFormat(&out, "%6d  %-16s %24.17g %24.17g %12.4g %12.4g %s\n",
                          e.index, e.name, e.analytic, e.numeric, e.abs_error,
                          e.tolerance, e.ok ? "ok" : "FAIL");
  }
  return out;
}

absl::StatusOr<GradientCheckReport> GradientCheckAt(
    const Model& model, std::span<const double> q,
    const GradientCheckOptions& options) {
  const int64_t d = model.dimension();
  const std::string where = absl::StrCat("gradient check of model '", model.name(), "'");
  if (static_cast<int64_t>(q.size()) != d) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": q has ", q.size(),
                                              " values but the model's dimension is ", d));
  }
  for (double v : {options.epsilon, options.rel_tol, options.abs_tol}) {
    if (!(v > 0) || !std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": epsilon, rel_tol and abs_tol must be positive and finite (got ",
          options.epsilon, ", ", options.rel_tol, ", ", options.abs_tol, ")"));
    }
  }
  std::vector<std::string> names = UnconstrainedNames(model);
  for (int64_t i = 0; i < d; ++i) {
    if (!std::isfinite(q[i])) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": q[", i, "] (", names[i],
                                                ") is ", q[i], "; give a finite point"));
    }
  }

  GradientCheckReport report;
  std::vector<double> point(q.begin(), q.end());
  std::vector<double> analytic(d), scratch(d);
  report.log_density = model.LogDensityGradient(point, analytic);
  if (!std::isfinite(report.log_density)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the log density at q is ", report.log_density,
        "; check the gradient at a point inside the support"));
  }
  for (int64_t i = 0; i < d; ++i) {
    const double center = q[i];
    const double plus = center + options.epsilon;
    const double minus = center - options.epsilon;
    point[i] = plus;
    const double f_plus = model.LogDensityGradient(point, scratch);
    point[i] = minus;
    const double f_minus = model.LogDensityGradient(point, scratch);
    point[i] = center;

    GradientCheckEntry& e = report.entries.emplace_back();
    e.index = i;
    e.name = names[i];
    e.analytic = analytic[i];
    e.numeric = (f_plus - f_minus) / (plus - minus);
    e.abs_error = std::abs(e.analytic - e.numeric);
    e.tolerance = std::max(options.abs_tol,
                           options.rel_tol * std::max(std::abs(e.analytic),
                                                      std::abs(e.numeric)));
    // Written so that NaN anywhere fails.
    e.ok = std::isfinite(e.analytic) && std::isfinite(e.numeric) &&
           e.abs_error <= e.tolerance;
  }
  return report;
}

absl::Status CheckGradient(const Model& model, std::span<const double> q,
                           const GradientCheckOptions& options) {
  absl::StatusOr<GradientCheckReport> report = GradientCheckAt(model, q, options);
  if (!report.ok()) return report.status();
  if (report->ok()) return absl::OkStatus();
  int64_t failures = 0;
  std::string lines;
  for (const GradientCheckEntry& e : report->entries) {
    if (e.ok) continue;
    ++failures;
    absl::StrAppendFormat(&lines, "\n  [%d] %s: analytic %.17g, numeric %.17g (|diff| %.3g > %.3g)",
                          e.index, e.name, e.analytic, e.numeric, e.abs_error,
                          e.tolerance);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "gradient check of model '", model.name(), "' failed at ", failures, " of ",
      report->entries.size(), " coordinates (finite-difference step ",
      options.epsilon, "; fix the derivative of the log density with respect to "
      "these unconstrained coordinates, including the transforms' log-Jacobian):",
      lines));
}

}  // namespace autobatch::mcmc
