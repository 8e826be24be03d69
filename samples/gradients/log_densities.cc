// Log densities as programs (samples/gradients/log_densities.h).
#include "samples/gradients/log_densities.h"

#include <memory>

#include "frontend/value.h"

namespace autobatch::samples {
namespace {

Value F64Vector(std::vector<double> values) {
  const auto n = static_cast<int64_t>(values.size());
  return constant(Literal{Vector(DType::kF64, n), std::move(values), {}});
}

// q[i] as a scalar.
Value At(Value q, int64_t i) { return reduce_sum(slice(q, i, 1)); }

// log(1 + e^t), without overflow for large t.
Value Softplus(Value t) { return max(t, 0.0) + log1p(exp(-abs(t))); }

}  // namespace

BatchFunction RegisterEightSchools(Context& ctx) {
  return ctx.Batch("eight_schools", {.param_names = {"q"}})([](Value q) {
    const Value y = F64Vector({28, 8, -3, 7, -1, 1, 18, 12});
    const Value inv_var = F64Vector({1.0 / 225, 1.0 / 100, 1.0 / 256, 1.0 / 121, 1.0 / 81,
                                     1.0 / 121, 1.0 / 100, 1.0 / 324});
    const Value mu = At(q, 0);
    const Value u = At(q, 1);
    const Value tau = exp(u);
    const Value eta = slice(q, 2, 8);
    const Value t = tau / 5.0;
    // mu ~ normal(0, 5); tau ~ half-Cauchy(0, 5) with the Jacobian of exp.
    Value logp = -(mu * mu) / 50.0 - log1p(t * t) + u;
    const Value residual = y - (mu + tau * eta);
    logp = logp + reduce_sum(-0.5 * (eta * eta) - 0.5 * (residual * residual) * inv_var);
    return logp;
  });
}

BatchFunction RegisterLogisticRegression(Context& ctx, const std::vector<double>& x,
                                         const std::vector<double>& y, int64_t rows,
                                         int64_t features, double prior_sd) {
  auto matrix = std::make_shared<DenseMatrix>(DenseMatrix{rows, features, x});
  std::vector<double> sign;
  for (double label : y) sign.push_back(label != 0 ? -1.0 : 1.0);
  const double precision = 1.0 / (prior_sd * prior_sd);
  return ctx.Batch("logistic_regression", {.param_names = {"q"}})(
      [matrix, sign, features, precision](Value q) {
        const Value alpha = At(q, 0);
        const Value beta = slice(q, 1, features);
        const Value prior = -0.5 * precision * (alpha * alpha + squared_norm(beta));
        // y log s(eta) + (1 - y) log s(-eta) = -softplus(sign * eta).
        const Value eta = matvec(matrix, beta) + alpha;
        return prior - reduce_sum(Softplus(F64Vector(sign) * eta));
      });
}

}  // namespace autobatch::samples
