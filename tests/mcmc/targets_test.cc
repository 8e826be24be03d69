// Tests for the known targets and their registry: gradients, known answers,
// bit stability at any address, batched kernels, exact draws vs known
// moments, and parameter errors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "backends/random.h"
#include "gtest/gtest.h"
#include "mcmc/model/gradient_check.h"
#include "mcmc/model/targets/ar1.h"
#include "mcmc/model/targets/beta_bernoulli.h"
#include "mcmc/model/targets/bimodal.h"
#include "mcmc/model/targets/eight_schools.h"
#include "mcmc/model/targets/ill_conditioned.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "mcmc/model/targets/mock_targets.h"
#include "mcmc/model/targets/registry.h"

namespace autobatch::mcmc {
namespace {

using nlohmann::json;

// Golden facts of the default logistic regression data (see the test).
constexpr double kLogisticOnes = 112;
constexpr double kLogisticSum = -0x1.3baf540159c58p+5;  // -39.460609446098431
constexpr double kLogisticX0 = -0x1.cd858c048b6b4p+0;  // -1.8028190146537044

std::unique_ptr<Target> Make(std::string_view name, const json& params = json::object()) {
  absl::StatusOr<std::unique_ptr<Target>> target = MakeTarget(name, params);
  EXPECT_TRUE(target.ok()) << name << ": " << target.status();
  return target.ok() ? std::move(target).value() : nullptr;
}

// Point `draw` of a deterministic stream: uniform(-radius, radius) per
// coordinate.
std::vector<double> RandomPoint(int64_t d, uint64_t draw, double radius = 2.0) {
  std::vector<double> q(d);
  for (int64_t i = 0; i < d; ++i) {
    q[i] = radius * (2.0 * PhiloxUniform(/*key=*/77, draw, i) - 1.0);
  }
  return q;
}

double LogDensity(const Model& model, std::span<const double> q) {
  std::vector<double> grad(q.size());
  return model.LogDensityGradient(q, grad);
}

const std::vector<std::string> kAllTargets = {
    "ar1",           "ar1_batched", "ar1_dense",      "banana",
    "beta_bernoulli", "bimodal",    "correlated_2d",  "eight_schools",
    "energy_jump",   "funnel",      "iid_gaussian",   "ill_conditioned",
    "logistic_regression", "never_uturn"};

TEST(RegistryTest, NamesAreSortedAndComplete) {
  EXPECT_EQ(TargetNames(), kAllTargets);
  std::vector<TargetInfo> infos = TargetInfos();
  ASSERT_EQ(infos.size(), kAllTargets.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ(infos[i].name, kAllTargets[i]);
    EXPECT_FALSE(infos[i].summary.empty());
  }
}

TEST(RegistryTest, EveryTargetBuildsWithDefaultsAndIsConsistent) {
  for (const std::string& name : kAllTargets) {
    SCOPED_TRACE(name);
    std::unique_ptr<Target> target = Make(name, json());  // null = defaults
    ASSERT_NE(target, nullptr);
    EXPECT_EQ(target->name(), name);
    int64_t d = 0;
    for (const ParameterSpec& p : target->parameters()) d += p.size();
    EXPECT_EQ(target->dimension(), d);
    const size_t columns = OutputColumnNames(*target).size();
    EXPECT_EQ(columns, d + target->generated_names().size());
    KnownMoments moments = target->known_moments();
    EXPECT_EQ(moments.mean.size(), columns);
    EXPECT_EQ(moments.variance.size(), columns);
    EXPECT_EQ(target->batch_bit_stable(), name != "ar1_batched");
  }
}

TEST(RegistryTest, DefaultDimensions) {
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"ar1", 100},   {"ar1_dense", 100},       {"ar1_batched", 100},
      {"banana", 2},  {"beta_bernoulli", 1},    {"bimodal", 2},
      {"correlated_2d", 2}, {"eight_schools", 10}, {"energy_jump", 2},
      {"funnel", 10}, {"iid_gaussian", 100},    {"ill_conditioned", 100},
      {"logistic_regression", 6}, {"never_uturn", 2}};
  for (const auto& [name, d] : expected) EXPECT_EQ(Make(name)->dimension(), d) << name;
}

TEST(RegistryTest, ParamsAreApplied) {
  EXPECT_EQ(Make("iid_gaussian", {{"dimension", 7}})->dimension(), 7);
  EXPECT_EQ(Make("iid_gaussian", {{"dimension", 7.0}})->dimension(), 7);
  EXPECT_EQ(Make("funnel", {{"dimension", 3}})->dimension(), 3);
  EXPECT_EQ(Make("logistic_regression", {{"features", 2}})->dimension(), 3);
  auto energy = Make("energy_jump", {{"height", "nan"}});
  EXPECT_TRUE(std::isnan(static_cast<EnergyJump*>(energy.get())->height()));
  auto beta = Make("beta_bernoulli", {{"a", 2}, {"b", 3}, {"y", {1, 1, 0, true}}});
  auto* bb = static_cast<BetaBernoulli*>(beta.get());
  EXPECT_EQ(bb->posterior_a(), 5.0);
  EXPECT_EQ(bb->posterior_b(), 4.0);
  auto ar1 = Make("ar1", {{"dimension", 3}, {"rho", 0.5}});
  std::vector<double> q = {1, 0, 0}, grad(3);
  ar1->LogDensityGradient(q, grad);
  // -(P q)_1 = -P_10 = rho / (1 - rho^2).
  EXPECT_NEAR(grad[1], 0.5 / 0.75, 1e-15);
}

void ExpectInvalid(std::string_view name, const json& params, std::string_view fragment) {
  absl::StatusOr<std::unique_ptr<Target>> target = MakeTarget(name, params);
  ASSERT_FALSE(target.ok()) << name << " " << params.dump();
  EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(target.status().message()).find(fragment), std::string::npos)
      << target.status();
}

// The mocks are for the samplers' tests: buildable, but not in the lists
// users read.
TEST(RegistryTest, UserTargetsLeaveOutTheTestMocks) {
  std::vector<std::string> user;
  for (const TargetInfo& info : TargetInfos()) {
    EXPECT_EQ(info.test_only, info.name == "energy_jump" || info.name == "never_uturn")
        << info.name;
    EXPECT_EQ(info.summary.find('\n'), std::string::npos) << info.name;
    if (!info.test_only) user.push_back(info.name);
  }
  EXPECT_EQ(UserTargetNames(), user);
  EXPECT_EQ(user.size(), kAllTargets.size() - 2);
  ExpectInvalid("gaussian", json(),
                "logistic_regression (`autobatch targets` describes them; for the samplers' "
                "tests also energy_jump, never_uturn)");
}

TEST(RegistryTest, ErrorsNameTheProblem) {
  ExpectInvalid("gaussian", json(), "unknown target \"gaussian\"; known targets: ar1, ");
  ExpectInvalid("gaussian", json(), "never_uturn");
  ExpectInvalid("ar1", {{"dim", 5}}, "target 'ar1' has no parameter \"dim\"");
  ExpectInvalid("ar1", {{"dim", 5}}, "dimension: integer >= 1 (default 100); rho:");
  ExpectInvalid("eight_schools", {{"tau", 1}}, "it takes no parameters");
  ExpectInvalid("ar1", json::array({1, 2}), "parameters must be a JSON object");
  ExpectInvalid("ar1", {{"rho", 1.0}}, "ar1: rho must be in (-1, 1), got 1");
  ExpectInvalid("ar1", {{"rho", "high"}}, "parameter 'rho' must be a number, got \"high\"");
  ExpectInvalid("ar1", {{"dimension", 0}}, "ar1: dimension must be in [1, ");
  ExpectInvalid("ar1", {{"dimension", 2.5}}, "parameter 'dimension' must be an integer");
  ExpectInvalid("ar1", {{"dimension", -3}}, "got -3");
  ExpectInvalid("ar1_dense", {{"dimension", 5000}}, "ar1_dense: dimension must be in [1, 4096]");
  ExpectInvalid("iid_gaussian", {{"dimension", "nan"}}, "must be an integer");
  ExpectInvalid("ill_conditioned", {{"min_sd", 0}}, "must be positive and finite");
  ExpectInvalid("correlated_2d", {{"sd", {1}}}, "must be an array of 2 numbers");
  ExpectInvalid("correlated_2d", {{"sd", {1, -2}}}, "sd entries must be positive");
  ExpectInvalid("banana", {{"curvature", "inf"}}, "curvature must be finite");
  ExpectInvalid("beta_bernoulli", {{"y", {0, 2}}}, "y[1] is 2; entries must be 0 or 1");
  ExpectInvalid("beta_bernoulli", {{"y", {0, 0.5}}}, "must be an array of integers");
  ExpectInvalid("beta_bernoulli", {{"a", -1}}, "a and b must be positive");
  ExpectInvalid("bimodal", {{"offset", "nan"}}, "offset must be finite");
  ExpectInvalid("energy_jump", {{"height", "inf"}}, "height must not be infinite");
  ExpectInvalid("logistic_regression", {{"seed", -1}}, "must be a non-negative integer");
  ExpectInvalid("logistic_regression", {{"rows", 0}}, "rows must be in [1, 1000000]");
  // Huge names and values are cut in messages.
  const std::string huge(1'000'000, 'x');
  for (const auto& [name, params] :
       {std::pair<std::string, json>{huge, json()}, {"ar1", json{{huge, 1}}},
        {"ar1", json{{"rho", huge}}}, {"ar1", json::array({huge})}}) {
    absl::StatusOr<std::unique_ptr<Target>> t = MakeTarget(name, params);
    ASSERT_FALSE(t.ok());
    EXPECT_LT(t.status().message().size(), 2000u);
    EXPECT_NE(t.status().message().find("cut; "), std::string::npos) << t.status().message();
  }
}

TEST(RegistryTest, ParseTargetParams) {
  EXPECT_EQ(*ParseTargetParams(""), json::object());
  EXPECT_EQ(*ParseTargetParams("  {\"dimension\": 50, \"rho\": 0.5} "),
            (json{{"dimension", 50}, {"rho", 0.5}}));
  EXPECT_EQ(*ParseTargetParams("dimension=50, rho=0.9,mean=[0, 3],height=nan"),
            (json{{"dimension", 50}, {"rho", 0.9}, {"mean", {0, 3}}, {"height", "nan"}}));
  EXPECT_FALSE(ParseTargetParams("{\"dimension\": }").ok());
  EXPECT_FALSE(ParseTargetParams("[1, 2]").ok());
  absl::StatusOr<json> bad = ParseTargetParams("dimension=5,rho");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'rho' is not key=value"), std::string_view::npos);
  EXPECT_FALSE(ParseTargetParams("a=1,a=2").ok());
  absl::StatusOr<json> twice = ParseTargetParams(R"({"rho": 0.5, "rho": 0.9})");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("the key \"rho\" appears twice"), std::string::npos)
      << twice.status().message();
  absl::StatusOr<json> nested = ParseTargetParams(R"(m={"a": 1, "a": 2})");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("'m': not valid JSON: the key \"a\" appears twice"),
            std::string::npos)
      << nested.status().message();
  // Parsed params build targets.
  EXPECT_EQ(Make("ar1", *ParseTargetParams("dimension=12,rho=0.5"))->dimension(), 12);
}

// ---------------------------------------------------------------------------
// Gradients.

TEST(TargetGradientTest, AnalyticGradientsMatchFiniteDifferences) {
  for (const std::string& name : kAllTargets) {
    SCOPED_TRACE(name);
    std::unique_ptr<Target> target = Make(name);
    for (uint64_t draw = 0; draw < 4; ++draw) {
      std::vector<double> q = RandomPoint(target->dimension(), draw);
      absl::Status status = CheckGradient(*target, q);
      EXPECT_TRUE(status.ok()) << "point " << draw << ": " << status;
    }
  }
}

TEST(TargetGradientTest, GradientsAtSmallAndEdgeDimensions) {
  for (const char* name : {"ar1", "ar1_dense", "ar1_batched", "iid_gaussian",
                           "ill_conditioned", "funnel", "bimodal"}) {
    for (int d : {1, 2, 3}) {
      SCOPED_TRACE(std::string(name) + " d=" + std::to_string(d));
      std::unique_ptr<Target> target = Make(name, {{"dimension", d}});
      for (uint64_t draw = 0; draw < 3; ++draw) {
        std::vector<double> q = RandomPoint(d, draw);
        EXPECT_TRUE(CheckGradient(*target, q).ok()) << CheckGradient(*target, q);
      }
    }
  }
  // Far from the data and prior mass, where softplus/logistic must be stable.
  std::unique_ptr<Target> logistic = Make("logistic_regression");
  EXPECT_TRUE(CheckGradient(*logistic, RandomPoint(6, 9, /*radius=*/8.0)).ok());
  std::unique_ptr<Target> beta = Make("beta_bernoulli");
  for (double u : {-30.0, -5.0, 0.0, 7.0, 40.0}) {
    std::vector<double> q = {u};
    EXPECT_TRUE(CheckGradient(*beta, q).ok()) << u << ": " << CheckGradient(*beta, q);
  }
  std::unique_ptr<Target> bimodal = Make("bimodal");
  for (double x : {-6.0, -0.1, 0.0, 3.0, 9.0}) {
    std::vector<double> q = {x, -x / 2};
    EXPECT_TRUE(CheckGradient(*bimodal, q).ok()) << x << ": " << CheckGradient(*bimodal, q);
  }
}

// ---------------------------------------------------------------------------
// Bit stability wherever the lane lies in memory.

TEST(TargetDeterminismTest, SameBitsAtAnyAddress) {
  for (const std::string& name : kAllTargets) {
    SCOPED_TRACE(name);
    std::unique_ptr<Target> target = Make(name);
    const int64_t d = target->dimension();
    const std::vector<double> q = RandomPoint(d, 5);
    std::vector<double> ref_grad(d);
    const double ref_logp = target->LogDensityGradient(q, ref_grad);
    // Offsets 0..8 doubles cover every 8-byte position in a 64-byte line.
    std::vector<double> q_buffer(d + 16), g_buffer(d + 16);
    for (int offset = 0; offset <= 8; ++offset) {
      std::copy(q.begin(), q.end(), q_buffer.begin() + offset);
      const int g_offset = (offset * 3) % 9;
      std::fill(g_buffer.begin(), g_buffer.end(), -1.0);
      const double logp = target->LogDensityGradient(
          std::span<const double>(q_buffer.data() + offset, d),
          std::span<double>(g_buffer.data() + g_offset, d));
      EXPECT_EQ(std::memcmp(&logp, &ref_logp, sizeof(double)), 0) << "offset " << offset;
      EXPECT_EQ(std::memcmp(g_buffer.data() + g_offset, ref_grad.data(), d * sizeof(double)), 0)
          << "offset " << offset;
    }
  }
}

TEST(TargetDeterminismTest, BatchedKernelsMatchPerLane) {
  for (const std::string& name : kAllTargets) {
    SCOPED_TRACE(name);
    std::unique_ptr<Target> target = Make(name);
    const int64_t d = target->dimension();
    for (int64_t lanes : {1, 7, 64}) {
      std::vector<double> q(lanes * d);
      std::vector<uint8_t> active(lanes);
      for (int64_t l = 0; l < lanes; ++l) {
        std::vector<double> point = RandomPoint(d, 100 + l);
        std::copy(point.begin(), point.end(), q.begin() + l * d);
        active[l] = (l % 3 != 1) ? 1 : 0;
      }
      // Junk in an inactive lane must not matter.
      if (lanes > 1) q[1 * d] = std::numeric_limits<double>::quiet_NaN();
      const double sentinel = -7.5;
      for (const uint8_t* mask : {static_cast<const uint8_t*>(active.data()),
                                  static_cast<const uint8_t*>(nullptr)}) {
        if (mask == nullptr && lanes > 1) continue;  // lane 1 holds junk
        std::vector<double> logp(lanes, sentinel), grad(lanes * d, sentinel);
        target->LogDensityGradientBatch(q.data(), logp.data(), grad.data(), lanes, mask);
        for (int64_t l = 0; l < lanes; ++l) {
          if (mask != nullptr && !mask[l]) {
            EXPECT_EQ(logp[l], sentinel);
            EXPECT_EQ(grad[l * d], sentinel);
            continue;
          }
          std::vector<double> g(d);
          const double lp =
              target->LogDensityGradient(std::span<const double>(q.data() + l * d, d), g);
          if (target->batch_bit_stable()) {
            EXPECT_EQ(logp[l], lp) << "lane " << l;
            for (int64_t i = 0; i < d; ++i) EXPECT_EQ(grad[l * d + i], g[i]) << l << "," << i;
          } else {
            EXPECT_NEAR(logp[l], lp, 1e-12 * std::abs(lp)) << "lane " << l;
            for (int64_t i = 0; i < d; ++i) {
              EXPECT_NEAR(grad[l * d + i], g[i], 1e-12 * (1 + std::abs(g[i])));
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Known answers: log density differences against direct formulas.

// Checks log p(q) - log p(q0) == expected(q) - expected(q0) at random points.
template <typename F>
void ExpectLogDensityDifferences(const Model& model, F expected, double tol,
                                 double radius = 2.0) {
  const int64_t d = model.dimension();
  const std::vector<double> q0 = RandomPoint(d, 50, radius);
  const double base = LogDensity(model, q0), expected_base = expected(q0);
  for (uint64_t draw = 51; draw < 56; ++draw) {
    const std::vector<double> q = RandomPoint(d, draw, radius);
    const double diff = LogDensity(model, q) - base;
    const double expected_diff = expected(q) - expected_base;
    EXPECT_NEAR(diff, expected_diff, tol * (1 + std::abs(expected_diff))) << "draw " << draw;
  }
}

double NormalLogPdf(double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  return -0.5 * z * z - std::log(sd) - 0.5 * std::log(2 * M_PI);
}

TEST(KnownAnswerTest, IidGaussian) {
  auto target = Make("iid_gaussian", {{"dimension", 5}});
  ExpectLogDensityDifferences(*target, [](const std::vector<double>& q) {
    double lp = 0;
    for (double x : q) lp += NormalLogPdf(x, 0, 1);
    return lp;
  }, 1e-13);
}

TEST(KnownAnswerTest, Ar1AgainstDenseCovariance) {
  for (const char* name : {"ar1", "ar1_dense", "ar1_batched"}) {
    for (int d : {1, 2, 20}) {
      SCOPED_TRACE(std::string(name) + " d=" + std::to_string(d));
      auto target = Make(name, {{"dimension", d}, {"rho", 0.9}});
      Eigen::MatrixXd sigma(d, d);
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) sigma(i, j) = std::pow(0.9, std::abs(i - j));
      Eigen::LDLT<Eigen::MatrixXd> ldlt(sigma);
      ExpectLogDensityDifferences(*target, [&](const std::vector<double>& q) {
        Eigen::Map<const Eigen::VectorXd> x(q.data(), d);
        return -0.5 * x.dot(ldlt.solve(x));
      }, 1e-10);
      // Gradient = -Sigma^-1 x.
      std::vector<double> q = RandomPoint(d, 3), grad(d);
      target->LogDensityGradient(q, grad);
      Eigen::VectorXd expected = -ldlt.solve(Eigen::Map<const Eigen::VectorXd>(q.data(), d));
      for (int i = 0; i < d; ++i) EXPECT_NEAR(grad[i], expected[i], 1e-10 * (1 + std::abs(expected[i])));
    }
  }
  // The three variants agree closely with each other at d = 100.
  auto tri = Make("ar1"), dense = Make("ar1_dense");
  std::vector<double> q = RandomPoint(100, 8);
  EXPECT_NEAR(LogDensity(*tri, q), LogDensity(*dense, q), 1e-11 * std::abs(LogDensity(*tri, q)));
}

TEST(KnownAnswerTest, Ar1PrecisionIsTridiagonalInverse) {
  absl::StatusOr<std::unique_ptr<Ar1Gaussian>> ar1 =
      Ar1Gaussian::Create(Ar1Gaussian::Variant::kDense, {.dimension = 6, .rho = -0.4});
  ASSERT_TRUE(ar1.ok());
  Eigen::Map<const Eigen::MatrixXd> p((*ar1)->precision().data(), 6, 6);
  Eigen::MatrixXd sigma(6, 6);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) sigma(i, j) = std::pow(-0.4, std::abs(i - j));
  EXPECT_LT((p * sigma - Eigen::MatrixXd::Identity(6, 6)).cwiseAbs().maxCoeff(), 1e-14);
}

TEST(KnownAnswerTest, IllConditionedSdsAreLogSpaced) {
  auto target = Make("ill_conditioned");
  const auto& sd = static_cast<IllConditionedGaussian*>(target.get())->sd();
  ASSERT_EQ(sd.size(), 100u);
  EXPECT_EQ(sd.front(), 1.0);
  EXPECT_NEAR(sd.back(), 100.0, 1e-12);
  for (size_t i = 1; i < sd.size(); ++i) {
    EXPECT_NEAR(sd[i] / sd[i - 1], std::pow(100.0, 1.0 / 99.0), 1e-13);
  }
  ExpectLogDensityDifferences(*target, [&](const std::vector<double>& q) {
    double lp = 0;
    for (size_t i = 0; i < q.size(); ++i) lp += NormalLogPdf(q[i], 0, sd[i]);
    return lp;
  }, 1e-12);
}

TEST(KnownAnswerTest, Correlated2d) {
  auto target = Make("correlated_2d");
  Eigen::Matrix2d cov;
  cov << 1, 0.75 * 2, 0.75 * 2, 4;
  const Eigen::Matrix2d precision = cov.inverse();
  ExpectLogDensityDifferences(*target, [&](const std::vector<double>& q) {
    Eigen::Vector2d r(q[0] - 0, q[1] - 3);
    return -0.5 * r.dot(precision * r);
  }, 1e-13);
  KnownMoments m = target->known_moments();
  EXPECT_EQ(m.mean, (std::vector<double>{0, 3}));
  EXPECT_EQ(m.variance, (std::vector<double>{1, 4}));
}

TEST(KnownAnswerTest, Funnel) {
  auto target = Make("funnel");
  ExpectLogDensityDifferences(*target, [](const std::vector<double>& q) {
    double lp = NormalLogPdf(q[0], 0, 3);
    for (size_t i = 1; i < q.size(); ++i) lp += NormalLogPdf(q[i], 0, std::exp(q[0] / 2));
    return lp;
  }, 1e-12);
  KnownMoments m = target->known_moments();
  EXPECT_EQ(m.variance[0], 9.0);
  EXPECT_NEAR(std::sqrt(m.variance[5]), 9.4877, 1e-4);
}

TEST(KnownAnswerTest, Banana) {
  auto target = Make("banana");
  ExpectLogDensityDifferences(*target, [](const std::vector<double>& q) {
    return NormalLogPdf(q[0], 0, 10) + NormalLogPdf(q[1], 0.03 * (q[0] * q[0] - 100), 1);
  }, 1e-13, /*radius=*/15.0);
  KnownMoments m = target->known_moments();
  EXPECT_EQ(m.mean, (std::vector<double>{0, 0}));
  EXPECT_NEAR(m.variance[1], 19.0, 1e-12);
  EXPECT_EQ(m.variance[0], 100.0);
}

TEST(KnownAnswerTest, EightSchools) {
  auto target = Make("eight_schools");
  std::vector<std::string> names = OutputColumnNames(*target);
  ASSERT_EQ(names.size(), 18u);
  EXPECT_EQ(names[0], "mu");
  EXPECT_EQ(names[1], "tau");
  EXPECT_EQ(names[2], "eta.1");
  EXPECT_EQ(names[9], "eta.8");
  EXPECT_EQ(names[10], "theta.1");
  EXPECT_EQ(names[17], "theta.8");
  EXPECT_EQ(target->parameters()[1].transform, Transform::kLog);
  const double y[] = {28, 8, -3, 7, -1, 1, 18, 12};
  const double sigma[] = {15, 10, 16, 11, 9, 11, 10, 18};
  ExpectLogDensityDifferences(*target, [&](const std::vector<double>& q) {
    const double mu = q[0], tau = std::exp(q[1]);
    // half-Cauchy(0, 5) density 2 / (pi 5 (1 + (tau/5)^2)), plus log-Jacobian u.
    double lp = NormalLogPdf(mu, 0, 5) + std::log(2.0 / (M_PI * 5 * (1 + tau * tau / 25))) + q[1];
    for (int j = 0; j < 8; ++j) {
      lp += NormalLogPdf(q[2 + j], 0, 1) + NormalLogPdf(y[j], mu + tau * q[2 + j], sigma[j]);
    }
    return lp;
  }, 1e-12);
  std::vector<double> q = RandomPoint(10, 4), theta(8), constrained(10);
  target->Generate(q, theta);
  Constrain(*target, q, constrained);
  EXPECT_EQ(constrained[1], std::exp(q[1]));
  for (int j = 0; j < 8; ++j) EXPECT_EQ(theta[j], q[0] + std::exp(q[1]) * q[2 + j]);
  EXPECT_TRUE(std::isnan(target->known_moments().mean[0]));
  EXPECT_EQ(target->exact_draw_normals(), 0);
  // Far out on tau: -inf or NaN, never a crash.
  q[1] = 1000;
  EXPECT_FALSE(std::isfinite(LogDensity(*target, q)));
}

TEST(KnownAnswerTest, LogisticRegressionDataAreFixed) {
  auto target = Make("logistic_regression");
  const LogisticRegression::Data& data =
      static_cast<LogisticRegression*>(target.get())->data();
  ASSERT_EQ(data.rows, 200);
  ASSERT_EQ(data.features, 5);
  ASSERT_EQ(data.x.size(), 1000u);
  double ones = 0, sum = 0, sum_sq = 0;
  for (double v : data.y) ones += v;
  for (double v : data.x) {
    sum += v;
    sum_sq += v * v;
  }
  // Golden values: the generator uses only exact arithmetic for x, so these
  // are the same on every machine. A change here changes every user's data.
  EXPECT_EQ(ones, kLogisticOnes);
  EXPECT_EQ(sum, kLogisticSum);
  EXPECT_EQ(data.x[0], kLogisticX0);
  // Structural: Irwin-Hall features have mean ~0 and variance ~1.
  EXPECT_NEAR(sum / 1000, 0.0, 0.1);
  EXPECT_NEAR(sum_sq / 1000, 1.0, 0.15);
  EXPECT_GT(ones, 60);
  EXPECT_LT(ones, 140);
  // Same seed, same data; another seed, other data.
  EXPECT_EQ(LogisticRegression::GenerateData(200, 5, 20240601).x, data.x);
  EXPECT_NE(LogisticRegression::GenerateData(200, 5, 1).x, data.x);

  ExpectLogDensityDifferences(*target, [&](const std::vector<double>& q) {
    double lp = NormalLogPdf(q[0], 0, 2.5);
    for (int j = 0; j < 5; ++j) lp += NormalLogPdf(q[1 + j], 0, 2.5);
    for (int i = 0; i < 200; ++i) {
      double eta = q[0];
      for (int j = 0; j < 5; ++j) eta += data.x[i * 5 + j] * q[1 + j];
      const double p = 1 / (1 + std::exp(-eta));
      lp += data.y[i] != 0 ? std::log(p) : std::log(1 - p);
    }
    return lp;
  }, 1e-11, /*radius=*/1.0);
}

TEST(KnownAnswerTest, BetaBernoulliMatchesCmdStanLp) {
  auto target = Make("beta_bernoulli");
  EXPECT_EQ(target->parameters()[0].transform, Transform::kLogit);
  // (theta, lp__) rows of tests/mcmc/data/bern1.csv (CmdStan, Stan's
  // bernoulli example: the default data, Beta(1, 1) prior).
  const std::pair<double, double> rows[] = {
      {0.208532, -6.80778}, {0.0272877, -11.053}, {0.0293594, -10.8526},
      {0.661812, -10.9957}, {0.457561, -7.85065}, {0.356179, -7.05998},
      {0.251099, -6.74806}};
  for (const auto& [theta, lp] : rows) {
    std::vector<double> x = {theta}, q(1);
    ASSERT_TRUE(Unconstrain(*target, x, q).ok());
    // CSV values carry 6 significant digits.
    EXPECT_NEAR(LogDensity(*target, q), lp, 2e-4) << theta;
  }
  auto* bb = static_cast<BetaBernoulli*>(target.get());
  EXPECT_EQ(bb->posterior_a(), 3.0);
  EXPECT_EQ(bb->posterior_b(), 9.0);
  EXPECT_EQ(bb->posterior_mean(), 0.25);
  EXPECT_NEAR(bb->posterior_variance(), 27.0 / (144.0 * 13.0), 1e-17);
  EXPECT_EQ(target->exact_draw_normals(), 24);
  // Half-integer posteriors still have an exact sampler; others do not.
  EXPECT_EQ(Make("beta_bernoulli", {{"a", 0.5}, {"b", 0.5}, {"y", json::array()}})
                ->exact_draw_normals(),
            2);
  EXPECT_EQ(Make("beta_bernoulli", {{"a", 0.3}})->exact_draw_normals(), 0);
  // Extreme u: finite, no NaN.
  for (double u : {-800.0, 800.0}) {
    std::vector<double> q = {u}, grad(1);
    const double lp = target->LogDensityGradient(q, grad);
    EXPECT_TRUE(std::isfinite(lp)) << u;
    EXPECT_TRUE(std::isfinite(grad[0])) << u;
  }
}

TEST(KnownAnswerTest, Bimodal) {
  auto target = Make("bimodal", {{"dimension", 3}, {"offset", 2.0}});
  ExpectLogDensityDifferences(*target, [](const std::vector<double>& q) {
    double a = 0, b = 0;
    for (double x : q) {
      a += NormalLogPdf(x, 2, 1);
      b += NormalLogPdf(x, -2, 1);
    }
    return std::log(0.5 * std::exp(a) + 0.5 * std::exp(b));
  }, 1e-12);
  // Far from both modes the naive formula underflows; ours stays finite.
  std::vector<double> far = {60, 60, 60}, grad(3);
  const double lp = target->LogDensityGradient(far, grad);
  EXPECT_NEAR(lp, -0.5 * 3 * 58 * 58, 1e-9);
  EXPECT_NEAR(grad[0], -58, 1e-12);
  EXPECT_EQ(target->known_moments().variance[0], 5.0);
}

TEST(KnownAnswerTest, MockTargets) {
  auto flat = Make("never_uturn", {{"dimension", 3}});
  std::vector<double> q = {1e300, -5, 0}, grad(3, 9.0);
  EXPECT_EQ(flat->LogDensityGradient(q, grad), 0.0);
  EXPECT_EQ(grad, (std::vector<double>{0, 0, 0}));

  auto jump = Make("energy_jump", {{"dimension", 2}, {"height", 999.5}});
  std::vector<double> origin = {0.0, -0.0}, g(2, 9.0);
  EXPECT_EQ(jump->LogDensityGradient(origin, g), 0.0);
  EXPECT_EQ(g, (std::vector<double>{0, 0}));
  for (std::vector<double> off : {std::vector<double>{5e-324, 0}, {0, -1}, {3, 4}}) {
    EXPECT_EQ(jump->LogDensityGradient(off, g), -999.5);
  }
  // The documented energy error: (height + K) - K == height within 2.3e-13.
  for (double height : {999.999, 1000.001}) {
    for (double k : {0.01, 1.7, 55.3, 900.0}) {
      const double error = (height + k) - k;
      EXPECT_NEAR(error, height, 2.3e-13);
      EXPECT_EQ(error > 1000, height > 1000);
    }
  }
}

// ---------------------------------------------------------------------------
// Exact draws agree with the known moments (fixed seed; 6-sigma bounds).

TEST(ExactDrawTest, MomentsMatchKnownMoments) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"iid_gaussian", {{"dimension", 10}}}, {"ar1", {{"dimension", 10}}},
      {"ill_conditioned", {{"dimension", 10}}}, {"correlated_2d", json::object()},
      {"funnel", json::object()}, {"banana", json::object()},
      {"bimodal", json::object()}, {"beta_bernoulli", json::object()}};
  constexpr int kDraws = 20000;
  for (const auto& [name, params] : cases) {
    SCOPED_TRACE(name);
    std::unique_ptr<Target> target = Make(name, params);
    const int64_t d = target->dimension(), n = target->exact_draw_normals();
    ASSERT_GT(n, 0);
    KnownMoments known = target->known_moments();
    std::vector<double> normals(n), q(d), x(d);
    std::vector<double> sum(d), sum_sq(d), sum_4(d);
    std::vector<std::vector<double>> draws(d, std::vector<double>(kDraws));
    for (int k = 0; k < kDraws; ++k) {
      for (int64_t i = 0; i < n; ++i) normals[i] = PhiloxNormal(/*key=*/4242, k, i);
      target->ExactDraw(normals, q);
      Constrain(*target, q, x);
      for (int64_t i = 0; i < d; ++i) draws[i][k] = x[i];
    }
    for (int64_t i = 0; i < d; ++i) {
      double mean = 0;
      for (double v : draws[i]) mean += v;
      mean /= kDraws;
      double m2 = 0, m4 = 0;
      for (double v : draws[i]) {
        const double c = v - mean;
        m2 += c * c;
        m4 += c * c * c * c;
      }
      m2 /= kDraws - 1;
      m4 /= kDraws;
      EXPECT_NEAR(mean, known.mean[i], 6 * std::sqrt(known.variance[i] / kDraws))
          << "column " << i;
      // The funnel's x_i have heavy tails (kurtosis ~ e^9): the sample
      // variance is too noisy to test; its x_0 is Gaussian.
      if (name == "funnel" && i > 0) continue;
      EXPECT_NEAR(m2, known.variance[i], 6 * std::sqrt(std::max(m4 - m2 * m2, 0.0) / kDraws))
          << "column " << i;
    }
  }
}

TEST(ExactDrawTest, Ar1DrawsHaveTheRightCorrelation) {
  std::unique_ptr<Target> target = Make("ar1", {{"dimension", 3}});
  constexpr int kDraws = 20000;
  double c01 = 0, c02 = 0;
  std::vector<double> normals(3), q(3);
  for (int k = 0; k < kDraws; ++k) {
    for (int i = 0; i < 3; ++i) normals[i] = PhiloxNormal(/*key=*/99, k, i);
    target->ExactDraw(normals, q);
    c01 += q[0] * q[1];
    c02 += q[0] * q[2];
  }
  // Var of a product of unit normals with correlation r is 1 + r^2 <= 2.
  EXPECT_NEAR(c01 / kDraws, 0.9, 6 * std::sqrt(2.0 / kDraws));
  EXPECT_NEAR(c02 / kDraws, 0.81, 6 * std::sqrt(2.0 / kDraws));
}

}  // namespace
}  // namespace autobatch::mcmc
