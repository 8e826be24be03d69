// ScalarNuts: recursive multinomial NUTS over preallocated workspace, and the
// sequential multi-chain runner.
#include "mcmc/scalar/scalar_nuts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "support/status.h"
#include "mcmc/warmup/initialize.h"
#include "mcmc/scalar/scalar_hmc.h"
#include "mcmc/scalar/scalar_rwmh.h"
#include "mcmc/scalar/u_turn.h"

namespace autobatch::mcmc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void Copy(const double* from, double* to, int64_t n) { std::copy(from, from + n, to); }

}  // namespace

ScalarNuts::ScalarNuts(const Model& model, SamplerConfig config)
    : model_(model), config_(std::move(config)), d_(model.dimension()) {
  const absl::Status valid = config_.Validate(d_);
  AB_CHECK(valid.ok(), "ScalarNuts needs a valid config (SamplerConfig::Validate)");
  if (config_.inv_metric.empty()) config_.inv_metric.assign(d_, 1.0);
  inv_metric_ = config_.inv_metric;
  sqrt_inv_metric_.resize(d_);
  for (int64_t i = 0; i < d_; ++i) sqrt_inv_metric_[i] = std::sqrt(inv_metric_[i]);

  const int max_depth = config_.max_depth;
  // Candidates: the sample, the doubling's proposal, and the final-subtree
  // proposal of each internal depth 1 .. max_depth - 1.
  const int64_t num_candidates = max_depth + 1;
  const int64_t num_level_vectors = 6 * int64_t{max_depth - 1};
  const int64_t num_vectors = 6 /*two ends*/ + 2 * num_candidates + num_level_vectors +
                              10 /*boundary momenta, rho*/;
  storage_.assign(static_cast<size_t>(num_vectors * d_), 0.0);
  double* next = storage_.data();
  auto take = [&] {
    double* v = next;
    next += d_;
    return v;
  };
  fwd_ = End{take(), take(), take(), 0.0};
  bck_ = End{take(), take(), take(), 0.0};
  candidates_.resize(num_candidates);
  for (Candidate& c : candidates_) c = Candidate{take(), take(), 0.0, 0.0};
  sample_ = &candidates_[0];
  proposal_ = &candidates_[1];
  levels_.resize(max_depth);
  for (int depth = 1; depth < max_depth; ++depth) {
    levels_[depth] = Level{&candidates_[depth + 1], take(), take(), take(), take(), take(),
                           take()};
  }
  p_fwd_fwd_ = take();
  p_fwd_bck_ = take();
  p_bck_fwd_ = take();
  p_bck_bck_ = take();
  p_sharp_fwd_fwd_ = take();
  p_sharp_fwd_bck_ = take();
  p_sharp_bck_fwd_ = take();
  p_sharp_bck_bck_ = take();
  rho_ = take();
  rho_sub_ = take();
  AB_CHECK(next == storage_.data() + storage_.size());
}

void ScalarNuts::set_step_size(double step_size) {
  AB_CHECK(std::isfinite(step_size) && step_size > 0, "step size must be finite and > 0");
  config_.step_size = step_size;
}

void ScalarNuts::set_inv_metric(std::span<const double> inv_metric) {
  AB_CHECK(static_cast<int64_t>(inv_metric.size()) == d_);
  for (int64_t i = 0; i < d_; ++i) {
    AB_CHECK(std::isfinite(inv_metric[i]) && inv_metric[i] > 0,
             "inverse metric entries must be finite and > 0");
    config_.inv_metric[i] = inv_metric_[i] = inv_metric[i];
    sqrt_inv_metric_[i] = std::sqrt(inv_metric[i]);
  }
}

bool ScalarNuts::Leaf(End& end, Walk& walk, Candidate* proposal, double* p_sharp, double* p,
                      double* lsw) {
  SamplerLeapfrog(model_, inv_metric_.data(), walk.step, d_, end.q, end.p, end.grad,
                  &end.logp);
  ++walk.n_leapfrog;
  double h = SamplerEnergy(inv_metric_.data(), end.p, end.logp, p_sharp, d_);
  if (h != h) h = kInf;
  if (h - walk.h0 > config_.max_delta_h) walk.divergent = true;
  const double w = walk.h0 - h;
  walk.sum_prob = walk.sum_prob + SamplerMetropolisProb(w);
  *lsw = w;
  if (walk.divergent) return false;
  Copy(end.q, proposal->q, d_);
  Copy(end.grad, proposal->grad, d_);
  proposal->logp = end.logp;
  proposal->energy = h;
  Copy(end.p, p, d_);
  return true;
}

double ScalarNuts::Merge(double lsw_a, double lsw_b, Walk& walk, Candidate** proposal,
                         Candidate*& proposal_b) {
  const double lsw = SamplerLogSumExp(lsw_a, lsw_b);
  if (NextUniform(*walk.rng) < SamplerExp(lsw_b - lsw)) std::swap(*proposal, proposal_b);
  return lsw;
}

bool ScalarNuts::BuildTree(int depth, End& end, Walk& walk, const TreeOut& out,
                           double* lsw) {
  if (depth == 0) {
    if (!Leaf(end, walk, *out.proposal, out.p_sharp_beg, out.p_beg, lsw)) return false;
    Copy(out.p_sharp_beg, out.p_sharp_end, d_);
    Copy(out.p_beg, out.p_end, d_);
    Copy(out.p_beg, out.rho, d_);
    return true;
  }
  Level& level = levels_[depth];
  if (depth == 1) {
    // Two leaves: each subtree's rho, p_beg and p_end are its one momentum.
    double lsw_a = 0, lsw_b = 0;
    if (!Leaf(end, walk, *out.proposal, out.p_sharp_beg, out.p_beg, &lsw_a)) return false;
    if (!Leaf(end, walk, level.proposal_final, out.p_sharp_end, out.p_end, &lsw_b)) {
      return false;
    }
    *lsw = Merge(lsw_a, lsw_b, walk, out.proposal, level.proposal_final);
    return PairCheck(out.p_sharp_beg, out.p_sharp_end, out.p_beg, out.p_end, out.rho, d_);
  }

  double lsw_init = 0;
  const TreeOut init_out{out.proposal,        out.p_sharp_beg,  level.p_sharp_init_end,
                         out.p_beg,           level.p_init_end, level.rho_init};
  if (!BuildTree(depth - 1, end, walk, init_out, &lsw_init)) return false;
  double lsw_final = 0;
  const TreeOut final_out{&level.proposal_final, level.p_sharp_final_beg, out.p_sharp_end,
                          level.p_final_beg,     out.p_end,               level.rho_final};
  if (!BuildTree(depth - 1, end, walk, final_out, &lsw_final)) return false;

  *lsw = Merge(lsw_init, lsw_final, walk, out.proposal, level.proposal_final);
  return MergeChecks(MergeInputs{out.p_sharp_beg, out.p_sharp_end, level.p_sharp_init_end,
                                 level.p_sharp_final_beg, level.rho_init, level.rho_final,
                                 level.p_init_end, level.p_final_beg, out.rho},
                     d_);
}

void ScalarNuts::Transition(ChainState& state, ChainRng& rng, DrawStats* stats) {
  AB_CHECK(static_cast<int64_t>(state.q.size()) == d_ &&
               static_cast<int64_t>(state.grad.size()) == d_,
           "the chain state's q and grad must have dimension() entries");
  const double* m = inv_metric_.data();
  const double eps = JitteredStepSize(config_.step_size, config_.step_size_jitter, rng);
  DrawMomentum(rng, sqrt_inv_metric_.data(), std::span<double>(fwd_.p, d_));

  Copy(state.q.data(), fwd_.q, d_);
  Copy(state.grad.data(), fwd_.grad, d_);
  fwd_.logp = state.logp;
  Copy(state.q.data(), bck_.q, d_);
  Copy(fwd_.p, bck_.p, d_);
  Copy(state.grad.data(), bck_.grad, d_);
  bck_.logp = state.logp;

  const double h0 = SamplerEnergy(m, fwd_.p, state.logp, p_sharp_fwd_fwd_, d_);
  for (double* p : {p_fwd_fwd_, p_fwd_bck_, p_bck_fwd_, p_bck_bck_, rho_}) {
    Copy(fwd_.p, p, d_);
  }
  for (double* p_sharp : {p_sharp_fwd_bck_, p_sharp_bck_fwd_, p_sharp_bck_bck_}) {
    Copy(p_sharp_fwd_fwd_, p_sharp, d_);
  }

  Walk walk{&rng, eps, h0, 0, 0.0, false};
  double lsw = 0;  // log(exp(H0 - H0))
  bool moved = false;
  int depth = 0;
  while (depth < config_.max_depth) {
    const bool forward = NextUniform(rng) > 0.5;
    double lsw_subtree = 0;
    bool valid;
    if (forward) {
      // The old trajectory becomes the backward part: its forward end is
      // now the backward part's inner end.
      std::swap(p_bck_fwd_, p_fwd_fwd_);
      std::swap(p_sharp_bck_fwd_, p_sharp_fwd_fwd_);
      walk.step = eps;
      const TreeOut out{&proposal_, p_sharp_fwd_bck_, p_sharp_fwd_fwd_,
                        p_fwd_bck_, p_fwd_fwd_,       rho_sub_};
      valid = BuildTree(depth, fwd_, walk, out, &lsw_subtree);
    } else {
      std::swap(p_fwd_bck_, p_bck_bck_);
      std::swap(p_sharp_fwd_bck_, p_sharp_bck_bck_);
      walk.step = -eps;
      const TreeOut out{&proposal_, p_sharp_bck_fwd_, p_sharp_bck_bck_,
                        p_bck_fwd_, p_bck_bck_,       rho_sub_};
      valid = BuildTree(depth, bck_, walk, out, &lsw_subtree);
    }
    if (!valid) break;
    ++depth;

    // Biased progressive sampling between doublings.
    if (NextUniform(rng) < SamplerExp(lsw_subtree - lsw)) {
      std::swap(sample_, proposal_);
      moved = true;
    }
    lsw = SamplerLogSumExp(lsw, lsw_subtree);

    // The old trajectory and the new subtree, in time order (A = backward
    // part, B = forward part); rho_ becomes their merged rho.
    const bool persist = MergeChecks(
        MergeInputs{p_sharp_bck_bck_, p_sharp_fwd_fwd_, p_sharp_bck_fwd_, p_sharp_fwd_bck_,
                    forward ? rho_ : rho_sub_, forward ? rho_sub_ : rho_, p_bck_fwd_,
                    p_fwd_bck_, rho_},
        d_);
    if (!persist) break;
  }

  double energy = h0;
  if (moved) {
    Copy(sample_->q, state.q.data(), d_);
    Copy(sample_->grad, state.grad.data(), d_);
    state.logp = sample_->logp;
    energy = sample_->energy;
  }
  if (stats != nullptr) {
    stats->lp = state.logp;
    stats->accept_stat = walk.sum_prob / static_cast<double>(walk.n_leapfrog);
    stats->stepsize = eps;
    stats->treedepth = depth;
    stats->n_leapfrog = walk.n_leapfrog;
    stats->divergent = walk.divergent;
    stats->energy = energy;
  }
}

// ---------------------------------------------------------------------------
// Sequential runner.

namespace {

absl::Status WithChain(uint64_t chain_id, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("chain ", chain_id, ": ",
                                                  std::string(status.message())));
}

template <typename Sampler>
absl::StatusOr<std::vector<ScalarChainResult>> RunChains(
    const Model& model, const SamplerConfig& config, uint64_t seed,
    std::span<const uint64_t> chain_ids, int64_t num_draws,
    const ScalarRunOptions& options) {
  Sampler sampler(model, config);
  const int64_t d = sampler.dimension();
  std::vector<ScalarChainResult> results;
  results.reserve(chain_ids.size());
  for (size_t k = 0; k < chain_ids.size(); ++k) {
    ScalarChainResult result;
    result.chain_id = chain_ids[k];
    result.dimension = d;
    ChainRng rng = MakeChainRng(seed, chain_ids[k]);
    ChainState state;
    if (options.inits.empty()) {
      absl::StatusOr<InitialPoint> init = InitializeChain(model, rng.key, &rng.counter);
      if (!init.ok()) return WithChain(chain_ids[k], init.status());
      state.q = std::move(init->q);
      state.logp = init->log_density;
      state.grad = std::move(init->gradient);
    } else {
      absl::StatusOr<ChainState> made = MakeChainState(model, options.inits[k]);
      if (!made.ok()) return WithChain(chain_ids[k], made.status());
      state = *std::move(made);
    }
    result.draws.resize(static_cast<size_t>(num_draws * d));
    result.stats.resize(static_cast<size_t>(num_draws));
    for (int64_t n = 0; n < num_draws; ++n) {
      sampler.Transition(state, rng, &result.stats[n]);
      std::copy(state.q.begin(), state.q.end(), result.draws.begin() + n * d);
    }
    result.final_state = std::move(state);
    result.final_rng = rng;
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace

absl::StatusOr<std::vector<ScalarChainResult>> RunScalarChains(
    const Model& model, const SamplerConfig& config, uint64_t seed,
    std::span<const uint64_t> chain_ids, int64_t num_draws,
    const ScalarRunOptions& options) {
  AB_RETURN_IF_ERROR(config.Validate(model.dimension()));
  if (num_draws < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("RunScalarChains: num_draws is ", num_draws, "; it must be >= 0"));
  }
  if (!options.inits.empty() && options.inits.size() != chain_ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RunScalarChains: ", options.inits.size(), " inits for ", chain_ids.size(),
        " chains; give one starting point per chain, or none to initialize randomly"));
  }
  switch (options.algorithm) {
    case Algorithm::kNuts:
      return RunChains<ScalarNuts>(model, config, seed, chain_ids, num_draws, options);
    case Algorithm::kHmc:
      return RunChains<ScalarHmc>(model, config, seed, chain_ids, num_draws, options);
    case Algorithm::kRwmh:
      return RunChains<ScalarRwmh>(model, config, seed, chain_ids, num_draws, options);
  }
  return absl::InvalidArgumentError("RunScalarChains: unknown algorithm");
}

}  // namespace autobatch::mcmc
