#include "bench/libm_targets.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace autobatch::bench {

std::vector<mcmc::ParameterSpec> LibmEightSchools::parameters() const {
  return mcmc::EightSchools::Create()->parameters();
}

double LibmEightSchools::LogDensityGradient(std::span<const double> q,
                                            std::span<double> grad) const {
  const auto& y = mcmc::EightSchools::kY;
  const auto& sigma = mcmc::EightSchools::kSigma;
  const double mu = q[0];
  const double u = q[1];
  const double tau = std::exp(u);
  const double* eta = q.data() + 2;
  double logp = -mu * mu / 50.0;
  const double t = tau / 5.0;
  logp += -std::log1p(t * t) + u;
  double d_mu = -mu / 25.0;
  double d_tau = -2.0 * tau / (25.0 + tau * tau);
  for (int j = 0; j < 8; ++j) {
    const double residual = y[j] - (mu + tau * eta[j]);
    const double inv_var = 1.0 / (sigma[j] * sigma[j]);
    logp += -0.5 * eta[j] * eta[j] - 0.5 * residual * residual * inv_var;
    const double r = residual * inv_var;
    d_mu += r;
    d_tau += r * eta[j];
    grad[2 + j] = -eta[j] + r * tau;
  }
  grad[0] = d_mu;
  grad[1] = d_tau * tau + 1.0;
  return logp;
}

LibmLogisticRegression::LibmLogisticRegression(const mcmc::LogisticRegression::Options& options)
    : data_(mcmc::LogisticRegression::GenerateData(options.rows, options.features, options.seed)),
      prior_precision_(1.0 / (options.prior_sd * options.prior_sd)) {}

std::vector<mcmc::ParameterSpec> LibmLogisticRegression::parameters() const {
  return {{"alpha", {}, mcmc::Transform::kIdentity},
          {"beta", {data_.features}, mcmc::Transform::kIdentity}};
}

double LibmLogisticRegression::LogDensityGradient(std::span<const double> q,
                                                  std::span<double> grad) const {
  const int64_t k = data_.features;
  const double alpha = q[0];
  const double* beta = q.data() + 1;
  double logp = -alpha * alpha;
  grad[0] = -alpha * prior_precision_;
  for (int64_t j = 0; j < k; ++j) {
    logp -= beta[j] * beta[j];
    grad[1 + j] = -beta[j] * prior_precision_;
  }
  logp *= 0.5 * prior_precision_;
  const double* x = data_.x.data();
  for (int64_t i = 0; i < data_.rows; ++i, x += k) {
    double eta = alpha;
    for (int64_t j = 0; j < k; ++j) eta += x[j] * beta[j];
    // s = +eta where y = 1, -eta where y = 0: log p(y | eta) = -softplus(-s)
    // and its derivative in eta is +-logistic(-s).
    const double s = data_.y[i] != 0 ? eta : -eta;
    const double t = std::exp(-std::abs(eta));
    logp -= std::log1p(t) + std::max(-s, 0.0);
    const double p = (-s >= 0 ? 1.0 : t) / (1.0 + t);  // logistic(-s)
    const double residual = data_.y[i] != 0 ? p : -p;
    grad[0] += residual;
    for (int64_t j = 0; j < k; ++j) grad[1 + j] += residual * x[j];
  }
  return logp;
}

absl::Status CheckAgrees(const mcmc::Model& libm, const mcmc::Model& reference,
                         std::span<const double> q) {
  const size_t d = q.size();
  std::vector<double> grad(d), ref_grad(d);
  const double logp = libm.LogDensityGradient(q, grad);
  const double ref_logp = reference.LogDensityGradient(q, ref_grad);
  auto agrees = [](double value, double ref) {
    return std::abs(value - ref) <= 1e-9 * (1 + std::abs(ref));
  };
  if (!agrees(logp, ref_logp)) {
    return absl::InternalError(absl::StrCat(libm.name(), ": log density ", logp, " against ",
                                            reference.name(), "'s ", ref_logp));
  }
  for (size_t i = 0; i < d; ++i) {
    if (!agrees(grad[i], ref_grad[i])) {
      return absl::InternalError(absl::StrCat(libm.name(), ": gradient entry ", i, " is ",
                                              grad[i], " against ", reference.name(), "'s ",
                                              ref_grad[i]));
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<mcmc::Target> MakeLibmTarget(const std::string& name,
                                             const nlohmann::json& params) {
  if (name == "eight_schools_libm") return std::make_unique<LibmEightSchools>();
  mcmc::LogisticRegression::Options options;
  if (params.is_object()) {
    options.rows = params.value("rows", options.rows);
    options.features = params.value("features", options.features);
    options.seed = params.value("seed", options.seed);
    options.prior_sd = params.value("prior_sd", options.prior_sd);
  }
  if (name == "logistic_regression_libm") return std::make_unique<LibmLogisticRegression>(options);
  return nullptr;
}

}  // namespace autobatch::bench
