// Sampler configuration, chain state and the exact arithmetic shared by the
// scalar reference samplers and the batched sampler programs.
//
// The scalar samplers (scalar_nuts.h, scalar_hmc.h, scalar_rwmh.h) are the
// bit-for-bit oracle of the batched per-example programs. Two things make
// that possible and are the contract spelled out here:
//
// 1. Every floating-point value is computed by one expression, written below
//    or in the sampler's header as a sequence of primitive-sized steps
//    (ir/primitives.def), evaluated in that order in IEEE double without
//    contraction (the build uses -ffp-contract=off). Sums over a vector run
//    in index order starting from element 0 (the `dot` / `reduce_sum`
//    primitives). exp, log1p, log and pow are THE primitives' definitions
//    (support/math/math.h; SamplerExp / SamplerLog1p below), never <cmath>'s.
//
// 2. Every random draw comes from the chain's own stream (chain_rng.h) in an
//    order fixed by the chain's own path, never by other chains:
//
//    NUTS transition (scalar_nuts.h has the algorithm):
//      [jitter > 0 only] u = NextUniform          step-size jitter
//      z = NextNormals(d)                         momentum, p = z / sqrt(m)
//      for each doubling j = 0, 1, ..., while j < max_depth:
//        u = NextUniform                          direction: forward iff u > 0.5
//        BuildTree(j): a post-order walk; every INTERNAL node whose two
//          children both returned valid draws u = NextUniform (the
//          multinomial choice) after the second child returns and before
//          its own U-turn checks; leaves draw nothing; a node returns at
//          once, without drawing, when a child is invalid
//        if the new subtree is invalid: stop (no more draws)
//        u = NextUniform                          biased progressive sample
//        U-turn checks; stop if they fail
//    Static HMC transition (scalar_hmc.h):
//      [jitter > 0 only] u = NextUniform; z = NextNormals(d);
//      L leapfrogs; u = NextUniform (Metropolis, ALWAYS drawn)
//    Random-walk Metropolis transition (scalar_rwmh.h):
//      z = NextNormals(d); u = NextUniform (Metropolis, ALWAYS drawn)
//
//    Each NextUniform / NextNormals advances the counter by exactly 1, so
//    the batched program is: random_* op on (key, counter), then
//    counter = counter + 1.
#ifndef AUTOBATCH_MCMC_SAMPLER_CONFIG_H_
#define AUTOBATCH_MCMC_SAMPLER_CONFIG_H_

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mcmc/chain_rng.h"
#include "mcmc/model/model.h"
#include "support/math/math.h"

namespace autobatch::mcmc {

enum class Algorithm : uint8_t { kNuts, kHmc, kRwmh };
std::string_view AlgorithmName(Algorithm algorithm);  // "nuts", "hmc", "rwmh"

// Options of the three samplers (each reads the fields it documents).
struct SamplerConfig {
  // NUTS and HMC: the leapfrog step size (before jitter). RWMH: the scale of
  // the random-walk proposal (see scalar_rwmh.h). Finite, > 0.
  double step_size = 1.0;
  // Diagonal of the INVERSE metric M^-1 (Stan's diag_e "inv_metric"), one
  // finite positive value per unconstrained coordinate; empty means all ones.
  std::vector<double> inv_metric;
  // NUTS: maximum tree depth (CmdStan max_depth), in [1, kMaxTreeDepth]: at
  // most 2^max_depth - 1 leapfrogs per transition.
  int max_depth = 10;
  // NUTS and HMC: a leapfrog is divergent when H - H0 > max_delta_h
  // (H the energy after it, H0 the transition's initial energy). > 0.
  double max_delta_h = 1000.0;
  // NUTS and HMC: step size jitter in [0, 1] (CmdStan stepsize_jitter). With
  // jitter > 0 each transition uses
  //   eps = step_size * (1.0 + jitter * (2.0 * u - 1.0)),  u = NextUniform
  // (evaluated in exactly that order); with jitter == 0, eps = step_size and
  // no uniform is drawn.
  double step_size_jitter = 0.0;
  // HMC: leapfrog steps per transition, in [1, 2^30].
  int64_t num_leapfrog_steps = 16;

  // OK if every field is in range for a model of `dimension` (>= 1)
  // coordinates; otherwise InvalidArgument naming the field, its value and
  // the allowed range.
  absl::Status Validate(int64_t dimension) const;
};

inline constexpr int kMaxTreeDepth = 30;

// Where a chain is: an unconstrained point with its log density and
// gradient (both from Model::LogDensityGradient at q, bit for bit).
struct ChainState {
  std::vector<double> q;
  double logp = 0;
  std::vector<double> grad;
};

// The state at q: InvalidArgument if q.size() != model.dimension();
// FailedPrecondition if the log density or a gradient entry is not finite
// there (samplers need a finite starting point; see initialize.h).
absl::StatusOr<ChainState> MakeChainState(const Model& model, std::span<const double> q);

// ---------------------------------------------------------------------------
// Shared arithmetic. Each is ONE definition that the batched programs must
// reproduce with the primitives named.

// exp / log1p exactly as the `exp` / `log1p` primitives compute them
// (support/math/math.h), bit for bit, for every input including NaN and
// +-inf. Pure, no allocation.
inline double SamplerExp(double x) { return math::Exp(x); }
inline double SamplerLog1p(double x) { return math::Log1p(x); }

// sum_i a[i] * b[i] in index order: acc = a[0] * b[0]; acc = acc + a[i] * b[i]
// for i = 1..n-1 (the `dot` primitive). Requires a.size() == b.size() >= 1.
inline double SamplerDot(const double* a, const double* b, int64_t n) {
  double acc = a[0] * b[0];
  for (int64_t i = 1; i < n; ++i) acc = acc + a[i] * b[i];
  return acc;
}

// log(exp(a) + exp(b)):
//   hi = max(a, b); lo = min(a, b)
//   hi == -inf ? -inf : hi + SamplerLog1p(SamplerExp(lo - hi))
// (`max`, `min`, `sub`, `exp`, `log1p`, `add`, `eq`, `select`; NaN in gives
// NaN out). LogSumExp(-inf, b) == b exactly for finite b.
inline double SamplerLogSumExp(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  const double hi = a > b ? a : b;
  const double lo = a < b ? a : b;
  if (hi == -std::numeric_limits<double>::infinity()) return hi;
  return hi + SamplerLog1p(SamplerExp(lo - hi));
}

// The Metropolis probability min(1, exp(w)) of log ratio w, as Stan sums it
// into accept_stat__: w > 0 ? 1.0 : SamplerExp(w) (`gt`, `exp`, `select`);
// w = -inf gives 0, NaN gives NaN.
inline double SamplerMetropolisProb(double w) { return w > 0 ? 1.0 : SamplerExp(w); }

// The step size of one NUTS / HMC transition: with jitter > 0 draws
// u = NextUniform(rng) and returns step_size * (1.0 + jitter * (2.0 * u - 1.0));
// with jitter == 0 returns step_size and draws nothing.
double JitteredStepSize(double step_size, double jitter, ChainRng& rng);

// Draws the momentum: z = NextNormals(rng, p); p[i] = z[i] / sqrt_m[i]
// (`div`; sqrt_m[i] = sqrt(m[i]) with `sqrt`). p has d entries.
void DrawMomentum(ChainRng& rng, const double* sqrt_m, std::span<double> p);

// The energy of (p, logp): writes p_sharp[i] = m[i] * p[i] and returns
// 0.5 * SamplerDot(p, p_sharp) - logp. Does not map NaN to +inf (callers do).
inline double SamplerEnergy(const double* m, const double* p, double logp,
                            double* p_sharp, int64_t d) {
  for (int64_t i = 0; i < d; ++i) p_sharp[i] = m[i] * p[i];
  return 0.5 * SamplerDot(p, p_sharp, d) - logp;
}

// One leapfrog step with signed step e on (q, p, logp, grad), in place, with
// the diagonal inverse metric m:
//   half = 0.5 * e
//   p[i] = p[i] + half * grad[i];  q[i] = q[i] + e * (m[i] * p[i])
//   *logp = model.LogDensityGradient(q, grad)
//   p[i] = p[i] + half * grad[i]
void SamplerLeapfrog(const Model& model, const double* m, double e, int64_t d,
                     double* q, double* p, double* grad, double* logp);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_SAMPLER_CONFIG_H_
