// Batched static HMC: a fixed number of leapfrog steps and a Metropolis
// correction, as a per-example program on a Context, bit-identical per chain
// to ScalarHmc.
//
// hmc_transition (the interface of model_kernel.h) is scalar_hmc.h's
// transition with the same primitives in the same order: jittered step (if
// jitter > 0), momentum z / sqrt(m), H0, a While loop of
// config.num_leapfrog_steps leapfrogs (a model-kernel call each; no early
// exit), the end point's energy with NaN -> +inf, and the Metropolis draw
// (always drawn). Statistics as scalar_hmc.h documents; gradient
// evaluations = num_leapfrog_steps.
#ifndef AUTOBATCH_MCMC_BATCHED_BATCHED_HMC_H_
#define AUTOBATCH_MCMC_BATCHED_BATCHED_HMC_H_

#include <cstdint>

#include "frontend/context.h"
#include "mcmc/batched/model_kernel.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

// Registers hmc_transition on `ctx` and returns it. `log_density` is the
// model kernel (model_kernel.h) of a model of `dimension` coordinates.
// Reads config.num_leapfrog_steps, max_delta_h and step_size_jitter.
// Requires config.Validate(dimension).ok() (checked).
BatchFunction DefineHmcTransition(Context& ctx, const LogDensityFn& log_density, int64_t dimension,
                                  const SamplerConfig& config);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_BATCHED_BATCHED_HMC_H_
