// Random variates of Stan's distributions as frontend programs (Stan's
// `_rng` functions), for generated quantities (program_model.h) and any
// body that holds a counter-based random stream.
//
// A RandomStream is a (key, counter) pair of u64 values in a function body:
// each draw is ONE random_uniform / random_normal op (ir/primitives.def) at
// the current counter, which then advances by one (a u64 Var of the body,
// so draws inside loops and branches advance it per lane). A lane's draws
// are therefore a pure function of its (key, counter) at the start, whatever
// the batch (the primitives are bit-stable).
//
// Shapes. The shape of the variates is given (default: a scalar); each
// argument is an f64 scalar (broadcast) or a vector of exactly that shape.
// A vector argument of another shape is a type error at the caller's line
// (the compiler checks it: "both branches of select need one type"), never
// one variate silently repeated over a vector.
//
// Outside the domain (each function's comment gives it): a real variate is
// NaN, an integer one -1 (which no draw takes), as the lpdfs give NaN where
// Stan would reject the call.
//
// Accuracy: exact transformations of the Philox uniforms and normals
// (backends/random.h); the tests (tests/mcmc/distributions_rng_test.cc)
// check means and variances within a few Monte Carlo standard errors.
#ifndef AUTOBATCH_MCMC_MODEL_DISTRIBUTIONS_RNG_H_
#define AUTOBATCH_MCMC_MODEL_DISTRIBUTIONS_RNG_H_

#include <cstdint>
#include <source_location>
#include <vector>

#include "frontend/builder.h"
#include "frontend/value.h"

namespace autobatch::mcmc {

class RandomStream {
 public:
  // `key` a u64 scalar; `counter` a u64 scalar Var of the body being built,
  // advanced by every draw; `builder` that body's Builder (for the loops of
  // poisson_rng). All three must outlive the stream's use.
  RandomStream(Value key, Var* counter, Builder* builder)
      : key_(key), counter_(counter), builder_(builder) {}

  // f64 variates of `shape`, uniform on (0, 1) / standard normal, at the
  // current counter; the counter then advances by one.
  Value Uniform(std::vector<int64_t> shape = {},
                std::source_location loc = std::source_location::current());
  Value Normal(std::vector<int64_t> shape = {},
               std::source_location loc = std::source_location::current());

  Builder& builder() const { return *builder_; }

 private:
  Value key_;
  Var* counter_;
  Builder* builder_;
};

// normal(mu, sigma): mu + sigma z, z standard normal. sigma > 0.
Value normal_rng(RandomStream& rng, const Value& mu, const Value& sigma,
                 std::vector<int64_t> shape = {},
                 std::source_location loc = std::source_location::current());

// lognormal(mu, sigma): exp(normal_rng(mu, sigma)). sigma > 0.
Value lognormal_rng(RandomStream& rng, const Value& mu, const Value& sigma,
                    std::vector<int64_t> shape = {},
                    std::source_location loc = std::source_location::current());

// uniform(a, b): a + (b - a) u. a < b.
Value uniform_rng(RandomStream& rng, const Value& a, const Value& b,
                  std::vector<int64_t> shape = {},
                  std::source_location loc = std::source_location::current());

// exponential(beta) (a rate): -log(u) / beta. beta > 0.
Value exponential_rng(RandomStream& rng, const Value& beta, std::vector<int64_t> shape = {},
                      std::source_location loc = std::source_location::current());

// bernoulli(theta): i64, 1 if u < theta else 0. theta in [0, 1].
Value bernoulli_rng(RandomStream& rng, const Value& theta, std::vector<int64_t> shape = {},
                    std::source_location loc = std::source_location::current());

// bernoulli_logit(alpha) = bernoulli(logistic(alpha)): i64. alpha not NaN.
Value bernoulli_logit_rng(RandomStream& rng, const Value& alpha, std::vector<int64_t> shape = {},
                          std::source_location loc = std::source_location::current());

// poisson(lambda): i64, the number of arrivals in [0, lambda] of a unit-rate
// Poisson process (exponential gaps -log(u)). 0 <= lambda < 2^30 (Stan's
// bound). COST: a data-dependent loop of N + 1 iterations, N the draw, one
// uniform draw (of `shape`) each: about lambda + 1 on average, the largest
// element's for a vector; lanes loop independently (free-running). Fine for
// rates up to thousands; a rate of 1e6 costs a million iterations per draw.
Value poisson_rng(RandomStream& rng, const Value& lambda, std::vector<int64_t> shape = {},
                  std::source_location loc = std::source_location::current());

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_DISTRIBUTIONS_RNG_H_
