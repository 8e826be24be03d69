// Chain initialization (Stan's uniform(-2, 2) with retries).
#include "mcmc/warmup/initialize.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "backends/random.h"

namespace autobatch::mcmc {
namespace {

// Empty when the point is usable, else what went wrong there.
std::string Problem(const InitialPoint& point, const std::vector<std::string>& names) {
  if (!std::isfinite(point.log_density)) {
    return absl::StrCat("log density ", point.log_density);
  }
  for (size_t i = 0; i < point.gradient.size(); ++i) {
    if (!std::isfinite(point.gradient[i])) {
      return absl::StrCat("gradient entry ", i, " (", names[i], ") ", point.gradient[i]);
    }
  }
  return "";
}

void Evaluate(const Model& model, InitialPoint& point) {
  point.gradient.assign(point.q.size(), 0.0);
  point.log_density = model.LogDensityGradient(point.q, point.gradient);
}

absl::Status Unusable(const Model& model, std::string_view how, std::string_view problem) {
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot initialize model '", model.name(), "': ", std::string(how),
      " the log density or its gradient is not finite (last: ", std::string(problem),
      "). Check that the log density is finite on its support and that parameters "
      "with a restricted support use a transform; or start from a smaller init "
      "radius or from given initial values"));
}

}  // namespace

absl::StatusOr<InitialPoint> Initialize(const Model& model, const InitUniform& uniform,
                                        const InitOptions& options) {
  if (!(options.radius >= 0) || !std::isfinite(options.radius)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "initialize model '", model.name(), "': init radius must be finite and >= 0, got ",
        options.radius));
  }
  if (options.max_attempts < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "initialize model '", model.name(), "': max_attempts must be >= 1, got ",
        options.max_attempts));
  }
  const int64_t d = model.dimension();
  const std::vector<std::string> names = UnconstrainedNames(model);
  InitialPoint point;
  point.q.assign(d, 0.0);
  if (options.radius == 0) {
    point.attempts = 1;
    Evaluate(model, point);
    std::string problem = Problem(point, names);
    if (!problem.empty()) return Unusable(model, "at the origin (init radius 0)", problem);
    return point;
  }
  std::string problem;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    for (int64_t i = 0; i < d; ++i) {
      point.q[i] = options.radius * (2.0 * uniform(attempt, i) - 1.0);
    }
    point.attempts = attempt + 1;
    Evaluate(model, point);
    problem = Problem(point, names);
    if (problem.empty()) return point;
  }
  return Unusable(model,
                  absl::StrCat("at all ", options.max_attempts,
                               " random points drawn uniformly from (-", options.radius,
                               ", ", options.radius, ") on the unconstrained scale"),
                  problem);
}

absl::StatusOr<InitialPoint> InitializeChain(const Model& model, uint64_t key,
                                             uint64_t* counter,
                                             const InitOptions& options) {
  const uint64_t base = *counter;
  absl::StatusOr<InitialPoint> point = Initialize(
      model,
      [key, base](int64_t attempt, int64_t coordinate) {
        return PhiloxUniform(key, base + static_cast<uint64_t>(attempt), coordinate);
      },
      options);
  if (point.ok()) *counter = base + static_cast<uint64_t>(point->attempts);
  return point;
}

absl::StatusOr<InitialPoint> InitializeAt(const Model& model, std::span<const double> q) {
  const int64_t d = model.dimension();
  if (static_cast<int64_t>(q.size()) != d) {
    return absl::InvalidArgumentError(absl::StrCat("initialize model '", model.name(),
                                              "': the initial point has ", q.size(),
                                              " values but the model's dimension is ", d));
  }
  const std::vector<std::string> names = UnconstrainedNames(model);
  for (int64_t i = 0; i < d; ++i) {
    if (!std::isfinite(q[i])) {
      return absl::InvalidArgumentError(absl::StrCat("initialize model '", model.name(),
                                                "': initial value ", i, " (", names[i],
                                                ") is ", q[i], "; give finite values"));
    }
  }
  InitialPoint point;
  point.q.assign(q.begin(), q.end());
  point.attempts = 1;
  Evaluate(model, point);
  std::string problem = Problem(point, names);
  if (!problem.empty()) return Unusable(model, "at the given initial point", problem);
  return point;
}

}  // namespace autobatch::mcmc
