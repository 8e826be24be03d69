// Stan's constraint transforms: the host maps (mcmc/model/constraint.h)
// round trip, their log|J| against a central-difference log|det J|, the IR
// version (mcmc/model/transforms.h) bit for bit against the host on the
// reference interpreter and the VM, its gradient against central
// differences, the spec and support errors with their text, and the column
// names of a model with a simplex and an ordered vector.
#include "mcmc/model/transforms.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "backends/tensor.h"
#include "frontend/context.h"
#include "frontend/value.h"
#include "mcmc/model/constraint.h"
#include "mcmc/model/model.h"
#include "support/math/math.h"

namespace autobatch::mcmc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Equal bits, or both NaN (the VM canonicalizes NaN payloads).
bool SameBits(double a, double b) { return Bits(a) == Bits(b) || (std::isnan(a) && std::isnan(b)); }

// Every kind, with scalar, vector and matrix shapes for the elementwise ones.
std::vector<ParameterSpec> Specs() {
  return {
      {"id", {}, Transform::Identity()},
      {"idv", {3}, Transform::Identity()},
      {"lo", {}, Transform::LowerBound(1.5)},
      {"lov", {2, 3}, Transform::LowerBound(-2)},
      {"up", {4}, Transform::UpperBound(3)},
      {"up0", {}, Transform::UpperBound(0)},
      {"lub", {}, Transform::Bounded(-1, 2.5)},
      {"lubv", {3}, Transform::Bounded(0, 1)},
      {"lubm", {2, 2}, Transform::Bounded(10, 1000)},
      {"s2", {2}, Transform::Simplex()},
      {"s5", {5}, Transform::Simplex()},
      {"o1", {1}, Transform::Ordered()},
      {"o4", {4}, Transform::Ordered()},
  };
}

struct Forward {
  std::vector<double> x;
  double log_jacobian = 0;
};

Forward Host(const ParameterSpec& spec, const std::vector<double>& y) {
  Forward out;
  out.x.resize(static_cast<size_t>(spec.size()));
  out.log_jacobian = ConstrainParameter(spec, y, out.x);
  return out;
}

std::vector<double> Uniform(std::mt19937_64& rng, int64_t n, double radius) {
  std::uniform_real_distribution<double> u(-radius, radius);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = u(rng);
  return v;
}

TEST(TransformTest, ShorthandsAreTheBoundsAndBitIdenticalToTheFormerTransforms) {
  EXPECT_EQ(Transform::kLog, Transform::LowerBound(0));
  EXPECT_EQ(Transform::kLogit, Transform::Bounded(0, 1));
  EXPECT_EQ(Transform::kIdentity, Transform::Identity());
  const ParameterSpec log_spec{"s", {}, Transform::kLog};
  const ParameterSpec logit_spec{"p", {}, Transform::kLogit};
  std::mt19937_64 rng(7);
  std::vector<double> ys = Uniform(rng, 2000, 40);
  for (double y : {0.0, -0.0, 30.0, -30.0, 700.0, -700.0, 709.0, -745.0, 800.0, -800.0}) {
    ys.push_back(y);
  }
  for (double y : ys) {
    EXPECT_EQ(Bits(Host(log_spec, {y}).x[0]), Bits(math::Exp(y))) << y;
    EXPECT_EQ(Bits(Host(logit_spec, {y}).x[0]), Bits(math::Logistic(y))) << y;
  }
}

TEST(TransformTest, SizesOfEachKind) {
  EXPECT_EQ((ParameterSpec{"x", {2, 3, 4}, Transform::LowerBound(0)}).size(), 24);
  EXPECT_EQ((ParameterSpec{"x", {2, 3, 4}, Transform::LowerBound(0)}).unconstrained_size(), 24);
  EXPECT_EQ((ParameterSpec{"x", {5}, Transform::Simplex()}).size(), 5);
  EXPECT_EQ((ParameterSpec{"x", {5}, Transform::Simplex()}).unconstrained_size(), 4);
  EXPECT_EQ((ParameterSpec{"x", {1}, Transform::Simplex()}).unconstrained_size(), 0);
  EXPECT_EQ((ParameterSpec{"x", {5}, Transform::Ordered()}).unconstrained_size(), 5);
}

// In the open support (closed where exp rounds to 0 or 1 rounds away).
void ExpectInSupport(const ParameterSpec& spec, const Forward& f, const std::string& what) {
  const Transform& t = spec.transform;
  double sum = 0;
  for (size_t i = 0; i < f.x.size(); ++i) {
    const double x = f.x[i];
    ASSERT_TRUE(std::isfinite(x)) << what << " x[" << i << "] = " << x;
    switch (t.kind) {
      case Transform::Kind::kLowerBound:
        EXPECT_GE(x, t.lower) << what;
        break;
      case Transform::Kind::kUpperBound:
        EXPECT_LE(x, t.upper) << what;
        break;
      case Transform::Kind::kBounded:
        EXPECT_GE(x, t.lower) << what;
        EXPECT_LE(x, t.upper) << what;
        break;
      case Transform::Kind::kSimplex:
        EXPECT_GE(x, 0) << what;
        break;
      case Transform::Kind::kOrdered:
        if (i > 0) {
          EXPECT_GE(x, f.x[i - 1]) << what;
        }
        break;
      case Transform::Kind::kIdentity:
        break;
    }
    sum += x;
  }
  if (t.kind == Transform::Kind::kSimplex) {
    EXPECT_NEAR(sum, 1, 1e-14) << what;
  }
  EXPECT_TRUE(std::isfinite(f.log_jacobian)) << what << " log|J| = " << f.log_jacobian;
}

TEST(TransformTest, HostRoundTripsAndStaysFiniteAtExtremes) {
  std::mt19937_64 rng(11);
  for (const ParameterSpec& spec : Specs()) {
    ASSERT_TRUE(ValidateParameter(spec).ok()) << spec.name;
    const int64_t m = spec.unconstrained_size();
    for (int trial = 0; trial < 50; ++trial) {
      const std::vector<double> y = Uniform(rng, m, 5);
      const Forward f = Host(spec, y);
      ExpectInSupport(spec, f, spec.name);
      std::vector<double> back(static_cast<size_t>(m));
      const absl::Status status = UnconstrainParameter(spec, f.x, back);
      ASSERT_TRUE(status.ok()) << spec.name << ": " << status;
      for (int64_t i = 0; i < m; ++i) {
        EXPECT_NEAR(back[i], y[i], 1e-9 * (1 + std::abs(y[i]))) << spec.name << " " << i;
      }
    }
    // Extremes: x finite and in the closed support, log|J| finite (a
    // one-sided bound at +700: exp(700) ~ 1e304 is still finite).
    for (double e : {30.0, -30.0, 700.0, -700.0}) {
      std::vector<double> y(static_cast<size_t>(m));
      for (int64_t i = 0; i < m; ++i) y[i] = (i % 2 == 0 ? e : -e);
      if (spec.transform.kind == Transform::Kind::kOrdered && e > 0) {
        for (double& v : y) v = e;  // the ordered sum stays below exp(700) * 4
      }
      ExpectInSupport(spec, Host(spec, y), spec.name + " at " + std::to_string(e));
      for (double& v : y) v = e;
      ExpectInSupport(spec, Host(spec, y), spec.name + " all " + std::to_string(e));
    }
  }
}

// log|J| against log|det| of the central-difference Jacobian of the free
// coordinates (all of x; the first K - 1 for a simplex) with respect to y.
TEST(TransformTest, LogJacobianMatchesFiniteDifferences) {
  std::mt19937_64 rng(13);
  for (const ParameterSpec& spec : Specs()) {
    const int64_t m = spec.unconstrained_size();
    if (m == 0) continue;
    for (int trial = 0; trial < 10; ++trial) {
      std::vector<double> y = Uniform(rng, m, 2);
      const double log_jacobian = Host(spec, y).log_jacobian;
      Eigen::MatrixXd jac(m, m);
      for (int64_t j = 0; j < m; ++j) {
        const double h = 1e-6;
        std::vector<double> up = y, down = y;
        up[j] += h;
        down[j] -= h;
        const Forward fu = Host(spec, up), fd = Host(spec, down);
        for (int64_t i = 0; i < m; ++i) jac(i, j) = (fu.x[i] - fd.x[i]) / (up[j] - down[j]);
      }
      const double fd_log_det = std::log(std::abs(jac.determinant()));
      EXPECT_NEAR(log_jacobian, fd_log_det, 1e-6 * (1 + std::abs(fd_log_det))) << spec.name;
    }
  }
}

// The IR version: f(y) = (x, log|J|) and g(y) = sum(x) + log|J| with its
// gradient, for one spec.
struct IrProgram {
  Context ctx;
  BatchFunction f;
  BatchFunction g;
  BatchFunction grad;
};

std::unique_ptr<IrProgram> BuildIr(const ParameterSpec& spec) {
  auto p = std::make_unique<IrProgram>();
  p->f = p->ctx.Batch("f", {.param_names = {"y"}})([spec](Value y) {
    const ConstrainedValue c = ConstrainValue(y, spec);
    return std::tuple<Value, Value>(c.x, c.log_jacobian);
  });
  p->g = p->ctx.Batch("g", {.param_names = {"y"}})([spec](Value y) {
    const ConstrainedValue c = ConstrainValue(y, spec);
    return reduce_sum(c.x) + c.log_jacobian;
  });
  p->grad = p->ctx.Gradient(p->g);
  return p;
}

Tensor Lanes(const ParameterSpec& spec, const std::vector<double>& flat) {
  std::vector<int64_t> shape;
  if (!spec.shape.empty()) shape = {spec.unconstrained_size()};
  absl::StatusOr<Tensor> t = Tensor::FromVector(flat, shape);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

double HostObjective(const ParameterSpec& spec, const std::vector<double>& y) {
  const Forward f = Host(spec, y);
  double sum = f.x.empty() ? 0 : f.x[0];
  for (size_t i = 1; i < f.x.size(); ++i) sum += f.x[i];
  return sum + f.log_jacobian;
}

TEST(TransformTest, IrIsBitIdenticalToHostOnInterpreterAndVm) {
  std::mt19937_64 rng(17);
  for (const ParameterSpec& spec : Specs()) {
    const int64_t m = spec.unconstrained_size(), n = spec.size();
    auto program = BuildIr(spec);
    constexpr int64_t kLanes = 37;
    std::vector<double> flat;
    for (int64_t lane = 0; lane < kLanes; ++lane) {
      // Moderate points, then the extremes and specials.
      const double radius = lane < 30 ? 6 : 0;
      std::vector<double> y = Uniform(rng, m, radius);
      const double special[] = {30, -30, 700, -700, 800, kInf, kNaN};
      if (lane >= 30) {
        for (int64_t i = 0; i < m; ++i) y[i] = special[lane - 30] * (i % 3 == 1 ? -1 : 1);
      }
      flat.insert(flat.end(), y.begin(), y.end());
    }
    for (const bool dry_run : {true, false}) {
      absl::StatusOr<std::vector<Tensor>> out =
          program->f.Run({Lanes(spec, flat)}, {.dry_run = dry_run});
      ASSERT_TRUE(out.ok()) << spec.name << ": " << out.status();
      const std::vector<double> xs = (*out)[0].ToVector<double>();
      const std::vector<double> ljs = (*out)[1].ToVector<double>();
      ASSERT_EQ(xs.size(), static_cast<size_t>(kLanes * n)) << spec.name;
      ASSERT_EQ(ljs.size(), static_cast<size_t>(kLanes)) << spec.name;
      for (int64_t lane = 0; lane < kLanes; ++lane) {
        const std::vector<double> y(flat.begin() + lane * m, flat.begin() + (lane + 1) * m);
        const Forward host = Host(spec, y);
        for (int64_t i = 0; i < n; ++i) {
          EXPECT_TRUE(SameBits(xs[lane * n + i], host.x[i]))
              << spec.name << " lane " << lane << " x[" << i << "]: " << xs[lane * n + i]
              << " vs host " << host.x[i] << (dry_run ? " (interpreter)" : " (VM)");
        }
        EXPECT_TRUE(SameBits(ljs[lane], host.log_jacobian))
            << spec.name << " lane " << lane << " log|J|: " << ljs[lane] << " vs host "
            << host.log_jacobian << (dry_run ? " (interpreter)" : " (VM)");
      }
    }
  }
}

TEST(TransformTest, IrGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(19);
  for (const ParameterSpec& spec : Specs()) {
    const int64_t m = spec.unconstrained_size();
    auto program = BuildIr(spec);
    for (int trial = 0; trial < 5; ++trial) {
      const std::vector<double> y = Uniform(rng, m, 2);
      absl::StatusOr<std::vector<Tensor>> out = program->grad.Run({Lanes(spec, y)});
      ASSERT_TRUE(out.ok()) << spec.name << ": " << out.status();
      ASSERT_EQ(out->size(), 2u);
      const double value = (*out)[0].ToVector<double>()[0];
      EXPECT_TRUE(SameBits(value, HostObjective(spec, y))) << spec.name;
      const std::vector<double> grad = (*out)[1].ToVector<double>();
      ASSERT_EQ(grad.size(), static_cast<size_t>(m)) << spec.name;
      for (int64_t j = 0; j < m; ++j) {
        std::vector<double> up = y, down = y;
        const double h = 1e-6;
        up[j] += h;
        down[j] -= h;
        const double fd = (HostObjective(spec, up) - HostObjective(spec, down)) / (up[j] - down[j]);
        EXPECT_NEAR(grad[j], fd, 1e-6 * (1 + std::abs(fd))) << spec.name << " d/dy" << j;
      }
    }
  }
}

std::string SpecError(const ParameterSpec& spec) {
  return std::string(ValidateParameter(spec).message());
}

TEST(TransformTest, InvalidSpecsAreRejectedByName) {
  EXPECT_EQ(SpecError({"theta", {2, 3}, Transform::Simplex()}),
            "parameter 'theta': a simplex must be 1-D (shape {K}), got shape {2, 3}");
  EXPECT_EQ(SpecError({"theta", {}, Transform::Ordered()}),
            "parameter 'theta': an ordered vector must be 1-D (shape {K}), got shape {}");
  EXPECT_EQ(SpecError({"theta", {0}, Transform::Simplex()}),
            "parameter 'theta': a simplex needs K >= 1 elements, got K = 0");
  EXPECT_EQ(SpecError({"s", {}, Transform::Bounded(1, 1)}),
            "parameter 's': lower bound 1 must be less than upper bound 1");
  EXPECT_EQ(SpecError({"s", {}, Transform::Bounded(2, 1)}),
            "parameter 's': lower bound 2 must be less than upper bound 1");
  EXPECT_EQ(SpecError({"s", {}, Transform::Bounded(0, kNaN)}),
            "parameter 's': upper bound nan is not finite; give a finite bound or none");
  EXPECT_EQ(SpecError({"s", {}, Transform::LowerBound(-kInf)}),
            "parameter 's': lower bound -inf is not finite; give a finite bound or none");
  EXPECT_EQ(SpecError({"s", {}, Transform::UpperBound(kInf)}),
            "parameter 's': upper bound inf is not finite; give a finite bound or none");
  EXPECT_EQ(SpecError({"s", {}, Transform::Bounded(-1e308, 1e308)}),
            "parameter 's': the width of bounds (-1e+308, 1e+308) overflows; give narrower "
            "bounds");
  EXPECT_EQ(SpecError({"m", {2, -1}, Transform::Identity()}),
            "parameter 'm': shape {2, -1} has a negative extent");
  EXPECT_TRUE(ValidateParameter({"o", {0}, Transform::Ordered()}).ok());
}

std::string InverseError(const ParameterSpec& spec, const std::vector<double>& x) {
  std::vector<double> y(static_cast<size_t>(spec.unconstrained_size()));
  return std::string(UnconstrainParameter(spec, x, y).message());
}

TEST(TransformTest, ValuesOutsideTheSupportAreRejectedByElement) {
  EXPECT_EQ(InverseError({"theta", {4}, Transform::LowerBound(1)}, {2, 3, 4, 1}),
            "value 1 of parameter theta.4 is outside its support: it must be > 1 (lower "
            "bound); give a value inside the support");
  EXPECT_EQ(InverseError({"u", {}, Transform::UpperBound(-2)}, {-1}),
            "value -1 of parameter u is outside its support: it must be < -2 (upper bound); "
            "give a value inside the support");
  EXPECT_EQ(InverseError({"p", {2, 2}, Transform::Bounded(0, 1)}, {0.5, 0.5, 1.5, 0.5}),
            "value 1.5 of parameter p.1.2 is outside its support: it must be in (0, 1) "
            "(bounds); give a value inside the support");
  EXPECT_EQ(InverseError({"a", {2}, Transform::Identity()}, {0, kNaN}),
            "value nan of parameter a.2 is outside its support: it must be finite; give a "
            "value inside the support");
  EXPECT_EQ(InverseError({"theta", {3}, Transform::Simplex()}, {0.5, 0.6, -0.1}),
            "value -0.1 of parameter theta.3 is outside its support: a simplex's entries "
            "must be >= 0 and sum to 1; give a value inside the support");
  EXPECT_EQ(InverseError({"theta", {3}, Transform::Simplex()}, {0.5, 0.3, 0.3}),
            "parameter theta is outside its support: a simplex's entries must sum to 1 "
            "(within 1e-8), these sum to 1.1; give a value inside the support");
  EXPECT_EQ(InverseError({"theta", {3}, Transform::Simplex()}, {0.5, 0.5, 0}),
            "value 0.5 of parameter theta.2 is too close to the boundary of its support "
            "(simplex): its unconstrained value is inf; give a value further inside");
  EXPECT_EQ(InverseError({"c", {3}, Transform::Ordered()}, {1, 2, 2}),
            "value 2 of parameter c.3 is outside its support: an ordered vector must be "
            "strictly increasing, and c.2 = 2; give a value inside the support");
  EXPECT_EQ(InverseError({"lo", {}, Transform::LowerBound(1)}, {1 + 1e-300}),
            "value 1 of parameter lo is outside its support: it must be > 1 (lower bound); "
            "give a value inside the support");
  // Within the tolerance: accepted.
  EXPECT_EQ(InverseError({"theta", {3}, Transform::Simplex()}, {0.2, 0.3, 0.5 + 5e-9}), "");
}

// theta: simplex of 4, c: ordered of 3, s: a scalar bounded parameter.
class SimplexModel : public Model {
 public:
  std::string name() const override { return "simplex_model"; }
  std::vector<ParameterSpec> parameters() const override {
    return {{"theta", {4}, Transform::Simplex()},
            {"c", {3}, Transform::Ordered()},
            {"s", {}, Transform::Bounded(-1, 1)}};
  }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    for (size_t i = 0; i < q.size(); ++i) grad[i] = -q[i];
    return 0;
  }
};

TEST(TransformTest, ModelSizesNamesAndConstrain) {
  SimplexModel model;
  EXPECT_TRUE(ValidateParameters(model).ok());
  EXPECT_EQ(model.dimension(), 7);
  EXPECT_EQ(model.constrained_size(), 8);
  const std::vector<std::string> columns = {"theta.1", "theta.2", "theta.3", "theta.4",
                                            "c.1",     "c.2",     "c.3",     "s"};
  EXPECT_EQ(OutputColumnNames(model), columns);
  const std::vector<std::string> coordinates = {"theta.1 (unconstrained)",
                                                "theta.2 (unconstrained)",
                                                "theta.3 (unconstrained)",
                                                "c.1 (unconstrained)",
                                                "c.2 (unconstrained)",
                                                "c.3 (unconstrained)",
                                                "s"};
  EXPECT_EQ(UnconstrainedNames(model), coordinates);

  const std::vector<double> q = {0.3, -1.2, 0.8, -0.5, 0.1, -2, 0.7};
  std::vector<double> x(8), back(7);
  const double log_jacobian = Constrain(model, q, x);
  const ParameterSpec theta = model.parameters()[0];
  std::vector<double> theta_x(4);
  double expected = ConstrainParameter(theta, std::span(q).subspan(0, 3), theta_x);
  std::vector<double> c_x(3), s_x(1);
  expected += ConstrainParameter(model.parameters()[1], std::span(q).subspan(3, 3), c_x);
  expected += ConstrainParameter(model.parameters()[2], std::span(q).subspan(6, 1), s_x);
  EXPECT_EQ(log_jacobian, expected);
  EXPECT_EQ(x[0], theta_x[0]);
  EXPECT_EQ(x[3], theta_x[3]);
  EXPECT_EQ(x[4], q[3]);
  ASSERT_TRUE(Unconstrain(model, x, back).ok());
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(back[i], q[i], 1e-12) << i;

  x[5] = x[4];  // c.2 == c.1
  EXPECT_EQ(Unconstrain(model, x, back).message(),
            absl::StrCat("model 'simplex_model': value ", x[5],
                         " of parameter c.2 is outside its support: an ordered vector must be "
                         "strictly increasing, and c.1 = ",
                         x[4], "; give a value inside the support"));
}

class DuplicateModel : public SimplexModel {
 public:
  std::vector<ParameterSpec> parameters() const override {
    return {{"a", {}, Transform::Identity()},
            {"b", {2, 2}, Transform::Ordered()},
            {"a", {}, Transform::Identity()}};
  }
};

class DuplicateNameModel : public SimplexModel {
 public:
  std::vector<ParameterSpec> parameters() const override {
    return {{"a", {}, Transform::Identity()}, {"a", {}, Transform::Identity()}};
  }
};

TEST(TransformTest, ValidateParametersNamesModelAndParameter) {
  EXPECT_EQ(ValidateParameters(DuplicateModel()).message(),
            "model 'simplex_model': parameter 'b': an ordered vector must be 1-D (shape {K}), "
            "got shape {2, 2}");
  EXPECT_EQ(ValidateParameters(DuplicateNameModel()).message(),
            "model 'simplex_model': parameter 'a': parameters 1 and 2 have this name; give "
            "each parameter its own name");
}

}  // namespace
}  // namespace autobatch::mcmc
