// Statistical tests of the scalar samplers on known targets: long-run moments
// within Bonferroni-corrected MCSE bounds, diagnostics that detect failure
// (bimodal R-hat, funnel divergences) and one-step conservation (DKW bound).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "samples/mcmc/chain_rng.h"
#include "samples/mcmc/diagnostics.h"
#include "samples/mcmc/draw_stats.h"
#include "samples/mcmc/initialize.h"
#include "samples/mcmc/model.h"
#include "samples/mcmc/sampler_config.h"
#include "samples/mcmc/scalar_hmc.h"
#include "samples/mcmc/scalar_nuts.h"
#include "samples/mcmc/scalar_rwmh.h"
#include "samples/mcmc/scalar_warmup.h"
#include "samples/mcmc/targets/beta_bernoulli.h"
#include "samples/mcmc/targets/registry.h"
#include "samples/mcmc/targets/target.h"

namespace autobatch::mcmc {
namespace {

// The moment suite makes 6 comparisons (correlated_2d: 2 coordinates x
// {mean, second central moment}; Beta-Bernoulli: theta's mean and variance).
// z = 4 gives a two-sided family-wise false-failure rate of about
// 6 * 6.3e-5 = 3.8e-4 for correct samplers.
constexpr double kZ = 4.0;
// Each moment comparison needs at least this bulk-ESS, so the MCSE bound is
// tight enough for a biased sampler to fail it.
constexpr double kMinEss = 400;

std::unique_ptr<Target> Make(const std::string& name, const nlohmann::json& params) {
  auto target = MakeTarget(name, params);
  EXPECT_TRUE(target.ok()) << target.status();
  return target.ok() ? std::move(*target) : nullptr;
}

// Draws of each unconstrained coordinate: coords[i] is N x M (draw x chain).
struct NutsRun {
  std::vector<Eigen::MatrixXd> coords;
  std::vector<DrawStats> stats;  // all chains, chain-major
};

// Each chain: Stan-style random init from its stream, CmdStan warmup (NUTS,
// step size and diagonal metric adapted), then `num_draws` NUTS transitions
// with the adapted parameters, continuing the same stream.
NutsRun RunNutsWithWarmup(const Model& model, uint64_t seed, int chains, int64_t num_warmup,
                      int64_t num_draws) {
  const int64_t d = model.dimension();
  NutsRun run;
  run.coords.assign(d, Eigen::MatrixXd(num_draws, chains));
  for (int c = 0; c < chains; ++c) {
    ChainRng rng = MakeChainRng(seed, c);
    auto init = InitializeChain(model, rng.key, &rng.counter);
    EXPECT_TRUE(init.ok()) << init.status();
    if (!init.ok()) return run;
    auto state = MakeChainState(model, init->q);
    EXPECT_TRUE(state.ok()) << state.status();
    if (!state.ok()) return run;
    SamplerConfig config;
    WarmupOptions warmup;
    warmup.num_warmup = num_warmup;
    auto adapted = RunScalarWarmup(model, config, rng, *state, warmup);
    EXPECT_TRUE(adapted.ok()) << adapted.status();
    if (!adapted.ok()) return run;
    config.step_size = adapted->step_size;
    config.inv_metric = adapted->inv_metric;
    ScalarNuts nuts(model, config);
    for (int64_t n = 0; n < num_draws; ++n) {
      DrawStats stats;
      nuts.Transition(*state, rng, &stats);
      run.stats.push_back(stats);
      for (int64_t i = 0; i < d; ++i) run.coords[i](n, c) = state->q[i];
    }
  }
  return run;
}

// Checks |mean(draws) - truth| <= kZ * MCSE with bulk-ESS >= kMinEss and
// split R-hat < 1.05.
void ExpectMeanWithinMcse(const Eigen::MatrixXd& draws, double truth,
                          const std::string& what) {
  const double mean = draws.mean();
  const double mcse = McseMean(draws);
  const double ess = EssBulk(draws);
  const double rhat = SplitRhat(draws);
  SCOPED_TRACE(what + ": mean " + std::to_string(mean) + " truth " + std::to_string(truth) +
               " mcse " + std::to_string(mcse) + " ess_bulk " + std::to_string(ess) +
               " rhat " + std::to_string(rhat));
  std::printf("%s: mean %.5g truth %.5g |diff|/mcse %.2f ess_bulk %.0f rhat %.4f\n",
              what.c_str(), mean, truth, std::abs(mean - truth) / mcse, ess, rhat);
  ASSERT_TRUE(std::isfinite(mcse));
  EXPECT_GE(ess, kMinEss);
  EXPECT_LT(rhat, 1.05);
  EXPECT_LE(std::abs(mean - truth), kZ * mcse);
}

// Long-run means and second central moments (E[(x - mu)^2] = Var, with the
// true mu) against the target's known moments.
void CheckMoments(const std::string& name, const nlohmann::json& params, uint64_t seed) {
  auto target = Make(name, params);
  ASSERT_NE(target, nullptr);
  const KnownMoments known = target->known_moments();
  const NutsRun run = RunNutsWithWarmup(*target, seed, /*chains=*/4, /*num_warmup=*/1000,
                                    /*num_draws=*/2000);
  ASSERT_EQ(run.coords.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(std::isfinite(known.mean[i]) && std::isfinite(known.variance[i]));
    ExpectMeanWithinMcse(run.coords[i], known.mean[i],
                         name + " mean x" + std::to_string(i));
    const Eigen::MatrixXd sq = (run.coords[i].array() - known.mean[i]).square().matrix();
    ExpectMeanWithinMcse(sq, known.variance[i], name + " variance x" + std::to_string(i));
  }
  int64_t divergent = 0;
  for (const DrawStats& s : run.stats) divergent += s.divergent ? 1 : 0;
  EXPECT_EQ(divergent, 0) << name;
}

TEST(StatisticalTest, Correlated2dMeansAndVariances) {
  CheckMoments("correlated_2d", nlohmann::json::object(), /*seed=*/20261122);
}

TEST(StatisticalTest, BetaBernoulliPosteriorMeanOfTheta) {
  auto made = BetaBernoulli::Create({});
  ASSERT_TRUE(made.ok()) << made.status();
  const BetaBernoulli& model = **made;
  const NutsRun run = RunNutsWithWarmup(model, /*seed=*/424242, /*chains=*/4,
                                    /*num_warmup=*/1000, /*num_draws=*/2000);
  ASSERT_EQ(run.coords.size(), 1u);
  const Eigen::MatrixXd& u = run.coords[0];
  Eigen::MatrixXd theta(u.rows(), u.cols());
  for (Eigen::Index c = 0; c < u.cols(); ++c) {
    for (Eigen::Index n = 0; n < u.rows(); ++n) {
      const double q = u(n, c);
      double x = 0;
      Constrain(model, std::span<const double>(&q, 1), std::span<double>(&x, 1));
      theta(n, c) = x;
    }
  }
  // Default data: Beta(1, 1) prior, 2 successes in 10 -> Beta(3, 9).
  EXPECT_DOUBLE_EQ(model.posterior_mean(), 0.25);
  ExpectMeanWithinMcse(theta, model.posterior_mean(), "beta_bernoulli theta mean");
  const Eigen::MatrixXd sq = (theta.array() - model.posterior_mean()).square().matrix();
  ExpectMeanWithinMcse(sq, model.posterior_variance(), "beta_bernoulli theta variance");
}

// ---------------------------------------------------------------------------
// Diagnostics detect failure.

TEST(StatisticalTest, BimodalChainsInDifferentModesGiveLargeRhat) {
  auto target = Make("bimodal", nlohmann::json::object());
  ASSERT_NE(target, nullptr);
  const double m = 4;  // default offset
  SamplerConfig config;
  config.step_size = 0.5;
  ScalarRunOptions options;
  options.algorithm = Algorithm::kNuts;
  options.inits = {{-m, -m}, {-m, -m}, {m, m}, {m, m}};
  const std::vector<uint64_t> ids = {0, 1, 2, 3};
  const int64_t n = 200;
  auto result = RunScalarChains(*target, config, /*seed=*/99, ids, n, options);
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 2; ++i) {
    Eigen::MatrixXd draws(n, 4);
    for (int c = 0; c < 4; ++c) {
      for (int64_t k = 0; k < n; ++k) draws(k, c) = (*result)[c].draws[k * 2 + i];
    }
    // Each chain stays in its own mode (the modes are ~11 sd apart) ...
    for (int c = 0; c < 4; ++c) {
      const double chain_mean = draws.col(c).mean();
      EXPECT_LT(std::abs(chain_mean - (c < 2 ? -m : m)), 1.0) << "chain " << c;
    }
    // ... and R-hat flags it.
    const double rhat = SplitRhat(draws);
    std::printf("bimodal x%d: split rhat %.3f\n", i, rhat);
    EXPECT_GT(rhat, 1.1) << "x" << i << " rhat " << rhat;
  }
}

int64_t CountDivergent(const std::vector<ScalarChainResult>& result) {
  int64_t divergent = 0;
  for (const ScalarChainResult& chain : result) {
    for (const DrawStats& s : chain.stats) divergent += s.divergent ? 1 : 0;
  }
  return divergent;
}

TEST(StatisticalTest, FunnelWithLargeFixedStepReportsDivergences) {
  auto funnel = Make("funnel", nlohmann::json::object());
  ASSERT_NE(funnel, nullptr);
  SamplerConfig config;
  config.step_size = 1.0;  // fixed, no adaptation: far too large in the neck
  const std::vector<uint64_t> ids = {0, 1, 2, 3};
  const int64_t n = 200;
  auto result = RunScalarChains(*funnel, config, /*seed=*/7, ids, n);
  ASSERT_TRUE(result.ok()) << result.status();
  const int64_t divergent = CountDivergent(*result);
  std::printf("funnel: %ld divergent of %ld transitions\n", static_cast<long>(divergent),
              static_cast<long>(4 * n));
  EXPECT_GT(divergent, 0);
  // A divergent transition stops the tree early: fewer leapfrogs than a full
  // tree of its depth + 1.
  for (const ScalarChainResult& chain : *result) {
    ASSERT_EQ(chain.stats.size(), static_cast<size_t>(n));
    for (const DrawStats& s : chain.stats) {
      if (s.divergent) {
        EXPECT_LT(s.n_leapfrog, (int64_t{1} << (s.treedepth + 1)));
      }
    }
  }

  // Control: the same sampler on a standard normal with a sane step size
  // reports none, so the count above is not always positive.
  auto gaussian = Make("iid_gaussian", {{"dimension", 10}});
  ASSERT_NE(gaussian, nullptr);
  config.step_size = 0.5;
  auto control = RunScalarChains(*gaussian, config, /*seed=*/7, ids, n);
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(CountDivergent(*control), 0);
}

// ---------------------------------------------------------------------------
// One-step conservation: chains started at exact draws stay exact after one
// transition of a correct sampler.

constexpr int kConservationChains = 10000;

double StdNormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// sup_x |F_n(x) - Phi(x)| of the sample.
double KsDistanceToStdNormal(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double sup = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const double f = StdNormalCdf(x[k]);
    sup = std::max({sup, std::abs((k + 1) / n - f), std::abs(f - k / n)});
  }
  return sup;
}

// DKW: P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2) = alpha.
double DkwBound(int64_t n, double alpha) {
  return std::sqrt(std::log(2.0 / alpha) / (2.0 * static_cast<double>(n)));
}

void Identity(const std::vector<double>& q, double* z) {
  z[0] = q[0];
  z[1] = q[1];
}

struct OneStep {
  std::vector<std::vector<double>> start;  // chain -> q
  std::vector<std::vector<double>> end;
  std::vector<DrawStats> stats;
};

// Starts kConservationChains chains at exact draws of iid_gaussian d = 2
// (normals from a stream independent of the samplers') and applies one
// `transition` per chain.
template <typename Sampler>
OneStep RunOneStep(const Target& target, Sampler& sampler, uint64_t seed) {
  OneStep out;
  const int64_t d = target.dimension();
  std::vector<double> normals(target.exact_draw_normals());
  for (int c = 0; c < kConservationChains; ++c) {
    ChainRng init_rng = MakeChainRng(seed + 1000003, c);
    NextNormals(init_rng, normals);
    std::vector<double> q(d);
    target.ExactDraw(normals, q);
    auto state = MakeChainState(target, q);
    EXPECT_TRUE(state.ok()) << state.status();
    if (!state.ok()) return out;
    ChainRng rng = MakeChainRng(seed, c);
    DrawStats stats;
    sampler.Transition(*state, rng, &stats);
    out.start.push_back(q);
    out.end.push_back(state->q);
    out.stats.push_back(stats);
  }
  return out;
}

// Every coordinate and the projection (x0 + x1) / sqrt(2) of the end points
// pass the DKW bound against N(0, 1) at alpha = 1e-4; returns the fraction
// of chains that moved.
// `standardize` maps an end point to two values that are iid N(0, 1) under
// the target (identity for iid_gaussian).
template <typename Standardize>
double CheckConservation(const OneStep& run, const std::string& what,
                         Standardize standardize) {
  const double bound = DkwBound(kConservationChains, 1e-4);
  std::vector<double> x0, x1, proj;
  int64_t moved = 0;
  for (size_t c = 0; c < run.end.size(); ++c) {
    double z[2];
    standardize(run.end[c], z);
    x0.push_back(z[0]);
    x1.push_back(z[1]);
    proj.push_back((z[0] + z[1]) / std::sqrt(2.0));
    moved += run.end[c] != run.start[c] ? 1 : 0;
  }
  EXPECT_EQ(run.end.size(), static_cast<size_t>(kConservationChains));
  const double ks0 = KsDistanceToStdNormal(x0);
  const double ks1 = KsDistanceToStdNormal(x1);
  const double ksp = KsDistanceToStdNormal(proj);
  EXPECT_LE(ks0, bound) << what << " x0";
  EXPECT_LE(ks1, bound) << what << " x1";
  EXPECT_LE(ksp, bound) << what << " (x0 + x1) / sqrt(2)";
  const double fraction = static_cast<double>(moved) / kConservationChains;
  std::printf("%s: KS x0 %.4f x1 %.4f proj %.4f (DKW bound %.4f), moved %.3f\n",
              what.c_str(), ks0, ks1, ksp, bound, fraction);
  return fraction;
}

TEST(StatisticalTest, OneStepConservationHmc) {
  auto target = Make("iid_gaussian", {{"dimension", 2}});
  ASSERT_NE(target, nullptr);
  SamplerConfig config;
  config.step_size = 0.9;
  config.num_leapfrog_steps = 3;
  config.step_size_jitter = 0.5;
  ScalarHmc hmc(*target, config);
  const OneStep run = RunOneStep(*target, hmc, /*seed=*/31);
  EXPECT_GT(CheckConservation(run, "hmc", Identity), 0.5);
}

TEST(StatisticalTest, OneStepConservationRwmh) {
  auto target = Make("iid_gaussian", {{"dimension", 2}});
  ASSERT_NE(target, nullptr);
  SamplerConfig config;
  config.step_size = 1.5;
  ScalarRwmh rwmh(*target, config);
  const OneStep run = RunOneStep(*target, rwmh, /*seed=*/32);
  EXPECT_GT(CheckConservation(run, "rwmh", Identity), 0.3);
}

TEST(StatisticalTest, OneStepConservationNuts) {
  auto target = Make("iid_gaussian", {{"dimension", 2}});
  ASSERT_NE(target, nullptr);
  SamplerConfig config;
  config.step_size = 0.7;
  ScalarNuts nuts(*target, config);
  const OneStep run = RunOneStep(*target, nuts, /*seed=*/33);
  EXPECT_GT(CheckConservation(run, "nuts", Identity), 0.5);
  std::set<int64_t> lengths;
  for (const DrawStats& s : run.stats) lengths.insert(s.n_leapfrog);
  EXPECT_GE(lengths.size(), 3u);
}

// The banana with the step size and metric NUTS adapts to it (about 0.17 and
// (70, 10)): the sampler itself preserves the target even where the long run
// mixes slowly. x0 / 10 and x1 - b (x0^2 - 100) are iid N(0, 1).
TEST(StatisticalTest, OneStepConservationNutsBanana) {
  auto target = Make("banana", nlohmann::json::object());
  ASSERT_NE(target, nullptr);
  SamplerConfig config;
  config.step_size = 0.17;
  config.inv_metric = {70, 10};
  ScalarNuts nuts(*target, config);
  const OneStep run = RunOneStep(*target, nuts, /*seed=*/34);
  const double b = 0.03;
  auto standardize = [b](const std::vector<double>& q, double* z) {
    z[0] = q[0] / 10;
    z[1] = q[1] - b * (q[0] * q[0] - 100);
  };
  EXPECT_GT(CheckConservation(run, "nuts banana", standardize), 0.5);
  int64_t divergent = 0;
  for (const DrawStats& s : run.stats) divergent += s.divergent ? 1 : 0;
  std::printf("nuts banana: %ld divergent of %d\n", static_cast<long>(divergent),
              kConservationChains);
}

}  // namespace
}  // namespace autobatch::mcmc
