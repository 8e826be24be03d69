// Stan's distributions as frontend programs (mcmc/model/distributions.h).
#include "mcmc/model/distributions.h"

#include <limits>

namespace autobatch::mcmc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLogPi = 1.1447298858494001741;
constexpr double kLog2 = 0.69314718055994530942;
constexpr double kHalfLog2Pi = 0.91893853320467274178;

Value F64(const Value& n) { return cast(n, DType::kF64); }

// f64 zeros of the arguments' broadcast shape: adding it gives a term every
// element's shape, so the sum counts a term of scalars once per element and
// select's branches have the condition's shape.
Value Zeros(std::initializer_list<Value> args) {
  Value zeros;
  for (const Value& arg : args) {
    const Value z = cast(fill_like(arg, 0), DType::kF64);
    zeros = zeros.empty() ? z : zeros + z;
  }
  return zeros;
}

// a log(b), with 0 log(0) = 0 (Stan's multiply_log). Only the point a = b
// = 0 takes the other branch, so the gradient in a is log(b) elsewhere
// (a = 0 alone would put a kink at alpha = 1 in gamma and beta).
Value MultiplyLog(const Value& a, const Value& b, const Value& zeros) {
  return select(a + zeros == 0.0 && b + zeros == 0.0, zeros, a * log(b) + zeros);
}

// a log1p(-b), with 0 log1p(-1) = 0.
Value MultiplyLog1m(const Value& a, const Value& b, const Value& zeros) {
  return select(a + zeros == 0.0 && b + zeros == 1.0, zeros, a * log1p(-b) + zeros);
}

// lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) of f64 counts.
Value LogChoose(const Value& n, const Value& k) {
  return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

// The sum over elements of `logp` (with `zeros` its full shape), -inf where
// `in_support` is false and NaN where `in_domain` is false (checked first).
// Either condition may be empty (always true).
Value Total(const Value& logp, const Value& zeros, const Value& in_support,
            const Value& in_domain) {
  Value out = logp + zeros;
  if (!in_support.empty()) out = select(in_support, out, fill_like(out, -kInf));
  if (!in_domain.empty()) out = select(in_domain, out, fill_like(out, kNaN));
  return reduce_sum(out);
}

// Location-scale families: z = (y - mu) / sigma.
Value Standardize(const Value& y, const Value& mu, const Value& sigma) { return (y - mu) / sigma; }

Value Normal(const Value& y, const Value& mu, const Value& sigma, bool constants) {
  const Value z = Standardize(y, mu, sigma);
  Value logp = -0.5 * (z * z) - log(sigma);
  if (constants) logp = logp - kHalfLog2Pi;
  return Total(logp, Zeros({y, mu, sigma}), {}, sigma > 0.0);
}

Value StudentT(const Value& y, const Value& nu, const Value& mu, const Value& sigma,
               bool constants) {
  const Value z = Standardize(y, mu, sigma);
  const Value half_nu = 0.5 * nu;
  Value logp = lgamma(half_nu + 0.5) - lgamma(half_nu) - 0.5 * log(nu) - log(sigma) -
               (half_nu + 0.5) * log1p(z * z / nu);
  if (constants) logp = logp - 0.5 * kLogPi;
  return Total(logp, Zeros({y, nu, mu, sigma}), {}, nu > 0.0 && sigma > 0.0);
}

Value Cauchy(const Value& y, const Value& mu, const Value& sigma, bool constants) {
  const Value z = Standardize(y, mu, sigma);
  Value logp = -log(sigma) - log1p(z * z);
  if (constants) logp = logp - kLogPi;
  return Total(logp, Zeros({y, mu, sigma}), {}, sigma > 0.0);
}

Value DoubleExponential(const Value& y, const Value& mu, const Value& sigma, bool constants) {
  Value logp = -log(sigma) - abs(y - mu) / sigma;
  if (constants) logp = logp - kLog2;
  return Total(logp, Zeros({y, mu, sigma}), {}, sigma > 0.0);
}

Value Lognormal(const Value& y, const Value& mu, const Value& sigma, bool constants) {
  const Value log_y = log(y);
  const Value z = (log_y - mu) / sigma;
  Value logp = -0.5 * (z * z) - log(sigma) - log_y;
  if (constants) logp = logp - kHalfLog2Pi;
  return Total(logp, Zeros({y, mu, sigma}), y > 0.0, sigma > 0.0);
}

Value Binomial(const Value& n, const Value& big_n, const Value& theta, bool constants) {
  const Value k = F64(n), total = F64(big_n);
  const Value zeros = Zeros({n, big_n, theta});
  Value logp = MultiplyLog(k, theta, zeros) + MultiplyLog1m(total - k, theta, zeros);
  if (constants) logp = logp + LogChoose(total, k);
  return Total(logp, zeros, n >= 0 && n <= big_n, big_n >= 0 && theta >= 0.0 && theta <= 1.0);
}

Value BinomialLogit(const Value& n, const Value& big_n, const Value& alpha, bool constants) {
  const Value k = F64(n), total = F64(big_n);
  Value logp = -(k * log1p_exp(-alpha)) - (total - k) * log1p_exp(alpha);
  if (constants) logp = logp + LogChoose(total, k);
  return Total(logp, Zeros({n, big_n, alpha}), n >= 0 && n <= big_n, big_n >= 0 && alpha == alpha);
}

Value Poisson(const Value& n, const Value& lambda, bool constants) {
  const Value k = F64(n);
  const Value zeros = Zeros({n, lambda});
  Value logp = MultiplyLog(k, lambda, zeros) - lambda;
  if (constants) logp = logp - lgamma(k + 1.0);
  return Total(logp, zeros, n >= 0, lambda >= 0.0);
}

Value PoissonLog(const Value& n, const Value& alpha, bool constants) {
  const Value k = F64(n);
  Value logp = k * alpha - exp(alpha);
  if (constants) logp = logp - lgamma(k + 1.0);
  return Total(logp, Zeros({n, alpha}), n >= 0, alpha == alpha);
}

// neg_binomial_2 with log(mu) given (and mu for the domain check).
Value NegBinomial2(const Value& n, const Value& log_mu, const Value& phi, const Value& mu_ok,
                   bool constants) {
  const Value k = F64(n);
  const Value log_phi = log(phi);
  Value logp = lgamma(k + phi) - lgamma(phi) - k * log1p_exp(log_phi - log_mu) -
               phi * log1p_exp(log_mu - log_phi);
  if (constants) logp = logp - lgamma(k + 1.0);
  return Total(logp, Zeros({n, log_mu, phi}), n >= 0, mu_ok && phi > 0.0);
}

}  // namespace

Value normal_lpdf(const Value& y, const Value& mu, const Value& sigma) {
  return Normal(y, mu, sigma, /*constants=*/true);
}
Value normal_lupdf(const Value& y, const Value& mu, const Value& sigma) {
  return Normal(y, mu, sigma, /*constants=*/false);
}

Value student_t_lpdf(const Value& y, const Value& nu, const Value& mu, const Value& sigma) {
  return StudentT(y, nu, mu, sigma, /*constants=*/true);
}
Value student_t_lupdf(const Value& y, const Value& nu, const Value& mu, const Value& sigma) {
  return StudentT(y, nu, mu, sigma, /*constants=*/false);
}

Value cauchy_lpdf(const Value& y, const Value& mu, const Value& sigma) {
  return Cauchy(y, mu, sigma, /*constants=*/true);
}
Value cauchy_lupdf(const Value& y, const Value& mu, const Value& sigma) {
  return Cauchy(y, mu, sigma, /*constants=*/false);
}

Value double_exponential_lpdf(const Value& y, const Value& mu, const Value& sigma) {
  return DoubleExponential(y, mu, sigma, /*constants=*/true);
}
Value double_exponential_lupdf(const Value& y, const Value& mu, const Value& sigma) {
  return DoubleExponential(y, mu, sigma, /*constants=*/false);
}

Value logistic_lpdf(const Value& y, const Value& mu, const Value& s) {
  const Value z = Standardize(y, mu, s);
  return Total(-z - log(s) - 2.0 * log1p_exp(-z), Zeros({y, mu, s}), {}, s > 0.0);
}
Value logistic_lupdf(const Value& y, const Value& mu, const Value& s) {
  return logistic_lpdf(y, mu, s);
}

Value lognormal_lpdf(const Value& y, const Value& mu, const Value& sigma) {
  return Lognormal(y, mu, sigma, /*constants=*/true);
}
Value lognormal_lupdf(const Value& y, const Value& mu, const Value& sigma) {
  return Lognormal(y, mu, sigma, /*constants=*/false);
}

Value exponential_lpdf(const Value& y, const Value& beta) {
  return Total(log(beta) - beta * y, Zeros({y, beta}), y >= 0.0, beta > 0.0);
}
Value exponential_lupdf(const Value& y, const Value& beta) { return exponential_lpdf(y, beta); }

Value gamma_lpdf(const Value& y, const Value& alpha, const Value& beta) {
  const Value zeros = Zeros({y, alpha, beta});
  const Value logp =
      alpha * log(beta) - lgamma(alpha) + MultiplyLog(alpha - 1.0, y, zeros) - beta * y;
  return Total(logp, zeros, y >= 0.0, alpha > 0.0 && beta > 0.0);
}
Value gamma_lupdf(const Value& y, const Value& alpha, const Value& beta) {
  return gamma_lpdf(y, alpha, beta);
}

Value inv_gamma_lpdf(const Value& y, const Value& alpha, const Value& beta) {
  const Value logp = alpha * log(beta) - lgamma(alpha) - (alpha + 1.0) * log(y) - beta / y;
  return Total(logp, Zeros({y, alpha, beta}), y > 0.0, alpha > 0.0 && beta > 0.0);
}
Value inv_gamma_lupdf(const Value& y, const Value& alpha, const Value& beta) {
  return inv_gamma_lpdf(y, alpha, beta);
}

Value beta_lpdf(const Value& theta, const Value& a, const Value& b) {
  const Value zeros = Zeros({theta, a, b});
  const Value logp = lgamma(a + b) - lgamma(a) - lgamma(b) + MultiplyLog(a - 1.0, theta, zeros) +
                     MultiplyLog1m(b - 1.0, theta, zeros);
  return Total(logp, zeros, theta >= 0.0 && theta <= 1.0, a > 0.0 && b > 0.0);
}
Value beta_lupdf(const Value& theta, const Value& a, const Value& b) {
  return beta_lpdf(theta, a, b);
}

Value uniform_lpdf(const Value& y, const Value& a, const Value& b) {
  return Total(-log(b - a), Zeros({y, a, b}), y >= a && y <= b, a < b);
}
Value uniform_lupdf(const Value& y, const Value& a, const Value& b) {
  return uniform_lpdf(y, a, b);
}

Value bernoulli_lpmf(const Value& n, const Value& theta) {
  const Value zeros = Zeros({n, theta});
  const Value logp = select(n == 1, log(theta) + zeros, log1p(-theta) + zeros);
  return Total(logp, zeros, n == 0 || n == 1, theta >= 0.0 && theta <= 1.0);
}
Value bernoulli_lupmf(const Value& n, const Value& theta) { return bernoulli_lpmf(n, theta); }

Value bernoulli_logit_lpmf(const Value& n, const Value& alpha) {
  const Value zeros = Zeros({n, alpha});
  const Value logp = select(n == 1, -log1p_exp(-alpha) + zeros, -log1p_exp(alpha) + zeros);
  return Total(logp, zeros, n == 0 || n == 1, alpha == alpha);
}
Value bernoulli_logit_lupmf(const Value& n, const Value& alpha) {
  return bernoulli_logit_lpmf(n, alpha);
}

Value bernoulli_logit_glm_lpmf(const Value& y, const Value& x, const Value& alpha,
                               const Value& beta) {
  return bernoulli_logit_glm(x, y, alpha, beta);
}
Value bernoulli_logit_glm_lupmf(const Value& y, const Value& x, const Value& alpha,
                                const Value& beta) {
  return bernoulli_logit_glm_lpmf(y, x, alpha, beta);
}

Value binomial_lpmf(const Value& n, const Value& N, const Value& theta) {
  return Binomial(n, N, theta, /*constants=*/true);
}
Value binomial_lupmf(const Value& n, const Value& N, const Value& theta) {
  return Binomial(n, N, theta, /*constants=*/false);
}

Value binomial_logit_lpmf(const Value& n, const Value& N, const Value& alpha) {
  return BinomialLogit(n, N, alpha, /*constants=*/true);
}
Value binomial_logit_lupmf(const Value& n, const Value& N, const Value& alpha) {
  return BinomialLogit(n, N, alpha, /*constants=*/false);
}

Value poisson_lpmf(const Value& n, const Value& lambda) {
  return Poisson(n, lambda, /*constants=*/true);
}
Value poisson_lupmf(const Value& n, const Value& lambda) {
  return Poisson(n, lambda, /*constants=*/false);
}

Value poisson_log_lpmf(const Value& n, const Value& alpha) {
  return PoissonLog(n, alpha, /*constants=*/true);
}
Value poisson_log_lupmf(const Value& n, const Value& alpha) {
  return PoissonLog(n, alpha, /*constants=*/false);
}

Value neg_binomial_2_lpmf(const Value& n, const Value& mu, const Value& phi) {
  return NegBinomial2(n, log(mu), phi, mu > 0.0, /*constants=*/true);
}
Value neg_binomial_2_lupmf(const Value& n, const Value& mu, const Value& phi) {
  return NegBinomial2(n, log(mu), phi, mu > 0.0, /*constants=*/false);
}

Value neg_binomial_2_log_lpmf(const Value& n, const Value& eta, const Value& phi) {
  return NegBinomial2(n, eta, phi, eta == eta, /*constants=*/true);
}
Value neg_binomial_2_log_lupmf(const Value& n, const Value& eta, const Value& phi) {
  return NegBinomial2(n, eta, phi, eta == eta, /*constants=*/false);
}

Value dirichlet_lpdf(const Value& theta, const Value& alpha) {
  const Value ones = fill_like(theta, 1.0), none = fill_like(theta, 0.0);
  const Value negative_thetas = reduce_sum(select(theta < 0.0, ones, none));
  const Value bad_alphas = reduce_sum(select(alpha > 0.0, none, ones));
  const Value logp = lgamma(reduce_sum(alpha)) - reduce_sum(lgamma(alpha)) +
                     reduce_sum((alpha - 1.0) * log(theta));
  const Value on_simplex = negative_thetas == 0.0 && abs(reduce_sum(theta) - 1.0) <= 1e-8;
  return Total(logp, fill_like(logp, 0.0), on_simplex, bad_alphas == 0.0);
}
Value dirichlet_lupdf(const Value& theta, const Value& alpha) {
  return dirichlet_lpdf(theta, alpha);
}

}  // namespace autobatch::mcmc
