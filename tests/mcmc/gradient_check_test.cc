// Tests for the finite-difference gradient check.
#include "mcmc/model/gradient_check.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace autobatch::mcmc {
namespace {

// mu, sigma (kLog), z[3]: log p = -mu^2/2 + (-sigma^2/2 + u) - sum z_i^4/4
// (u = log sigma, Jacobian included). `bug` corrupts the gradient of one
// coordinate.
class Toy : public Model {
 public:
  enum class Bug { kNone, kWrongZ2, kNanMu, kMissingJacobian };
  explicit Toy(Bug bug = Bug::kNone) : bug_(bug) {}
  std::string name() const override { return "toy"; }
  std::vector<ParameterSpec> parameters() const override {
    return {{"mu", {}, Transform::kIdentity},
            {"sigma", {}, Transform::kLog},
            {"z", {3}, Transform::kIdentity}};
  }
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override {
    const double sigma = std::exp(q[1]);
    double lp = -0.5 * q[0] * q[0] - 0.5 * sigma * sigma + q[1];
    grad[0] = bug_ == Bug::kNanMu ? std::numeric_limits<double>::quiet_NaN() : -q[0];
    grad[1] = -sigma * sigma + (bug_ == Bug::kMissingJacobian ? 0.0 : 1.0);
    for (int i = 0; i < 3; ++i) {
      const double z = q[2 + i];
      lp -= 0.25 * z * z * z * z;
      grad[2 + i] = -z * z * z;
    }
    if (bug_ == Bug::kWrongZ2) grad[3] *= 1.01;
    return lp;
  }

 private:
  Bug bug_;
};

const std::vector<double> kPoint = {0.3, -0.4, 1.1, -0.7, 0.2};

TEST(GradientCheckTest, CorrectGradientPasses) {
  Toy model;
  EXPECT_TRUE(CheckGradient(model, kPoint).ok());
  absl::StatusOr<GradientCheckReport> report = GradientCheckAt(model, kPoint);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok());
  ASSERT_EQ(report->entries.size(), 5u);
  EXPECT_EQ(report->entries[1].name, "sigma");
  EXPECT_EQ(report->entries[3].name, "z.2");
  EXPECT_EQ(report->entries[3].index, 3);
  for (const GradientCheckEntry& e : report->entries) {
    EXPECT_LE(e.abs_error, 1e-8) << e.name;
    EXPECT_TRUE(e.ok);
  }
  std::vector<double> grad(5);
  EXPECT_EQ(report->log_density, model.LogDensityGradient(kPoint, grad));
}

TEST(GradientCheckTest, WrongCoordinateIsReportedWithNameAndValues) {
  Toy model(Toy::Bug::kWrongZ2);
  absl::Status status = CheckGradient(model, kPoint);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  EXPECT_NE(message.find("'toy'"), std::string::npos) << message;
  EXPECT_NE(message.find("1 of 5"), std::string::npos) << message;
  EXPECT_NE(message.find("[3] z.2: analytic"), std::string::npos) << message;
  EXPECT_NE(message.find("numeric"), std::string::npos) << message;
  EXPECT_EQ(message.find("z.1"), std::string::npos) << message;
  absl::StatusOr<GradientCheckReport> report = GradientCheckAt(model, kPoint);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok());
  for (const GradientCheckEntry& e : report->entries) EXPECT_EQ(e.ok, e.index != 3) << e.name;
  // -(-0.7)^3 = 0.343, times 1.01.
  EXPECT_NEAR(report->entries[3].analytic, 0.343 * 1.01, 1e-12);
  EXPECT_NEAR(report->entries[3].numeric, 0.343, 1e-8);
  const std::string table = report->ToString();
  EXPECT_NE(table.find("FAIL"), std::string::npos) << table;
  EXPECT_NE(table.find("z.2"), std::string::npos) << table;
}

TEST(GradientCheckTest, MissingJacobianIsCaught) {
  Toy model(Toy::Bug::kMissingJacobian);
  absl::Status status = CheckGradient(model, kPoint);
  EXPECT_NE(status.message().find("[1] sigma"), std::string_view::npos) << status;
}

TEST(GradientCheckTest, NanGradientFails) {
  Toy model(Toy::Bug::kNanMu);
  absl::Status status = CheckGradient(model, kPoint);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("[0] mu: analytic nan"), std::string_view::npos) << status;
}

TEST(GradientCheckTest, ToleranceIsRelativeForLargeGradients) {
  Toy model;
  // At z.1 = 100 the gradient there is -1e6 and f ~ -2.5e7, so every
  // numeric derivative carries a rounding error ~ ulp(f) / (2 epsilon) ~
  // 2e-3: far above abs_tol, far below rel_tol * 1e6 = 10 for z.1, but
  // fatal for the small-gradient coordinates (the documented limitation).
  std::vector<double> q = {0.3, -0.4, 100.0, -0.7, 0.2};
  absl::StatusOr<GradientCheckReport> report = GradientCheckAt(model, q);
  ASSERT_TRUE(report.ok());
  const GradientCheckEntry& big = report->entries[2];
  EXPECT_EQ(big.analytic, -1e6);
  EXPECT_GT(big.abs_error, 1e-6);
  EXPECT_EQ(big.tolerance, 1e-5 * std::max(std::abs(big.analytic), std::abs(big.numeric)));
  EXPECT_TRUE(big.ok);
  EXPECT_FALSE(report->entries[0].ok);
  // A relative tolerance tighter than the arithmetic allows fails z.1 too.
  report = GradientCheckAt(model, q, {.epsilon = 1e-6, .rel_tol = 1e-12, .abs_tol = 1e-6});
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->entries[2].ok);
  // Scaling abs_tol to the cancellation error passes everything.
  EXPECT_TRUE(CheckGradient(model, q, {.epsilon = 1e-6, .rel_tol = 1e-5, .abs_tol = 1e-2}).ok());
}

TEST(GradientCheckTest, BadInputsAreErrors) {
  Toy model;
  std::vector<double> short_q = {0.1, 0.2};
  absl::Status status = CheckGradient(model, short_q);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("dimension is 5"), std::string_view::npos) << status;

  std::vector<double> nan_q = kPoint;
  nan_q[2] = std::numeric_limits<double>::quiet_NaN();
  status = CheckGradient(model, nan_q);
  EXPECT_NE(status.message().find("z.1"), std::string_view::npos) << status;

  status = CheckGradient(model, kPoint, {.epsilon = 0});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);

  // sigma = exp(800) = inf: log density -inf, nothing to check.
  std::vector<double> far = kPoint;
  far[1] = 800;
  status = CheckGradient(model, far);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("log density at q is -inf"), std::string_view::npos)
      << status;
}

}  // namespace
}  // namespace autobatch::mcmc
