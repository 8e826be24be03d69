# Reference log densities for tests/mcmc/distributions_test.cc, from R's d*
# functions (Debian r-base-core). Regenerate with
#   Rscript tests/mcmc/data/make_distribution_reference.R \
#     > tests/mcmc/data/distribution_reference.csv
# Columns: dist (the Stan name), x (the variate; for dirichlet the simplex,
# ';'-separated), a, b, c (the parameters in Stan's order, unused ones 0; for
# dirichlet a is alpha, ';'-separated), logp (R's value, log = TRUE), scale
# (the sum of the absolute values of the formula's terms, evaluated in R: the
# test's tolerance is 1e-12 * (1 + scale)).
options(warn = -1)
fmt <- function(v) paste(sprintf("%.17g", v), collapse = ";")
rows <- list()
emit <- function(dist, x, a, b, c, logp, terms) {
  scale <- sum(abs(terms[is.finite(terms)]))
  rows[[length(rows) + 1]] <<- paste(dist, fmt(x), fmt(a), fmt(b), fmt(c),
                                      fmt(logp), fmt(scale), sep = ",")
}
l2pi <- log(2 * pi)

# normal(y | mu, sigma)
for (p in list(c(0, 0, 1), c(1.5, -0.3, 2.1), c(-3, 2, 0.5), c(1e8, 0, 1e-3),
               c(1e-300, 1e-300, 1e-200), c(1e150, -1e150, 1e150), c(7, 7, 1e6),
               c(-40, 0, 1), c(0.3, 0.2, 1e-8))) {
  z <- (p[1] - p[2]) / p[3]
  emit("normal", p[1], p[2], p[3], 0, dnorm(p[1], p[2], p[3], log = TRUE),
       c(-0.5 * z^2, -log(p[3]), -0.5 * l2pi))
}
# student_t(y | nu, mu, sigma): dt of the standardized value minus log sigma
for (p in list(c(0.5, 3, 0, 1), c(-2, 1, 0.5, 2), c(10, 0.5, -1, 3), c(1.2, 1e6, 0, 1),
               c(-3, 1e8, 1, 0.5), c(1e10, 2.5, 0, 1), c(0, 30, 1e-3, 1e-4),
               c(4, 0.1, 1, 1e3), c(2, 7, 2, 1e-200))) {
  y <- p[1]; nu <- p[2]; mu <- p[3]; s <- p[4]; z <- (y - mu) / s
  emit("student_t", y, nu, mu, s, dt(z, nu, log = TRUE) - log(s),
       c(lgamma((nu + 1) / 2), -lgamma(nu / 2), -0.5 * log(nu * pi), -log(s),
         -(nu + 1) / 2 * log1p(z^2 / nu)))
}
# cauchy(y | mu, sigma)
for (p in list(c(0, 0, 1), c(3, -1, 2), c(-1e10, 0, 1), c(1e-5, 0, 1e-8), c(2, 2, 1e100),
               c(0.5, 1, 1e-300))) {
  z <- (p[1] - p[2]) / p[3]
  emit("cauchy", p[1], p[2], p[3], 0, dcauchy(p[1], p[2], p[3], log = TRUE),
       c(-log(pi), -log(p[3]), -log1p(z^2)))
}
# double_exponential(y | mu, sigma): Laplace, from its formula
for (p in list(c(0, 0, 1), c(2.5, -1, 0.7), c(-0.4, 0.3, 1.7), c(3, 1, 0.25),
               c(-1e6, 3, 2), c(1, 1 + 1e-9, 1e-12),
               c(4, 0, 1e200))) {
  terms <- c(-log(2), -log(p[3]), -abs(p[1] - p[2]) / p[3])
  emit("double_exponential", p[1], p[2], p[3], 0, sum(terms), terms)
}
# logistic(y | mu, s)
for (p in list(c(0, 0, 1), c(2, 0.5, 1.5), c(-800, 0, 1), c(800, 0, 1), c(1e-3, 0, 1e-6),
               c(3, -2, 1e100), c(-35, 1, 0.5))) {
  z <- (p[1] - p[2]) / p[3]
  emit("logistic", p[1], p[2], p[3], 0, dlogis(p[1], p[2], p[3], log = TRUE),
       c(-z, -log(p[3]), -2 * log1p(exp(-abs(z))), -2 * max(-z, 0)))
}
# lognormal(y | mu, sigma)
for (p in list(c(1, 0, 1), c(2.5, 0.3, 0.8), c(1e-200, 0, 1), c(1e200, 400, 10),
               c(0.5, -1, 1e-6), c(0, 0, 1), c(-1, 0, 1))) {
  ly <- if (p[1] > 0) log(p[1]) else -Inf
  z <- (ly - p[2]) / p[3]
  emit("lognormal", p[1], p[2], p[3], 0, dlnorm(p[1], p[2], p[3], log = TRUE),
       c(-0.5 * z^2, -log(p[3]), -ly, -0.5 * l2pi))
}
# exponential(y | beta)
for (p in list(c(1, 1), c(0, 2.5), c(3.5, 0.2), c(1e-300, 1e300), c(1e6, 1e-6),
               c(2, 1e-300), c(-1, 1))) {
  emit("exponential", p[1], p[2], 0, 0, dexp(p[1], p[2], log = TRUE),
       c(log(p[2]), -p[2] * p[1]))
}
# gamma(y | alpha, beta), beta a rate
for (p in list(c(1, 1, 1), c(2.5, 3, 0.5), c(0.1, 0.5, 2), c(1e6, 1e6, 1), c(1e-200, 0.3, 1),
               c(1e300, 2, 1e-300), c(50, 1e-3, 1e3), c(3, 1e8, 3e7), c(-1, 2, 1))) {
  y <- p[1]; a <- p[2]; b <- p[3]
  emit("gamma", y, a, b, 0, dgamma(y, shape = a, rate = b, log = TRUE),
       c(a * log(b), -lgamma(a), (a - 1) * log(y), -b * y))
}
# inv_gamma(y | alpha, beta): dgamma of 1/y (scale 1/beta) with the Jacobian
for (p in list(c(1, 1, 1), c(0.5, 3, 2), c(4, 0.5, 0.1), c(1e-3, 2, 1e-3), c(1e6, 1e6, 1e12),
               c(1e100, 1.5, 1e-100), c(2, 1e7, 2e7), c(-1, 2, 1), c(0, 2, 1))) {
  y <- p[1]; a <- p[2]; b <- p[3]
  ly <- if (y > 0) log(y) else -Inf
  logp <- if (y > 0) dgamma(1 / y, shape = a, rate = b, log = TRUE) - 2 * ly else -Inf
  emit("inv_gamma", y, a, b, 0, logp,
       c(a * log(b), -lgamma(a), -(a + 1) * ly, if (y > 0) -b / y else 0))
}
# beta(theta | a, b)
for (p in list(c(0.5, 1, 1), c(0.3, 2, 5), c(0.99, 0.5, 0.5), c(1e-10, 0.5, 3),
               c(1 - 1e-10, 2, 0.3), c(0.5, 1e6, 1e6), c(0.25, 1e-3, 1e-3), c(0.7, 3e5, 1e5),
               c(1.5, 2, 2), c(-0.1, 2, 2))) {
  th <- p[1]; a <- p[2]; b <- p[3]
  emit("beta", th, a, b, 0, dbeta(th, a, b, log = TRUE),
       c(lgamma(a + b), -lgamma(a), -lgamma(b), (a - 1) * log(th), (b - 1) * log1p(-th)))
}
# uniform(y | a, b)
for (p in list(c(0.5, 0, 1), c(-3, -5, 10), c(1e-300, 0, 1e-299), c(0, 0, 1), c(1, 0, 1),
               c(2, 0, 1), c(-1e-12, 0, 1), c(1e6, -1e300, 1e300))) {
  emit("uniform", p[1], p[2], p[3], 0, dunif(p[1], p[2], p[3], log = TRUE), c(-log(p[3] - p[2])))
}
# bernoulli(n | theta)
for (p in list(c(1, 0.3), c(0, 0.3), c(1, 1e-300), c(0, 1 - 1e-12), c(1, 1), c(0, 0),
               c(0, 1), c(2, 0.5), c(-1, 0.5))) {
  n <- p[1]; th <- p[2]
  emit("bernoulli", n, th, 0, 0, dbinom(n, 1, th, log = TRUE),
       c(n * log(th), (1 - n) * log1p(-th)))
}
# bernoulli_logit(n | alpha): dbinom loses log(1 - p) for large alpha, so the
# value comes from R's plogis(log.p = TRUE), which dbinom agrees with elsewhere
for (p in list(c(1, 0), c(0, 0), c(1, 2.5), c(0, 2.5), c(1, -40), c(0, 40), c(1, 800),
               c(0, -800), c(0, 1e-10))) {
  n <- p[1]; al <- p[2]
  logp <- if (n == 1) plogis(al, log.p = TRUE) else plogis(-al, log.p = TRUE)
  stopifnot(abs(logp - dbinom(n, 1, plogis(al), log = TRUE)) < 1e-12 * (1 + abs(logp)) ||
            abs(al) > 30)
  emit("bernoulli_logit", n, al, 0, 0, logp, c(n * al, -log1p(exp(-abs(al))), -max(al, 0)))
}
# binomial(n | N, theta)
for (p in list(c(3, 10, 0.4), c(0, 5, 0.2), c(5, 5, 0.9), c(500000, 1e6, 0.5),
               c(1, 1e6, 1e-6), c(999990, 1e6, 0.99999), c(0, 10, 0), c(10, 10, 1),
               c(3, 10, 0), c(11, 10, 0.5), c(-1, 10, 0.5), c(20, 40, 1e-300))) {
  n <- p[1]; N <- p[2]; th <- p[3]
  emit("binomial", n, N, th, 0, dbinom(n, N, th, log = TRUE),
       c(lgamma(N + 1), -lgamma(n + 1), -lgamma(N - n + 1), n * log(th), (N - n) * log1p(-th)))
}
# binomial_logit(n | N, alpha): lchoose plus plogis(log.p = TRUE) as above
for (p in list(c(3, 10, 0), c(0, 5, -1.5), c(5, 5, 2), c(500000, 1e6, 0.01),
               c(2, 1e6, -13), c(7, 20, 50), c(13, 20, -50))) {
  n <- p[1]; N <- p[2]; al <- p[3]
  logp <- lchoose(N, n) + n * plogis(al, log.p = TRUE) + (N - n) * plogis(-al, log.p = TRUE)
  stopifnot(abs(logp - dbinom(n, N, plogis(al), log = TRUE)) < 1e-9 * (1 + abs(logp)) ||
            abs(al) > 30)
  emit("binomial_logit", n, N, al, 0, logp,
       c(lgamma(N + 1), -lgamma(n + 1), -lgamma(N - n + 1), n * plogis(al, log.p = TRUE),
         (N - n) * plogis(-al, log.p = TRUE)))
}
# poisson(n | lambda)
for (p in list(c(0, 1), c(3, 2.5), c(10, 0.1), c(1e6, 1e6), c(1e6, 1), c(0, 1e-300),
               c(5, 1e8), c(0, 0), c(2, 0), c(-1, 1), c(1, 1e-300))) {
  n <- p[1]; la <- p[2]
  emit("poisson", n, la, 0, 0, dpois(n, la, log = TRUE),
       c(if (n > 0) n * log(la) else 0, -la, -lgamma(n + 1)))
}
# poisson_log(n | alpha) = poisson(n | exp(alpha))
for (p in list(c(0, 0), c(3, 0.9), c(10, -2.3), c(1e6, log(1e6)), c(0, -700), c(7, 5),
               c(2, 30))) {
  n <- p[1]; al <- p[2]
  emit("poisson_log", n, al, 0, 0, dpois(n, exp(al), log = TRUE),
       c(n * al, -exp(al), -lgamma(n + 1)))
}
# neg_binomial_2(n | mu, phi) = dnbinom(n, size = phi, mu = mu)
for (p in list(c(0, 1, 1), c(3, 2.5, 0.7), c(10, 4, 20), c(1e6, 1e6, 5), c(5, 3, 1e6),
               c(7, 2, 1e12), c(0, 1e-8, 3), c(2, 1e8, 0.5), c(-1, 2, 2), c(4, 0.1, 1e-3))) {
  n <- p[1]; mu <- p[2]; phi <- p[3]
  emit("neg_binomial_2", n, mu, phi, 0, dnbinom(n, size = phi, mu = mu, log = TRUE),
       c(lgamma(n + phi), -lgamma(n + 1), -lgamma(phi), n * (log(mu) - log(mu + phi)),
         phi * (log(phi) - log(mu + phi))))
}
# neg_binomial_2_log(n | eta, phi) = neg_binomial_2(n | exp(eta), phi)
for (p in list(c(0, 0, 1), c(3, 0.9, 0.7), c(10, log(4), 20), c(1e6, log(1e6), 5),
               c(5, 1.1, 1e6), c(0, -20, 3), c(2, 18, 0.5))) {
  n <- p[1]; eta <- p[2]; phi <- p[3]; mu <- exp(eta)
  emit("neg_binomial_2_log", n, eta, phi, 0, dnbinom(n, size = phi, mu = mu, log = TRUE),
       c(lgamma(n + phi), -lgamma(n + 1), -lgamma(phi), n * (log(mu) - log(mu + phi)),
         phi * (log(phi) - log(mu + phi))))
}
# dirichlet(theta | alpha), from its formula with R's lgamma
for (p in list(list(c(0.2, 0.3, 0.5), c(1, 1, 1)), list(c(0.1, 0.6, 0.3), c(2, 5, 3.5)),
               list(c(0.25, 0.25, 0.25, 0.25), c(1e6, 1e6, 1e6, 1e6)),
               list(c(1e-10, 1 - 1e-10), c(0.5, 0.5)),
               list(c(0.7, 0.05, 0.05, 0.2), c(0.01, 3, 40, 0.2)))) {
  th <- p[[1]]; al <- p[[2]]
  terms <- c(lgamma(sum(al)), -lgamma(al), (al - 1) * log(th))
  emit("dirichlet", th, al, 0, 0, sum(terms), terms)
}
cat("dist,x,a,b,c,logp,scale\n")
cat(paste(unlist(rows), collapse = "\n"), "\n", sep = "")
