// Tests for the Model interface helpers: sizes, names, transforms and the
// default batched kernel.
#include "mcmc/model/model.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace autobatch::mcmc {
namespace {

// a (scalar), s (positive, kLog), m[2,3] (matrix), p[2] (kLogit); d = 10.
// log p = -sum_i (i + 1) q_i^2 / 2 so every coordinate differs.
class ShapesModel : public Model {
 public:
  std::string name() const override { return "shapes"; }
  std::vector<ParameterSpec> parameters() const override {
    return {{"a", {}, Transform::kIdentity},
            {"s", {}, Transform::kLog},
            {"m", {2, 3}, Transform::kIdentity},
            {"p", {2}, Transform::kLogit}};
  }
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override {
    double lp = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      lp -= 0.5 * static_cast<double>(i + 1) * q[i] * q[i];
      grad[i] = -static_cast<double>(i + 1) * q[i];
    }
    ++calls;
    return lp;
  }
  mutable int calls = 0;
};

class WithGenerated : public ShapesModel {
 public:
  std::vector<std::string> generated_names() const override { return {"g.1", "g.2"}; }
  void Generate(std::span<const double> q, std::span<double> out) const override {
    out[0] = q[0] + 1;
    out[1] = q[1] * 2;
  }
};

TEST(ParameterSpecTest, SizeIsProductOfShape) {
  EXPECT_EQ((ParameterSpec{"x", {}, Transform::kIdentity}).size(), 1);
  EXPECT_EQ((ParameterSpec{"x", {8}, Transform::kIdentity}).size(), 8);
  EXPECT_EQ((ParameterSpec{"x", {2, 3, 4}, Transform::kIdentity}).size(), 24);
  EXPECT_EQ((ParameterSpec{"x", {0}, Transform::kIdentity}).size(), 0);
}

TEST(ModelTest, DimensionSumsParameterSizes) {
  ShapesModel model;
  EXPECT_EQ(model.dimension(), 10);
}

TEST(ModelTest, OutputColumnNamesAreCmdStanStyleFirstIndexFastest) {
  WithGenerated model;
  std::vector<std::string> expected = {"a",     "s",     "m.1.1", "m.2.1", "m.1.2", "m.2.2",
                                       "m.1.3", "m.2.3", "p.1",   "p.2",   "g.1",   "g.2"};
  EXPECT_EQ(OutputColumnNames(model), expected);
  ShapesModel plain;
  EXPECT_EQ(OutputColumnNames(plain).size(), 10u);
}

TEST(ModelTest, DefaultGenerateLeavesOutputUntouched) {
  ShapesModel model;
  std::vector<double> q(10, 0.5);
  std::vector<double> out = {7, 8};
  model.Generate(q, out);
  EXPECT_EQ(out, (std::vector<double>{7, 8}));
}

TEST(ModelTest, ConstrainAppliesTransforms) {
  ShapesModel model;
  std::vector<double> q = {-1.5, 0.7, 1, 2, 3, 4, 5, 6, 0.3, -2.0};
  std::vector<double> x(10);
  Constrain(model, q, x);
  EXPECT_EQ(x[0], -1.5);
  EXPECT_EQ(x[1], std::exp(0.7));
  for (int i = 2; i < 8; ++i) EXPECT_EQ(x[i], q[i]);
  EXPECT_NEAR(x[8], 1 / (1 + std::exp(-0.3)), 1e-16);
  EXPECT_NEAR(x[9], 1 / (1 + std::exp(2.0)), 1e-16);
}

TEST(ModelTest, LogisticIsStableAtExtremes) {
  ShapesModel model;
  std::vector<double> q(10, 0.0);
  std::vector<double> x(10);
  q[8] = -800;  // exp(800) overflows: the form e^u / (1 + e^u) would give
  q[9] = 800;   // inf / inf = NaN at u = 800.
  Constrain(model, q, x);
  EXPECT_EQ(x[8], 0.0);
  EXPECT_EQ(x[9], 1.0);
  q[8] = -700;
  Constrain(model, q, x);
  EXPECT_GT(x[8], 0.0);  // e^-700 ~ 1e-304 is representable: not flushed
  EXPECT_NEAR(x[8] / std::exp(-700.0), 1.0, 1e-12);
  q[8] = 0;
  Constrain(model, q, x);
  EXPECT_EQ(x[8], 0.5);
}

TEST(ModelTest, UnconstrainInvertsConstrain) {
  ShapesModel model;
  std::vector<double> q = {-1.5, 0.7, 1, 2, 3, 4, 5, 6, 0.3, -2.0};
  std::vector<double> x(10), back(10);
  Constrain(model, q, x);
  ASSERT_TRUE(Unconstrain(model, x, back).ok());
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(back[i], q[i], 1e-14) << i;
}

TEST(ModelTest, UnconstrainRejectsValuesOutsideSupport) {
  ShapesModel model;
  std::vector<double> x = {0, 1, 0, 0, 0, 0, 0, 0, 0.5, 0.5};
  std::vector<double> q(10);
  x[1] = 0;  // s must be > 0
  absl::Status status = Unconstrain(model, x, q);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("parameter s "), std::string_view::npos) << status;
  EXPECT_NE(status.message().find("shapes"), std::string_view::npos) << status;
  x[1] = 1;
  x[9] = 1.0;  // p.2 must be < 1
  status = Unconstrain(model, x, q);
  EXPECT_NE(status.message().find("p.2"), std::string_view::npos) << status;
  x[9] = 0.5;
  x[5] = std::numeric_limits<double>::quiet_NaN();  // m.2.2
  status = Unconstrain(model, x, q);
  EXPECT_NE(status.message().find("m.2.2"), std::string_view::npos) << status;
  x[5] = 0;
  x[1] = std::numeric_limits<double>::infinity();  // s = inf has no finite log
  status = Unconstrain(model, x, q);
  EXPECT_NE(status.message().find("parameter s "), std::string_view::npos) << status;
  x[1] = 1;
  EXPECT_TRUE(Unconstrain(model, x, q).ok());
}

TEST(ModelTest, DefaultBatchCallsEachActiveLaneOnly) {
  ShapesModel model;
  const int64_t lanes = 4, d = 10;
  std::vector<double> q(lanes * d);
  for (size_t i = 0; i < q.size(); ++i) q[i] = 0.01 * static_cast<double>(i) - 0.2;
  const double sentinel = -12345;
  std::vector<double> logp(lanes, sentinel), grad(lanes * d, sentinel);
  const uint8_t active[] = {1, 0, 1, 1};
  model.LogDensityGradientBatch(q.data(), logp.data(), grad.data(), lanes, active);
  EXPECT_EQ(model.calls, 3);
  for (int64_t l = 0; l < lanes; ++l) {
    std::vector<double> g(d);
    double lp = model.LogDensityGradient(std::span<const double>(q.data() + l * d, d), g);
    if (active[l]) {
      EXPECT_EQ(logp[l], lp);
      for (int64_t i = 0; i < d; ++i) EXPECT_EQ(grad[l * d + i], g[i]);
    } else {
      EXPECT_EQ(logp[l], sentinel);
      for (int64_t i = 0; i < d; ++i) EXPECT_EQ(grad[l * d + i], sentinel);
    }
  }
  // Null mask: every lane.
  model.calls = 0;
  model.LogDensityGradientBatch(q.data(), logp.data(), grad.data(), lanes, nullptr);
  EXPECT_EQ(model.calls, static_cast<int>(lanes));
  EXPECT_NE(logp[1], sentinel);
  EXPECT_TRUE(model.batch_bit_stable());
}

}  // namespace
}  // namespace autobatch::mcmc
