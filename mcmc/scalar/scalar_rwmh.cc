// ScalarRwmh: random-walk Metropolis over preallocated workspace.
#include "mcmc/scalar/scalar_rwmh.h"

#include <cmath>
#include <limits>
#include <utility>

#include "support/status.h"

namespace autobatch::mcmc {

ScalarRwmh::ScalarRwmh(const Model& model, SamplerConfig config)
    : model_(model), config_(std::move(config)), d_(model.dimension()) {
  const absl::Status valid = config_.Validate(d_);
  AB_CHECK(valid.ok(), "ScalarRwmh needs a valid config (SamplerConfig::Validate)");
  if (config_.inv_metric.empty()) config_.inv_metric.assign(d_, 1.0);
  inv_metric_ = config_.inv_metric;
  scale_.resize(d_);
  UpdateScale();
  z_.resize(d_);
  q_.resize(d_);
  grad_.resize(d_);
}

void ScalarRwmh::UpdateScale() {
  for (int64_t i = 0; i < d_; ++i) scale_[i] = config_.step_size * std::sqrt(inv_metric_[i]);
}

void ScalarRwmh::set_step_size(double step_size) {
  AB_CHECK(std::isfinite(step_size) && step_size > 0, "step size must be finite and > 0");
  config_.step_size = step_size;
  UpdateScale();
}

void ScalarRwmh::set_inv_metric(std::span<const double> inv_metric) {
  AB_CHECK(static_cast<int64_t>(inv_metric.size()) == d_);
  for (int64_t i = 0; i < d_; ++i) {
    AB_CHECK(std::isfinite(inv_metric[i]) && inv_metric[i] > 0,
             "inverse metric entries must be finite and > 0");
    config_.inv_metric[i] = inv_metric_[i] = inv_metric[i];
  }
  UpdateScale();
}

void ScalarRwmh::Transition(ChainState& state, ChainRng& rng, DrawStats* stats) {
  AB_CHECK(static_cast<int64_t>(state.q.size()) == d_ &&
               static_cast<int64_t>(state.grad.size()) == d_,
           "the chain state's q and grad must have dimension() entries");
  NextNormals(rng, z_);
  for (int64_t i = 0; i < d_; ++i) q_[i] = state.q[i] + scale_[i] * z_[i];
  double logp = model_.LogDensityGradient(q_, grad_);
  if (logp != logp) logp = -std::numeric_limits<double>::infinity();
  const double w = logp - state.logp;
  const bool accept = NextUniform(rng) < SamplerExp(w);
  if (accept) {
    state.q.swap(q_);
    state.grad.swap(grad_);
    state.logp = logp;
  }
  if (stats != nullptr) {
    stats->lp = state.logp;
    stats->accept_stat = SamplerMetropolisProb(w);
    stats->stepsize = config_.step_size;
    stats->treedepth = 0;
    stats->n_leapfrog = 0;
    stats->divergent = false;
    stats->energy = -state.logp;
  }
}

}  // namespace autobatch::mcmc
