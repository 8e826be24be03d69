// Eight schools (non-centred) target.
#include "mcmc/model/targets/eight_schools.h"

#include "absl/strings/str_cat.h"
#include "support/math/math.h"

namespace autobatch::mcmc {

std::unique_ptr<EightSchools> EightSchools::Create() {
  return std::unique_ptr<EightSchools>(new EightSchools());
}

std::vector<ParameterSpec> EightSchools::parameters() const {
  return {{"mu", {}, Transform::kIdentity},
          {"tau", {}, Transform::kLog},
          {"eta", {8}, Transform::kIdentity}};
}

double EightSchools::LogDensityGradient(std::span<const double> q,
                                        std::span<double> grad) const {
  const double mu = q[0];
  const double u = q[1];
  const double tau = math::Exp(u);
  const double* eta = q.data() + 2;
  double logp = -mu * mu / 50.0;
  const double t = tau / 5.0;
  logp += -math::Log1p(t * t) + u;
  double d_mu = -mu / 25.0;
  double d_tau = -2.0 * tau / (25.0 + tau * tau);
  for (int j = 0; j < 8; ++j) {
    const double residual = kY[j] - (mu + tau * eta[j]);
    const double inv_var = 1.0 / (kSigma[j] * kSigma[j]);
    logp += -0.5 * eta[j] * eta[j] - 0.5 * residual * residual * inv_var;
    const double r = residual * inv_var;  // d log p / d theta_j
    d_mu += r;
    d_tau += r * eta[j];
    grad[2 + j] = -eta[j] + r * tau;
  }
  grad[0] = d_mu;
  grad[1] = d_tau * tau + 1.0;  // chain rule through tau = exp(u), plus Jacobian
  return logp;
}

std::vector<std::string> EightSchools::generated_names() const {
  std::vector<std::string> names;
  for (int j = 1; j <= 8; ++j) names.push_back(absl::StrCat("theta.", j));
  return names;
}

void EightSchools::Generate(std::span<const double> q, std::span<double> out) const {
  const double tau = math::Exp(q[1]);
  for (int j = 0; j < 8; ++j) out[j] = q[0] + tau * q[2 + j];
}

}  // namespace autobatch::mcmc
