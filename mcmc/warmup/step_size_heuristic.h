// Stan's initial step-size heuristic (base_hmc::init_stepsize): double or
// halve the step size until the acceptance of ONE leapfrog from the current
// point crosses 0.8.
//
// From the chain's point (q, logp, grad), inverse metric m and step size
// eps (the same energy and leapfrog as scalar_nuts.h: SamplerEnergy,
// SamplerLeapfrog, DrawMomentum of sampler_config.h):
//
//   if eps == 0, eps is NaN or eps > max_step_size:
//     return eps unchanged, no draws (Stan skips these starts)
//   trial(eps):
//     [R] z = NextNormals(d);  p[i] = z[i] / sqrt(m[i])
//     H0 = energy of (q, p, logp)
//     one leapfrog with e = +eps from (q, p, grad)
//     h = energy there; if h is NaN: h = +inf
//     return H0 - h                            (log one-step acceptance)
//   direction = trial(eps) > log_target ? up : down
//   loop:
//     w = trial(eps)                           (the SAME eps again first)
//     up:   if !(w > log_target): stop          else eps = 2.0 * eps
//     down: if !(w < log_target): stop          else eps = 0.5 * eps
//     error if eps > max_step_size (up) or eps == 0 (down)
//   return eps
// with log_target = math::Log(target_accept) (log(0.8) by default). Every
// trial starts from the given point with a fresh momentum; the point itself
// is never changed.
//
// Draws: ONE NextNormals(d) per trial and nothing else, so a call that
// makes k doublings or halvings draws k + 2 momenta (the counter advances
// by k + 2). Going up, the result is the first step size whose acceptance
// falls to 0.8 or below; going down, the first whose acceptance is 0.8 or
// above — exactly Stan's loop (including its re-test of the starting step
// size with a second momentum), so the bits match a Stan-style reference.
#ifndef AUTOBATCH_MCMC_WARMUP_STEP_SIZE_HEURISTIC_H_
#define AUTOBATCH_MCMC_WARMUP_STEP_SIZE_HEURISTIC_H_

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "mcmc/chain_rng.h"
#include "mcmc/model/model.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

struct StepSizeHeuristicOptions {
  // The one-step acceptance the search brackets; Stan hard-codes 0.8.
  // In (0, 1).
  double target_accept = 0.8;
  // Doubling past this is an error (Stan: 1e7, "posterior is improper"), and
  // a starting step size above it is returned unchanged. Finite, > 0.
  double max_step_size = 1e7;
  // Cap on the trials, the direction trial included (each costs one
  // gradient). The defaults' own limits end every search within about 1100
  // trials (doubling from the smallest double past 1e7, or halving from 1e7
  // to 0), so the default cap never binds; a smaller cap bounds the cost of
  // a bad start. >= 2.
  int max_trials = 2000;
};

struct StepSizeHeuristicResult {
  // Finite and > 0 after a search; the start itself when it was skipped.
  double step_size = 0;
  int trials = 0;  // momenta drawn (0 when the start was skipped)
};

// Runs the heuristic above for the chain at `state` (q, logp and grad
// computed at q, dimension() values; checked) with the inverse metric
// diagonal `inv_metric` (dimension() finite positive values; checked) from
// `step_size` (not negative; the skipped starts above are returned as
// they are), drawing from `rng`.
// Errors (FailedPrecondition, naming the model, the step size reached and
// the last one-step acceptance):
//  - going up, the step size exceeds max_step_size: the acceptance never
//    falls to target_accept — a flat or improper target (Stan's "Posterior
//    is improper");
//  - going down, the step size reaches 0: the acceptance never reaches
//    target_accept — a log density or gradient that is discontinuous or not
//    finite around q;
//  - max_trials trials without crossing.
// InvalidArgument if the options are out of range or step_size < 0. On
// error `rng` is left unchanged. Allocates O(dimension) scratch per call.
absl::StatusOr<StepSizeHeuristicResult> InitialStepSize(
    const Model& model, const ChainState& state, std::span<const double> inv_metric,
    double step_size, ChainRng& rng, const StepSizeHeuristicOptions& options = {});

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_WARMUP_STEP_SIZE_HEURISTIC_H_
