// Chain initialization, Stan style: uniform(-radius, radius) on every
// unconstrained coordinate, retried until the log density and its gradient
// are finite.
#ifndef AUTOBATCH_MCMC_WARMUP_INITIALIZE_H_
#define AUTOBATCH_MCMC_WARMUP_INITIALIZE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "mcmc/model/model.h"

namespace autobatch::mcmc {

struct InitOptions {
  // Coordinates are drawn from uniform(-radius, radius) (CmdStan `init=2`).
  // radius 0 is CmdStan's `init=0`: the origin, tried once.
  double radius = 2.0;
  // Attempts before giving up (CmdStan: 100).
  int max_attempts = 100;
};

// A starting point that passed: log density and every gradient entry finite.
struct InitialPoint {
  std::vector<double> q;         // unconstrained, dimension() values
  double log_density = 0;        // at q
  std::vector<double> gradient;  // at q
  int attempts = 0;              // 1 if the first draw was accepted
};

// The source of initialization randomness: uniform(attempt, coordinate)
// returns a double in the open interval (0, 1) for that attempt (from 0) and
// coordinate (0 .. dimension()-1). It must be a pure function of its
// arguments for runs to be reproducible.
using InitUniform = std::function<double(int64_t attempt, int64_t coordinate)>;

// Draws attempt a's point as q_i = radius * (2 * uniform(a, i) - 1) for
// i = 0 .. d-1 (exactly this expression, so callers can replay it), for
// a = 0, 1, ... until LogDensityGradient at q_a returns a finite log density
// and a finite gradient. With radius 0, q = +0.0 everywhere, one attempt, and
// `uniform` is not called.
// Errors: InvalidArgument if radius is negative or not finite or
// max_attempts < 1; FailedPrecondition naming the model, the number of
// attempts and the last failure (log density value or first non-finite
// gradient entry by name) when no attempt passes.
absl::StatusOr<InitialPoint> Initialize(const Model& model, const InitUniform& uniform,
                                        const InitOptions& options = {});

// Initialize with a chain's Philox stream (backends/random.h): attempt a uses
// uniform(a, i) = PhiloxUniform(key, *counter + a, i), i.e. ONE counter value
// per attempt and element index i = coordinate. On success *counter advances
// by the number of attempts made (usually 1), so the caller's next draw uses a
// fresh counter; on error *counter is unchanged. With radius 0 the counter
// still advances by 1 (no draws are used).
absl::StatusOr<InitialPoint> InitializeChain(const Model& model, uint64_t key,
                                             uint64_t* counter,
                                             const InitOptions& options = {});

// Validates a user-given unconstrained starting point (e.g. from Unconstrain
// of an init file): InvalidArgument if q.size() != dimension() or an entry is
// not finite; FailedPrecondition, as above, if the log density or gradient
// there is not finite. attempts = 1.
absl::StatusOr<InitialPoint> InitializeAt(const Model& model, std::span<const double> q);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_WARMUP_INITIALIZE_H_
