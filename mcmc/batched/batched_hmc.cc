// Batched static HMC: scalar_hmc.cc's transition as a frontend body.
#include "mcmc/batched/batched_hmc.h"

#include "support/status.h"
#include "mcmc/batched/model_kernel.h"

namespace autobatch::mcmc {

BatchFunction DefineHmcTransition(Context& ctx, const LogDensityFn& log_density, int64_t dimension,
                                  const SamplerConfig& config) {
  AB_CHECK(config.Validate(dimension).ok(), "DefineHmcTransition needs a valid config");
  const double max_delta_h = config.max_delta_h;
  const int64_t num_steps = config.num_leapfrog_steps;
  const double jitter = config.step_size_jitter;
  const int64_t d = dimension;
  FunctionOptions options;
  options.param_names = TransitionParamNames();
  return ctx.Batch("hmc_transition", options)(
      [log_density, max_delta_h, num_steps, jitter, d](
          Builder& b, ChainPoint state, Value key, Value counter_in, Value step_size, Value m,
          Value sqrt_m) -> TransitionResult {
        Var counter = b.Local("counter", counter_in);
        Value eps = EmitJitteredStepSize(step_size, jitter, key, counter);
        Value p0 = DrawNormals(key, counter, d) / sqrt_m;
        Value p_sharp0;
        Value h0 = EmitEnergy(m, p0, state.logp, &p_sharp0);

        Var q = b.Local("q", state.q), p = b.Local("p", p0), grad = b.Local("grad", state.grad),
            logp = b.Local("logp", state.logp);
        Var step = b.Local("step", int64_t{0});
        b.While([&] { return step < num_steps; }).Do([&] {
          PhasePoint next = EmitLeapfrog(log_density, m, eps, PhasePoint{q, p, grad, logp});
          q = next.q;
          p = next.p;
          grad = next.grad;
          logp = next.logp;
          step = step + 1;
        });
        Value p_sharp;
        Value h = EmitNanToInf(EmitEnergy(m, p, logp, &p_sharp));
        Value w = h0 - h;
        Value accept = DrawUniform(key, counter) < exp(w);
        Value lp = select(accept, logp, state.logp);
        return TransitionResult{
            ChainPoint{select(accept, q, state.q), lp, select(accept, grad, state.grad)},
            counter,
            TransitionStats{lp, EmitMetropolisProb(w), eps, int64_t{0}, num_steps,
                            h - h0 > max_delta_h, select(accept, h, h0), num_steps}};
      });
}

}  // namespace autobatch::mcmc
