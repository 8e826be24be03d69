// ScalarHmc: static HMC (fixed number of leapfrog steps) for one chain in
// plain C++ — the bit-for-bit oracle of the batched static HMC program.
//
// Same energy and leapfrog as scalar_nuts.h (diag_e metric m, explicit
// leapfrog). Transition from (q0, logp0, grad0), L = num_leapfrog_steps:
//   [R, jitter > 0 only] u = NextUniform; eps = jittered step (sampler_config.h)
//   [R] z = NextNormals(d);  p0[i] = z[i] / sqrt(m[i])
//   H0 = energy of (q0, p0)
//   L leapfrogs with e = +eps from (q0, p0) (no early exit, whatever the values)
//   h = energy of the end point; if h is NaN: h = +inf
//   w = H0 - h
//   [R] u = NextUniform (always drawn);  accept iff u < SamplerExp(w)
// The new state is the end point if accepted, else (q0, logp0, grad0).
//
// DrawStats: lp__ of the returned point; accept_stat__ =
// SamplerMetropolisProb(w) = min(1, exp(H0 - h)); stepsize__ = eps;
// treedepth__ = 0; n_leapfrog__ = L; divergent__ = h - H0 > max_delta_h
// (checked at the end point only); energy__ = h if accepted, else H0.
#ifndef AUTOBATCH_MCMC_SCALAR_SCALAR_HMC_H_
#define AUTOBATCH_MCMC_SCALAR_SCALAR_HMC_H_

#include <cstdint>
#include <span>
#include <vector>

#include "mcmc/chain_rng.h"
#include "mcmc/draw_stats.h"
#include "mcmc/model/model.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

class ScalarHmc {
 public:
  // Requires config.Validate(model.dimension()).ok() (checked). Keeps a
  // reference to `model`. Allocates its O(dimension) workspace here.
  ScalarHmc(const Model& model, SamplerConfig config);

  ScalarHmc(const ScalarHmc&) = delete;
  ScalarHmc& operator=(const ScalarHmc&) = delete;

  // One transition (see top). `state` must hold dimension() values of q and
  // grad (checked), logp and grad computed at q. No allocation.
  void Transition(ChainState& state, ChainRng& rng, DrawStats* stats);

  void set_step_size(double step_size);                     // finite, > 0
  void set_inv_metric(std::span<const double> inv_metric);  // dimension() values > 0

  const SamplerConfig& config() const { return config_; }
  int64_t dimension() const { return d_; }

 private:
  const Model& model_;
  SamplerConfig config_;
  int64_t d_;
  std::vector<double> inv_metric_;
  std::vector<double> sqrt_inv_metric_;
  std::vector<double> q_, p_, grad_, p_sharp_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_SCALAR_SCALAR_HMC_H_
