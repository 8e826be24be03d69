// Tests of ScalarRwmh: the documented transition replayed, NaN handling,
// long-run moments and determinism.
#include "mcmc/scalar/scalar_rwmh.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mcmc/output/diagnostics.h"
#include "mcmc/scalar/scalar_nuts.h"

namespace autobatch::mcmc {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

class StdNormal final : public Model {
 public:
  explicit StdNormal(int64_t d) : d_(d) {}
  std::string name() const override { return "std_normal"; }
  std::vector<ParameterSpec> parameters() const override {
    return {ParameterSpec{"x", {d_}, Transform::kIdentity}};
  }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    double lp = 0;
    for (int64_t i = 0; i < d_; ++i) {
      lp -= 0.5 * q[i] * q[i];
      grad[i] = -q[i];
    }
    return lp;
  }

 private:
  int64_t d_;
};

// Uniform on the box [-1, 1]^d: log p = 0 inside, NaN outside.
class NanBox final : public Model {
 public:
  explicit NanBox(int64_t d) : d_(d) {}
  std::string name() const override { return "nan_box"; }
  std::vector<ParameterSpec> parameters() const override {
    return {ParameterSpec{"x", {d_}, Transform::kIdentity}};
  }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    bool inside = true;
    for (int64_t i = 0; i < d_; ++i) {
      grad[i] = 0;
      inside = inside && std::abs(q[i]) <= 1;
    }
    return inside ? 0.0 : kNaN;
  }

 private:
  int64_t d_;
};

ChainState StateAt(const Model& model, std::vector<double> q) {
  absl::StatusOr<ChainState> state = MakeChainState(model, q);
  EXPECT_TRUE(state.ok()) << state.status();
  return *std::move(state);
}

TEST(ScalarRwmhTest, TransitionIsTheDocumentedSequence) {
  StdNormal model(3);
  SamplerConfig config;
  config.step_size = 0.9;
  config.inv_metric = {1.0, 0.25, 4.0};
  ScalarRwmh rwmh(model, config);
  ChainRng rng = MakeChainRng(4, 4);
  ChainState state = StateAt(model, {0.1, 0.2, 0.3});
  int accepted = 0;
  for (int t = 0; t < 200; ++t) {
    ChainRng replay = rng;
    std::vector<double> z(3), q(3), grad(3);
    NextNormals(replay, z);
    for (int i = 0; i < 3; ++i) {
      q[i] = state.q[i] + (config.step_size * std::sqrt(config.inv_metric[i])) * z[i];
    }
    const double logp = model.LogDensityGradient(q, grad);
    const double w = logp - state.logp;
    const bool accept = NextUniform(replay) < SamplerExp(w);
    const ChainState before = state;
    DrawStats stats;
    rwmh.Transition(state, rng, &stats);
    EXPECT_EQ(rng.counter, replay.counter);
    EXPECT_EQ(rng.counter, 2u * (t + 1));
    const std::vector<double>& expected = accept ? q : before.q;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(SameBits(state.q[i], expected[i])) << t;
    EXPECT_TRUE(SameBits(state.logp, accept ? logp : before.logp));
    EXPECT_TRUE(SameBits(stats.accept_stat, SamplerMetropolisProb(w)));
    EXPECT_EQ(stats.lp, state.logp);
    EXPECT_EQ(stats.energy, -state.logp);
    EXPECT_EQ(stats.stepsize, 0.9);
    EXPECT_EQ(stats.n_leapfrog, 0);
    EXPECT_FALSE(stats.divergent);
    accepted += accept;
  }
  EXPECT_GT(accepted, 20);
  EXPECT_LT(accepted, 180);
}

TEST(ScalarRwmhTest, NanProposalsAreRejected) {
  NanBox model(2);
  SamplerConfig config;
  config.step_size = 0.8;
  ScalarRwmh rwmh(model, config);
  ChainRng rng = MakeChainRng(6, 0);
  ChainState state = StateAt(model, {0.0, 0.0});
  int rejected = 0;
  for (int t = 0; t < 500; ++t) {
    const std::vector<double> before = state.q;
    DrawStats stats;
    rwmh.Transition(state, rng, &stats);
    ASSERT_EQ(state.logp, 0.0);
    for (double x : state.q) ASSERT_LE(std::abs(x), 1.0);
    EXPECT_TRUE(stats.accept_stat == 0.0 || stats.accept_stat == 1.0);
    rejected += state.q == before;
  }
  EXPECT_GT(rejected, 50);
  EXPECT_LT(rejected, 450);
}

std::vector<uint64_t> Iota(uint64_t n) {
  std::vector<uint64_t> ids(n);
  for (uint64_t i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

TEST(ScalarRwmhTest, StandardNormalMoments) {
  for (int64_t d : {1, 10}) {
    StdNormal model(d);
    SamplerConfig config;
    config.step_size = 2.38 / std::sqrt(static_cast<double>(d));
    ScalarRunOptions options;
    options.algorithm = Algorithm::kRwmh;
    const int64_t n = 20000;
    absl::StatusOr<std::vector<ScalarChainResult>> chains =
        RunScalarChains(model, config, /*seed=*/5150, Iota(4), n, options);
    ASSERT_TRUE(chains.ok()) << chains.status();
    const double z = InverseNormalCdf(1 - 1e-3 / (4.0 * static_cast<double>(d)));
    for (int64_t j = 0; j < d; ++j) {
      Eigen::MatrixXd x(n, 4), x2(n, 4);
      for (Eigen::Index c = 0; c < 4; ++c) {
        for (Eigen::Index i = 0; i < n; ++i) {
          x(i, c) = (*chains)[c].draws[i * d + j];
          x2(i, c) = x(i, c) * x(i, c);
        }
      }
      EXPECT_GT(EssBulk(x), 0.01 * n * 4) << j;
      EXPECT_NEAR(x.mean(), 0.0, z * McseMean(x)) << j;
      EXPECT_NEAR(x2.mean(), 1.0, z * McseMean(x2)) << j;
    }
  }
}

TEST(ScalarRwmhTest, ChainsAreIndependentOfTheChainSet) {
  StdNormal model(3);
  SamplerConfig config;
  ScalarRunOptions options;
  options.algorithm = Algorithm::kRwmh;
  const std::vector<uint64_t> five = {5};
  auto together = RunScalarChains(model, config, 3, Iota(10), 100, options);
  auto alone = RunScalarChains(model, config, 3, five, 100, options);
  ASSERT_TRUE(together.ok() && alone.ok());
  EXPECT_EQ((*together)[5].draws, (*alone)[0].draws);
  EXPECT_EQ((*together)[5].stats, (*alone)[0].stats);
  EXPECT_NE((*together)[6].draws, (*together)[5].draws);
}

}  // namespace
}  // namespace autobatch::mcmc
