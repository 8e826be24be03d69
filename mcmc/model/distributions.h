// Log densities of Stan's distributions as frontend programs (Values), for
// log densities written with the frontend (samples/gradients/log_densities.cc).
//
// Every function emits ops into the function body being built (like the
// primitives of frontend/value.h) and returns one f64 scalar Value: the sum
// of the log density over the elements. Any argument may be a vector (one
// event dimension) and scalars broadcast: normal_lpdf(y, mu, 1.0) with y of
// [n] is sum_i normal(y[i] | mu, 1). Vector arguments must have one length.
// Real arguments are f64 Values (pass C++ literals as doubles: 1.0, not 1);
// counts (bernoulli, binomial, poisson, neg_binomial outcomes and the
// binomial's N) are i64 Values, cast to f64 inside.
//
// Constants. `_lpdf` / `_lpmf` is the full log density with every
// normalizing constant (as Stan's functions reference writes it). `_lupdf` /
// `_lupmf` drops the terms Stan's `~` statement drops whatever the arguments
// are: pure constants (log(2 pi), log(pi), log(2)) and terms of the integer
// arguments alone (an i64 argument is data in Stan, never a parameter). Terms
// of a real argument are kept, as that argument may be a parameter. Each
// function's comment says what its `_lupdf` drops; "drops nothing" means it
// equals `_lpdf`.
//
// Outside the support and the domain (every function's comment gives both):
// a variate outside the support (y < 0 for exponential, a count above N,
// theta outside [0, 1] for beta, ...) gives -inf, as R's d* functions do
// (density 0); a parameter outside its domain (a scale <= 0, a probability
// outside [0, 1], ...) gives NaN, as R does (Stan rejects it with an error).
// The domain is checked first: a bad parameter gives NaN whatever the
// variate. A NaN argument gives NaN. By convention 0 * log(0) = 0 (Stan's
// multiply_log), so bernoulli(1 | 1), poisson(0 | 0) and beta(0 | 1, b) are
// finite, as in R.
//
// Accuracy: within a few ulp of each term; the terms may cancel (lgamma of
// large counts or degrees of freedom), so the error bound is relative to the
// sum of the terms' absolute values (tests/mcmc/distributions_test.cc checks
// 1e-12 x (1 + that sum) against R, tests/mcmc/data/).
//
// Random variates (normal_rng, poisson_rng, ...) for generated quantities
// are in distributions_rng.h, included here.
#ifndef AUTOBATCH_MCMC_MODEL_DISTRIBUTIONS_H_
#define AUTOBATCH_MCMC_MODEL_DISTRIBUTIONS_H_

#include "frontend/value.h"
#include "mcmc/model/distributions_rng.h"

namespace autobatch::mcmc {

// normal(y | mu, sigma) = -z^2 / 2 - log(sigma) - log(2 pi) / 2,
// z = (y - mu) / sigma. y real; mu real, sigma > 0. _lupdf drops log(2 pi) / 2.
Value normal_lpdf(const Value& y, const Value& mu, const Value& sigma);
Value normal_lupdf(const Value& y, const Value& mu, const Value& sigma);

// student_t(y | nu, mu, sigma) = lgamma((nu + 1) / 2) - lgamma(nu / 2)
//   - log(nu pi) / 2 - log(sigma) - (nu + 1) / 2 log1p(z^2 / nu),
// z = (y - mu) / sigma. y real; nu > 0, mu real, sigma > 0.
// _lupdf drops log(pi) / 2.
Value student_t_lpdf(const Value& y, const Value& nu, const Value& mu, const Value& sigma);
Value student_t_lupdf(const Value& y, const Value& nu, const Value& mu, const Value& sigma);

// cauchy(y | mu, sigma) = -log(pi) - log(sigma) - log1p(z^2),
// z = (y - mu) / sigma. y real; mu real, sigma > 0. _lupdf drops log(pi).
Value cauchy_lpdf(const Value& y, const Value& mu, const Value& sigma);
Value cauchy_lupdf(const Value& y, const Value& mu, const Value& sigma);

// double_exponential(y | mu, sigma) (Laplace) = -log(2) - log(sigma)
//   - |y - mu| / sigma. y real; mu real, sigma > 0. _lupdf drops log(2).
Value double_exponential_lpdf(const Value& y, const Value& mu, const Value& sigma);
Value double_exponential_lupdf(const Value& y, const Value& mu, const Value& sigma);

// logistic(y | mu, s) = -z - log(s) - 2 log1p_exp(-z), z = (y - mu) / s.
// y real; mu real, s > 0. _lupdf drops nothing.
Value logistic_lpdf(const Value& y, const Value& mu, const Value& s);
Value logistic_lupdf(const Value& y, const Value& mu, const Value& s);

// lognormal(y | mu, sigma) = -z^2 / 2 - log(sigma) - log(y) - log(2 pi) / 2,
// z = (log(y) - mu) / sigma. y > 0 (y <= 0: -inf); mu real, sigma > 0.
// _lupdf drops log(2 pi) / 2.
Value lognormal_lpdf(const Value& y, const Value& mu, const Value& sigma);
Value lognormal_lupdf(const Value& y, const Value& mu, const Value& sigma);

// exponential(y | beta) = log(beta) - beta y. y >= 0; beta > 0 (a rate).
// _lupdf drops nothing.
Value exponential_lpdf(const Value& y, const Value& beta);
Value exponential_lupdf(const Value& y, const Value& beta);

// gamma(y | alpha, beta) = alpha log(beta) - lgamma(alpha)
//   + (alpha - 1) log(y) - beta y. y >= 0; alpha > 0, beta > 0 (a rate).
// _lupdf drops nothing.
Value gamma_lpdf(const Value& y, const Value& alpha, const Value& beta);
Value gamma_lupdf(const Value& y, const Value& alpha, const Value& beta);

// inv_gamma(y | alpha, beta) = alpha log(beta) - lgamma(alpha)
//   - (alpha + 1) log(y) - beta / y. y > 0; alpha > 0, beta > 0 (a scale).
// _lupdf drops nothing.
Value inv_gamma_lpdf(const Value& y, const Value& alpha, const Value& beta);
Value inv_gamma_lupdf(const Value& y, const Value& alpha, const Value& beta);

// beta(theta | a, b) = lgamma(a + b) - lgamma(a) - lgamma(b)
//   + (a - 1) log(theta) + (b - 1) log1p(-theta). theta in [0, 1]; a > 0,
// b > 0. _lupdf drops nothing.
Value beta_lpdf(const Value& theta, const Value& a, const Value& b);
Value beta_lupdf(const Value& theta, const Value& a, const Value& b);

// uniform(y | a, b) = -log(b - a). y in [a, b]; a < b (both real).
// _lupdf drops nothing.
Value uniform_lpdf(const Value& y, const Value& a, const Value& b);
Value uniform_lupdf(const Value& y, const Value& a, const Value& b);

// bernoulli(n | theta) = log(theta) if n = 1, log1p(-theta) if n = 0.
// n in {0, 1} (i64); theta in [0, 1]. _lupmf drops nothing.
Value bernoulli_lpmf(const Value& n, const Value& theta);
Value bernoulli_lupmf(const Value& n, const Value& theta);

// bernoulli_logit(n | alpha) = n alpha - log1p_exp(alpha), computed as
// -log1p_exp(-alpha) if n = 1 and -log1p_exp(alpha) if n = 0.
// n in {0, 1} (i64); alpha real. _lupmf drops nothing.
Value bernoulli_logit_lpmf(const Value& n, const Value& alpha);
Value bernoulli_logit_lupmf(const Value& n, const Value& alpha);

// bernoulli_logit_glm(y | X, alpha, beta) = sum_i bernoulli_logit(y_i |
// alpha + X_i beta), one fused primitive (ir/primitives.def's
// bernoulli_logit_glm, with its gradient primitive): X f64[N,K] (data: an X
// that depends on a parameter being differentiated is an error), y i64[N],
// alpha a real scalar, beta f64[K]. The same terms as bernoulli_logit_lpmf
// of alpha + matvec_input(X, beta), NaN if any linear predictor is NaN and
// -inf if any y_i is outside {0, 1}; X is read once per chunk of lanes when
// X and y are uniform inputs. _lupmf drops nothing.
Value bernoulli_logit_glm_lpmf(const Value& y, const Value& x, const Value& alpha,
                               const Value& beta);
Value bernoulli_logit_glm_lupmf(const Value& y, const Value& x, const Value& alpha,
                                const Value& beta);

// binomial(n | N, theta) = lchoose(N, n) + n log(theta)
//   + (N - n) log1p(-theta), lchoose(N, n) = lgamma(N + 1) - lgamma(n + 1)
//   - lgamma(N - n + 1). n in [0, N] (i64); N >= 0 (i64), theta in [0, 1].
// _lupmf drops lchoose(N, n) (integers alone).
Value binomial_lpmf(const Value& n, const Value& N, const Value& theta);
Value binomial_lupmf(const Value& n, const Value& N, const Value& theta);

// binomial_logit(n | N, alpha) = binomial(n | N, logistic(alpha)) =
//   lchoose(N, n) - n log1p_exp(-alpha) - (N - n) log1p_exp(alpha).
// n in [0, N] (i64); N >= 0 (i64), alpha real. _lupmf drops lchoose(N, n).
Value binomial_logit_lpmf(const Value& n, const Value& N, const Value& alpha);
Value binomial_logit_lupmf(const Value& n, const Value& N, const Value& alpha);

// poisson(n | lambda) = n log(lambda) - lambda - lgamma(n + 1).
// n >= 0 (i64); lambda >= 0. _lupmf drops lgamma(n + 1).
Value poisson_lpmf(const Value& n, const Value& lambda);
Value poisson_lupmf(const Value& n, const Value& lambda);

// poisson_log(n | alpha) = poisson(n | exp(alpha)) =
//   n alpha - exp(alpha) - lgamma(n + 1).
// n >= 0 (i64); alpha real. _lupmf drops lgamma(n + 1).
Value poisson_log_lpmf(const Value& n, const Value& alpha);
Value poisson_log_lupmf(const Value& n, const Value& alpha);

// neg_binomial_2(n | mu, phi) = lgamma(n + phi) - lgamma(n + 1) - lgamma(phi)
//   + n log(mu / (mu + phi)) + phi log(phi / (mu + phi)), the last two as
//   -n log1p_exp(log(phi) - log(mu)) - phi log1p_exp(log(mu) - log(phi)).
// Mean mu, variance mu + mu^2 / phi (R's dnbinom(n, size = phi, mu = mu)).
// n >= 0 (i64); mu > 0, phi > 0. _lupmf drops lgamma(n + 1).
Value neg_binomial_2_lpmf(const Value& n, const Value& mu, const Value& phi);
Value neg_binomial_2_lupmf(const Value& n, const Value& mu, const Value& phi);

// neg_binomial_2_log(n | eta, phi) = neg_binomial_2(n | exp(eta), phi), with
// log(mu) = eta exactly. n >= 0 (i64); eta real, phi > 0. _lupmf drops
// lgamma(n + 1).
Value neg_binomial_2_log_lpmf(const Value& n, const Value& eta, const Value& phi);
Value neg_binomial_2_log_lupmf(const Value& n, const Value& eta, const Value& phi);

// dirichlet(theta | alpha) = lgamma(sum alpha) - sum lgamma(alpha)
//   + sum (alpha - 1) log(theta), for ONE simplex: theta and alpha vectors of
// one length K (not vectorized over several simplexes). theta on the simplex
// (every theta >= 0 and |sum theta - 1| <= 1e-8, Stan's tolerance; else
// -inf); every alpha > 0. _lupdf drops nothing.
Value dirichlet_lpdf(const Value& theta, const Value& alpha);
Value dirichlet_lupdf(const Value& theta, const Value& alpha);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_DISTRIBUTIONS_H_
