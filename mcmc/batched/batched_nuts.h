// Batched NUTS: Stan's multinomial NUTS written as a per-example RECURSIVE
// program on a Context, bit-identical per chain to ScalarNuts.
//
// The program is scalar_nuts.h's algorithm, step for step, with the same
// primitives (dot, exp, log1p, sqrt, max, min, select) in the same order:
//
//   nuts_build_tree(depth i64, start: (q, p, grad, logp), step f64, h0 f64,
//                   inv_metric f64[d], key u64,
//                   walk: (counter u64, n_leapfrog i64, sum_prob f64,
//                          divergent bool))
//     -> tree: end point (q, p, grad, logp), valid, lsw, proposal (q, logp,
//              grad, energy), rho, p_beg, walk
//   depth 0 calls nuts_leaf: one leapfrog (a call of the model kernel; the
//   only place the model is evaluated). Depth k calls itself for the first
//   half, returns at once if it is invalid, calls itself again from where
//   the first half ended, returns if that is invalid, then draws the
//   multinomial uniform and runs the three U-turn checks. The
//   walk (counter, n_leapfrog, sum_prob, divergent) is threaded through the
//   calls in leapfrog order, so sum_prob is summed in the scalar order.
//
//   nuts_transition (the interface of model_kernel.h): jittered step (if
//   jitter > 0), momentum, then a While over doublings: direction draw, ONE
//   call of nuts_build_tree from the chosen end (the ends are selected, not
//   branched on, so every lane reaches the same call site), biased
//   progressive sampling and the U-turn checks across the whole trajectory.
//
// A tree's last momentum is its `end.p` (scalar_nuts.h's p_end); the
// p_sharp vectors are recomputed where needed as m * p (elementwise, so the
// same bits) rather than carried through every call and return. Values of
// invalid subtrees are never used, as in the scalar sampler. On the stack VM
// every model-kernel execution serves every unfinished chain (see the
// function order in batched_nuts.cc); the stackless VM, which recurses on
// the host, runs each transition in lock step.
//
// Reads config.max_depth, max_delta_h and step_size_jitter; the step size
// and metric are per-chain inputs of the transition.
#ifndef AUTOBATCH_MCMC_BATCHED_BATCHED_NUTS_H_
#define AUTOBATCH_MCMC_BATCHED_BATCHED_NUTS_H_

#include <cstdint>

#include "frontend/context.h"
#include "mcmc/batched/model_kernel.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

// Registers nuts_transition, nuts_build_tree and nuts_leaf on `ctx` (in that
// order) and returns the transition. `log_density` is the model kernel (model_kernel.h) of a model
// of `dimension` coordinates. Requires config.Validate(dimension).ok()
// (checked).
BatchFunction DefineNutsTransition(Context& ctx, const LogDensityFn& log_density, int64_t dimension,
                                   const SamplerConfig& config);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_BATCHED_BATCHED_NUTS_H_
