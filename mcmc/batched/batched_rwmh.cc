// Batched random-walk Metropolis: scalar_rwmh.cc's transition as a frontend
// body.
#include "mcmc/batched/batched_rwmh.h"

#include <limits>

#include "support/status.h"
#include "mcmc/batched/model_kernel.h"

namespace autobatch::mcmc {

BatchFunction DefineRwmhTransition(Context& ctx, const LogDensityFn& log_density, int64_t dimension,
                                   const SamplerConfig& config) {
  AB_CHECK(config.Validate(dimension).ok(), "DefineRwmhTransition needs a valid config");
  const int64_t d = dimension;
  FunctionOptions options;
  options.param_names = TransitionParamNames();
  return ctx.Batch("rwmh_transition", options)(
      [log_density, d](Builder& b, ChainPoint state, Value key, Value counter_in,
                       Value step_size, Value /*m*/, Value sqrt_m) -> TransitionResult {
        Var counter = b.Local("counter", counter_in);
        Value z = DrawNormals(key, counter, d);
        Value scale = step_size * sqrt_m;
        Value q1 = state.q + scale * z;
        auto [logp_raw, grad1] = log_density(q1).Get<2>();
        Value logp1 =
            select(logp_raw != logp_raw, -std::numeric_limits<double>::infinity(), logp_raw);
        Value w = logp1 - state.logp;
        Value accept = DrawUniform(key, counter) < exp(w);
        Value lp = select(accept, logp1, state.logp);
        return TransitionResult{
            ChainPoint{select(accept, q1, state.q), lp, select(accept, grad1, state.grad)},
            counter,
            TransitionStats{lp, EmitMetropolisProb(w), step_size, int64_t{0}, int64_t{0}, false,
                            -lp, int64_t{1}}};
      });
}

}  // namespace autobatch::mcmc
