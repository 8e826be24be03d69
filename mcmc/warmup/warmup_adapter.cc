// WarmupAdapter: RunScalarWarmup's per-iteration steps behind a user kernel.
#include "mcmc/warmup/warmup_adapter.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "support/status.h"
#include "mcmc/chain_rng.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

absl::Status AtWarmupIteration(uint64_t chain_id, int64_t iteration, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("chain ", chain_id, ", warmup iteration ",
                                             iteration, ": ", std::string(s.message())));
}

absl::Status NanStepSizeError(uint64_t chain_id, int64_t iteration) {
  return AtWarmupIteration(
      chain_id, iteration,
      absl::FailedPreconditionError(
          "step size adaptation produced a NaN step size; check that the model's log density "
          "is finite where the chain moves"));
}

WarmupAdapter::WarmupAdapter(const Model& model, Settings settings)
    : model_(model), settings_(std::move(settings)), dimension_(model.dimension()) {
  signature_ = Signature();
}

KernelSignature WarmupAdapter::Signature() const {
  const TensorType q = Vector(DType::kF64, dimension_);
  const TensorType f64 = Scalar(DType::kF64), u64 = Scalar(DType::kU64),
                   i64 = Scalar(DType::kI64);
  return KernelSignature{{i64, i64, q, f64, q, u64, u64, f64},
                         {f64, q, u64},
                         /*bit_stable=*/true,
                         /*pure=*/false};  // it keeps each chain's adaptation state
}

Kernel WarmupAdapter::Register(Context& ctx, std::string name) {
  return ctx.RegisterKernel(std::move(name), Signature(),
                            [this](const KernelCall& call) { return Adapt(call); });
}

absl::Status WarmupAdapter::Adapt(const KernelCall& call) {
  const KernelSignature& sig = signature_;
  bool types_ok = call.inputs.size() == sig.inputs.size() &&
                  call.outputs.size() == sig.outputs.size();
  for (size_t i = 0; types_ok && i < sig.inputs.size(); ++i) {
    types_ok = call.inputs[i].type == sig.inputs[i];
  }
  for (size_t i = 0; types_ok && i < sig.outputs.size(); ++i) {
    types_ok = call.outputs[i].type == sig.outputs[i];
  }
  if (!types_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        kAdaptWarmupKernelName, ": called with the wrong inputs or outputs; it takes slot i64, "
        "iteration i64, q f64[", dimension_, "], logp f64, grad f64[", dimension_,
        "], key u64, counter u64, accept_stat f64 and returns step_size f64, inv_metric f64[",
        dimension_, "], counter u64"));
  }
  const size_t d = static_cast<size_t>(dimension_);
  const auto* slots = reinterpret_cast<const int64_t*>(call.inputs[0].data);
  const auto* iterations = reinterpret_cast<const int64_t*>(call.inputs[1].data);
  const auto* q = reinterpret_cast<const double*>(call.inputs[2].data);
  const auto* logp = reinterpret_cast<const double*>(call.inputs[3].data);
  const auto* grad = reinterpret_cast<const double*>(call.inputs[4].data);
  const auto* keys = reinterpret_cast<const uint64_t*>(call.inputs[5].data);
  const auto* counters = reinterpret_cast<const uint64_t*>(call.inputs[6].data);
  const auto* accept = reinterpret_cast<const double*>(call.inputs[7].data);
  auto* step_out = reinterpret_cast<double*>(call.outputs[0].data);
  auto* metric_out = reinterpret_cast<double*>(call.outputs[1].data);
  auto* counter_out = reinterpret_cast<uint64_t*>(call.outputs[2].data);
  const int64_t num_warmup = settings_.schedule.num_warmup();
  for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
    if (!call.IsActive(lane)) continue;
    const int64_t slot = slots[lane];
    const int64_t iteration = iterations[lane];
    if (slot < 0 || slot >= static_cast<int64_t>(chains_.size()) || iteration < 0 ||
        iteration >= num_warmup) {
      return absl::OutOfRangeError(absl::StrCat(
          kAdaptWarmupKernelName, ": lane ", lane, " adapts slot ", slot, " after iteration ",
          iteration, " but the adapter holds ", chains_.size(), " chains and ", num_warmup,
          " warmup iterations; Reset it with every chain before the run"));
    }
    Chain& chain = chains_[static_cast<size_t>(slot)];
    uint64_t counter = counters[lane];
    const size_t at = static_cast<size_t>(lane) * d;
    const int64_t trials_before = chain.heuristic_trials;
    AB_RETURN_IF_ERROR(AdaptChain(chain, iteration, {q + at, d}, logp[lane], {grad + at, d},
                                  keys[lane], &counter, accept[lane]));
    heuristic_trials_.fetch_add(chain.heuristic_trials - trials_before,
                                std::memory_order_relaxed);
    step_out[lane] = ClampStepSize(chain.step_size);
    std::copy(chain.inv_metric.begin(), chain.inv_metric.end(), metric_out + at);
    counter_out[lane] = counter;
  }
  return absl::OkStatus();
}

// RunScalarWarmup's loop body after transition `iteration`, then its check
// at the top of the next iteration.
absl::Status WarmupAdapter::AdaptChain(Chain& chain, int64_t iteration,
                                       std::span<const double> q, double logp,
                                       std::span<const double> grad, uint64_t key,
                                       uint64_t* counter, double accept_stat) const {
  const Settings& s = settings_;
  if (s.adapt_step_size) chain.step_size = chain.da.Update(accept_stat);
  if (s.adapt_metric) {
    if (s.schedule.InWindow(iteration)) chain.welford.Add(q);
    if (s.schedule.IsWindowEnd(iteration)) {
      const absl::Status estimated =
          RegularizedMetric(chain.welford, chain.inv_metric, chain.inv_metric);
      if (!estimated.ok()) return AtWarmupIteration(chain.chain_id, iteration, estimated);
      chain.welford.Restart();
      if (s.adapt_step_size) {
        const ChainState state{std::vector<double>(q.begin(), q.end()), logp,
                               std::vector<double>(grad.begin(), grad.end())};
        ChainRng rng{key, *counter};
        absl::StatusOr<StepSizeHeuristicResult> found = InitialStepSize(
            model_, state, chain.inv_metric, chain.step_size, rng, s.heuristic);
        if (!found.ok()) return AtWarmupIteration(chain.chain_id, iteration, found.status());
        chain.step_size = found->step_size;
        chain.heuristic_trials += found->trials;
        *counter = rng.counter;
        chain.da.Restart(DualAveragingMu(chain.step_size));
      }
    }
  }
  const int64_t next = iteration + 1;
  if (next < s.schedule.num_warmup() && std::isnan(chain.step_size)) {
    return NanStepSizeError(chain.chain_id, next);
  }
  return absl::OkStatus();
}

}  // namespace autobatch::mcmc
