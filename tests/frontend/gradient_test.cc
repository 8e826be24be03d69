// Gradients by the compiler (Context::Gradient, passes/differentiate.h):
// composite programs (straight-line code, branches, loops with per-lane trip
// counts, nested loops, an if inside a loop, a call inside a loop, vectors)
// against hand-written gradients and central finite differences, with the
// same bits on every executor, batch size and lane order.
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "frontend/context.h"
#include "frontend/value.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "mcmc/model/targets/eight_schools.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "samples/gradients/log_densities.h"
#include "tests/frontend/test_util.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

using testing::Executor;

std::vector<Executor> Executors() { return testing::EveryExecutor(); }

std::vector<Tensor> Inputs(const std::vector<std::vector<double>>& f64,
                           const std::vector<std::vector<int64_t>>& i64 = {}) {
  std::vector<Tensor> out;
  for (const auto& v : f64) out.push_back(*Tensor::FromVector(v));
  for (const auto& v : i64) out.push_back(*Tensor::FromVector(v));
  return out;
}

// Runs `g` on every executor; all must succeed with identical bits. Returns
// the outputs (flattened per output).
std::vector<std::vector<double>> RunEverywhere(const BatchFunction& g,
                                               const std::vector<Tensor>& inputs) {
  std::vector<std::vector<double>> first;
  for (const Executor& e : Executors()) {
    absl::StatusOr<std::vector<Tensor>> out = g.Run(inputs, e.options);
    EXPECT_TRUE(out.ok()) << e.name << ": " << out.status();
    if (!out.ok()) return {};
    std::vector<std::vector<double>> values;
    for (const Tensor& t : *out) values.push_back(t.ToVector<double>());
    if (first.empty()) {
      first = values;
      continue;
    }
    for (size_t k = 0; k < values.size(); ++k) {
      for (size_t i = 0; i < values[k].size(); ++i) {
        EXPECT_EQ(std::bit_cast<uint64_t>(values[k][i]), std::bit_cast<uint64_t>(first[k][i]))
            << e.name << " output " << k << " lane " << i << ": " << values[k][i] << " vs "
            << first[k][i];
      }
    }
  }
  return first;
}

// Central differences of `f` (one f64 output) in f64 input `param`, with step
// h * max(1, |x|).
std::vector<double> FiniteDifference(const BatchFunction& f,
                                     const std::vector<std::vector<double>>& f64,
                                     const std::vector<std::vector<int64_t>>& i64, size_t param,
                                     double h = 1e-6) {
  std::vector<std::vector<double>> up = f64, down = f64;
  std::vector<double> steps;
  for (size_t i = 0; i < f64[param].size(); ++i) {
    const double step = h * std::max(1.0, std::abs(f64[param][i]));
    up[param][i] += step;
    down[param][i] -= step;
    steps.push_back(up[param][i] - down[param][i]);
  }
  const auto hi = f.Run(Inputs(up, i64), {.dry_run = true});
  const auto lo = f.Run(Inputs(down, i64), {.dry_run = true});
  EXPECT_TRUE(hi.ok() && lo.ok());
  if (!hi.ok() || !lo.ok()) return {};
  const std::vector<double> a = (*hi)[0].ToVector<double>();
  const std::vector<double> b = (*lo)[0].ToVector<double>();
  std::vector<double> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back((a[i] - b[i]) / steps[i]);
  return out;
}

void ExpectNear(const std::vector<double>& actual, const std::vector<double>& expected,
                double tolerance, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double scale = std::max(1.0, std::abs(expected[i]));
    EXPECT_NEAR(actual[i], expected[i], tolerance * scale) << what << " lane " << i;
  }
}

// Checks gradient `g` of `f` on the given points: the value equals f's, each
// gradient matches `hand` (hand[k][lane]) closely and central differences
// loosely; the same bits on every executor.
void CheckGradient(const BatchFunction& f, const BatchFunction& g,
                   const std::vector<std::vector<double>>& f64,
                   const std::vector<std::vector<int64_t>>& i64, const std::vector<size_t>& wrt,
                   const std::vector<std::vector<double>>& hand) {
  const std::vector<std::vector<double>> out = RunEverywhere(g, Inputs(f64, i64));
  ASSERT_EQ(out.size(), 1 + wrt.size());
  const auto value = f.Run(Inputs(f64, i64), {.dry_run = true});
  ASSERT_TRUE(value.ok()) << value.status();
  ExpectNear(out[0], (*value)[0].ToVector<double>(), 0, "value");
  for (size_t k = 0; k < wrt.size(); ++k) {
    ExpectNear(out[1 + k], hand[k], 1e-12, "hand-written gradient " + std::to_string(k));
    ExpectNear(out[1 + k], FiniteDifference(f, f64, i64, wrt[k]), 1e-6,
               "finite differences " + std::to_string(k));
  }
}

TEST(GradientTest, StraightLine) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x", "y"}})(
      [](Value x, Value y) { return x * y + exp(x) - log(y) / x; });
  BatchFunction g = ctx.Gradient(f);
  const std::vector<double> x = {0.5, 1.5, -2.0, 3.0}, y = {2.0, 0.25, 4.0, 1.0};
  std::vector<double> dx, dy;
  for (size_t i = 0; i < x.size(); ++i) {
    dx.push_back(y[i] + std::exp(x[i]) + std::log(y[i]) / (x[i] * x[i]));
    dy.push_back(x[i] - 1 / (x[i] * y[i]));
  }
  CheckGradient(f, g, {x, y}, {}, {0, 1}, {dx, dy});
}

TEST(GradientTest, WithRespectToSomeParams) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x", "y"}})(
      [](Value x, Value y) { return x * y * y; });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"y"}});
  const std::vector<double> x = {0.5, 2.0}, y = {3.0, -1.0};
  CheckGradient(f, g, {x, y}, {}, {1}, {{2 * 0.5 * 3.0, 2 * 2.0 * -1.0}});
}

TEST(GradientTest, IfElse) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([](Builder& b, Value x) {
    Var r = b.Local("r");
    b.If(x > 0.0).Then([&] { r = x * x * x; }).Else([&] { r = -2.0 * x + tanh(x); });
    return r;
  });
  BatchFunction g = ctx.Gradient(f);
  const std::vector<double> x = {0.5, -1.5, 2.0, -0.25, 1.0};
  std::vector<double> dx;
  for (double v : x) {
    dx.push_back(v > 0 ? 3 * v * v : -2.0 + (1 - std::tanh(v) * std::tanh(v)));
  }
  CheckGradient(f, g, {x}, {}, {0}, {dx});
}

// exp(x) as a series summed until the term is negligible: a loop whose trip
// count depends on the lane's x.
TEST(GradientTest, SeriesSummedUntilTheTermIsSmall) {
  Context ctx;
  BatchFunction f = ctx.Batch("series_exp", {.param_names = {"x"}})([](Builder& b, Value x) {
    Var term = b.Local("term", fill_like(x, 1.0));
    Var sum = b.Local("sum", fill_like(x, 1.0));
    Var k = b.Local("k", fill_like(x, 1.0));
    b.While([&] { return abs(term) > 1e-17 * abs(sum); }).Do([&] {
      term = term * x / k;
      sum += term;
      k += 1.0;
    });
    return sum;
  });
  BatchFunction g = ctx.Gradient(f);
  const std::vector<double> x = {0.1, -3.0, 2.5, 7.0, 0.0, -0.5};
  std::vector<double> dx;
  for (double v : x) dx.push_back(std::exp(v));
  const std::vector<std::vector<double>> out = RunEverywhere(g, Inputs({x}));
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[1], dx, 1e-12, "d/dx of the series");
  ExpectNear(out[1], FiniteDifference(f, {x}, {}, 0), 1e-6, "finite differences");
}

// sqrt by Newton's method, iterated until converged: per-lane trip counts.
TEST(GradientTest, NewtonSolve) {
  Context ctx;
  BatchFunction f = ctx.Batch("newton_sqrt", {.param_names = {"a"}})([](Builder& b, Value a) {
    Var y = b.Local("y", a);
    b.While([&] { return abs(y * y - a) > 1e-14 * a; }).Do([&] { y = 0.5 * (y + a / y); });
    return y;
  });
  BatchFunction g = ctx.Gradient(f);
  // Not 1: there y = a is already converged, no step runs, and the program's
  // derivative is 1, not d sqrt(a) / da.
  const std::vector<double> a = {2.0, 100.0, 0.5, 12345.0, 3.0};
  std::vector<double> da;
  for (double v : a) da.push_back(0.5 / std::sqrt(v));
  const std::vector<std::vector<double>> out = RunEverywhere(g, Inputs({a}));
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[1], da, 1e-10, "d sqrt(a) / da");
  ExpectNear(out[1], FiniteDifference(f, {a}, {}, 0), 1e-6, "finite differences");
}

// prod_{i < n} (x + i) with an integer trip count per lane.
TEST(GradientTest, LoopWithIntegerTripCount) {
  Context ctx;
  BatchFunction f =
      ctx.Batch("rising", {.param_names = {"x", "n"}})([](Builder& b, Value x, Value n) {
        Var p = b.Local("p", fill_like(x, 1.0));
        Var i = b.Local("i", fill_like(n, 0));
        b.While([&] { return i < n; }).Do([&] {
          p = p * (x + cast(i, DType::kF64));
          i += 1;
        });
        return p;
      });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"x"}});
  const std::vector<double> x = {0.5, 1.25, 2.0, -0.3};
  const std::vector<int64_t> n = {0, 3, 6, 1};
  std::vector<double> dx;
  for (size_t l = 0; l < x.size(); ++l) {
    double p = 1, s = 0;
    for (int64_t i = 0; i < n[l]; ++i) {
      p *= x[l] + static_cast<double>(i);
      s += 1 / (x[l] + static_cast<double>(i));
    }
    dx.push_back(p * s);
  }
  CheckGradient(f, g, {x}, {n}, {0}, {dx});
}

// sum_{i < n} x^i with an inner loop computing x^i.
TEST(GradientTest, NestedLoops) {
  Context ctx;
  BatchFunction f =
      ctx.Batch("powers", {.param_names = {"x", "n"}})([](Builder& b, Value x, Value n) {
        Var s = b.Local("s", fill_like(x, 0.0));
        Var i = b.Local("i", fill_like(n, 0));
        b.While([&] { return i < n; }).Do([&] {
          Var t = b.Local("t", fill_like(x, 1.0));
          Var j = b.Local("j", fill_like(n, 0));
          b.While([&] { return j < i; }).Do([&] {
            t = t * x;
            j += 1;
          });
          s += t;
          i += 1;
        });
        return s;
      });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"x"}});
  const std::vector<double> x = {0.5, 1.5, -0.75};
  const std::vector<int64_t> n = {4, 2, 7};
  std::vector<double> dx;
  for (size_t l = 0; l < x.size(); ++l) {
    double d = 0;
    for (int64_t i = 1; i < n[l]; ++i) d += static_cast<double>(i) * std::pow(x[l], i - 1);
    dx.push_back(d);
  }
  CheckGradient(f, g, {x}, {n}, {0}, {dx});
}

// An if inside a loop: even steps multiply by x, odd steps add x.
TEST(GradientTest, IfInsideLoop) {
  Context ctx;
  BatchFunction f =
      ctx.Batch("alternate", {.param_names = {"x", "n"}})([](Builder& b, Value x, Value n) {
        Var s = b.Local("s", fill_like(x, 1.0));
        Var i = b.Local("i", fill_like(n, 0));
        b.While([&] { return i < n; }).Do([&] {
          b.If(i % 2 == 0).Then([&] { s = s * x; }).Else([&] { s = s + x; });
          i += 1;
        });
        return s;
      });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"x"}});
  const std::vector<double> x = {0.5, 1.5, -2.0, 3.0};
  const std::vector<int64_t> n = {5, 1, 4, 0};
  std::vector<double> dx;
  for (size_t l = 0; l < x.size(); ++l) {
    double s = 1, ds = 0;
    for (int64_t i = 0; i < n[l]; ++i) {
      if (i % 2 == 0) {
        ds = ds * x[l] + s;
        s = s * x[l];
      } else {
        ds = ds + 1;
        s = s + x[l];
      }
    }
    dx.push_back(ds);
  }
  CheckGradient(f, g, {x}, {n}, {0}, {dx});
}

// A registered (non-recursive) function called inside a loop: inlined.
TEST(GradientTest, CallInsideLoop) {
  Context ctx;
  BatchFunction h = ctx.Batch("h", {.param_names = {"u", "x"}})(
      [](Value u, Value x) { return 0.5 * u * u + sqrt(x) * u; });
  BatchFunction f =
      ctx.Batch("iterate", {.param_names = {"x", "n"}})([&](Builder& b, Value x, Value n) {
        Var u = b.Local("u", x);
        Var i = b.Local("i", fill_like(n, 0));
        b.While([&] { return i < n; }).Do([&] {
          u = h(u, x);
          i += 1;
        });
        return u;
      });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"x"}});
  const std::vector<double> x = {0.25, 0.5, 0.8};
  const std::vector<int64_t> n = {3, 0, 5};
  std::vector<double> dx;
  for (size_t l = 0; l < x.size(); ++l) {
    double u = x[l], du = 1;
    const double r = std::sqrt(x[l]), dr = 0.5 / r;
    for (int64_t i = 0; i < n[l]; ++i) {
      du = u * du + dr * u + r * du;
      u = 0.5 * u * u + r * u;
    }
    dx.push_back(du);
  }
  CheckGradient(f, g, {x}, {n}, {0}, {dx});
}

// Ops with kinks and the rest of the scalar primitives, at points away from
// the kinks.
TEST(GradientTest, ScalarPrimitives) {
  Context ctx;
  BatchFunction f = ctx.Batch("mix", {.param_names = {"x", "y"}})([](Value x, Value y) {
    return max(x, y) * abs(x) + pow(y, x) + min(x * y, y) + sqrt(y) * expm1(x) +
           log1p(y) / (x * x + 1.0) + mod(x * 3.0, y) + select(x > y, x, -y);
  });
  BatchFunction g = ctx.Gradient(f);
  // Away from fmod's jumps too (3x / y not an integer).
  const std::vector<double> x = {0.7, -1.3, 2.2, 0.3}, y = {1.9, 0.6, 1.3, 2.6};
  std::vector<double> dx, dy;
  for (size_t i = 0; i < x.size(); ++i) {
    const double a = x[i], b = y[i];
    double gx = 0, gy = 0;
    // max(x, y) * |x|
    const double m = std::max(a, b), sa = a > 0 ? 1 : -1;
    gx += (a >= b ? 1 : 0) * std::abs(a) + m * sa;
    gy += (b > a ? 1 : 0) * std::abs(a);
    // y^x
    gx += std::pow(b, a) * std::log(b);
    gy += a * std::pow(b, a - 1);
    // min(x y, y)
    if (a * b <= b) {
      gx += b;
      gy += a;
    } else {
      gy += 1;
    }
    // sqrt(y) expm1(x)
    gx += std::sqrt(b) * std::exp(a);
    gy += 0.5 / std::sqrt(b) * std::expm1(a);
    // log1p(y) / (x^2 + 1)
    const double q = a * a + 1;
    gx += -std::log1p(b) * 2 * a / (q * q);
    gy += 1 / ((1 + b) * q);
    // fmod(3x, y)
    gx += 3;
    gy += -std::trunc(3 * a / b);
    // select(x > y, x, -y)
    if (a > b) {
      gx += 1;
    } else {
      gy += -1;
    }
    dx.push_back(gx);
    dy.push_back(gy);
  }
  CheckGradient(f, g, {x, y}, {}, {0, 1}, {dx, dy});
}

// The result does not depend on a wrt param: its gradient is 0.
TEST(GradientTest, UnusedParamGetsZero) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x", "y"}})(
      [](Value x, Value y) { return x * x + floor(y); });
  BatchFunction g = ctx.Gradient(f);
  const std::vector<std::vector<double>> out = RunEverywhere(g, Inputs({{1.5, -2.0}, {0.3, 7.7}}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out[1], ::testing::ElementsAre(3.0, -4.0));
  EXPECT_THAT(out[2], ::testing::ElementsAre(0.0, 0.0));
}

// The gradient is callable inside another body like any function.
TEST(GradientTest, CalledFromABody) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([](Value x) { return x * x * x; });
  BatchFunction g = ctx.Gradient(f);
  BatchFunction newton_step = ctx.Batch("step", {.param_names = {"x"}})([&](Value x) -> Value {
    const std::array<Value, 2> r = g(x).Get<2>();
    return x - r[0] / r[1];
  });
  const std::vector<std::vector<double>> out = RunEverywhere(newton_step, Inputs({{3.0, -6.0}}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ::testing::ElementsAre(2.0, -4.0));
}

// A lane's bits do not depend on the batch: lanes alone, reversed and in a
// bigger batch give the same gradient bits.
TEST(GradientTest, BitsDoNotDependOnTheBatch) {
  Context ctx;
  BatchFunction f =
      ctx.Batch("alternate", {.param_names = {"x", "n"}})([](Builder& b, Value x, Value n) {
        Var s = b.Local("s", fill_like(x, 1.0));
        Var i = b.Local("i", fill_like(n, 0));
        b.While([&] { return i < n; }).Do([&] {
          b.If(i % 3 == 0).Then([&] { s = s * x + exp(s * 0.1); }).Else([&] { s = tanh(s) + x; });
          i += 1;
        });
        return s;
      });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"x"}});
  std::vector<double> x;
  std::vector<int64_t> n;
  for (int i = 0; i < 37; ++i) {
    x.push_back(0.1 * i - 1.7);
    n.push_back((i * 7) % 11);
  }
  const std::vector<std::vector<double>> all = RunEverywhere(g, Inputs({x}, {n}));
  ASSERT_EQ(all.size(), 2u);
  std::vector<double> rx(x.rbegin(), x.rend());
  std::vector<int64_t> rn(n.rbegin(), n.rend());
  const std::vector<std::vector<double>> reversed = RunEverywhere(g, Inputs({rx}, {rn}));
  ASSERT_EQ(reversed.size(), 2u);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(all[1][i]),
              std::bit_cast<uint64_t>(reversed[1][x.size() - 1 - i]));
    const std::vector<std::vector<double>> one = RunEverywhere(g, Inputs({{x[i]}}, {{n[i]}}));
    ASSERT_EQ(one.size(), 2u);
    EXPECT_EQ(std::bit_cast<uint64_t>(all[1][i]), std::bit_cast<uint64_t>(one[1][0]));
  }
}

// Runs gradient `g` of model `f`, whose params are one f64[dim] vector, at
// `points` (lanes), checking value and gradient against the hand-written
// target's LogDensityGradient (to `tolerance`) and against central
// differences of f in each coordinate (to 1e-6).
void CheckModel(const BatchFunction& f, const BatchFunction& g, const mcmc::Target& target,
                int64_t dim, const std::vector<std::vector<double>>& points,
                double tolerance) {
  std::vector<double> flat;
  for (const auto& p : points) flat.insert(flat.end(), p.begin(), p.end());
  const std::vector<std::vector<double>> out =
      RunEverywhere(g, {*Tensor::FromVector(flat, {dim})});
  ASSERT_EQ(out.size(), 2u);
  for (size_t lane = 0; lane < points.size(); ++lane) {
    std::vector<double> grad(dim);
    const double logp = target.LogDensityGradient(points[lane], grad);
    EXPECT_NEAR(out[0][lane], logp, tolerance * std::max(1.0, std::abs(logp))) << lane;
    for (int64_t i = 0; i < dim; ++i) {
      EXPECT_NEAR(out[1][lane * dim + i], grad[i], tolerance * std::max(1.0, std::abs(grad[i])))
          << "lane " << lane << " coordinate " << i;
    }
  }
  for (int64_t i = 0; i < dim; ++i) {
    std::vector<double> up = flat, down = flat, steps;
    for (size_t lane = 0; lane < points.size(); ++lane) {
      double& x_up = up[lane * dim + i];
      double& x_down = down[lane * dim + i];
      const double step = 1e-6 * std::max(1.0, std::abs(x_up));
      x_up += step;
      x_down -= step;
      steps.push_back(x_up - x_down);
    }
    const auto hi = f.Run({*Tensor::FromVector(up, {dim})}, {.dry_run = true});
    const auto lo = f.Run({*Tensor::FromVector(down, {dim})}, {.dry_run = true});
    ASSERT_TRUE(hi.ok() && lo.ok());
    const std::vector<double> a = (*hi)[0].ToVector<double>();
    const std::vector<double> b = (*lo)[0].ToVector<double>();
    for (size_t lane = 0; lane < points.size(); ++lane) {
      const double difference = (a[lane] - b[lane]) / steps[lane];
      const double gradient = out[1][lane * dim + i];
      EXPECT_NEAR(gradient, difference, 1e-6 * std::max(1.0, std::abs(difference)))
          << "finite differences, lane " << lane << " coordinate " << i;
    }
  }
}

std::vector<std::vector<double>> Points(int64_t dim, int count) {
  std::vector<std::vector<double>> points;
  for (int lane = 0; lane < count; ++lane) {
    std::vector<double> p;
    for (int64_t i = 0; i < dim; ++i) p.push_back(std::sin(1.7 * i + 0.9 * lane) * 1.5);
    points.push_back(p);
  }
  return points;
}

TEST(GradientTest, EightSchoolsMatchesTheHandWrittenGradient) {
  Context ctx;
  BatchFunction f = samples::RegisterEightSchools(ctx);
  BatchFunction g = ctx.Gradient(f);
  CheckModel(f, g, *mcmc::EightSchools::Create(), 10, Points(10, 7), 1e-12);
}

TEST(GradientTest, LogisticRegressionMatchesTheHandWrittenGradient) {
  const mcmc::LogisticRegression::Options options{.rows = 50, .features = 4};
  auto target = mcmc::LogisticRegression::Create(options);
  ASSERT_TRUE(target.ok());
  const auto& data = (*target)->data();
  Context ctx;
  BatchFunction f = samples::RegisterLogisticRegression(ctx, data.x, data.y, data.rows,
                                                       data.features, options.prior_sd);
  BatchFunction g = ctx.Gradient(f);
  CheckModel(f, g, **target, 5, Points(5, 6), 1e-10);
}

TEST(GradientTest, RecursionIsAnErrorAtTheUsersLine) {
  Context ctx;
  BatchFunction f = ctx.Declare("f", {.param_names = {"x", "n"}});
  ctx.Batch(f)([&](Builder& b, Value x, Value n) {
    Var r = b.Local("r");
    b.If(n > 0).Then([&] { r = x * f(x, n - 1); }).Else([&] { r = fill_like(x, 1.0); });
    return r;
  });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"x"}});
  const auto out = g.Run(Inputs({{2.0}}, {{3}}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("recursive"));
  EXPECT_THAT(out.status().message(), HasSubstr("gradient_test.cc:"));
}

TEST(GradientTest, RandomDrawOnThePathIsAnError) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})(
      [](Value x) { return x * random_normal(uint64_t{1}, uint64_t{2}); });
  BatchFunction g = ctx.Gradient(f);
  const auto out = g.Run(Inputs({{2.0}}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("random draw"));
  EXPECT_THAT(out.status().message(), HasSubstr("gradient_test.cc:"));
}

TEST(GradientTest, UnknownWrtNameIsAnError) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([](Value x) { return x * x; });
  BatchFunction g = ctx.Gradient(f, {.wrt = {"z"}});
  const auto out = g.Run(Inputs({{2.0}}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("'z' is not a parameter of 'f'"));
}

// x^3 on f64 scalars, with (vjp) or without its vector-Jacobian product
// kernel (x, dz) -> 3 x^2 dz.
Kernel RegisterCube(Context& ctx, std::string vjp) {
  const TensorType f64 = Scalar(DType::kF64);
  KernelSignature cube{{f64}, {f64}};
  cube.vjp = vjp;
  if (!vjp.empty()) {
    ctx.RegisterKernel(vjp, KernelSignature{{f64, f64}, {f64}},
                       [](const KernelCall& call) -> absl::Status {
                         const double* x = reinterpret_cast<const double*>(call.inputs[0].data);
                         const double* dz = reinterpret_cast<const double*>(call.inputs[1].data);
                         double* dx = reinterpret_cast<double*>(call.outputs[0].data);
                         for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
                           dx[lane] = 3 * x[lane] * x[lane] * dz[lane];
                         }
                         return absl::OkStatus();
                       });
  }
  return ctx.RegisterKernel("cube", cube, [](const KernelCall& call) -> absl::Status {
    const double* x = reinterpret_cast<const double*>(call.inputs[0].data);
    double* z = reinterpret_cast<double*>(call.outputs[0].data);
    for (int64_t lane = 0; lane < call.num_lanes; ++lane) z[lane] = x[lane] * x[lane] * x[lane];
    return absl::OkStatus();
  });
}

TEST(GradientTest, UserKernelWithARegisteredVjp) {
  Context ctx;
  Kernel cube = RegisterCube(ctx, "cube_vjp");
  BatchFunction f = ctx.Batch("f", {.param_names = {"x", "y"}})(
      [&](Value x, Value y) { return cube(x) * y + x; });
  BatchFunction g = ctx.Gradient(f);
  const std::vector<double> x = {0.5, -1.5, 2.0}, y = {2.0, 3.0, -0.25};
  std::vector<double> dx, dy;
  for (size_t i = 0; i < x.size(); ++i) {
    dx.push_back(3 * x[i] * x[i] * y[i] + 1);
    dy.push_back(x[i] * x[i] * x[i]);
  }
  CheckGradient(f, g, {x, y}, {}, {0, 1}, {dx, dy});
  // The program lists the vjp kernel, and its text and JSON forms name it.
  absl::StatusOr<Program> program = ctx.Program(g);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_TRUE(program->module.kernels.contains("cube_vjp"));
  EXPECT_EQ(program->module.kernels.at("cube").vjp, "cube_vjp");
  EXPECT_THAT(PrintProgram(*program), HasSubstr("vjp \"cube_vjp\""));
  absl::StatusOr<Program> back = ProgramFromJson(ProgramToJson(*program));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->module.kernels, program->module.kernels);
}

TEST(GradientTest, UserKernelWithoutAVjpIsAnError) {
  Context ctx;
  Kernel cube = RegisterCube(ctx, "");
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([&](Value x) { return cube(x); });
  BatchFunction g = ctx.Gradient(f);
  const auto out = g.Run(Inputs({{2.0}}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("user kernel 'cube'"));
  EXPECT_THAT(out.status().message(), HasSubstr("KernelSignature::vjp"));
  EXPECT_THAT(out.status().message(), HasSubstr("gradient_test.cc:"));
}

TEST(GradientTest, UserKernelWithAnUnregisteredOrIllTypedVjpIsAnError) {
  {
    Context ctx;
    KernelSignature sig{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}};
    sig.vjp = "missing";
    Kernel k = ctx.RegisterKernel("k", sig, [](const KernelCall&) { return absl::OkStatus(); });
    BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([&](Value x) { return k(x); });
    const auto out = ctx.Gradient(f).Run(Inputs({{2.0}}));
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("'missing'"));
  }
  {
    Context ctx;
    KernelSignature sig{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}};
    sig.vjp = "bad_vjp";
    ctx.RegisterKernel("bad_vjp", KernelSignature{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}},
                       [](const KernelCall&) { return absl::OkStatus(); });
    Kernel k = ctx.RegisterKernel("k", sig, [](const KernelCall&) { return absl::OkStatus(); });
    BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([&](Value x) { return k(x); });
    const auto out = ctx.Gradient(f).Run(Inputs({{2.0}}));
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("a vjp takes the kernel's inputs"));
  }
}

TEST(GradientTest, VaryingMatrixOfMatvecInputIsAnError) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([](Value x) {
    Value m = broadcast(x, {2, 2});
    return reduce_sum(matvec_input(m, broadcast(x, {2})));
  });
  const auto out = ctx.Gradient(f).Run(Inputs({{2.0}}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("operand 0"));
  EXPECT_THAT(out.status().message(), HasSubstr("matvec_input"));
}

// bernoulli_logit_glm gives X (data) no gradient, so an X that depends on
// a parameter is refused, naming the op and the operand.
TEST(GradientTest, VaryingDesignMatrixOfBernoulliLogitGlmIsAnError) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x"}})([](Value x) {
    const Value y = cast(broadcast(x, {2}), DType::kI64);
    return bernoulli_logit_glm(broadcast(x, {2, 1}), y, x, broadcast(x, {1}));
  });
  const auto out = ctx.Gradient(f).Run(Inputs({{0.5}}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("operand 0"));
  EXPECT_THAT(out.status().message(), HasSubstr("bernoulli_logit_glm"));
  EXPECT_THAT(out.status().message(), HasSubstr("depends on a parameter"));
}

}  // namespace
}  // namespace autobatch
