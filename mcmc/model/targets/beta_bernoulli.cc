// Beta-Bernoulli target.
#include "mcmc/model/targets/beta_bernoulli.h"

#include "absl/strings/str_cat.h"
#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

// 2x if it is an integer in [1, kMaxExactNormals], else 0.
int64_t TwiceAsCount(double x) {
  const double twice = 2.0 * x;
  if (!(twice >= 1 && twice <= BetaBernoulli::kMaxExactNormals)) return 0;
  return twice == std::floor(twice) ? static_cast<int64_t>(twice) : 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BetaBernoulli>> BetaBernoulli::Create(const Options& options) {
  for (double v : {options.a, options.b}) {
    if (!(v > 0) || !std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "beta_bernoulli: a and b must be positive and finite, got ", options.a, " and ",
          options.b));
    }
  }
  if (options.y.size() > 1000000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "beta_bernoulli: y has ", options.y.size(), " entries; at most 1000000"));
  }
  double ones = 0;
  for (size_t i = 0; i < options.y.size(); ++i) {
    if (options.y[i] != 0 && options.y[i] != 1) {
      return absl::InvalidArgumentError(absl::StrCat("beta_bernoulli: y[", i, "] is ",
                                                options.y[i], "; entries must be 0 or 1"));
    }
    ones += options.y[i];
  }
  const double zeros = static_cast<double>(options.y.size()) - ones;
  return std::unique_ptr<BetaBernoulli>(
      new BetaBernoulli(options.a + ones, options.b + zeros));
}

std::vector<ParameterSpec> BetaBernoulli::parameters() const {
  return {{"theta", {}, Transform::kLogit}};
}

double BetaBernoulli::LogDensityGradient(std::span<const double> q,
                                         std::span<double> grad) const {
  using target_internal::Logistic;
  using target_internal::Softplus;
  const double u = q[0];
  // log theta = -softplus(-u), log(1 - theta) = -softplus(u);
  // d/du = A (1 - theta) - B theta.
  grad[0] = a_post_ * Logistic(-u) - b_post_ * Logistic(u);
  return -a_post_ * Softplus(-u) - b_post_ * Softplus(u);
}

double BetaBernoulli::posterior_mean() const { return a_post_ / (a_post_ + b_post_); }

double BetaBernoulli::posterior_variance() const {
  const double n = a_post_ + b_post_;
  return a_post_ * b_post_ / (n * n * (n + 1.0));
}

KnownMoments BetaBernoulli::known_moments() const {
  return {{posterior_mean()}, {posterior_variance()}};
}

int64_t BetaBernoulli::exact_draw_normals() const {
  const int64_t a = TwiceAsCount(a_post_), b = TwiceAsCount(b_post_);
  return a > 0 && b > 0 ? a + b : 0;
}

void BetaBernoulli::ExactDraw(std::span<const double> normals, std::span<double> q) const {
  const int64_t a = TwiceAsCount(a_post_), b = TwiceAsCount(b_post_);
  AB_CHECK(a > 0 && b > 0, "ExactDraw needs integer 2A and 2B");
  double chi_a = 0, chi_b = 0;
  for (int64_t j = 0; j < a; ++j) chi_a += normals[j] * normals[j];
  for (int64_t j = a; j < a + b; ++j) chi_b += normals[j] * normals[j];
  q[0] = math::Log(chi_a) - math::Log(chi_b);
}

}  // namespace autobatch::mcmc
