// Sampler configuration checks, chain states and the shared arithmetic.
#include "mcmc/sampler_config.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace autobatch::mcmc {
namespace {

absl::Status OutOfRange(std::string_view field, std::string value,
                        std::string_view allowed) {
  return absl::InvalidArgumentError(absl::StrCat("sampler config: ", std::string(field),
                                            " = ", value, " is out of range; it must be ",
                                            std::string(allowed)));
}

}  // namespace

std::string_view AlgorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kNuts: return "nuts";
    case Algorithm::kHmc: return "hmc";
    case Algorithm::kRwmh: return "rwmh";
  }
  return "unknown";
}

absl::Status SamplerConfig::Validate(int64_t dimension) const {
  if (dimension < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sampler config: the model has dimension ", dimension,
        "; samplers need at least one unconstrained coordinate"));
  }
  if (!(std::isfinite(step_size) && step_size > 0)) {
    return OutOfRange("step_size", absl::StrCat(step_size), "finite and > 0");
  }
  if (!inv_metric.empty()) {
    if (static_cast<int64_t>(inv_metric.size()) != dimension) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sampler config: inv_metric has ", inv_metric.size(),
          " entries but the model has dimension ", dimension,
          "; give one entry per unconstrained coordinate, or none for the identity"));
    }
    for (size_t i = 0; i < inv_metric.size(); ++i) {
      if (!(std::isfinite(inv_metric[i]) && inv_metric[i] > 0)) {
        return OutOfRange(absl::StrCat("inv_metric[", i, "]"),
                          absl::StrCat(inv_metric[i]), "finite and > 0");
      }
    }
  }
  if (max_depth < 1 || max_depth > kMaxTreeDepth) {
    return OutOfRange("max_depth", absl::StrCat(max_depth),
                      absl::StrCat("in [1, ", kMaxTreeDepth, "]"));
  }
  if (!(max_delta_h > 0)) {
    return OutOfRange("max_delta_h", absl::StrCat(max_delta_h), "> 0");
  }
  if (!(step_size_jitter >= 0 && step_size_jitter <= 1)) {
    return OutOfRange("step_size_jitter", absl::StrCat(step_size_jitter), "in [0, 1]");
  }
  if (num_leapfrog_steps < 1 || num_leapfrog_steps > (int64_t{1} << 30)) {
    return OutOfRange("num_leapfrog_steps", absl::StrCat(num_leapfrog_steps),
                      "in [1, 2^30]");
  }
  return absl::OkStatus();
}

absl::StatusOr<ChainState> MakeChainState(const Model& model, std::span<const double> q) {
  const int64_t d = model.dimension();
  if (static_cast<int64_t>(q.size()) != d) {
    return absl::InvalidArgumentError(absl::StrCat("model '", model.name(), "': a point has ",
                                              q.size(), " coordinates but the model has ",
                                              d, "; give one value per coordinate"));
  }
  ChainState state;
  state.q.assign(q.begin(), q.end());
  state.grad.assign(q.size(), 0.0);
  state.logp = model.LogDensityGradient(state.q, state.grad);
  if (!std::isfinite(state.logp)) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", model.name(), "': the log density at the starting point is ",
                     state.logp, "; start where it is finite (see initialize.h)"));
  }
  for (size_t i = 0; i < state.grad.size(); ++i) {
    if (!std::isfinite(state.grad[i])) {
      return absl::FailedPreconditionError(absl::StrCat(
          "model '", model.name(), "': gradient entry ", i, " at the starting point is ",
          state.grad[i], "; start where the gradient is finite (see initialize.h)"));
    }
  }
  return state;
}

double JitteredStepSize(double step_size, double jitter, ChainRng& rng) {
  if (jitter == 0) return step_size;
  const double u = NextUniform(rng);
  return step_size * (1.0 + jitter * (2.0 * u - 1.0));
}

void DrawMomentum(ChainRng& rng, const double* sqrt_m, std::span<double> p) {
  NextNormals(rng, p);
  for (size_t i = 0; i < p.size(); ++i) p[i] = p[i] / sqrt_m[i];
}

void SamplerLeapfrog(const Model& model, const double* m, double e, int64_t d,
                     double* q, double* p, double* grad, double* logp) {
  const double half = 0.5 * e;
  for (int64_t i = 0; i < d; ++i) {
    p[i] = p[i] + half * grad[i];
    q[i] = q[i] + e * (m[i] * p[i]);
  }
  const size_t n = static_cast<size_t>(d);
  *logp = model.LogDensityGradient(std::span<const double>(q, n), std::span<double>(grad, n));
  for (int64_t i = 0; i < d; ++i) p[i] = p[i] + half * grad[i];
}

}  // namespace autobatch::mcmc
