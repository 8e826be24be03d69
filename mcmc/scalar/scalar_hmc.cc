// ScalarHmc: static HMC over preallocated workspace.
#include "mcmc/scalar/scalar_hmc.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "support/status.h"

namespace autobatch::mcmc {

ScalarHmc::ScalarHmc(const Model& model, SamplerConfig config)
    : model_(model), config_(std::move(config)), d_(model.dimension()) {
  const absl::Status valid = config_.Validate(d_);
  AB_CHECK(valid.ok(), "ScalarHmc needs a valid config (SamplerConfig::Validate)");
  if (config_.inv_metric.empty()) config_.inv_metric.assign(d_, 1.0);
  inv_metric_ = config_.inv_metric;
  sqrt_inv_metric_.resize(d_);
  for (int64_t i = 0; i < d_; ++i) sqrt_inv_metric_[i] = std::sqrt(inv_metric_[i]);
  q_.resize(d_);
  p_.resize(d_);
  grad_.resize(d_);
  p_sharp_.resize(d_);
}

void ScalarHmc::set_step_size(double step_size) {
  AB_CHECK(std::isfinite(step_size) && step_size > 0, "step size must be finite and > 0");
  config_.step_size = step_size;
}

void ScalarHmc::set_inv_metric(std::span<const double> inv_metric) {
  AB_CHECK(static_cast<int64_t>(inv_metric.size()) == d_);
  for (int64_t i = 0; i < d_; ++i) {
    AB_CHECK(std::isfinite(inv_metric[i]) && inv_metric[i] > 0,
             "inverse metric entries must be finite and > 0");
    config_.inv_metric[i] = inv_metric_[i] = inv_metric[i];
    sqrt_inv_metric_[i] = std::sqrt(inv_metric[i]);
  }
}

void ScalarHmc::Transition(ChainState& state, ChainRng& rng, DrawStats* stats) {
  AB_CHECK(static_cast<int64_t>(state.q.size()) == d_ &&
               static_cast<int64_t>(state.grad.size()) == d_,
           "the chain state's q and grad must have dimension() entries");
  const double* m = inv_metric_.data();
  const double eps = JitteredStepSize(config_.step_size, config_.step_size_jitter, rng);
  DrawMomentum(rng, sqrt_inv_metric_.data(), p_);
  std::copy(state.q.begin(), state.q.end(), q_.begin());
  std::copy(state.grad.begin(), state.grad.end(), grad_.begin());
  double logp = state.logp;
  const double h0 = SamplerEnergy(m, p_.data(), logp, p_sharp_.data(), d_);
  for (int64_t step = 0; step < config_.num_leapfrog_steps; ++step) {
    SamplerLeapfrog(model_, m, eps, d_, q_.data(), p_.data(), grad_.data(), &logp);
  }
  double h = SamplerEnergy(m, p_.data(), logp, p_sharp_.data(), d_);
  if (h != h) h = std::numeric_limits<double>::infinity();
  const double w = h0 - h;
  const bool accept = NextUniform(rng) < SamplerExp(w);
  if (accept) {
    state.q.swap(q_);
    state.grad.swap(grad_);
    state.logp = logp;
  }
  if (stats != nullptr) {
    stats->lp = state.logp;
    stats->accept_stat = SamplerMetropolisProb(w);
    stats->stepsize = eps;
    stats->treedepth = 0;
    stats->n_leapfrog = config_.num_leapfrog_steps;
    stats->divergent = h - h0 > config_.max_delta_h;
    stats->energy = accept ? h : h0;
  }
}

}  // namespace autobatch::mcmc
