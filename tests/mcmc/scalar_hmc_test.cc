// Tests of ScalarHmc: the documented transition replayed step by step, draw
// counts, divergence and NaN handling, long-run moments and determinism.
#include "mcmc/scalar/scalar_hmc.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mcmc/output/diagnostics.h"
#include "mcmc/scalar/scalar_nuts.h"

namespace autobatch::mcmc {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

class LocalModel : public Model {
 public:
  explicit LocalModel(int64_t d) : d_(d) {}
  std::vector<ParameterSpec> parameters() const override {
    return {ParameterSpec{"x", {d_}, Transform::kIdentity}};
  }
  mutable int64_t evaluations = 0;

 protected:
  int64_t d_;
};

// N(0, diag(sd^2)) with sd_i = 1 + i / 4.
class DiagNormal final : public LocalModel {
 public:
  using LocalModel::LocalModel;
  std::string name() const override { return "diag_normal"; }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    ++evaluations;
    double lp = 0;
    for (int64_t i = 0; i < d_; ++i) {
      const double prec = 1.0 / ((1 + i / 4.0) * (1 + i / 4.0));
      lp -= 0.5 * prec * q[i] * q[i];
      grad[i] = -prec * q[i];
    }
    return lp;
  }
};

class StdNormal final : public LocalModel {
 public:
  using LocalModel::LocalModel;
  std::string name() const override { return "std_normal"; }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    ++evaluations;
    double lp = 0;
    for (int64_t i = 0; i < d_; ++i) {
      lp -= 0.5 * q[i] * q[i];
      grad[i] = -q[i];
    }
    return lp;
  }
};

// Gradient 0; log p = 0 at the origin, -height elsewhere (NaN allowed).
class EnergyStep final : public LocalModel {
 public:
  EnergyStep(int64_t d, double height) : LocalModel(d), height_(height) {}
  std::string name() const override { return "energy_step"; }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    ++evaluations;
    bool origin = true;
    for (int64_t i = 0; i < d_; ++i) {
      grad[i] = 0;
      origin = origin && q[i] == 0;
    }
    return origin ? 0.0 : -height_;
  }

 private:
  double height_;
};

ChainState StateAt(const Model& model, std::vector<double> q) {
  absl::StatusOr<ChainState> state = MakeChainState(model, q);
  EXPECT_TRUE(state.ok()) << state.status();
  return *std::move(state);
}

TEST(ScalarHmcTest, TransitionIsTheDocumentedSequence) {
  DiagNormal model(5);
  SamplerConfig config;
  config.step_size = 0.35;
  config.step_size_jitter = 0.25;
  config.num_leapfrog_steps = 7;
  config.inv_metric = {1.0, 1.5, 2.0, 2.5, 3.0};
  ScalarHmc hmc(model, config);
  ChainRng rng = MakeChainRng(19, 4);
  ChainState state = StateAt(model, {0.5, -0.4, 0.3, -0.2, 0.1});
  int accepted = 0;
  for (int t = 0; t < 60; ++t) {
    // Replay with the documented steps on copies.
    ChainRng replay_rng = rng;
    const double u_jitter = NextUniform(replay_rng);
    const double eps = config.step_size * (1.0 + config.step_size_jitter * (2.0 * u_jitter - 1.0));
    std::vector<double> z(5), p(5), q = state.q, grad = state.grad, sharp(5);
    NextNormals(replay_rng, z);
    for (int i = 0; i < 5; ++i) p[i] = z[i] / std::sqrt(config.inv_metric[i]);
    double logp = state.logp;
    for (int i = 0; i < 5; ++i) sharp[i] = config.inv_metric[i] * p[i];
    const double h0 = 0.5 * SamplerDot(p.data(), sharp.data(), 5) - logp;
    for (int s = 0; s < 7; ++s) {
      const double half = 0.5 * eps;
      for (int i = 0; i < 5; ++i) {
        p[i] = p[i] + half * grad[i];
        q[i] = q[i] + eps * (config.inv_metric[i] * p[i]);
      }
      logp = model.LogDensityGradient(q, grad);
      for (int i = 0; i < 5; ++i) p[i] = p[i] + half * grad[i];
    }
    for (int i = 0; i < 5; ++i) sharp[i] = config.inv_metric[i] * p[i];
    const double h = 0.5 * SamplerDot(p.data(), sharp.data(), 5) - logp;
    const bool accept = NextUniform(replay_rng) < SamplerExp(h0 - h);

    const ChainState before = state;
    DrawStats stats;
    model.evaluations = 0;
    hmc.Transition(state, rng, &stats);
    EXPECT_EQ(model.evaluations, 7);
    EXPECT_EQ(rng.counter, replay_rng.counter);
    EXPECT_EQ(rng.counter, 3u * (t + 1));  // jitter, momentum, accept
    EXPECT_TRUE(SameBits(stats.stepsize, eps));
    EXPECT_EQ(stats.n_leapfrog, 7);
    EXPECT_EQ(stats.treedepth, 0);
    EXPECT_TRUE(SameBits(stats.accept_stat, SamplerMetropolisProb(h0 - h)));
    const std::vector<double>& expected_q = accept ? q : before.q;
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(SameBits(state.q[i], expected_q[i])) << t;
    EXPECT_TRUE(SameBits(state.logp, accept ? logp : before.logp));
    EXPECT_TRUE(SameBits(stats.energy, accept ? h : h0));
    EXPECT_TRUE(SameBits(stats.lp, state.logp));
    accepted += accept;
  }
  EXPECT_GT(accepted, 30);
  EXPECT_LT(accepted, 60);  // some rejections, so both branches ran
}

TEST(ScalarHmcTest, DrawCountsAndDivergence) {
  for (double jitter : {0.0, 0.5}) {
    for (double height : {999.0, 1001.0}) {
      EnergyStep model(2, height);
      SamplerConfig config;
      config.num_leapfrog_steps = 3;
      config.step_size_jitter = jitter;
      ScalarHmc hmc(model, config);
      ChainRng rng = MakeChainRng(1, 1);
      ChainState state = StateAt(model, {0.0, 0.0});
      DrawStats stats;
      hmc.Transition(state, rng, &stats);
      EXPECT_EQ(rng.counter, jitter > 0 ? 3u : 2u);
      EXPECT_EQ(stats.divergent, height > 1000);
      EXPECT_EQ(stats.accept_stat, 0.0);
      EXPECT_EQ(state.q, (std::vector<double>{0.0, 0.0}));
      EXPECT_EQ(stats.lp, 0.0);
      if (jitter == 0) {
        EXPECT_EQ(stats.stepsize, 1.0);
      }
    }
  }
  for (double height : {kNaN, kInf}) {
    EnergyStep model(2, height);
    SamplerConfig config;
    config.num_leapfrog_steps = 4;
    ScalarHmc hmc(model, config);
    ChainRng rng = MakeChainRng(1, 2);
    ChainState state = StateAt(model, {0.0, 0.0});
    DrawStats stats;
    hmc.Transition(state, rng, &stats);
    EXPECT_TRUE(stats.divergent);
    EXPECT_EQ(stats.accept_stat, 0.0);
    EXPECT_EQ(state.q, (std::vector<double>{0.0, 0.0}));
    EXPECT_TRUE(std::isfinite(stats.energy));
  }
}

std::vector<uint64_t> Iota(uint64_t n) {
  std::vector<uint64_t> ids(n);
  for (uint64_t i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

TEST(ScalarHmcTest, StandardNormalMoments) {
  for (int64_t d : {1, 10}) {
    StdNormal model(d);
    SamplerConfig config;
    config.step_size = 0.3;
    config.step_size_jitter = 0.2;
    config.num_leapfrog_steps = 6;
    ScalarRunOptions options;
    options.algorithm = Algorithm::kHmc;
    absl::StatusOr<std::vector<ScalarChainResult>> chains =
        RunScalarChains(model, config, /*seed=*/99, Iota(4), /*num_draws=*/2500, options);
    ASSERT_TRUE(chains.ok()) << chains.status();
    const Eigen::Index n = 2500, m = 4;
    const double z = InverseNormalCdf(1 - 1e-3 / (4.0 * static_cast<double>(d)));
    for (int64_t j = 0; j < d; ++j) {
      Eigen::MatrixXd x(n, m), x2(n, m);
      for (Eigen::Index c = 0; c < m; ++c) {
        for (Eigen::Index i = 0; i < n; ++i) {
          x(i, c) = (*chains)[c].draws[i * d + j];
          x2(i, c) = x(i, c) * x(i, c);
        }
      }
      EXPECT_GT(EssBulk(x), 0.2 * n * m) << j;
      EXPECT_NEAR(x.mean(), 0.0, z * McseMean(x)) << j;
      EXPECT_NEAR(x2.mean(), 1.0, z * McseMean(x2)) << j;
    }
  }
}

TEST(ScalarHmcTest, ChainsAreIndependentOfTheChainSet) {
  DiagNormal model(4);
  SamplerConfig config;
  config.step_size = 0.4;
  config.step_size_jitter = 0.3;
  config.num_leapfrog_steps = 5;
  ScalarRunOptions options;
  options.algorithm = Algorithm::kHmc;
  const std::vector<uint64_t> five = {5};
  auto together = RunScalarChains(model, config, 7, Iota(10), 40, options);
  auto alone = RunScalarChains(model, config, 7, five, 40, options);
  ASSERT_TRUE(together.ok() && alone.ok());
  EXPECT_EQ((*together)[5].draws, (*alone)[0].draws);
  EXPECT_EQ((*together)[5].stats, (*alone)[0].stats);
  EXPECT_NE((*together)[4].draws, (*together)[5].draws);
}

}  // namespace
}  // namespace autobatch::mcmc
