// Batched random-walk Metropolis as a per-example program on a Context,
// bit-identical per chain to ScalarRwmh.
//
// rwmh_transition (the interface of model_kernel.h) is scalar_rwmh.h's
// transition with the same primitives in the same order: z = normals,
// q1 = q0 + s * z with s = step_size * sqrt(m), one model-kernel call, NaN
// log density -> -inf, w = logp1 - logp0, the Metropolis draw (always
// drawn). Statistics as scalar_rwmh.h documents; gradient evaluations = 1.
#ifndef AUTOBATCH_MCMC_BATCHED_BATCHED_RWMH_H_
#define AUTOBATCH_MCMC_BATCHED_BATCHED_RWMH_H_

#include <cstdint>

#include "frontend/context.h"
#include "mcmc/batched/model_kernel.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

// Registers rwmh_transition on `ctx` and returns it. `log_density` is the
// model kernel (model_kernel.h) of a model of `dimension` coordinates.
// Requires config.Validate(dimension).ok() (checked); reads no field (the
// step size and metric are per-chain inputs).
BatchFunction DefineRwmhTransition(Context& ctx, const LogDensityFn& log_density, int64_t dimension,
                                   const SamplerConfig& config);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_BATCHED_BATCHED_RWMH_H_
