// Tests of the step-size heuristic, the scalar warmup driver (its recipe and
// draw order, options, errors, and adaptation quality on the ill-conditioned
// Gaussian) and the adapted-parameters JSON file.
#include "mcmc/scalar/scalar_warmup.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "mcmc/warmup/initialize.h"
#include "mcmc/scalar/scalar_hmc.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/model/targets/registry.h"

namespace autobatch::mcmc {
namespace {

using json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameBits(a[i], b[i])) return false;
  }
  return true;
}

std::unique_ptr<Target> Make(std::string_view name, const json& params = json::object()) {
  absl::StatusOr<std::unique_ptr<Target>> target = MakeTarget(name, params);
  EXPECT_TRUE(target.ok()) << target.status();
  return *std::move(target);
}

ChainState StateAt(const Model& model, std::vector<double> q) {
  absl::StatusOr<ChainState> state = MakeChainState(model, q);
  EXPECT_TRUE(state.ok()) << state.status();
  return *std::move(state);
}

// A chain initialized CmdStan style from its own stream.
ChainState InitState(const Model& model, ChainRng& rng) {
  absl::StatusOr<InitialPoint> init = InitializeChain(model, rng.key, &rng.counter);
  EXPECT_TRUE(init.ok()) << init.status();
  ChainState state;
  state.q = init->q;
  state.logp = init->log_density;
  state.grad = init->gradient;
  return state;
}

// log of the one-step acceptance of a leapfrog with step eps on the
// diagonal Gaussian log p = -sum q_i^2 / (2 var_i), with the momentum the
// chain draws at counter `counter`: independent plain arithmetic (not the
// sampler's), for checking the heuristic's decisions.
double GaussianOneStepLogAccept(const std::vector<double>& var, const std::vector<double>& m,
                                const std::vector<double>& q0, double eps, ChainRng rng) {
  const size_t d = var.size();
  std::vector<double> p(d);
  NextNormals(rng, p);
  double h0 = 0, h1 = 0;
  for (size_t i = 0; i < d; ++i) {
    const double pi = p[i] / std::sqrt(m[i]);
    const double half = pi - 0.5 * eps * q0[i] / var[i];
    const double q1 = q0[i] + eps * m[i] * half;
    const double p1 = half - 0.5 * eps * q1 / var[i];
    h0 += 0.5 * m[i] * pi * pi + 0.5 * q0[i] * q0[i] / var[i];
    h1 += 0.5 * m[i] * p1 * p1 + 0.5 * q1 * q1 / var[i];
  }
  return h0 - h1;
}

// ---------------------------------------------------------------------------
// Step-size heuristic.

struct HeuristicCase {
  double start;
  bool up;
};

TEST(StepSizeHeuristicTest, BracketsTheTargetAcceptanceWithTheDocumentedDraws) {
  auto model = Make("iid_gaussian", {{"dimension", 10}});
  const std::vector<double> var(10, 1.0), m(10, 1.0);
  const std::vector<double> q0 = {0.3, -1.2, 0.8, 0.0, 1.9, -0.4, 0.1, -2.0, 0.6, 1.1};
  const ChainState state = StateAt(*model, q0);
  const double log_target = std::log(0.8);
  for (const HeuristicCase c : {HeuristicCase{1e-3, true}, HeuristicCase{100.0, false}}) {
    for (uint64_t chain = 0; chain < 20; ++chain) {
      const ChainRng start = MakeChainRng(11, chain, 5);
      ChainRng rng = start;
      absl::StatusOr<StepSizeHeuristicResult> r = InitialStepSize(*model, state, m, c.start, rng);
      ASSERT_TRUE(r.ok()) << r.status();
      // One momentum per trial, nothing else.
      EXPECT_EQ(rng.key, start.key);
      EXPECT_EQ(rng.counter, start.counter + static_cast<uint64_t>(r->trials));
      // The result is start * 2^(+-k) after k = trials - 2 doublings/halvings.
      const int k = r->trials - 2;
      ASSERT_GE(k, 0);
      EXPECT_EQ(r->step_size, std::ldexp(c.start, c.up ? k : -k));
      // Replay each trial's decision with independent arithmetic: trial 0
      // fixes the direction at the start; trial j >= 1 tests start * 2^(+-(j-1))
      // and only the last one crosses.
      auto log_accept = [&](int trial, double eps) {
        ChainRng at = start;
        at.counter += static_cast<uint64_t>(trial);
        return GaussianOneStepLogAccept(var, m, q0, eps, at);
      };
      EXPECT_EQ(log_accept(0, c.start) > log_target, c.up);
      for (int j = 1; j < r->trials; ++j) {
        const double eps = std::ldexp(c.start, c.up ? j - 1 : -(j - 1));
        const double w = log_accept(j, eps);
        const bool crossed = c.up ? !(w > log_target) : !(w < log_target);
        EXPECT_EQ(crossed, j == r->trials - 1) << "chain " << chain << " trial " << j;
      }
      // N(0, I_10): the one-step acceptance crosses 0.8 around eps ~ 1.
      EXPECT_GT(r->step_size, 0.2);
      EXPECT_LT(r->step_size, 5.0);
    }
  }
}

TEST(StepSizeHeuristicTest, UsesTheMetric) {
  // sd (0.01, 1, 100): with the identity metric the smallest scale limits
  // the step (to O(0.01)); with the inverse metric = the variances the
  // problem is whitened and the step is O(1).
  auto model = Make("ill_conditioned", {{"dimension", 3}, {"min_sd", 0.01}, {"max_sd", 100}});
  const ChainState state = StateAt(*model, {0.005, -0.5, 40.0});
  const std::vector<double> identity(3, 1.0), variances = {1e-4, 1.0, 1e4};
  for (uint64_t chain = 0; chain < 10; ++chain) {
    ChainRng a = MakeChainRng(3, chain), b = MakeChainRng(3, chain);
    absl::StatusOr<StepSizeHeuristicResult> unit = InitialStepSize(*model, state, identity, 1, a);
    absl::StatusOr<StepSizeHeuristicResult> whitened =
        InitialStepSize(*model, state, variances, 1, b);
    ASSERT_TRUE(unit.ok() && whitened.ok());
    // One random momentum per trial makes the result noisy (within a factor
    // of 8 here), but the two cases are far apart.
    EXPECT_LT(unit->step_size, 0.2);
    EXPECT_GT(whitened->step_size, 0.3);
  }
}

TEST(StepSizeHeuristicTest, FlatTargetIsAnErrorNotAHang) {
  // Acceptance is exactly 1 at every step size: doubling never stops.
  auto model = Make("never_uturn", {{"dimension", 3}});
  const ChainState state = StateAt(*model, {0.1, 0.2, 0.3});
  const ChainRng start = MakeChainRng(1, 2);
  ChainRng rng = start;
  absl::StatusOr<StepSizeHeuristicResult> r =
      InitialStepSize(*model, state, std::vector<double>(3, 1.0), 1.0, rng);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("improper or flat"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("never_uturn"), std::string::npos);
  EXPECT_EQ(rng.counter, start.counter);  // unchanged on error
}

TEST(StepSizeHeuristicTest, AcceptanceThatNeverRecoversIsAnError) {
  // energy_jump at the origin: every leapfrog leaves the origin and loses
  // 1001 of log density, so the acceptance is exp(-1001) at any step size
  // and halving reaches 0 (after about 1075 trials).
  auto model = Make("energy_jump", {{"dimension", 2}, {"height", 1001.0}});
  const ChainState state = StateAt(*model, {0.0, 0.0});
  const std::vector<double> m(2, 1.0);
  ChainRng rng = MakeChainRng(4, 4);
  absl::StatusOr<StepSizeHeuristicResult> r = InitialStepSize(*model, state, m, 1.0, rng);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("down to step size 0"), std::string::npos)
      << r.status().message();

  // The trial cap ends it sooner.
  StepSizeHeuristicOptions capped;
  capped.max_trials = 10;
  r = InitialStepSize(*model, state, m, 1.0, rng, capped);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("after 10 trials"), std::string::npos)
      << r.status().message();
}

TEST(StepSizeHeuristicTest, SkippedStartsAndBadArguments) {
  auto model = Make("iid_gaussian", {{"dimension", 2}});
  const ChainState state = StateAt(*model, {0.5, 0.5});
  const std::vector<double> m(2, 1.0);
  for (const double start : {2e7, std::numeric_limits<double>::infinity(), 0.0, kNaN}) {
    ChainRng rng = MakeChainRng(1, 1);
    absl::StatusOr<StepSizeHeuristicResult> r = InitialStepSize(*model, state, m, start, rng);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(SameBits(r->step_size, start));
    EXPECT_EQ(r->trials, 0);
    EXPECT_EQ(rng.counter, 0u);
  }
  ChainRng rng = MakeChainRng(1, 1);
  EXPECT_EQ(InitialStepSize(*model, state, m, -1.0, rng).status().code(),
            absl::StatusCode::kInvalidArgument);
  StepSizeHeuristicOptions bad;
  bad.target_accept = 1.0;
  EXPECT_EQ(InitialStepSize(*model, state, m, 1.0, rng, bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = {};
  bad.max_trials = 1;
  EXPECT_EQ(InitialStepSize(*model, state, m, 1.0, rng, bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// The warmup driver.

// The recipe of scalar_warmup.h, written out with the public pieces: the
// driver must match it bit for bit (this is what a batched driver repeats
// per chain).
WarmupResult RecipeWarmup(const Model& model, const SamplerConfig& config, ChainRng& rng,
                          ChainState& state, const WarmupOptions& options) {
  const int64_t d = model.dimension();
  ScalarNuts nuts(model, config);
  std::vector<double> m = nuts.config().inv_metric;
  double eps = config.step_size;
  DualAveraging da{options.dual_averaging()};
  da.Restart(DualAveragingMu(eps));
  WarmupResult out;
  absl::StatusOr<StepSizeHeuristicResult> h = InitialStepSize(model, state, m, eps, rng);
  EXPECT_TRUE(h.ok());
  eps = h->step_size;
  const WindowSchedule schedule = *WindowSchedule::Create(options.schedule());
  WelfordVariance welford(d);
  for (int64_t i = 0; i < options.num_warmup; ++i) {
    nuts.set_step_size(ClampStepSize(eps));
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    out.stats.push_back(stats);
    eps = da.Update(stats.accept_stat);
    if (schedule.InWindow(i)) welford.Add(state.q);
    if (schedule.IsWindowEnd(i)) {
      EXPECT_TRUE(RegularizedMetric(welford, m, m).ok());
      welford.Restart();
      nuts.set_inv_metric(m);
      h = InitialStepSize(model, state, m, eps, rng);
      EXPECT_TRUE(h.ok());
      eps = h->step_size;
      da.Restart(DualAveragingMu(eps));
      ++out.metric_updates;
    }
  }
  out.step_size = da.FinalStepSize(eps);
  out.inv_metric = m;
  return out;
}

TEST(ScalarWarmupTest, FollowsTheDocumentedRecipeBitForBit) {
  auto model = Make("ill_conditioned", {{"dimension", 8}, {"max_sd", 20}});
  SamplerConfig config;
  WarmupOptions options;
  options.num_warmup = 230;  // windows end at 99 and 179 (stretched)
  for (uint64_t chain = 0; chain < 3; ++chain) {
    ChainRng rng_a = MakeChainRng(2024, chain);
    ChainState state_a = InitState(*model, rng_a);
    ChainRng rng_b = rng_a;
    ChainState state_b = state_a;
    absl::StatusOr<WarmupResult> got = RunScalarWarmup(*model, config, rng_a, state_a, options);
    ASSERT_TRUE(got.ok()) << got.status();
    const WarmupResult want = RecipeWarmup(*model, config, rng_b, state_b, options);
    EXPECT_TRUE(SameBits(got->step_size, want.step_size));
    EXPECT_TRUE(SameBits(got->inv_metric, want.inv_metric));
    EXPECT_EQ(got->stats, want.stats);
    EXPECT_EQ(got->metric_updates, 2);
    EXPECT_EQ(want.metric_updates, 2);
    EXPECT_TRUE(SameBits(state_a.q, state_b.q));
    EXPECT_EQ(rng_a.counter, rng_b.counter);
    EXPECT_GT(got->heuristic_trials, 0);
    // stepsize__ records each transition's step: it changes during warmup.
    EXPECT_NE(got->stats.front().stepsize, got->stats.back().stepsize);
  }
}

TEST(ScalarWarmupTest, DeterministicPerChain) {
  auto model = Make("correlated_2d");
  WarmupOptions options;
  options.num_warmup = 300;
  options.keep_draws = true;
  auto run = [&](uint64_t chain) {
    ChainRng rng = MakeChainRng(99, chain);
    ChainState state = InitState(*model, rng);
    absl::StatusOr<WarmupResult> r = RunScalarWarmup(*model, SamplerConfig{}, rng, state, options);
    EXPECT_TRUE(r.ok()) << r.status();
    return *std::move(r);
  };
  const WarmupResult a = run(5), b = run(5), c = run(6);
  EXPECT_TRUE(SameBits(a.step_size, b.step_size));
  EXPECT_TRUE(SameBits(a.inv_metric, b.inv_metric));
  EXPECT_TRUE(SameBits(a.draws, b.draws));
  EXPECT_EQ(a.draws.size(), 300u * 2);
  EXPECT_FALSE(SameBits(a.step_size, c.step_size));
}

TEST(ScalarWarmupTest, WithoutAdaptationItIsPlainBurnIn) {
  auto model = Make("iid_gaussian", {{"dimension", 4}});
  SamplerConfig config;
  config.step_size = 0.7;
  config.inv_metric = {1.0, 2.0, 0.5, 1.5};
  WarmupOptions options;
  options.num_warmup = 40;
  options.adapt_step_size = false;
  options.adapt_metric = false;
  options.keep_draws = true;
  ChainRng rng = MakeChainRng(8, 1);
  ChainState state = InitState(*model, rng);
  ChainRng manual_rng = rng;
  ChainState manual_state = state;
  absl::StatusOr<WarmupResult> r = RunScalarWarmup(*model, config, rng, state, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->step_size, 0.7);
  EXPECT_EQ(r->inv_metric, config.inv_metric);
  EXPECT_EQ(r->metric_updates, 0);
  EXPECT_EQ(r->heuristic_trials, 0);
  ScalarNuts nuts(*model, config);
  for (int64_t i = 0; i < 40; ++i) {
    DrawStats stats;
    nuts.Transition(manual_state, manual_rng, &stats);
    EXPECT_EQ(stats, r->stats[i]);
    EXPECT_TRUE(SameBits(std::vector<double>(r->draws.begin() + 4 * i,
                                             r->draws.begin() + 4 * (i + 1)),
                         manual_state.q));
  }
  EXPECT_EQ(rng.counter, manual_rng.counter);

  // num_warmup 0 is allowed without adaptation: nothing happens.
  options.num_warmup = 0;
  const ChainRng before = rng;
  r = RunScalarWarmup(*model, config, rng, state, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->stats.empty());
  EXPECT_EQ(rng.counter, before.counter);
}

TEST(ScalarWarmupTest, FixedStepSizeOrFixedMetric) {
  auto model = Make("ill_conditioned", {{"dimension", 10}});
  const std::vector<double> truth = model->known_moments().variance;
  WarmupOptions options;
  options.num_warmup = 400;

  // Fixed step size, adapted metric: the step never changes, windows do.
  SamplerConfig config;
  config.step_size = 0.3;
  options.adapt_step_size = false;
  ChainRng rng = MakeChainRng(5, 0);
  ChainState state = InitState(*model, rng);
  absl::StatusOr<WarmupResult> r = RunScalarWarmup(*model, config, rng, state, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->step_size, 0.3);
  for (const DrawStats& s : r->stats) EXPECT_EQ(s.stepsize, 0.3);
  EXPECT_EQ(r->metric_updates, 3);  // 99, 149, 349
  EXPECT_EQ(r->heuristic_trials, 0);
  EXPECT_NE(r->inv_metric, std::vector<double>(10, 1.0));

  // Fixed (true) metric, adapted step size: the metric is kept.
  config = SamplerConfig{};
  config.inv_metric = truth;
  options.adapt_step_size = true;
  options.adapt_metric = false;
  rng = MakeChainRng(5, 1);
  state = InitState(*model, rng);
  r = RunScalarWarmup(*model, config, rng, state, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inv_metric, truth);
  EXPECT_EQ(r->metric_updates, 0);
  EXPECT_NE(r->step_size, 1.0);
  EXPECT_GT(r->heuristic_trials, 0);
}

TEST(ScalarWarmupTest, ShortWarmups) {
  auto model = Make("iid_gaussian", {{"dimension", 3}});
  WarmupOptions options;
  for (const auto& [num_warmup, updates] :
       {std::pair<int64_t, int64_t>{100, 1}, {20, 1}, {19, 0}, {1, 0}}) {
    options.num_warmup = num_warmup;
    ChainRng rng = MakeChainRng(12, 0);
    ChainState state = InitState(*model, rng);
    absl::StatusOr<WarmupResult> r = RunScalarWarmup(*model, SamplerConfig{}, rng, state, options);
    ASSERT_TRUE(r.ok()) << num_warmup << ": " << r.status();
    EXPECT_EQ(r->metric_updates, updates) << num_warmup;
    EXPECT_EQ(static_cast<int64_t>(r->stats.size()), num_warmup);
    EXPECT_TRUE(std::isfinite(r->step_size) && r->step_size > 0);
    if (updates == 0) {
      EXPECT_EQ(r->inv_metric, std::vector<double>(3, 1.0));
    }
  }
}

TEST(ScalarWarmupTest, RejectsBadArguments) {
  auto model = Make("iid_gaussian", {{"dimension", 2}});
  ChainRng rng = MakeChainRng(1, 0);
  ChainState state = InitState(*model, rng);
  auto expect_invalid = [&](const SamplerConfig& config, const WarmupOptions& options,
                            const ChainState& s, std::string_view needle) {
    ChainState copy = s;
    ChainRng r = rng;
    const absl::Status status = RunScalarWarmup(*model, config, r, copy, options).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << needle;
    EXPECT_NE(std::string(status.message()).find(needle), std::string::npos)
        << status.message();
  };
  WarmupOptions options;
  options.algorithm = Algorithm::kRwmh;
  expect_invalid({}, options, state, "rwmh");
  options = {};
  options.num_warmup = 0;
  expect_invalid({}, options, state, "num_warmup is 0");
  options = {};
  options.delta = 1.5;
  expect_invalid({}, options, state, "delta");
  options = {};
  options.window = -1;
  expect_invalid({}, options, state, "window");
  SamplerConfig bad_config;
  bad_config.step_size = -1;
  expect_invalid(bad_config, {}, state, "step_size");
  ChainState wrong = state;
  wrong.q.push_back(0.0);
  expect_invalid({}, {}, wrong, "coordinates");

  ChainState not_finite = state;
  not_finite.logp = kNaN;
  ChainRng r = rng;
  EXPECT_EQ(RunScalarWarmup(*model, {}, r, not_finite, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ScalarWarmupTest, HeuristicFailureNamesTheIteration) {
  // A flat target: the first heuristic (before iteration 0) fails.
  auto model = Make("never_uturn", {{"dimension", 2}});
  ChainRng rng = MakeChainRng(1, 0);
  ChainState state = StateAt(*model, {0.0, 0.0});
  WarmupOptions options;
  options.num_warmup = 50;
  const absl::Status s = RunScalarWarmup(*model, {}, rng, state, options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("warmup iteration 0"), std::string::npos) << s.message();
}

TEST(ScalarWarmupTest, StaticHmcAdaptsToo) {
  auto model = Make("iid_gaussian", {{"dimension", 10}});
  SamplerConfig config;
  config.num_leapfrog_steps = 8;
  WarmupOptions options;
  options.algorithm = Algorithm::kHmc;
  options.num_warmup = 500;
  double accept = 0, warmup_accept = 0;
  int64_t draws = 0;
  for (uint64_t chain = 0; chain < 4; ++chain) {
    ChainRng rng = MakeChainRng(31, chain);
    ChainState state = InitState(*model, rng);
    absl::StatusOr<WarmupResult> r = RunScalarWarmup(*model, config, rng, state, options);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->metric_updates, 4);  // 99, 149, 249, 449
    for (const DrawStats& s : r->stats) warmup_accept += s.accept_stat / (4 * 500);
    SamplerConfig tuned = config;
    tuned.step_size = r->step_size;
    tuned.inv_metric = r->inv_metric;
    ScalarHmc hmc(*model, tuned);
    for (int n = 0; n < 500; ++n) {
      DrawStats stats;
      hmc.Transition(state, rng, &stats);
      accept += stats.accept_stat;
      ++draws;
    }
  }
  accept /= static_cast<double>(draws);
  // Dual averaging holds the warmup's mean accept_stat at delta (0.785
  // observed); sampling with exp(x_bar), a smoothed and smaller step than
  // the fluctuating warmup steps, accepts more (0.90 observed; a single
  // Metropolis probability per transition makes the warmup steps noisier
  // than NUTS's, so the excess is larger than for NUTS).
  EXPECT_GT(warmup_accept, 0.75);
  EXPECT_LT(warmup_accept, 0.85);
  EXPECT_GT(accept, 0.8);
  EXPECT_LT(accept, 0.97);
}

// The acceptance test of the issue: on the ill-conditioned diagonal Gaussian
// (d = 100, sd log-spaced 1..100, variances 1..1e4) CmdStan's default
// warmup must find the variances and a step size that hits delta = 0.8.
//
// The adapted metric of ONE chain is the regularized variance of its last
// window, 500 autocorrelated draws: a relative error of about
// sqrt(2 / ESS) ~ 6-9% per coordinate (single-chain ratios to the truth
// span [0.71, 1.34] over 16 x 100 coordinates), too noisy for a 10% bound
// on 100 coordinates. So the 10% check is on the MEAN over kChains = 32
// chains' adapted metrics (sd ~ 1.6%; the regularization's bias is -1%, so
// the bound is > 5.5 sd away for every coordinate), and each single chain
// gets a looser bound (50%, > 5.5 sd).
//
// accept_stat__: dual averaging holds the warmup mean at delta; sampling
// with exp(x_bar) accepts more, by an amount that depends on the chain's
// adapted step size (per-chain sampling means 0.84-0.90 observed, pooled
// 0.865, the usual CmdStan overshoot). The [0.7, 0.9] check is on the
// pooled mean (chain-to-chain sd ~ 0.017 / sqrt(32)); single chains get
// [0.7, 0.95].
TEST(ScalarWarmupTest, IllConditionedGaussianMetricAndAcceptance) {
  auto model = Make("ill_conditioned");
  const int64_t d = model->dimension();
  ASSERT_EQ(d, 100);
  const std::vector<double> truth = model->known_moments().variance;
  ASSERT_NEAR(truth.front(), 1.0, 1e-9);
  ASSERT_NEAR(truth.back(), 1e4, 1e-6);
  constexpr int kChains = 32;
  constexpr int kDraws = 1000;
  std::vector<double> mean_ratio(d, 0.0);
  double pooled_accept = 0, pooled_warmup_accept = 0;
  for (uint64_t chain = 0; chain < kChains; ++chain) {
    ChainRng rng = MakeChainRng(20240601, chain);
    ChainState state = InitState(*model, rng);
    absl::StatusOr<WarmupResult> r = RunScalarWarmup(*model, SamplerConfig{}, rng, state, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->metric_updates, 5);
    for (const DrawStats& s : r->stats) pooled_warmup_accept += s.accept_stat / (kChains * 1000);
    for (int64_t i = 0; i < d; ++i) {
      const double ratio = r->inv_metric[i] / truth[i];
      EXPECT_GT(ratio, 0.5) << "chain " << chain << " coordinate " << i;
      EXPECT_LT(ratio, 1.5) << "chain " << chain << " coordinate " << i;
      mean_ratio[i] += ratio / kChains;
    }
    SamplerConfig tuned;
    tuned.step_size = r->step_size;
    tuned.inv_metric = r->inv_metric;
    ScalarNuts nuts(*model, tuned);
    double accept = 0;
    for (int n = 0; n < kDraws; ++n) {
      DrawStats stats;
      nuts.Transition(state, rng, &stats);
      accept += stats.accept_stat;
    }
    accept /= kDraws;
    EXPECT_GT(accept, 0.7) << "chain " << chain;
    EXPECT_LT(accept, 0.95) << "chain " << chain;
    pooled_accept += accept / kChains;
  }
  for (int64_t i = 0; i < d; ++i) {
    EXPECT_GT(mean_ratio[i], 0.9) << "coordinate " << i;
    EXPECT_LT(mean_ratio[i], 1.1) << "coordinate " << i;
  }
  EXPECT_GT(pooled_accept, 0.7);
  EXPECT_LT(pooled_accept, 0.9);
  EXPECT_GT(pooled_warmup_accept, 0.75);
  EXPECT_LT(pooled_warmup_accept, 0.85);
}

// ---------------------------------------------------------------------------
// The adapted-parameters file.

TEST(AdaptationFileTest, RoundTripIsExact) {
  const AdaptedParameters params{
      0.1, {1.0 / 3.0, 1e-300, 5e-324, 1.7976931348623157e308, 2.0, 0.1 + 0.2}};
  absl::StatusOr<std::string> text = AdaptedParametersToJson(params);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_NE(text->find("\"step_size\""), std::string::npos);
  EXPECT_NE(text->find("\"inv_metric\""), std::string::npos);
  absl::StatusOr<AdaptedParameters> back = AdaptedParametersFromJson(*text, 6);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(SameBits(back->step_size, params.step_size));
  EXPECT_TRUE(SameBits(back->inv_metric, params.inv_metric));

  const std::string path = ::testing::TempDir() + "/scalar_warmup_test_adaptation.json";
  ASSERT_TRUE(SaveAdaptation(path, params).ok());
  absl::StatusOr<AdaptedParameters> loaded = LoadAdaptation(path, 6);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(SameBits(loaded->step_size, params.step_size));
  EXPECT_TRUE(SameBits(loaded->inv_metric, params.inv_metric));
  EXPECT_TRUE(LoadAdaptation(path).ok());  // any dimension
}

TEST(AdaptationFileTest, WarmupResultRoundTrip) {
  auto model = Make("iid_gaussian", {{"dimension", 3}});
  WarmupOptions options;
  options.num_warmup = 150;
  ChainRng rng = MakeChainRng(3, 3);
  ChainState state = InitState(*model, rng);
  absl::StatusOr<WarmupResult> r = RunScalarWarmup(*model, SamplerConfig{}, rng, state, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string path = ::testing::TempDir() + "/scalar_warmup_test_result.json";
  ASSERT_TRUE(SaveAdaptation(path, {r->step_size, r->inv_metric}).ok());
  absl::StatusOr<AdaptedParameters> loaded = LoadAdaptation(path, model->dimension());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(SameBits(loaded->step_size, r->step_size));
  EXPECT_TRUE(SameBits(loaded->inv_metric, r->inv_metric));
}

TEST(AdaptationFileTest, AcceptsIntegers) {
  absl::StatusOr<AdaptedParameters> p =
      AdaptedParametersFromJson(R"({"step_size": 1, "inv_metric": [1, 2.5, 3]})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->step_size, 1.0);
  EXPECT_EQ(p->inv_metric, (std::vector<double>{1.0, 2.5, 3.0}));
}

TEST(AdaptationFileTest, MalformedFilesAreClearErrors) {
  const struct {
    const char* text;
    const char* needle;
  } cases[] = {
      {"{", "not valid JSON: the text ends (after 1 bytes)"},
      {"", "not valid JSON: the text ends (after 0 bytes)"},
      {"{]", "not valid JSON at byte 2"},
      // The second step size would silently win.
      {R"({"step_size": 1, "inv_metric": [1], "step_size": 2})",
       "not valid JSON: the key \"step_size\" appears twice"},
      {"[1, 2]", "not a JSON object"},
      {R"({"inv_metric": [1]})", "\"step_size\" is missing"},
      {R"({"step_size": 1})", "\"inv_metric\" is missing"},
      {R"({"step_size": 1, "inv_metric": [1], "stepsize": 2})", "unknown key \"stepsize\""},
      {R"({"step_size": "1", "inv_metric": [1]})", "step_size is string, not a number"},
      {R"({"step_size": -1, "inv_metric": [1]})", "step_size = -1 must be finite and > 0"},
      {R"({"step_size": 0, "inv_metric": [1]})", "step_size = 0 must be finite and > 0"},
      // nlohmann rejects numbers out of the double range while parsing.
      {R"({"step_size": 1e400, "inv_metric": [1]})", "not valid JSON"},
      {R"({"step_size": 1, "inv_metric": {}})", "inv_metric is object, not an array"},
      {R"({"step_size": 1, "inv_metric": []})", "inv_metric is empty"},
      {R"({"step_size": 1, "inv_metric": [1, "x"]})", "inv_metric[1] is string"},
      {R"({"step_size": 1, "inv_metric": [1, [2]]})", "inv_metric[1] is array"},
      {R"({"step_size": 1, "inv_metric": [1, null]})", "inv_metric[1] is null"},
      {R"({"step_size": 1, "inv_metric": [1, 0]})", "inv_metric[1] = 0 must be"},
      {R"({"step_size": 1, "inv_metric": [1, -2]})", "inv_metric[1] = -2 must be"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<AdaptedParameters> p = AdaptedParametersFromJson(c.text, -1, "metric.json");
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(p.status().message().find(c.needle), std::string::npos)
        << c.text << " -> " << p.status().message();
    EXPECT_EQ(p.status().message().rfind("metric.json: ", 0), 0u) << p.status().message();
  }
  absl::StatusOr<AdaptedParameters> p =
      AdaptedParametersFromJson(R"({"step_size": 1, "inv_metric": [1, 2]})", 3);
  EXPECT_NE(p.status().message().find("has 2 entries but the model has dimension 3"),
            std::string::npos)
      << p.status().message();
}

TEST(AdaptationFileTest, FileAndWriterErrors) {
  absl::StatusOr<AdaptedParameters> p = LoadAdaptation("/nonexistent/adaptation.json");
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(p.status().message().find("/nonexistent/adaptation.json"), std::string::npos);
  EXPECT_EQ(SaveAdaptation("/nonexistent/dir/out.json", {1.0, {1.0}}).code(),
            absl::StatusCode::kFailedPrecondition);

  const std::string path = ::testing::TempDir() + "/scalar_warmup_test_bad.json";
  ASSERT_TRUE(SaveAdaptation(path, {1.0, {1.0}}).ok());
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"step_size\": 1, \"inv_metric\": [1, 2", f);
    std::fclose(f);
  }
  p = LoadAdaptation(path);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message().rfind(path + ": not valid JSON", 0), 0u)
      << p.status().message();

  for (const AdaptedParameters& bad :
       {AdaptedParameters{kNaN, {1.0}}, AdaptedParameters{0.0, {1.0}},
        AdaptedParameters{1.0, {}}, AdaptedParameters{1.0, {1.0, 0.0}},
        AdaptedParameters{1.0, {std::numeric_limits<double>::infinity()}}}) {
    EXPECT_EQ(AdaptedParametersToJson(bad).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace autobatch::mcmc
