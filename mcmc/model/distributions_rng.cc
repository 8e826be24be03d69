// Stan's `_rng` functions as frontend programs
// (mcmc/model/distributions_rng.h).
#include "mcmc/model/distributions_rng.h"

#include <limits>
#include <utility>

namespace autobatch::mcmc {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Stan's poisson_rng refuses lambda >= 2^30.
constexpr double kMaxPoissonRate = 1073741824.0;

// `arg` broadcast to the shape of the variates `draw`. The select (its
// condition always true) is there for its type rule: both branches need
// one type, so a vector argument of another shape than the draw's is an
// error at the caller's line instead of a scalar draw broadcast over it.
Value Fit(const Value& arg, const Value& draw, std::source_location loc) {
  return select(Operand(true, loc), Operand(arg + fill_like(draw, 0.0), loc), Operand(draw, loc));
}

// `x` where `ok`, else the out-of-domain value `bad` (NaN or -1).
template <typename T>
Value InDomain(const Value& ok, const Value& x, T bad) {
  return select(ok, x, fill_like(x, bad));
}

}  // namespace

Value RandomStream::Uniform(std::vector<int64_t> shape, std::source_location loc) {
  Value u = random_uniform(Operand(key_, loc), Operand(*counter_, loc), std::move(shape));
  *counter_ = *counter_ + uint64_t{1};
  return u;
}

Value RandomStream::Normal(std::vector<int64_t> shape, std::source_location loc) {
  Value z = random_normal(Operand(key_, loc), Operand(*counter_, loc), std::move(shape));
  *counter_ = *counter_ + uint64_t{1};
  return z;
}

Value normal_rng(RandomStream& rng, const Value& mu, const Value& sigma, std::vector<int64_t> shape,
                 std::source_location loc) {
  const Value z = rng.Normal(std::move(shape), loc);
  const Value m = Fit(mu, z, loc);
  const Value s = Fit(sigma, z, loc);
  return InDomain(s > 0.0, m + s * z, kNaN);
}

Value lognormal_rng(RandomStream& rng, const Value& mu, const Value& sigma,
                    std::vector<int64_t> shape, std::source_location loc) {
  return exp(normal_rng(rng, mu, sigma, std::move(shape), loc));
}

Value uniform_rng(RandomStream& rng, const Value& a, const Value& b, std::vector<int64_t> shape,
                  std::source_location loc) {
  const Value u = rng.Uniform(std::move(shape), loc);
  const Value lo = Fit(a, u, loc);
  const Value hi = Fit(b, u, loc);
  return InDomain(lo < hi, lo + (hi - lo) * u, kNaN);
}

Value exponential_rng(RandomStream& rng, const Value& beta, std::vector<int64_t> shape,
                      std::source_location loc) {
  const Value u = rng.Uniform(std::move(shape), loc);
  const Value rate = Fit(beta, u, loc);
  return InDomain(rate > 0.0, -log(u) / rate, kNaN);
}

Value bernoulli_rng(RandomStream& rng, const Value& theta, std::vector<int64_t> shape,
                    std::source_location loc) {
  const Value u = rng.Uniform(std::move(shape), loc);
  const Value p = Fit(theta, u, loc);
  return InDomain(p >= 0.0 && p <= 1.0, cast(u < p, DType::kI64), -1);
}

Value bernoulli_logit_rng(RandomStream& rng, const Value& alpha, std::vector<int64_t> shape,
                          std::source_location loc) {
  const Value u = rng.Uniform(std::move(shape), loc);
  const Value a = Fit(alpha, u, loc);
  return InDomain(a == a, cast(u < logistic(a), DType::kI64), -1);
}

Value poisson_rng(RandomStream& rng, const Value& lambda, std::vector<int64_t> shape,
                  std::source_location loc) {
  Builder& b = rng.builder();
  const Value u = rng.Uniform(shape, loc);
  const Value rate = Fit(lambda, u, loc);
  const Value ok = rate >= 0.0 && rate < kMaxPoissonRate;
  // The arrival time of the next arrival, and the arrivals counted so far.
  Var time = b.Local("poisson_time", -log(u));
  Var count = b.Local("poisson_count", cast(fill_like(u, 0.0), DType::kI64));
  b.While([&] { return reduce_sum(cast(ok && time <= rate, DType::kI64)) > 0; }).Do([&] {
    const Value arrived = ok && time <= rate;
    count = count + cast(arrived, DType::kI64);
    time = select(arrived, time - log(rng.Uniform(shape, loc)), time);
  });
  return InDomain(ok, Value(count), -1);
}

}  // namespace autobatch::mcmc
