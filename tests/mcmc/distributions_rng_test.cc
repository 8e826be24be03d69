// The `_rng` functions (mcmc/model/distributions_rng.h): means and variances
// within a few Monte Carlo standard errors on many draws (fixed keys), the
// same bits at every batch size, the values outside the domain, and a
// vector argument of the wrong shape as a type error.
#include "mcmc/model/distributions_rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/tensor.h"
#include "frontend/context.h"
#include "frontend/value.h"

namespace autobatch::mcmc {
namespace {

constexpr int64_t kDraws = 40000;
constexpr uint64_t kKey = 0x5eed0f7e57ULL;

using Draw = std::function<Value(RandomStream&)>;

// An f64 vector constant.
Value F64s(std::vector<double> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return constant(Literal{Vector(DType::kF64, n), std::move(values), {}});
}

// Runs `draw` on `lanes` lanes, lane l with counter (first + l) << 32, as
// f64 values (an i64 draw is cast), lane-major.
std::vector<double> RunDraws(const Draw& draw, int64_t lanes, int64_t first = 0, int64_t size = 1) {
  Context ctx;
  BatchFunction f = ctx.Batch(
      "draw", {.param_names = {"key", "counter"}})([&](Builder& b, Value key, Value counter) {
    Var c = b.Local("c", counter);
    RandomStream rng(key, &c, &b);
    return cast(draw(rng), DType::kF64);
  });
  Tensor keys(Scalar(DType::kU64), lanes), counters(Scalar(DType::kU64), lanes);
  for (int64_t l = 0; l < lanes; ++l) {
    keys.data<uint64_t>()[l] = kKey;
    counters.data<uint64_t>()[l] = static_cast<uint64_t>(first + l) << 32;
  }
  absl::StatusOr<std::vector<Tensor>> out = f.Run({keys, counters});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  const double* v = (*out)[0].data<double>();
  return std::vector<double>(v, v + lanes * size);
}

// Element `e` of every lane's draw of `size` elements: mean and variance
// within `z` standard errors of the expected ones (the variance's standard
// error from the sample's fourth central moment).
void ExpectMoments(const std::vector<double>& draws, int64_t size, int64_t e, double mean,
                   double variance, const std::string& what, double z = 4.5) {
  const double n = static_cast<double>(draws.size() / size);
  double m = 0;
  for (size_t i = e; i < draws.size(); i += size) m += draws[i] / n;
  double m2 = 0, m4 = 0;
  for (size_t i = e; i < draws.size(); i += size) {
    const double d = draws[i] - m;
    m2 += d * d / n;
    m4 += d * d * d * d / n;
  }
  EXPECT_NEAR(m, mean, z * std::sqrt(variance / n)) << what << ": mean";
  EXPECT_NEAR(m2, variance, z * std::sqrt((m4 - m2 * m2) / n)) << what << ": variance";
}

TEST(DistributionsRngTest, MomentsMatchTheDistributions) {
  const double logistic = 1.0 / (1.0 + std::exp(0.5));
  struct Case {
    std::string name;
    Draw draw;
    double mean, variance;
  };
  const double ln_mean = std::exp(0.2 + 0.125);
  const std::vector<Case> cases = {
      {"normal(1.5, 2)", [](RandomStream& r) { return normal_rng(r, 1.5, 2.0); }, 1.5, 4.0},
      {"lognormal(0.2, 0.5)", [](RandomStream& r) { return lognormal_rng(r, 0.2, 0.5); }, ln_mean,
       (std::exp(0.25) - 1) * ln_mean * ln_mean},
      {"uniform(-1, 3)", [](RandomStream& r) { return uniform_rng(r, -1.0, 3.0); }, 1.0,
       16.0 / 12.0},
      {"exponential(2)", [](RandomStream& r) { return exponential_rng(r, 2.0); }, 0.5, 0.25},
      {"bernoulli(0.3)", [](RandomStream& r) { return bernoulli_rng(r, 0.3); }, 0.3, 0.21},
      {"bernoulli_logit(-0.5)", [](RandomStream& r) { return bernoulli_logit_rng(r, -0.5); },
       logistic, logistic * (1 - logistic)},
      {"poisson(3.7)", [](RandomStream& r) { return poisson_rng(r, 3.7); }, 3.7, 3.7},
      {"poisson(0.05)", [](RandomStream& r) { return poisson_rng(r, 0.05); }, 0.05, 0.05},
      {"poisson(250)", [](RandomStream& r) { return poisson_rng(r, 250.0); }, 250, 250},
  };
  for (const Case& c : cases)
    ExpectMoments(RunDraws(c.draw, kDraws), 1, 0, c.mean, c.variance, c.name);
}

TEST(DistributionsRngTest, VectorsDrawEachElementWithItsOwnArguments) {
  // mu and lambda per element, sigma broadcast: the elements are independent
  // draws of their own distributions.
  const Draw normals = [](RandomStream& r) {
    return normal_rng(r, F64s({-2.0, 0.0, 5.0}), 0.5, {3});
  };
  const std::vector<double> z = RunDraws(normals, kDraws, 0, 3);
  ExpectMoments(z, 3, 0, -2.0, 0.25, "normal[0]");
  ExpectMoments(z, 3, 2, 5.0, 0.25, "normal[2]");
  double cross = 0;  // elements 0 and 1 uncorrelated
  for (size_t i = 0; i < z.size(); i += 3) cross += (z[i] + 2.0) * z[i + 1] / kDraws;
  EXPECT_NEAR(cross, 0.0, 4.5 * 0.25 / std::sqrt(kDraws));
  const Draw counts = [](RandomStream& r) { return poisson_rng(r, F64s({0.5, 20.0}), {2}); };
  const std::vector<double> n = RunDraws(counts, kDraws, 0, 2);
  ExpectMoments(n, 2, 0, 0.5, 0.5, "poisson[0]");
  ExpectMoments(n, 2, 1, 20.0, 20.0, "poisson[1]");
}

// A lane's draws are a function of its (key, counter) alone: computed in
// one batch or in pieces, the same bits (poisson's loops run per lane).
TEST(DistributionsRngTest, ALanesDrawsDoNotDependOnTheBatch) {
  const Draw draw = [](RandomStream& r) {
    return poisson_rng(r, 4.0 + normal_rng(r, 0.0, 1.0)) + bernoulli_rng(r, 0.5);
  };
  const std::vector<double> all = RunDraws(draw, 1000);
  for (const auto& [first, size] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {7, 93}}) {
    const std::vector<double> part = RunDraws(draw, size, first);
    for (int64_t l = 0; l < size; ++l) {
      EXPECT_EQ(std::memcmp(&part[l], &all[first + l], sizeof(double)), 0) << "lane " << first + l;
    }
  }
}

TEST(DistributionsRngTest, OutsideTheDomainRealsAreNanAndCountsMinusOne) {
  const std::vector<std::pair<std::string, Draw>> nan_cases = {
      {"normal sigma 0", [](RandomStream& r) { return normal_rng(r, 0.0, 0.0); }},
      {"lognormal sigma -1", [](RandomStream& r) { return lognormal_rng(r, 0.0, -1.0); }},
      {"uniform a = b", [](RandomStream& r) { return uniform_rng(r, 1.0, 1.0); }},
      {"exponential rate 0", [](RandomStream& r) { return exponential_rng(r, 0.0); }},
  };
  for (const auto& [name, draw] : nan_cases) {
    EXPECT_TRUE(std::isnan(RunDraws(draw, 1)[0])) << name;
  }
  const double nan = std::nan("");
  const std::vector<std::pair<std::string, Draw>> minus_one_cases = {
      {"bernoulli 1.5", [](RandomStream& r) { return bernoulli_rng(r, 1.5); }},
      {"bernoulli NaN", [nan](RandomStream& r) { return bernoulli_rng(r, nan); }},
      {"bernoulli_logit NaN", [nan](RandomStream& r) { return bernoulli_logit_rng(r, nan); }},
      {"poisson -1", [](RandomStream& r) { return poisson_rng(r, -1.0); }},
      {"poisson 2^30", [](RandomStream& r) { return poisson_rng(r, 1073741824.0); }},
      {"poisson inf", [](RandomStream& r) { return poisson_rng(r, INFINITY); }},
      {"poisson NaN", [nan](RandomStream& r) { return poisson_rng(r, nan); }},
  };
  for (const auto& [name, draw] : minus_one_cases) EXPECT_EQ(RunDraws(draw, 1)[0], -1.0) << name;
  EXPECT_EQ(RunDraws([](RandomStream& r) { return poisson_rng(r, 0.0); }, 100),
            std::vector<double>(100, 0.0));
}

TEST(DistributionsRngTest, AVectorArgumentOfAnotherShapeIsATypeError) {
  Context ctx;
  BatchFunction f = ctx.Batch(
      "draw", {.param_names = {"key", "counter"}})([&](Builder& b, Value key, Value counter) {
    Var c = b.Local("c", counter);
    RandomStream rng(key, &c, &b);
    // A scalar draw (no shape given) with a vector mean.
    return normal_rng(rng, F64s({1.0, 2.0}), 1.0);
  });
  absl::StatusOr<std::vector<Tensor>> out =
      f.Run({Tensor(Scalar(DType::kU64), 1), Tensor(Scalar(DType::kU64), 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("distributions_rng_test.cc"),
            std::string::npos)
      << out.status();
  EXPECT_NE(std::string(out.status().message()).find("both branches of select need one type"),
            std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace autobatch::mcmc
