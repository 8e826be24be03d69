// The model kernel: Model::LogDensityGradientBatch behind a KernelCall.
#include "mcmc/batched/model_kernel.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace autobatch::mcmc {

KernelSignature ModelKernelSignature(const Model& model) {
  const int64_t d = model.dimension();
  return KernelSignature{{Vector(DType::kF64, d)},
                         {Scalar(DType::kF64), Vector(DType::kF64, d)},
                         model.batch_bit_stable(),
                         /*pure=*/true};  // Model: a pure function of q
}

absl::Status RunModelKernel(const Model& model, const KernelCall& call) {
  const int64_t d = model.dimension();
  if (call.inputs.size() != 1 || call.outputs.size() != 2 ||
      call.inputs[0].type != Vector(DType::kF64, d) ||
      call.outputs[0].type != Scalar(DType::kF64) ||
      call.outputs[1].type != Vector(DType::kF64, d)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model kernel of '", model.name(), "': called with ", call.inputs.size(),
        " inputs and ", call.outputs.size(),
        " outputs of the wrong types; it takes q f64[", d, "] and returns logp f64, grad f64[",
        d, "] (ModelKernelSignature)"));
  }
  if (call.num_lanes <= 0) return absl::OkStatus();
  model.LogDensityGradientBatch(reinterpret_cast<const double*>(call.inputs[0].data),
                                reinterpret_cast<double*>(call.outputs[0].data),
                                reinterpret_cast<double*>(call.outputs[1].data),
                                call.num_lanes, call.active);
  return absl::OkStatus();
}

Kernel RegisterModelKernel(Context& ctx, const Model& model, std::string name,
                           KernelActivity* activity) {
  return ctx.RegisterKernel(std::move(name), ModelKernelSignature(model),
                            [&model, activity](const KernelCall& call) {
                              if (activity != nullptr) {
                                int64_t active = call.num_lanes;
                                if (call.active != nullptr) {
                                  active = std::count_if(call.active, call.active + call.num_lanes,
                                                         [](uint8_t a) { return a != 0; });
                                }
                                activity->executions.fetch_add(1, std::memory_order_relaxed);
                                activity->active_lanes.fetch_add(active,
                                                                 std::memory_order_relaxed);
                              }
                              return RunModelKernel(model, call);
                            });
}

Value DrawUniform(const Value& key, Var& counter) {
  Value u = random_uniform(key, counter);
  counter = counter + 1;
  return u;
}

Value DrawNormals(const Value& key, Var& counter, int64_t n) {
  Value z = random_normal(key, counter, {n});
  counter = counter + 1;
  return z;
}

Value EmitJitteredStepSize(const Value& step_size, double jitter, const Value& key,
                           Var& counter) {
  if (jitter == 0) return step_size;
  Value u = DrawUniform(key, counter);
  return step_size * (1.0 + jitter * (2.0 * u - 1.0));
}

Value EmitLogSumExp(const Value& a, const Value& b) {
  Value hi = max(a, b);
  Value lo = min(a, b);
  return select(hi == -std::numeric_limits<double>::infinity(), hi,
                hi + log1p(exp(lo - hi)));
}

Value EmitMetropolisProb(const Value& w) { return select(w > 0.0, 1.0, exp(w)); }

Value EmitEnergy(const Value& m, const Value& p, const Value& logp, Value* p_sharp) {
  *p_sharp = m * p;
  return 0.5 * dot(p, *p_sharp) - logp;
}

Value EmitNanToInf(const Value& h) {
  return select(h != h, std::numeric_limits<double>::infinity(), h);
}

CallResult LogDensityFn::operator()(const Value& q) const {
  return std::visit([&](const auto& fn) { return fn(q); }, fn_);
}

PhasePoint EmitLeapfrog(const LogDensityFn& log_density, const Value& m, const Value& e,
                        const PhasePoint& from) {
  Value half = 0.5 * e;
  Value p_half = from.p + half * from.grad;
  Value q = from.q + e * (m * p_half);
  auto [logp, grad] = log_density(q).Get<2>();
  Value p = p_half + half * grad;
  return PhasePoint{q, p, grad, logp};
}

}  // namespace autobatch::mcmc
