// The adjoint table (passes/adjoints.h): every differentiable primitive
// against central finite differences at many points, and against hand
// derivations at special points (0, negative, huge, tiny, inf, NaN, kinks).
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/context.h"
#include "frontend/value.h"
#include "ir/primitives.h"
#include "passes/adjoints.h"

namespace autobatch {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The gradient of a one- or two-argument scalar function at the given
// points, on the reference interpreter and the stack VM (which must agree
// bit for bit). out[k][i]: d f / d arg k at point i.
std::vector<std::vector<double>> GradientAt(
    const std::function<Value(Value, Value)>& body, const std::vector<double>& x,
    const std::vector<double>& y) {
  Context ctx;
  BatchFunction f = ctx.Batch("f", {.param_names = {"x", "y"}})(
      [&](Value a, Value b) { return body(a, b); });
  BatchFunction g = ctx.Gradient(f);
  std::vector<Tensor> inputs = {*Tensor::FromVector(x), *Tensor::FromVector(y)};
  const auto reference = g.Run(inputs, {.dry_run = true});
  const auto stack = g.Run(inputs);
  EXPECT_TRUE(reference.ok()) << reference.status();
  EXPECT_TRUE(stack.ok()) << stack.status();
  if (!reference.ok() || !stack.ok()) return {};
  std::vector<std::vector<double>> out;
  for (size_t k = 1; k < 3; ++k) {
    std::vector<double> a = (*reference)[k].ToVector<double>();
    std::vector<double> b = (*stack)[k].ToVector<double>();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(std::bit_cast<uint64_t>(a[i]), std::bit_cast<uint64_t>(b[i])) << "point " << i;
    }
    out.push_back(a);
  }
  return out;
}

struct Case {
  std::string name;
  std::function<Value(Value, Value)> body;
  std::function<double(double, double)> f;  // the same function in C++
  double lo, hi;                            // where to sample both arguments
  bool kinked = false;                      // skip points within 1e-3 of a kink
  std::function<bool(double, double)> near_kink = nullptr;
};

std::vector<Case> Cases() {
  using std::abs;
  return {
      {"add", [](Value a, Value b) { return a + b; }, [](double a, double b) { return a + b; }, -5, 5},
      {"sub", [](Value a, Value b) { return a - b; }, [](double a, double b) { return a - b; }, -5, 5},
      {"mul", [](Value a, Value b) { return a * b; }, [](double a, double b) { return a * b; }, -5, 5},
      {"div", [](Value a, Value b) { return a / b; }, [](double a, double b) { return a / b; }, 0.5, 5},
      {"mod", [](Value a, Value b) { return mod(a, b); },
       [](double a, double b) { return std::fmod(a, b); }, 0.5, 9, true,
       [](double a, double b) {
         const double r = std::fmod(a, b);
         return std::abs(r) < 1e-3 || std::abs(r - b) < 1e-3;
       }},
      {"min", [](Value a, Value b) { return min(a, b); },
       [](double a, double b) { return std::min(a, b); }, -5, 5, true,
       [](double a, double b) { return std::abs(a - b) < 1e-3; }},
      {"max", [](Value a, Value b) { return max(a, b); },
       [](double a, double b) { return std::max(a, b); }, -5, 5, true,
       [](double a, double b) { return std::abs(a - b) < 1e-3; }},
      {"neg", [](Value a, Value b) { return -a * b; }, [](double a, double b) { return -a * b; }, -5, 5},
      {"abs", [](Value a, Value b) { return abs(a) * b; },
       [](double a, double b) { return std::abs(a) * b; }, -5, 5, true,
       [](double a, double) { return std::abs(a) < 1e-3; }},
      {"exp", [](Value a, Value b) { return exp(a) * b; },
       [](double a, double b) { return std::exp(a) * b; }, -5, 5},
      {"log", [](Value a, Value b) { return log(a) * b; },
       [](double a, double b) { return std::log(a) * b; }, 0.1, 9},
      {"log1p", [](Value a, Value b) { return log1p(a) * b; },
       [](double a, double b) { return std::log1p(a) * b; }, -0.9, 9},
      {"expm1", [](Value a, Value b) { return expm1(a) * b; },
       [](double a, double b) { return std::expm1(a) * b; }, -5, 5},
      {"sqrt", [](Value a, Value b) { return sqrt(a) * b; },
       [](double a, double b) { return std::sqrt(a) * b; }, 0.1, 9},
      {"tanh", [](Value a, Value b) { return tanh(a) * b; },
       [](double a, double b) { return std::tanh(a) * b; }, -3, 3},
      {"pow", [](Value a, Value b) { return pow(a, b); },
       [](double a, double b) { return std::pow(a, b); }, 0.2, 3},
      {"select", [](Value a, Value b) { return select(a > b, a * a, b * 3.0); },
       [](double a, double b) { return a > b ? a * a : b * 3.0; }, -5, 5, true,
       [](double a, double b) { return std::abs(a - b) < 1e-3; }},
      {"copy_cast", [](Value a, Value b) { return cast(copy(a), DType::kF64) * b; },
       [](double a, double b) { return a * b; }, -5, 5},
      {"vector_ops",
       [](Value a, Value b) {
         Value v = concat({a, b * 2.0, a * b});
         return dot(v, broadcast(a, {3})) + squared_norm(slice(v, 1, 2)) + reduce_sum(v);
       },
       [](double a, double b) {
         const double v[3] = {a, b * 2, a * b};
         return (v[0] + v[1] + v[2]) * a + v[1] * v[1] + v[2] * v[2] + v[0] + v[1] + v[2];
       },
       -3, 3},
  };
}

TEST(AdjointTableTest, EveryRuleMatchesFiniteDifferences) {
  std::mt19937_64 rng(26);
  for (const Case& c : Cases()) {
    std::uniform_real_distribution<double> u(c.lo, c.hi);
    std::vector<double> x, y;
    while (x.size() < 64) {
      const double a = u(rng), b = u(rng);
      if (c.kinked && c.near_kink(a, b)) continue;
      x.push_back(a);
      y.push_back(b);
    }
    const std::vector<std::vector<double>> grad = GradientAt(c.body, x, y);
    ASSERT_EQ(grad.size(), 2u) << c.name;
    for (size_t i = 0; i < x.size(); ++i) {
      const double h = 1e-6;
      const double dx = (c.f(x[i] + h, y[i]) - c.f(x[i] - h, y[i])) / (2 * h);
      const double dy = (c.f(x[i], y[i] + h) - c.f(x[i], y[i] - h)) / (2 * h);
      EXPECT_NEAR(grad[0][i], dx, 1e-6 * std::max(1.0, std::abs(dx)))
          << c.name << " d/dx at (" << x[i] << ", " << y[i] << ")";
      EXPECT_NEAR(grad[1][i], dy, 1e-6 * std::max(1.0, std::abs(dy)))
          << c.name << " d/dy at (" << x[i] << ", " << y[i] << ")";
    }
  }
}

// d f / d x at special points, as the table's lines document them.
struct Special {
  std::string what;
  std::function<Value(Value, Value)> body;
  double x, y;
  double dx, dy;
};

void ExpectSame(double actual, double expected, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": got " << actual;
  } else {
    EXPECT_EQ(actual, expected) << what;
  }
}

TEST(AdjointTableTest, SpecialPoints) {
  const std::vector<Special> cases = {
      {"abs at 0 passes 0", [](Value a, Value) { return abs(a); }, 0.0, 1.0, 0.0, 0.0},
      {"abs at -0 passes 0", [](Value a, Value) { return abs(a); }, -0.0, 1.0, 0.0, 0.0},
      {"abs of NaN passes 0", [](Value a, Value) { return abs(a); }, kNaN, 1.0, 0.0, 0.0},
      {"abs at -huge", [](Value a, Value) { return abs(a); }, -1e300, 1.0, -1.0, 0.0},
      {"min tie goes to a", [](Value a, Value b) { return min(a, b); }, 2.0, 2.0, 1.0, 0.0},
      {"max tie goes to a", [](Value a, Value b) { return max(a, b); }, 2.0, 2.0, 1.0, 0.0},
      {"max with a NaN passes none", [](Value a, Value b) { return max(a, b); }, kNaN, 2.0, 0.0,
       0.0},
      {"sqrt at 0 is inf", [](Value a, Value) { return sqrt(a); }, 0.0, 1.0, kInf, 0.0},
      {"log at 0 is inf", [](Value a, Value) { return log(a); }, 0.0, 1.0, kInf, 0.0},
      {"log at tiny", [](Value a, Value) { return log(a); }, 1e-300, 1.0, 1.0 / 1e-300, 0.0},
      {"exp at -inf is 0", [](Value a, Value) { return exp(a); }, -kInf, 1.0, 0.0, 0.0},
      {"exp at inf is inf", [](Value a, Value) { return exp(a); }, kInf, 1.0, kInf, 0.0},
      {"exp of NaN is NaN", [](Value a, Value) { return exp(a); }, kNaN, 1.0, kNaN, 0.0},
      {"tanh at huge is 0", [](Value a, Value) { return tanh(a); }, 1e10, 1.0, 0.0, 0.0},
      {"pow at a = 0: db is 0", [](Value a, Value b) { return pow(a, b); }, 0.0, 2.0, 0.0, 0.0},
      {"pow at a < 0: db is 0", [](Value a, Value b) { return pow(a, b); }, -2.0, 3.0, 12.0, 0.0},
      {"mul by inf", [](Value a, Value b) { return a * b; }, 0.0, kInf, kInf, 0.0},
      {"floor passes none", [](Value a, Value b) { return floor(a) * b; }, 2.5, 3.0, 0.0, 2.0},
      {"comparisons pass none", [](Value a, Value b) { return select(a < b, b, b * 2.0); }, 1.0,
       3.0, 0.0, 1.0},
  };
  for (const Special& c : cases) {
    const std::vector<std::vector<double>> grad = GradientAt(c.body, {c.x}, {c.y});
    ASSERT_EQ(grad.size(), 2u) << c.what;
    ExpectSame(grad[0][0], c.dx, c.what + " (d/dx)");
    ExpectSame(grad[1][0], c.dy, c.what + " (d/dy)");
  }
}

// Every primitive has a documented adjoint line; the non-differentiable
// ones say so.
TEST(AdjointTableTest, EveryPrimitiveHasADocumentedLine) {
  for (int p = 0; p <= static_cast<int>(Primitive::kUserKernel); ++p) {
    const auto prim = static_cast<Primitive>(p);
    const std::string_view doc = AdjointDoc(prim);
    EXPECT_FALSE(doc.empty()) << p;
    if (!AdjointOf(prim, 2).differentiable) {
      EXPECT_TRUE(doc.find("no gradient") != std::string_view::npos ||
                  doc.find("not differentiable") != std::string_view::npos ||
                  doc.find("no inputs") != std::string_view::npos)
          << doc;
    }
  }
}

}  // namespace
}  // namespace autobatch
