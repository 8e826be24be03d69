// ScalarRwmh: random-walk Metropolis for one chain in plain C++ — the
// bit-for-bit oracle of the batched random-walk Metropolis program.
//
// Gaussian proposal with per-coordinate scale s[i] = step_size * sqrt(m[i])
// (m = inverse metric diagonal; with the identity metric s[i] = step_size).
// Transition from (q0, logp0, grad0):
//   [R] z = NextNormals(d);  q1[i] = q0[i] + s[i] * z[i]
//   logp1, grad1 = model.LogDensityGradient(q1); if logp1 is NaN: logp1 = -inf
//   w = logp1 - logp0
//   [R] u = NextUniform (always drawn);  accept iff u < SamplerExp(w)
// The new state is (q1, logp1, grad1) if accepted, else unchanged.
//
// DrawStats: lp__ of the returned point; accept_stat__ =
// SamplerMetropolisProb(w) = min(1, exp(w)); stepsize__ = step_size;
// treedepth__ = 0; n_leapfrog__ = 0; divergent__ = false;
// energy__ = -lp__.
#ifndef AUTOBATCH_MCMC_SCALAR_SCALAR_RWMH_H_
#define AUTOBATCH_MCMC_SCALAR_SCALAR_RWMH_H_

#include <cstdint>
#include <span>
#include <vector>

#include "mcmc/chain_rng.h"
#include "mcmc/draw_stats.h"
#include "mcmc/model/model.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

class ScalarRwmh {
 public:
  // Requires config.Validate(model.dimension()).ok() (checked). Keeps a
  // reference to `model`. Allocates its O(dimension) workspace here.
  ScalarRwmh(const Model& model, SamplerConfig config);

  ScalarRwmh(const ScalarRwmh&) = delete;
  ScalarRwmh& operator=(const ScalarRwmh&) = delete;

  // One transition (see top). `state` must hold dimension() values of q and
  // grad (checked), logp and grad computed at q. No allocation.
  void Transition(ChainState& state, ChainRng& rng, DrawStats* stats);

  void set_step_size(double step_size);                     // finite, > 0
  void set_inv_metric(std::span<const double> inv_metric);  // dimension() values > 0

  const SamplerConfig& config() const { return config_; }
  int64_t dimension() const { return d_; }

 private:
  void UpdateScale();

  const Model& model_;
  SamplerConfig config_;
  int64_t d_;
  std::vector<double> inv_metric_;
  std::vector<double> scale_;  // s[i] = step_size * sqrt(m[i])
  std::vector<double> z_, q_, grad_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_SCALAR_SCALAR_RWMH_H_
