// Stan's initial step-size heuristic on the shared sampler arithmetic.
#include "mcmc/warmup/step_size_heuristic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

absl::Status ValidateOptions(const StepSizeHeuristicOptions& options) {
  if (!(options.target_accept > 0 && options.target_accept < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("step size heuristic: target_accept = ", options.target_accept,
                     " is out of range; it must be in (0, 1)"));
  }
  if (!(std::isfinite(options.max_step_size) && options.max_step_size > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("step size heuristic: max_step_size = ", options.max_step_size,
                     " is out of range; it must be finite and > 0"));
  }
  if (options.max_trials < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("step size heuristic: max_trials = ", options.max_trials,
                     " is out of range; it must be >= 2"));
  }
  return absl::OkStatus();
}

// One trial's scratch; every trial restarts from the chain's point.
struct Trial {
  const Model& model;
  const ChainState& state;
  const double* m;
  std::vector<double> sqrt_m, q, p, grad, p_sharp;

  // log of the one-step acceptance, H0 - h, with a fresh momentum.
  double Run(double eps, ChainRng& rng) {
    const int64_t d = static_cast<int64_t>(q.size());
    std::copy(state.q.begin(), state.q.end(), q.begin());
    std::copy(state.grad.begin(), state.grad.end(), grad.begin());
    double logp = state.logp;
    DrawMomentum(rng, sqrt_m.data(), p);
    const double h0 = SamplerEnergy(m, p.data(), logp, p_sharp.data(), d);
    SamplerLeapfrog(model, m, eps, d, q.data(), p.data(), grad.data(), &logp);
    double h = SamplerEnergy(m, p.data(), logp, p_sharp.data(), d);
    if (h != h) h = kInf;
    return h0 - h;
  }
};

}  // namespace

absl::StatusOr<StepSizeHeuristicResult> InitialStepSize(
    const Model& model, const ChainState& state, std::span<const double> inv_metric,
    double step_size, ChainRng& rng, const StepSizeHeuristicOptions& options) {
  const int64_t d = model.dimension();
  AB_CHECK(static_cast<int64_t>(state.q.size()) == d &&
               static_cast<int64_t>(state.grad.size()) == d,
           "InitialStepSize: the chain state must have dimension() values of q and grad");
  AB_CHECK(static_cast<int64_t>(inv_metric.size()) == d,
           "InitialStepSize: inv_metric must have dimension() values");
  for (const double v : inv_metric) {
    AB_CHECK(std::isfinite(v) && v > 0, "InitialStepSize: inv_metric must be finite and > 0");
  }
  AB_RETURN_IF_ERROR(ValidateOptions(options));
  if (step_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "step size heuristic: the starting step size is ", step_size, "; it must be >= 0"));
  }
  StepSizeHeuristicResult result;
  result.step_size = step_size;
  if (step_size == 0 || step_size != step_size || step_size > options.max_step_size) {
    return result;  // Stan skips these starts
  }

  Trial trial{model, state, inv_metric.data(), {}, {}, {}, {}, {}};
  const size_t n = static_cast<size_t>(d);
  trial.sqrt_m.resize(n);
  for (size_t i = 0; i < n; ++i) trial.sqrt_m[i] = std::sqrt(inv_metric[i]);
  trial.q.resize(n);
  trial.p.resize(n);
  trial.grad.resize(n);
  trial.p_sharp.resize(n);

  const double log_target = math::Log(options.target_accept);
  ChainRng local = rng;
  double eps = step_size;
  double w = trial.Run(eps, local);
  int trials = 1;
  const bool up = w > log_target;
  while (true) {
    if (trials >= options.max_trials) {
      return absl::FailedPreconditionError(absl::StrCat(
          "step size heuristic on model '", model.name(), "': no crossing of the one-step ",
          "acceptance ", options.target_accept, " after ", trials, " trials (step size now ",
          eps, ", last acceptance ", math::Exp(w), "); raise max_trials or start from a ",
          "better step size"));
    }
    w = trial.Run(eps, local);
    ++trials;
    if (up ? !(w > log_target) : !(w < log_target)) break;
    eps = up ? 2.0 * eps : 0.5 * eps;
    if (eps > options.max_step_size) {
      return absl::FailedPreconditionError(absl::StrCat(
          "step size heuristic on model '", model.name(), "': the one-step acceptance stays ",
          "above ", options.target_accept, " up to step size ", eps, " (> max_step_size ",
          options.max_step_size, "): the posterior looks improper or flat (a log density ",
          "that does not fall away from the current point); check the model"));
    }
    if (eps == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "step size heuristic on model '", model.name(), "': the one-step acceptance stays ",
          "below ", options.target_accept, " (last ", math::Exp(w), ") down to step size 0: ",
          "the log density or its gradient is likely discontinuous or not finite near the ",
          "current point; check the model"));
    }
  }
  rng = local;
  result.step_size = eps;
  result.trials = trials;
  return result;
}

}  // namespace autobatch::mcmc
