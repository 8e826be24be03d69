// Tests of ScalarNuts: the shared arithmetic against the primitives, exact
// tree arithmetic, divergence, the random-draw order, agreement with a
// straightforward Stan-style implementation, long-run moments and
// determinism across chain sets.
#include "mcmc/scalar/scalar_nuts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "backends/kernels.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "mcmc/output/diagnostics.h"
#include "mcmc/model/targets/mock_targets.h"

namespace autobatch::mcmc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// ---------------------------------------------------------------------------
// Local models (self-contained: the tests do not depend on targets/).

class LocalModel : public Model {
 public:
  explicit LocalModel(int64_t d) : d_(d) {}
  std::vector<ParameterSpec> parameters() const override {
    return {ParameterSpec{"x", {d_}, Transform::kIdentity}};
  }
  mutable int64_t evaluations = 0;  // gradient evaluations, for counting tests

 protected:
  int64_t d_;
};

// N(0, I): log p = -|q|^2 / 2.
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

// Stationary AR(1) Gaussian with correlation `phi`: tridiagonal precision.
// Trajectories of varied lengths (depths 2-6 with an identity metric).
class Ar1 final : public LocalModel {
 public:
  Ar1(int64_t d, double phi) : LocalModel(d), phi_(phi) {}
  std::string name() const override { return "ar1"; }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    ++evaluations;
    const double s = 1.0 / (1.0 - phi_ * phi_);
    double lp = 0;
    for (int64_t i = 0; i < d_; ++i) {
      const bool inner = i > 0 && i + 1 < d_;
      double aq = (inner ? 1.0 + phi_ * phi_ : 1.0) * q[i];
      if (i > 0) aq -= phi_ * q[i - 1];
      if (i + 1 < d_) aq -= phi_ * q[i + 1];
      aq *= s;
      lp -= 0.5 * q[i] * aq;
      grad[i] = -aq;
    }
    return lp;
  }

 private:
  double phi_;
};

// Flat: log p = 0, gradient 0. Momentum never changes, so every rho is a
// positive multiple of p0 and no U-turn check ever fails.
class Flat final : public LocalModel {
 public:
  using LocalModel::LocalModel;
  std::string name() const override { return "flat"; }
  double LogDensityGradient(std::span<const double>, std::span<double> grad) const override {
    ++evaluations;
    for (int64_t i = 0; i < d_; ++i) grad[i] = 0;
    return 0;
  }
};

// Gradient 0; log p = 0 at the origin and -height elsewhere. From the origin
// every leapfrog state has H - H0 = height up to one rounding.
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

// N(0, 1) whose log density and gradient turn NaN for |q| > 3.
class NanOutside final : public LocalModel {
 public:
  using LocalModel::LocalModel;
  std::string name() const override { return "nan_outside"; }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    ++evaluations;
    double lp = 0;
    bool outside = false;
    for (int64_t i = 0; i < d_; ++i) {
      outside = outside || std::abs(q[i]) > 3;
      lp -= 0.5 * q[i] * q[i];
      grad[i] = -q[i];
    }
    if (outside) {
      for (int64_t i = 0; i < d_; ++i) grad[i] = kNaN;
      return kNaN;
    }
    return lp;
  }
};

ChainState StateAt(const Model& model, std::vector<double> q) {
  absl::StatusOr<ChainState> state = MakeChainState(model, q);
  EXPECT_TRUE(state.ok()) << state.status();
  return *std::move(state);
}

// ---------------------------------------------------------------------------
// The shared arithmetic is the primitives' arithmetic.

std::vector<double> RunUnary(Primitive prim, const std::vector<double>& x) {
  PrimOp op;
  op.prim = prim;
  op.inputs = {VarId(0)};
  op.outputs = {VarId(1)};
  std::vector<double> y(x.size());
  const TensorType scalar{DType::kF64, {}};
  const ConstLanesView in{scalar, reinterpret_cast<const std::byte*>(x.data())};
  const LanesView out{scalar, reinterpret_cast<std::byte*>(y.data())};
  const absl::Status status =
      RunPrimitive(op, std::span<const ConstLanesView>(&in, 1), std::span<const LanesView>(&out, 1),
                   static_cast<int64_t>(x.size()), /*kernels=*/nullptr);
  EXPECT_TRUE(status.ok()) << status;
  return y;
}

TEST(SamplerMathTest, ExpAndLog1pAreThePrimitivesBitForBit) {
  std::vector<double> x = {0.0,  -0.0, 1e-300, -1e-300, 1e-17, -1e-17, 0.5,   -0.5,  1.0,
                           -1.0, 2.0,  -745.2, -745.1,  -709,  -708.4, -708.39, 709.7, 709.8,
                           710,  1000, -1000,  kInf,    -kInf, kNaN,   -0.999999, -1.0 + 1e-16,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(), -std::numeric_limits<double>::max()};
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> wide(-750, 750), narrow(-3, 3), unit(-1, 1);
  for (int k = 0; k < 20000; ++k) {
    x.push_back(wide(gen));
    x.push_back(narrow(gen));
    x.push_back(unit(gen) * 1e-8);
  }
  const std::vector<double> exp_ref = RunUnary(Primitive::kExp, x);
  const std::vector<double> log1p_ref = RunUnary(Primitive::kLog1p, x);
  int exp_mismatches = 0, log1p_mismatches = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!SameBits(SamplerExp(x[i]), exp_ref[i]) && ++exp_mismatches < 5) {
      ADD_FAILURE() << "exp(" << x[i] << "): " << SamplerExp(x[i]) << " vs " << exp_ref[i];
    }
    if (!SameBits(SamplerLog1p(x[i]), log1p_ref[i]) && ++log1p_mismatches < 5) {
      ADD_FAILURE() << "log1p(" << x[i] << "): " << SamplerLog1p(x[i]) << " vs "
                    << log1p_ref[i];
    }
  }
  EXPECT_EQ(exp_mismatches, 0);
  EXPECT_EQ(log1p_mismatches, 0);
}

TEST(SamplerMathTest, LogSumExp) {
  EXPECT_EQ(SamplerLogSumExp(-kInf, -kInf), -kInf);
  EXPECT_TRUE(SameBits(SamplerLogSumExp(-kInf, 3.25), 3.25));
  EXPECT_TRUE(SameBits(SamplerLogSumExp(-2.5, -kInf), -2.5));
  EXPECT_NEAR(SamplerLogSumExp(0, 0), std::log(2.0), 1e-15);
  EXPECT_NEAR(SamplerLogSumExp(-1000, -1001), -1000 + std::log1p(std::exp(-1.0)), 1e-12);
  EXPECT_TRUE(SameBits(SamplerLogSumExp(1.5, -0.25), SamplerLogSumExp(-0.25, 1.5)));
  EXPECT_TRUE(std::isnan(SamplerLogSumExp(kNaN, 1)));
  EXPECT_TRUE(std::isnan(SamplerLogSumExp(1, kNaN)));
  EXPECT_EQ(SamplerMetropolisProb(0.5), 1.0);
  EXPECT_EQ(SamplerMetropolisProb(-kInf), 0.0);
  EXPECT_NEAR(SamplerMetropolisProb(-1), std::exp(-1.0), 1e-15);
}

TEST(SamplerConfigTest, ValidateNamesTheBadField) {
  SamplerConfig config;
  EXPECT_TRUE(config.Validate(3).ok());
  EXPECT_FALSE(config.Validate(0).ok());
  auto bad = [](auto mutate) {
    SamplerConfig c;
    mutate(c);
    return std::string(c.Validate(2).message());
  };
  EXPECT_NE(bad([](SamplerConfig& c) { c.step_size = 0; }).find("step_size"), std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.step_size = kNaN; }).find("step_size"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.inv_metric = {1, 2, 3}; }).find("inv_metric"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.inv_metric = {1, -2}; }).find("inv_metric[1]"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.max_depth = 0; }).find("max_depth"), std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.max_depth = 31; }).find("max_depth"), std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.max_delta_h = kNaN; }).find("max_delta_h"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.step_size_jitter = 1.5; }).find("jitter"),
            std::string::npos);
  EXPECT_NE(bad([](SamplerConfig& c) { c.num_leapfrog_steps = 0; }).find("num_leapfrog_steps"),
            std::string::npos);
}

TEST(SamplerConfigTest, MakeChainStateChecksThePoint) {
  StdNormal normal(2);
  absl::StatusOr<ChainState> state = MakeChainState(normal, std::vector<double>{1, -2});
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->logp, -2.5);
  EXPECT_EQ(state->grad, (std::vector<double>{-1, 2}));
  EXPECT_EQ(MakeChainState(normal, std::vector<double>{1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  NanOutside nan_model(1);
  EXPECT_EQ(MakeChainState(nan_model, std::vector<double>{5}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// ---------------------------------------------------------------------------
// Exact tree arithmetic.

TEST(ScalarNutsTest, NeverUTurningTargetRunsToMaxDepth) {
  for (int64_t d : {1, 3}) {
    for (int max_depth : {1, 2, 3, 5, 8, 10}) {
      Flat flat(d);
      SamplerConfig config;
      config.step_size = 0.1;
      config.max_depth = max_depth;
      if (d == 3) config.inv_metric = {0.5, 2.0, 7.0};
      ScalarNuts nuts(flat, config);
      ChainState state = StateAt(flat, std::vector<double>(d, 0.25));
      ChainRng rng = MakeChainRng(1, 2);
      for (int t = 0; t < 3; ++t) {
        flat.evaluations = 0;
        const uint64_t counter_before = rng.counter;
        DrawStats stats;
        nuts.Transition(state, rng, &stats);
        const int64_t expected = (int64_t{1} << max_depth) - 1;
        EXPECT_EQ(stats.n_leapfrog, expected) << "max_depth " << max_depth;
        EXPECT_EQ(flat.evaluations, expected);
        EXPECT_EQ(stats.treedepth, max_depth);
        EXPECT_FALSE(stats.divergent);
        EXPECT_EQ(stats.accept_stat, 1.0);
        EXPECT_EQ(stats.stepsize, 0.1);
        EXPECT_EQ(stats.lp, 0.0);
        // Draws: 1 momentum + per doubling (direction + progressive) + one
        // per internal node: sum_j (2^j - 1) = 2^k - 1 - k.
        EXPECT_EQ(rng.counter - counter_before, (uint64_t{1} << max_depth) + max_depth);
      }
    }
  }
}

TEST(ScalarNutsTest, DivergenceExactlyWhenTheEnergyErrorExceedsTheThreshold) {
  struct Case {
    double height, max_delta_h;
    bool divergent;
  };
  for (const Case& c : {Case{999.0, 1000.0, false}, Case{1001.0, 1000.0, true},
                        Case{999.999, 1000.0, false}, Case{1000.001, 1000.0, true},
                        Case{9.5, 10.0, false}, Case{10.5, 10.0, true}}) {
    for (int max_depth : {1, 4, 10}) {
      EnergyStep model(2, c.height);
      SamplerConfig config;
      config.max_depth = max_depth;
      config.max_delta_h = c.max_delta_h;
      config.step_size = 0.5;
      ScalarNuts nuts(model, config);
      ChainRng rng = MakeChainRng(5, 0);
      for (int t = 0; t < 4; ++t) {
        ChainState state = StateAt(model, {0.0, 0.0});
        const uint64_t counter_before = rng.counter;
        DrawStats stats;
        nuts.Transition(state, rng, &stats);
        EXPECT_EQ(stats.divergent, c.divergent) << c.height << " " << max_depth;
        if (c.divergent) {
          // The first leapfrog diverges: one gradient, no doubling accepted,
          // draws = momentum + one direction.
          EXPECT_EQ(stats.n_leapfrog, 1);
          EXPECT_EQ(stats.treedepth, 0);
          EXPECT_EQ(rng.counter - counter_before, 2u);
        } else {
          EXPECT_EQ(stats.n_leapfrog, (int64_t{1} << max_depth) - 1);
          EXPECT_EQ(stats.treedepth, max_depth);
        }
        // Either way the only state with weight ~1 is the start.
        if (c.height > 100) {
          EXPECT_EQ(state.q, (std::vector<double>{0.0, 0.0}));
          EXPECT_EQ(stats.lp, 0.0);
          EXPECT_EQ(stats.accept_stat, 0.0);  // exp(-999) underflows
        }
      }
    }
  }
}

TEST(ScalarNutsTest, NanEnergyIsDivergentAndHarmless) {
  for (double height : {kNaN, kInf}) {
    EnergyStep model(3, height);
    SamplerConfig config;
    config.max_depth = 6;
    ScalarNuts nuts(model, config);
    ChainRng rng = MakeChainRng(8, 1);
    ChainState state = StateAt(model, {0.0, 0.0, 0.0});
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    EXPECT_TRUE(stats.divergent);
    EXPECT_EQ(stats.n_leapfrog, 1);
    EXPECT_EQ(stats.accept_stat, 0.0);
    EXPECT_EQ(state.q, (std::vector<double>{0.0, 0.0, 0.0}));
    EXPECT_EQ(state.logp, 0.0);
    EXPECT_TRUE(std::isfinite(stats.energy));
  }
  // A model that turns NaN far out: a large step gets there; every
  // transition stays finite and some are divergent.
  NanOutside model(2);
  SamplerConfig config;
  config.step_size = 2.5;
  ScalarNuts nuts(model, config);
  ChainRng rng = MakeChainRng(8, 2);
  ChainState state = StateAt(model, {0.5, -0.5});
  int divergent = 0;
  for (int t = 0; t < 200; ++t) {
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    divergent += stats.divergent;
    ASSERT_TRUE(std::isfinite(state.logp));
    ASSERT_TRUE(std::isfinite(stats.energy));
    ASSERT_TRUE(std::isfinite(stats.accept_stat));
    for (double x : state.q) ASSERT_LE(std::abs(x), 3.0);
  }
  EXPECT_GT(divergent, 0);
}

// The targets library's mock targets give the same tree arithmetic.
TEST(ScalarNutsTest, TargetsMockTargetsGiveTheDocumentedTrees) {
  absl::StatusOr<std::unique_ptr<NeverUturn>> flat = NeverUturn::Create({.dimension = 4});
  ASSERT_TRUE(flat.ok()) << flat.status();
  for (int max_depth : {1, 6, 10}) {
    SamplerConfig config;
    config.step_size = 0.2;
    config.max_depth = max_depth;
    ScalarNuts nuts(**flat, config);
    ChainState state = StateAt(**flat, {0.1, -0.2, 0.3, -0.4});
    ChainRng rng = MakeChainRng(3, 9);
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    EXPECT_EQ(stats.n_leapfrog, (int64_t{1} << max_depth) - 1);
    EXPECT_EQ(stats.treedepth, max_depth);
    EXPECT_EQ(stats.accept_stat, 1.0);
  }
  for (double height : {999.999, 1000.001, kNaN}) {
    absl::StatusOr<std::unique_ptr<EnergyJump>> jump =
        EnergyJump::Create({.dimension = 3, .height = height});
    ASSERT_TRUE(jump.ok()) << jump.status();
    SamplerConfig config;
    ScalarNuts nuts(**jump, config);
    ChainState state = StateAt(**jump, {0.0, 0.0, 0.0});
    ChainRng rng = MakeChainRng(3, 10);
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    const bool divergent = !(height < 1000);
    EXPECT_EQ(stats.divergent, divergent) << height;
    EXPECT_EQ(stats.n_leapfrog, divergent ? 1 : 1023) << height;
    EXPECT_EQ(state.q, (std::vector<double>{0.0, 0.0, 0.0}));
  }
}

// ---------------------------------------------------------------------------
// Agreement with a direct transcription of Stan's base_nuts (copies
// everywhere, no workspace), using the documented arithmetic and draw order.

class ReferenceNuts {
 public:
  ReferenceNuts(const Model& model, const SamplerConfig& config)
      : model_(model), config_(config), d_(model.dimension()) {
    m_ = config.inv_metric.empty() ? std::vector<double>(d_, 1.0) : config.inv_metric;
    for (double x : m_) sqrt_m_.push_back(std::sqrt(x));
  }

  void Transition(ChainState& state, ChainRng& rng, DrawStats* stats) {
    rng_ = &rng;
    eps_ = JitteredStepSize(config_.step_size, config_.step_size_jitter, rng);
    Point z{state.q, std::vector<double>(d_), state.grad, state.logp};
    DrawMomentum(rng, sqrt_m_.data(), z.p);
    Point z_fwd = z, z_bck = z, z_sample = z, z_propose = z;
    double sample_energy = 0;
    h0_ = Energy(z);
    sample_energy = h0_;
    Vec p_fwd_fwd = z.p, p_sharp_fwd_fwd = Sharp(z.p);
    Vec p_fwd_bck = z.p, p_sharp_fwd_bck = p_sharp_fwd_fwd;
    Vec p_bck_fwd = z.p, p_sharp_bck_fwd = p_sharp_fwd_fwd;
    Vec p_bck_bck = z.p, p_sharp_bck_bck = p_sharp_fwd_fwd;
    Vec rho = z.p;
    double log_sum_weight = 0;
    n_leapfrog_ = 0;
    sum_prob_ = 0;
    divergent_ = false;
    int depth = 0;
    while (depth < config_.max_depth) {
      Vec rho_fwd(d_, 0.0), rho_bck(d_, 0.0);
      bool valid = false;
      double lsw_subtree = -kInf;
      double propose_energy = 0;
      if (NextUniform(rng) > 0.5) {
        z_ = z_fwd;
        rho_bck = rho;
        p_bck_fwd = p_fwd_fwd;
        p_sharp_bck_fwd = p_sharp_fwd_fwd;
        valid = BuildTree(depth, z_propose, propose_energy, p_sharp_fwd_bck, p_sharp_fwd_fwd,
                          rho_fwd, p_fwd_bck, p_fwd_fwd, 1.0, lsw_subtree);
        z_fwd = z_;
      } else {
        z_ = z_bck;
        rho_fwd = rho;
        p_fwd_bck = p_bck_bck;
        p_sharp_fwd_bck = p_sharp_bck_bck;
        valid = BuildTree(depth, z_propose, propose_energy, p_sharp_bck_fwd, p_sharp_bck_bck,
                          rho_bck, p_bck_fwd, p_bck_bck, -1.0, lsw_subtree);
        z_bck = z_;
      }
      if (!valid) break;
      ++depth;
      if (NextUniform(rng) < SamplerExp(lsw_subtree - log_sum_weight)) {
        z_sample = z_propose;
        sample_energy = propose_energy;
      }
      log_sum_weight = SamplerLogSumExp(log_sum_weight, lsw_subtree);
      rho = Add(rho_bck, rho_fwd);
      bool persist = Criterion(p_sharp_bck_bck, p_sharp_fwd_fwd, rho);
      persist = persist && Criterion(p_sharp_bck_bck, p_sharp_fwd_bck, Add(rho_bck, p_fwd_bck));
      persist = persist && Criterion(p_sharp_bck_fwd, p_sharp_fwd_fwd, Add(rho_fwd, p_bck_fwd));
      if (!persist) break;
    }
    state.q = z_sample.q;
    state.grad = z_sample.grad;
    state.logp = z_sample.logp;
    *stats = DrawStats{state.logp,  sum_prob_ / static_cast<double>(n_leapfrog_),
                       eps_,        depth,
                       n_leapfrog_, divergent_,
                       sample_energy};
  }

 private:
  using Vec = std::vector<double>;
  struct Point {
    Vec q, p, grad;
    double logp;
  };

  Vec Sharp(const Vec& p) const {
    Vec s(d_);
    for (int64_t i = 0; i < d_; ++i) s[i] = m_[i] * p[i];
    return s;
  }
  double Energy(const Point& z) const {
    return 0.5 * SamplerDot(z.p.data(), Sharp(z.p).data(), d_) - z.logp;
  }
  Vec Add(const Vec& a, const Vec& b) const {
    Vec c(d_);
    for (int64_t i = 0; i < d_; ++i) c[i] = a[i] + b[i];
    return c;
  }
  bool Criterion(const Vec& minus, const Vec& plus, const Vec& rho) const {
    return SamplerDot(plus.data(), rho.data(), d_) > 0 &&
           SamplerDot(minus.data(), rho.data(), d_) > 0;
  }

  bool BuildTree(int depth, Point& z_propose, double& propose_energy, Vec& p_sharp_beg,
                 Vec& p_sharp_end, Vec& rho, Vec& p_beg, Vec& p_end, double sign,
                 double& log_sum_weight) {
    if (depth == 0) {
      SamplerLeapfrog(model_, m_.data(), sign * eps_, d_, z_.q.data(), z_.p.data(),
                      z_.grad.data(), &z_.logp);
      ++n_leapfrog_;
      double h = Energy(z_);
      if (std::isnan(h)) h = kInf;
      if (h - h0_ > config_.max_delta_h) divergent_ = true;
      log_sum_weight = SamplerLogSumExp(log_sum_weight, h0_ - h);
      sum_prob_ += SamplerMetropolisProb(h0_ - h);
      z_propose = z_;
      propose_energy = h;
      p_sharp_beg = Sharp(z_.p);
      p_sharp_end = p_sharp_beg;
      rho = z_.p;
      p_beg = z_.p;
      p_end = p_beg;
      return !divergent_;
    }
    double lsw_init = -kInf;
    Vec p_init_end(d_), p_sharp_init_end(d_), rho_init(d_, 0.0);
    if (!BuildTree(depth - 1, z_propose, propose_energy, p_sharp_beg, p_sharp_init_end, rho_init,
                   p_beg, p_init_end, sign, lsw_init)) {
      return false;
    }
    Point z_propose_final = z_;
    double final_energy = 0;
    double lsw_final = -kInf;
    Vec p_final_beg(d_), p_sharp_final_beg(d_), rho_final(d_, 0.0);
    if (!BuildTree(depth - 1, z_propose_final, final_energy, p_sharp_final_beg, p_sharp_end,
                   rho_final, p_final_beg, p_end, sign, lsw_final)) {
      return false;
    }
    const double lsw_subtree = SamplerLogSumExp(lsw_init, lsw_final);
    log_sum_weight = SamplerLogSumExp(log_sum_weight, lsw_subtree);
    if (NextUniform(*rng_) < SamplerExp(lsw_final - lsw_subtree)) {
      z_propose = z_propose_final;
      propose_energy = final_energy;
    }
    Vec rho_subtree = Add(rho_init, rho_final);
    rho = rho_subtree;
    bool persist = Criterion(p_sharp_beg, p_sharp_end, rho_subtree);
    persist = persist && Criterion(p_sharp_beg, p_sharp_final_beg, Add(rho_init, p_final_beg));
    persist = persist && Criterion(p_sharp_init_end, p_sharp_end, Add(rho_final, p_init_end));
    return persist;
  }

  const Model& model_;
  SamplerConfig config_;
  int64_t d_;
  Vec m_, sqrt_m_;
  ChainRng* rng_ = nullptr;
  double eps_ = 0, h0_ = 0;
  Point z_;
  int64_t n_leapfrog_ = 0;
  double sum_prob_ = 0;
  bool divergent_ = false;
};

TEST(ScalarNutsTest, MatchesAStanStyleReferenceBitForBit) {
  struct Case {
    double step_size;
    double jitter;
    int max_depth;
    bool metric;
  };
  Ar1 model(12, 0.9);
  std::set<int64_t> lengths;
  int divergences = 0;
  for (const Case& c : {Case{0.25, 0.0, 10, false}, Case{0.6, 0.3, 10, true},
                        Case{0.1, 0.0, 4, false}, Case{1.4, 0.2, 10, true}}) {
    SamplerConfig config;
    config.step_size = c.step_size;
    config.step_size_jitter = c.jitter;
    config.max_depth = c.max_depth;
    if (c.metric) {
      for (int i = 0; i < 12; ++i) config.inv_metric.push_back(0.5 + 0.1 * i);
    }
    ScalarNuts nuts(model, config);
    ReferenceNuts reference(model, config);
    ChainRng rng = MakeChainRng(77, 3), ref_rng = rng;
    std::vector<double> q0(12);
    for (int i = 0; i < 12; ++i) q0[i] = 0.3 * std::sin(i + 1.0);
    ChainState state = StateAt(model, q0), ref_state = state;
    for (int t = 0; t < 150; ++t) {
      DrawStats stats, ref_stats;
      nuts.Transition(state, rng, &stats);
      reference.Transition(ref_state, ref_rng, &ref_stats);
      ASSERT_EQ(rng.counter, ref_rng.counter) << "transition " << t;
      ASSERT_EQ(stats, ref_stats) << "transition " << t;
      for (int i = 0; i < 12; ++i) {
        ASSERT_TRUE(SameBits(state.q[i], ref_state.q[i])) << "transition " << t;
        ASSERT_TRUE(SameBits(state.grad[i], ref_state.grad[i]));
      }
      ASSERT_TRUE(SameBits(state.logp, ref_state.logp));
      lengths.insert(stats.n_leapfrog);
      divergences += stats.divergent;
    }
  }
  // The comparison covered varied trees and divergent ones.
  EXPECT_GE(lengths.size(), 5u);
  EXPECT_GT(divergences, 0);
}

// ---------------------------------------------------------------------------
// Statistics, streams and determinism.

TEST(ScalarNutsTest, StatsDescribeTheReturnedPoint) {
  Ar1 model(5, 0.5);
  SamplerConfig config;
  config.step_size = 0.4;
  config.step_size_jitter = 0.5;
  config.inv_metric = {1.0, 0.8, 1.2, 0.9, 1.1};
  ScalarNuts nuts(model, config);
  ChainRng rng = MakeChainRng(3, 3);
  ChainState state = StateAt(model, {0.1, 0.2, 0.3, 0.4, 0.5});
  std::set<double> step_sizes;
  for (int t = 0; t < 100; ++t) {
    model.evaluations = 0;
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    EXPECT_EQ(model.evaluations, stats.n_leapfrog);
    EXPECT_LE(stats.n_leapfrog, (int64_t{1} << (stats.treedepth + 1)) - 1);
    EXPECT_GE(stats.n_leapfrog, (int64_t{1} << stats.treedepth) - 1);
    EXPECT_GE(stats.stepsize, 0.4 * 0.5);
    EXPECT_LE(stats.stepsize, 0.4 * 1.5);
    step_sizes.insert(stats.stepsize);
    EXPECT_GE(stats.accept_stat, 0.0);
    EXPECT_LE(stats.accept_stat, 1.0);
    // lp__ and the state are the model's at the returned q.
    std::vector<double> grad(5);
    EXPECT_TRUE(SameBits(stats.lp, model.LogDensityGradient(state.q, grad)));
    EXPECT_EQ(grad, state.grad);
    EXPECT_TRUE(SameBits(stats.lp, state.logp));
    // energy__ = kinetic + potential, so at least the potential.
    EXPECT_GE(stats.energy, -stats.lp);
  }
  EXPECT_EQ(step_sizes.size(), 100u);
}

std::vector<uint64_t> Iota(uint64_t n) {
  std::vector<uint64_t> ids(n);
  for (uint64_t i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

TEST(ScalarNutsTest, ChainsAreDeterministicAndIndependentOfTheChainSet) {
  Ar1 model(6, 0.7);
  SamplerConfig config;
  config.step_size = 0.5;
  config.step_size_jitter = 0.1;
  const std::vector<uint64_t> all = Iota(10);
  const std::vector<uint64_t> five = {5};
  absl::StatusOr<std::vector<ScalarChainResult>> together =
      RunScalarChains(model, config, /*seed=*/2024, all, /*num_draws=*/50);
  absl::StatusOr<std::vector<ScalarChainResult>> alone =
      RunScalarChains(model, config, /*seed=*/2024, five, /*num_draws=*/50);
  absl::StatusOr<std::vector<ScalarChainResult>> again =
      RunScalarChains(model, config, /*seed=*/2024, five, /*num_draws=*/50);
  ASSERT_TRUE(together.ok()) << together.status();
  ASSERT_TRUE(alone.ok()) << alone.status();
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(together->size(), 10u);
  const ScalarChainResult& a = (*together)[5];
  const ScalarChainResult& b = (*alone)[0];
  EXPECT_EQ(a.chain_id, 5u);
  EXPECT_EQ(b.chain_id, 5u);
  ASSERT_EQ(a.draws.size(), 50u * 6);
  ASSERT_EQ(b.draws.size(), a.draws.size());
  EXPECT_EQ(std::memcmp(a.draws.data(), b.draws.data(), a.draws.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(b.draws.data(), (*again)[0].draws.data(),
                        b.draws.size() * sizeof(double)),
            0);
  EXPECT_EQ(a.stats, b.stats);
  EXPECT_EQ(a.final_rng.counter, b.final_rng.counter);
  EXPECT_EQ(a.final_rng.key, ChainKey(2024, 5));
  // Chains differ from each other, and another seed gives another chain.
  std::set<std::vector<double>> distinct;
  for (const ScalarChainResult& r : *together) distinct.insert(r.draws);
  EXPECT_EQ(distinct.size(), 10u);
  absl::StatusOr<std::vector<ScalarChainResult>> other_seed =
      RunScalarChains(model, config, /*seed=*/2025, five, /*num_draws=*/50);
  ASSERT_TRUE(other_seed.ok());
  EXPECT_NE((*other_seed)[0].draws, b.draws);
  // The last draw is the final state.
  EXPECT_TRUE(std::equal(b.final_state.q.begin(), b.final_state.q.end(), b.draws.end() - 6));
}

TEST(ScalarNutsTest, RunScalarChainsReportsBadArguments) {
  StdNormal model(2);
  SamplerConfig config;
  const std::vector<uint64_t> ids = {0, 1};
  config.step_size = -1;
  EXPECT_EQ(RunScalarChains(model, config, 1, ids, 10).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.step_size = 1;
  EXPECT_EQ(RunScalarChains(model, config, 1, ids, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
  ScalarRunOptions options;
  options.inits = {{0.0, 0.0}};
  EXPECT_EQ(RunScalarChains(model, config, 1, ids, 10, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.inits = {{0.0, 0.0}, {1.0}};
  absl::Status status = RunScalarChains(model, config, 1, ids, 10, options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("chain 1"), std::string::npos) << status;
  options.inits = {{0.0, 0.0}, {1.0, 2.0}};
  absl::StatusOr<std::vector<ScalarChainResult>> ok =
      RunScalarChains(model, config, 1, ids, 10, options);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[1].stats.size(), 10u);
}

// One-step conservation (TFP's test): chains started at exact draws of the
// target stay distributed as the target after one transition. Every
// coordinate's empirical CDF must lie within the DKW band of N(0, 1) (the
// AR(1) marginals), and the chains must actually move with varied tree sizes.
TEST(ScalarNutsTest, OneStepConservesTheTarget) {
  constexpr int64_t kD = 8;
  constexpr double kPhi = 0.9;
  constexpr int kChains = 10000;
  Ar1 model(kD, kPhi);
  SamplerConfig config;
  config.step_size = 0.35;
  ScalarNuts nuts(model, config);
  ChainRng exact = MakeChainRng(/*seed=*/404, /*chain_id=*/0);
  std::vector<std::vector<double>> after(kD, std::vector<double>(kChains));
  std::set<int64_t> lengths;
  double moved = 0;
  std::vector<double> z(kD), q(kD);
  for (int c = 0; c < kChains; ++c) {
    NextNormals(exact, z);
    q[0] = z[0];
    for (int64_t i = 1; i < kD; ++i) q[i] = kPhi * q[i - 1] + std::sqrt(1 - kPhi * kPhi) * z[i];
    ChainState state = StateAt(model, q);
    ChainRng rng = MakeChainRng(/*seed=*/405, static_cast<uint64_t>(c));
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    lengths.insert(stats.n_leapfrog);
    moved += std::abs(state.q[0] - q[0]);
    for (int64_t i = 0; i < kD; ++i) after[i][c] = state.q[i];
  }
  // DKW: P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2); alpha = 1e-4 over kD.
  const double eps = std::sqrt(std::log(2.0 * kD / 1e-4) / (2.0 * kChains));
  for (int64_t i = 0; i < kD; ++i) {
    std::vector<double>& x = after[i];
    std::sort(x.begin(), x.end());
    double sup = 0;
    for (int k = 0; k < kChains; ++k) {
      const double f = 0.5 * std::erfc(-x[k] / std::sqrt(2.0));
      sup = std::max({sup, std::abs(f - static_cast<double>(k) / kChains),
                      std::abs(f - static_cast<double>(k + 1) / kChains)});
    }
    EXPECT_LT(sup, eps) << "coordinate " << i;
  }
  EXPECT_GE(lengths.size(), 4u);
  EXPECT_GT(moved / kChains, 0.3);
}

// Long-run moments: |mean - 0| and |mean(x^2) - 1| within a
// Bonferroni-corrected z times their MCSE, with enough effective draws that
// the test has power.
void ExpectStandardNormalMoments(const std::vector<ScalarChainResult>& chains, int64_t d,
                                 double min_ess_per_draw) {
  const Eigen::Index n = static_cast<Eigen::Index>(chains[0].stats.size());
  const Eigen::Index m = static_cast<Eigen::Index>(chains.size());
  const double alpha = 1e-3;
  const double z = InverseNormalCdf(1 - alpha / (2.0 * 2.0 * static_cast<double>(d)));
  for (int64_t j = 0; j < d; ++j) {
    Eigen::MatrixXd x(n, m), x2(n, m);
    for (Eigen::Index c = 0; c < m; ++c) {
      for (Eigen::Index i = 0; i < n; ++i) {
        const double v = chains[c].draws[i * d + j];
        x(i, c) = v;
        x2(i, c) = v * v;
      }
    }
    const double ess = EssBulk(x);
    EXPECT_GT(ess, min_ess_per_draw * static_cast<double>(n * m)) << "coordinate " << j;
    EXPECT_NEAR(x.mean(), 0.0, z * McseMean(x)) << "coordinate " << j;
    EXPECT_NEAR(x2.mean(), 1.0, z * McseMean(x2)) << "coordinate " << j;
  }
}

TEST(ScalarNutsTest, StandardNormalMoments) {
  for (int64_t d : {1, 10}) {
    StdNormal model(d);
    SamplerConfig config;
    config.step_size = d == 1 ? 0.9 : 0.6;
    absl::StatusOr<std::vector<ScalarChainResult>> chains =
        RunScalarChains(model, config, /*seed=*/31337, Iota(4), /*num_draws=*/2500);
    ASSERT_TRUE(chains.ok()) << chains.status();
    ExpectStandardNormalMoments(*chains, d, /*min_ess_per_draw=*/0.3);
    // NUTS on a Gaussian: no divergences, high acceptance.
    double accept = 0;
    for (const ScalarChainResult& c : *chains) {
      for (const DrawStats& s : c.stats) {
        EXPECT_FALSE(s.divergent);
        accept += s.accept_stat;
      }
    }
    EXPECT_GT(accept / (4 * 2500), 0.7);
  }
}

}  // namespace
}  // namespace autobatch::mcmc
