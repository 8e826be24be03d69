// A Model's log density and gradient as a user kernel on a Context, and the
// per-chain transition interface every batched sampler program shares.
//
// The batched samplers (batched_nuts.h, batched_hmc.h, batched_rwmh.h) are
// per-example programs: each defines ONE transition of ONE chain as a
// function on a Context, with this interface (all values per chain):
//
//   transition(state: ChainPoint, key u64, counter u64, step_size f64,
//              inv_metric f64[d], sqrt_inv_metric f64[d])
//     -> TransitionResult{state: ChainPoint, counter u64,
//                         stats: TransitionStats}
//
// where sqrt_inv_metric = sqrt(inv_metric) (the `sqrt` primitive, equal to
// std::sqrt). The transition draws from the chain's Philox stream at
// (key, counter) exactly as the scalar sampler does (sampler_config.h), and
// returns the counter after its last draw. batched_sampler.h wraps a
// transition into the chain loop that runs many transitions per chain and
// records every draw.
#ifndef AUTOBATCH_MCMC_BATCHED_MODEL_KERNEL_H_
#define AUTOBATCH_MCMC_BATCHED_MODEL_KERNEL_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "backends/kernel_registry.h"
#include "frontend/context.h"
#include "frontend/structs.h"
#include "frontend/value.h"
#include "mcmc/model/model.h"

namespace autobatch::mcmc {

inline constexpr char kLogDensityKernelName[] = "log_density_gradient";

// The kernel's signature for a model of dimension d: inputs {q f64[d]},
// outputs {logp f64, grad f64[d]}, bit_stable = model.batch_bit_stable().
KernelSignature ModelKernelSignature(const Model& model);

// The kernel's batched implementation: Model::LogDensityGradientBatch over
// the call's lanes with the call's `active` mask (inactive lanes may hold
// junk; the default implementation does not evaluate them). InvalidArgument
// if the call's views do not have the signature's shapes (a wiring bug, never
// memory corruption).
absl::Status RunModelKernel(const Model& model, const KernelCall& call);

// What a model kernel has done so far: its batched executions and the
// active lanes they evaluated, counted as it runs (relaxed atomics, so
// another thread may read them during a VM call: live progress). The VM's
// Profile has the exact figures once the call returns.
struct KernelActivity {
  std::atomic<int64_t> executions{0};
  std::atomic<int64_t> active_lanes{0};
  void Reset() {
    executions.store(0, std::memory_order_relaxed);
    active_lanes.store(0, std::memory_order_relaxed);
  }
};

// Registers `model` as user kernel `name` on `ctx` (signature above) and
// returns its handle: in a body, `auto [logp, grad] = kernel(q).Get<2>()`.
// Keeps a reference to `model`, which must outlive every run of ctx's
// programs. A name already registered on ctx is an error that ctx reports
// from Program()/Module(). With `activity`, each call adds itself there
// (it must outlive the runs too).
Kernel RegisterModelKernel(Context& ctx, const Model& model,
                           std::string name = kLogDensityKernelName,
                           KernelActivity* activity = nullptr);

// How a sampler program evaluates the model at q: `auto [logp, grad] =
// log_density(q).Get<2>()`. Either the user kernel of a hand-written Model
// (RegisterModelKernel: a per-lane host callback) or a function of the
// program itself (the gradient of a model written as a program,
// program_model.h, whose arithmetic then runs as batched ops across the
// chains that reach it).
class LogDensityFn {
 public:
  LogDensityFn(Kernel kernel) : fn_(std::move(kernel)) {}                // NOLINT
  LogDensityFn(BatchFunction function) : fn_(std::move(function)) {}     // NOLINT
  CallResult operator()(const Value& q) const;

 private:
  std::variant<Kernel, BatchFunction> fn_;
};

// --- the transition interface ------------------------------------------------

// Where a chain is: point q f64[d], its log density logp f64 and gradient
// grad f64[d] (computed by the model kernel, bit for bit as
// Model::LogDensityGradient).
struct ChainPoint {
  Value q, logp, grad;
};
AUTOBATCH_STRUCT(ChainPoint, q, logp, grad)

// One transition's statistics (draw_stats.h), plus the model evaluations it
// used (NUTS and HMC: its leapfrogs; RWMH: 1).
struct TransitionStats {
  Value lp;                    // f64
  Value accept_stat;           // f64
  Value stepsize;              // f64
  Value treedepth;             // i64
  Value n_leapfrog;            // i64
  Value divergent;             // bool
  Value energy;                // f64
  Value gradient_evaluations;  // i64
};
AUTOBATCH_STRUCT(TransitionStats, lp, accept_stat, stepsize, treedepth, n_leapfrog,
                 divergent, energy, gradient_evaluations)

struct TransitionResult {
  ChainPoint state;
  Value counter;  // u64
  TransitionStats stats;
};
AUTOBATCH_STRUCT(TransitionResult, state, counter, stats)

// The parameter names of a transition function (FunctionOptions::param_names).
inline std::vector<std::string> TransitionParamNames() {
  return {"state", "key", "counter", "step_size", "inv_metric", "sqrt_inv_metric"};
}

// --- sampler_config.h's shared arithmetic, emitted in a body -----------------
// Each emits exactly the primitive sequence sampler_config.h defines, so the
// values are bit-identical to the scalar samplers'. Call only while a body is
// being built.

// A point of phase space: position, momentum, gradient, log density.
struct PhasePoint {
  Value q, p, grad, logp;
};
AUTOBATCH_STRUCT(PhasePoint, q, p, grad, logp)

// One draw: out = random_uniform(key, counter) (shape []) or
// random_normal(key, counter) (shape [n]); then counter = counter + 1.
Value DrawUniform(const Value& key, Var& counter);
Value DrawNormals(const Value& key, Var& counter, int64_t n);

// JitteredStepSize: with jitter > 0 draws u and returns
// step_size * (1.0 + jitter * (2.0 * u - 1.0)); with jitter == 0 returns
// step_size and draws nothing.
Value EmitJitteredStepSize(const Value& step_size, double jitter, const Value& key,
                           Var& counter);
// SamplerLogSumExp(a, b): hi = max(a, b), lo = min(a, b),
// select(hi == -inf, hi, hi + log1p(exp(lo - hi))).
Value EmitLogSumExp(const Value& a, const Value& b);
// SamplerMetropolisProb(w): select(w > 0, 1.0, exp(w)).
Value EmitMetropolisProb(const Value& w);
// SamplerEnergy: *p_sharp = m * p; returns 0.5 * dot(p, *p_sharp) - logp.
Value EmitEnergy(const Value& m, const Value& p, const Value& logp, Value* p_sharp);
// The energy with NaN mapped to +inf: select(h != h, +inf, h).
Value EmitNanToInf(const Value& h);
// SamplerLeapfrog with signed step e: half = 0.5 * e; p = p + half * grad;
// q = q + e * (m * p); (logp, grad) = log_density(q); p = p + half * grad.
PhasePoint EmitLeapfrog(const LogDensityFn& log_density, const Value& m, const Value& e,
                        const PhasePoint& from);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_BATCHED_MODEL_KERNEL_H_
