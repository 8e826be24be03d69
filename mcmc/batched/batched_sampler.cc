// BatchedSampler: the chain loop program, input packing, one VM call, and
// unpacking of the recorded draws.
#include "mcmc/batched/batched_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mcmc/model/program_model.h"
#include "support/memory.h"
#include "support/status.h"
#include "mcmc/batched/batched_hmc.h"
#include "mcmc/batched/batched_nuts.h"
#include "mcmc/batched/batched_rwmh.h"
#include "vm/inputs.h"
#include "vm/stack/block_plan.h"
#include "vm/stack/storage.h"
#include "mcmc/warmup/initialize.h"
#include "mcmc/batched/model_kernel.h"
#include "frontend/run.h"
#include "codegen/jit.h"

namespace autobatch::mcmc {
namespace {

// What `chain` returns.
struct ChainOutputs {
  ChainPoint state;
  Value counter;
  Value leapfrogs;
  Value gradient_evaluations;
  Value divergences;
  Value recorded;
};
AUTOBATCH_STRUCT(ChainOutputs, state, counter, leapfrogs, gradient_evaluations, divergences,
                 recorded)

constexpr int kNumOutputs = 8;  // flattened ChainOutputs

absl::Status ChainError(size_t k, uint64_t chain_id, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("BatchedSampler::Run: chain ", k, " (id ", chain_id, "): ", what));
}

}  // namespace

BatchFunction DefineChainProgram(Context& ctx, Algorithm algorithm, const LogDensityFn& log_density,
                                 const Kernel& record_draw, int64_t dimension,
                                 const SamplerConfig& config,
                                 std::optional<Kernel> adapt_warmup) {
  AB_CHECK(config.Validate(dimension).ok(), "DefineChainProgram needs a valid config");
  // Declared first (the stack VM numbers callers before callees, and runs
  // the lowest-numbered block first): lanes back in the chain loop start
  // their next transition at once (free-running) rather than wait until
  // every lane has left the transition.
  BatchFunction chain = ctx.Declare("chain", {.param_names = {"state", "key", "counter_in",
                                                              "step_size", "inv_metric", "slot",
                                                              "num_draws"}});
  BatchFunction transition;
  switch (algorithm) {
    case Algorithm::kNuts:
      transition = DefineNutsTransition(ctx, log_density, dimension, config);
      break;
    case Algorithm::kHmc:
      transition = DefineHmcTransition(ctx, log_density, dimension, config);
      break;
    case Algorithm::kRwmh:
      transition = DefineRwmhTransition(ctx, log_density, dimension, config);
      break;
  }
  return ctx.Batch(chain)(
      [transition, record_draw, adapt_warmup](Builder& b, ChainPoint state, Value key,
                                              Value counter_in, Value step_size_in,
                                              Value m_in, Value slot,
                                              Value num_draws) -> ChainOutputs {
        // Loop-carried only when warmup adapts them between transitions.
        Var step_size = b.Local("step_size", step_size_in), m = b.Local("inv_metric", m_in);
        Var sqrt_m = b.Local("sqrt_inv_metric", sqrt(m_in));
        Var q = b.Local("q", state.q), logp = b.Local("logp", state.logp),
            grad = b.Local("grad", state.grad);
        Var counter = b.Local("counter", counter_in);
        Var iteration = b.Local("iteration", int64_t{0});
        Var leapfrogs = b.Local("leapfrogs", int64_t{0});
        Var gradients = b.Local("gradient_evaluations", int64_t{0});
        Var divergences = b.Local("divergences", int64_t{0});
        Var recorded = b.Local("recorded", int64_t{0});
        b.While([&] { return iteration < num_draws; }).Do([&] {
          TransitionResult r =
              transition(ChainPoint{q, logp, grad}, key, counter, step_size, m, sqrt_m);
          q = r.state.q;
          logp = r.state.logp;
          grad = r.state.grad;
          counter = r.counter;
          const TransitionStats& s = r.stats;
          Value stats = concat({s.lp, s.accept_stat, s.stepsize, cast(s.treedepth, DType::kF64),
                                cast(s.n_leapfrog, DType::kF64), cast(s.divergent, DType::kF64),
                                s.energy});
          Value ack = record_draw(slot, iteration, r.state.q, stats);
          recorded = recorded + ack;
          if (adapt_warmup) {
            auto [next_step, next_m, next_counter] =
                (*adapt_warmup)(slot, iteration, r.state.q, r.state.logp, r.state.grad, key,
                                r.counter, s.accept_stat)
                    .Get<3>();
            step_size = next_step;
            m = next_m;
            sqrt_m = sqrt(next_m);
            counter = next_counter;
          }
          leapfrogs = leapfrogs + s.n_leapfrog;
          gradients = gradients + s.gradient_evaluations;
          divergences = divergences + cast(s.divergent, DType::kI64);
          iteration = iteration + 1;
        });
        return ChainOutputs{ChainPoint{q, logp, grad}, counter, leapfrogs, gradients,
                            divergences, recorded};
      });
}

BatchedSampler::BatchedSampler(const Model& model, Algorithm algorithm, SamplerConfig config)
    : model_(model),
      algorithm_(algorithm),
      config_(std::move(config)),
      dimension_(model.dimension()),
      recorder_(std::max<int64_t>(dimension_, 1)) {}

absl::StatusOr<std::unique_ptr<BatchedSampler>> BatchedSampler::Create(
    const Model& model, Algorithm algorithm, const SamplerConfig& config,
    WarmupAdapter* adapter) {
  AB_RETURN_IF_ERROR(config.Validate(model.dimension()));
  std::unique_ptr<BatchedSampler> sampler(new BatchedSampler(model, algorithm, config));
  Context& ctx = sampler->ctx_;
  // A model written as a program is linked into the sampler's program; a
  // hand-written one runs as a user kernel.
  std::optional<LogDensityFn> log_density;
  if (const ProgramModel* program_model = model.AsProgram()) {
    if (!program_model->has_data()) {
      return absl::FailedPreconditionError(
          absl::StrCat("model '", model.name(), "' has no data: call SetData or LoadData"));
    }
    AB_ASSIGN_OR_RETURN(ProgramModel::Linked linked, program_model->Link(ctx));
    log_density = linked.gradient;
    sampler->data_ = program_model->data();
  } else {
    log_density =
        RegisterModelKernel(ctx, model, kLogDensityKernelName, &sampler->kernel_activity_);
  }
  Kernel record = sampler->recorder_.Register(ctx);
  std::optional<Kernel> adapt;
  if (adapter != nullptr) adapt = adapter->Register(ctx);
  sampler->entry_ = DefineChainProgram(ctx, algorithm, *log_density, record,
                                       sampler->dimension_, sampler->config_, adapt);
  AB_ASSIGN_OR_RETURN(sampler->untyped_, ctx.Program(sampler->entry_));
  return sampler;
}

BatchedSampler::LiveCounts BatchedSampler::live() const {
  LiveCounts live;
  live.draws = recorder_.total_recorded();
  live.gradient_evaluations =
      algorithm_ == Algorithm::kRwmh ? live.draws : recorder_.total_leapfrogs();
  live.divergences = recorder_.total_divergences();
  live.kernel_executions = kernel_activity_.executions.load(std::memory_order_relaxed);
  live.kernel_active_lanes = kernel_activity_.active_lanes.load(std::memory_order_relaxed);
  return live;
}

std::vector<TensorType> BatchedSampler::InputTypes() const {
  const TensorType vec = Vector(DType::kF64, dimension_);
  const TensorType f64 = Scalar(DType::kF64), u64 = Scalar(DType::kU64),
                   i64 = Scalar(DType::kI64);
  // q, logp, grad, key, counter, step_size, inv_metric, slot, draws, then
  // a program model's data.
  std::vector<TensorType> types = {vec, f64, vec, u64, u64, f64, vec, i64, i64};
  for (const Tensor& t : data_) types.push_back(t.type());
  return types;
}

absl::StatusOr<const Program*> BatchedSampler::ExecutableProgram(bool lowered,
                                                                 bool dump_ir_on_error) {
  const std::vector<TensorType> types = InputTypes();
  return lowered ? ctx_.LoweredProgram(entry_, types, dump_ir_on_error)
                 : ctx_.CompiledProgram(entry_, types, dump_ir_on_error);
}

absl::Status BatchedSampler::Prepare(const CallOptions& options) {
  if (options.dry_run || options.vm != Vm::kStack) {
    return ExecutableProgram(/*lowered=*/false, options.dump_ir_on_error).status();
  }
  AB_ASSIGN_OR_RETURN(std::shared_ptr<const BlockPlan> plan,
                      ctx_.LoweredPlan(entry_, InputTypes(), options.dump_ir_on_error));
  // Loaded once per process: the Run's own JitForCall finds it.
  AB_RETURN_IF_ERROR(JitForCall(plan->program(), options).status());
  return absl::OkStatus();
}

absl::StatusOr<double> BatchedSampler::StartingBytes(int64_t num_chains,
                                                     const CallOptions& options) {
  const bool lowered = !options.dry_run && options.vm == Vm::kStack;
  AB_ASSIGN_OR_RETURN(const Program* program, ExecutableProgram(lowered));
  const double per_chain =
      StartingBytesPerLane(*program, lowered ? 1 + StackStorage::kInitialFrames : 1);
  // The reference interpreter runs one chain at a time.
  return options.dry_run ? per_chain : per_chain * static_cast<double>(num_chains);
}

BatchedRunResult BatchedSampler::CancelledRun(std::span<const BatchedChain> chains,
                                              Profile profile) const {
  const int64_t d = dimension_;
  const int64_t batch = static_cast<int64_t>(chains.size());
  int64_t kept = std::numeric_limits<int64_t>::max();
  for (int64_t k = 0; k < batch; ++k) kept = std::min(kept, recorder_.count(k));
  if (batch == 0) kept = 0;
  BatchedRunResult result;
  result.cancelled = true;
  result.profile = std::move(profile);
  result.utilization.batch = batch;
  for (int64_t k = 0; k < batch; ++k) {
    const BatchedChain& c = chains[static_cast<size_t>(k)];
    ScalarChainResult chain;
    chain.chain_id = c.chain_id;
    chain.dimension = d;
    chain.draws.resize(static_cast<size_t>(kept * d));
    chain.stats.resize(static_cast<size_t>(kept));
    int64_t leapfrogs = 0, divergences = 0;
    for (int64_t n = 0; n < kept; ++n) {
      std::span<const double> draw = recorder_.draw(k, n);
      std::copy(draw.begin(), draw.end(), chain.draws.begin() + n * d);
      const DrawStats& stats = recorder_.stats(k, n);
      chain.stats[static_cast<size_t>(n)] = stats;
      leapfrogs += stats.n_leapfrog;
      divergences += stats.divergent ? 1 : 0;
    }
    // The VM stopped mid-transition: no state to continue from.
    chain.final_state = c.state;
    chain.final_rng = c.rng;
    result.chains.push_back(std::move(chain));
    result.leapfrogs.push_back(leapfrogs);
    result.divergences.push_back(divergences);
  }
  return result;
}

absl::StatusOr<BatchedRunResult> BatchedSampler::Run(std::span<const BatchedChain> chains,
                                                     int64_t num_draws,
                                                     const CallOptions& options) {
  // The inputs, the recorder and the call share one memory budget.
  MemoryScope memory = MemoryScope::ForRun(options.max_memory_bytes);
  return CatchResourceErrors("BatchedSampler::Run",
                             [&] { return RunInScope(chains, num_draws, options); });
}

absl::StatusOr<BatchedRunResult> BatchedSampler::RunInScope(std::span<const BatchedChain> chains,
                                                            int64_t num_draws,
                                                            const CallOptions& options) {
  const int64_t d = dimension_;
  const int64_t batch = static_cast<int64_t>(chains.size());
  if (num_draws < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchedSampler::Run: num_draws is ", num_draws, "; it must be >= 0"));
  }
  // The recorder holds every draw: refuse sizes that cannot be allocated
  // rather than fail inside the allocator.
  constexpr double kMaxRecorderBytes = 64.0 * (1 << 30);
  const double recorder_bytes = static_cast<double>(batch) * static_cast<double>(num_draws) *
                                static_cast<double>(d + kNumDrawStats + 1) * sizeof(double);
  if (recorder_bytes > kMaxRecorderBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "BatchedSampler::Run: ", batch, " chains x ", num_draws, " draws of dimension ", d,
        " need ", recorder_bytes / (1 << 30), " GiB of draws (limit 64 GiB); run fewer draws "
        "per call and continue from the final states"));
  }
  // Inputs, lane k = chain k (see the `chain` signature in the header).
  std::vector<double> q, logp, grad, step_size, inv_metric;
  std::vector<uint64_t> key, counter;
  std::vector<int64_t> slot, draws;
  for (size_t k = 0; k < chains.size(); ++k) {
    const BatchedChain& c = chains[k];
    if (static_cast<int64_t>(c.state.q.size()) != d ||
        static_cast<int64_t>(c.state.grad.size()) != d) {
      return ChainError(k, c.chain_id,
                        absl::StrCat("its state has ", c.state.q.size(), " coordinates and ",
                                     c.state.grad.size(), " gradient entries; the model has ",
                                     d, " (use MakeChainState)"));
    }
    if (!(std::isfinite(c.step_size) && c.step_size > 0)) {
      return ChainError(k, c.chain_id,
                        absl::StrCat("step_size = ", c.step_size, "; it must be finite and > 0"));
    }
    if (!c.inv_metric.empty() && static_cast<int64_t>(c.inv_metric.size()) != d) {
      return ChainError(k, c.chain_id,
                        absl::StrCat("inv_metric has ", c.inv_metric.size(),
                                     " entries; give ", d, ", or none for the identity"));
    }
    for (size_t i = 0; i < c.inv_metric.size(); ++i) {
      if (!(std::isfinite(c.inv_metric[i]) && c.inv_metric[i] > 0)) {
        return ChainError(k, c.chain_id,
                          absl::StrCat("inv_metric[", i, "] = ", c.inv_metric[i],
                                       "; it must be finite and > 0"));
      }
    }
    q.insert(q.end(), c.state.q.begin(), c.state.q.end());
    logp.push_back(c.state.logp);
    grad.insert(grad.end(), c.state.grad.begin(), c.state.grad.end());
    key.push_back(c.rng.key);
    counter.push_back(c.rng.counter);
    step_size.push_back(c.step_size);
    if (c.inv_metric.empty()) {
      inv_metric.insert(inv_metric.end(), static_cast<size_t>(d), 1.0);
    } else {
      inv_metric.insert(inv_metric.end(), c.inv_metric.begin(), c.inv_metric.end());
    }
    slot.push_back(static_cast<int64_t>(k));
    draws.push_back(num_draws);
  }
  const TensorType vec = Vector(DType::kF64, d);
  std::vector<Tensor> inputs;
  inputs.emplace_back(vec, batch);
  std::copy(q.begin(), q.end(), inputs.back().data<double>());
  inputs.emplace_back(Scalar(DType::kF64), batch);
  std::copy(logp.begin(), logp.end(), inputs.back().data<double>());
  inputs.emplace_back(vec, batch);
  std::copy(grad.begin(), grad.end(), inputs.back().data<double>());
  inputs.emplace_back(Scalar(DType::kU64), batch);
  std::copy(key.begin(), key.end(), inputs.back().data<uint64_t>());
  inputs.emplace_back(Scalar(DType::kU64), batch);
  std::copy(counter.begin(), counter.end(), inputs.back().data<uint64_t>());
  inputs.emplace_back(Scalar(DType::kF64), batch);
  std::copy(step_size.begin(), step_size.end(), inputs.back().data<double>());
  inputs.emplace_back(vec, batch);
  std::copy(inv_metric.begin(), inv_metric.end(), inputs.back().data<double>());
  inputs.emplace_back(Scalar(DType::kI64), batch);
  std::copy(slot.begin(), slot.end(), inputs.back().data<int64_t>());
  inputs.emplace_back(Scalar(DType::kI64), batch);
  std::copy(draws.begin(), draws.end(), inputs.back().data<int64_t>());
  for (const Tensor& t : data_) inputs.push_back(t);

  // The stackless VM and the reference interpreter run the compiled
  // program, the stack VM the lowered one through its block plan, built
  // once per signature and cached by the Context beside the program.
  recorder_.Reset(batch, num_draws);
  kernel_activity_.Reset();
  BatchedRunResult result;
  absl::StatusOr<std::vector<Tensor>> run;
  if (!options.dry_run && options.vm == Vm::kStack) {
    AB_ASSIGN_OR_RETURN(std::shared_ptr<const BlockPlan> plan,
                        ctx_.LoweredPlan(entry_, InputTypes()));
    run = RunProgram(*plan, std::move(inputs), &ctx_.kernels(), options, &result.profile);
  } else {
    AB_ASSIGN_OR_RETURN(const Program* program, ExecutableProgram(/*lowered=*/false));
    run = RunProgram(*program, std::move(inputs), &ctx_.kernels(), options, &result.profile);
  }
  if (!run.ok() && run.status().code() == absl::StatusCode::kCancelled &&
      options.cancel != nullptr) {
    return CancelledRun(chains, std::move(result.profile));
  }
  AB_ASSIGN_OR_RETURN(std::vector<Tensor> out, std::move(run));
  if (out.size() != kNumOutputs) {
    return absl::InternalError(absl::StrCat("BatchedSampler::Run: the program returned ",
                                            out.size(), " outputs, expected ", kNumOutputs));
  }
  const double* out_q = out[0].data<double>();
  const double* out_logp = out[1].data<double>();
  const double* out_grad = out[2].data<double>();
  const uint64_t* out_counter = out[3].data<uint64_t>();
  const int64_t* out_leapfrogs = out[4].data<int64_t>();
  const int64_t* out_gradients = out[5].data<int64_t>();
  const int64_t* out_divergences = out[6].data<int64_t>();
  const int64_t* out_recorded = out[7].data<int64_t>();

  BatchUtilization& u = result.utilization;
  u.batch = batch;
  std::vector<int64_t> per_chain_gradients;
  for (int64_t k = 0; k < batch; ++k) {
    const BatchedChain& c = chains[static_cast<size_t>(k)];
    if (out_recorded[k] != num_draws || recorder_.count(k) != num_draws) {
      return absl::InternalError(absl::StrCat(
          "BatchedSampler::Run: chain ", k, " recorded ", out_recorded[k], " draws (",
          recorder_.count(k), " in the recorder), expected ", num_draws));
    }
    ScalarChainResult chain;
    chain.chain_id = c.chain_id;
    chain.dimension = d;
    chain.draws.resize(static_cast<size_t>(num_draws * d));
    chain.stats.resize(static_cast<size_t>(num_draws));
    for (int64_t n = 0; n < num_draws; ++n) {
      std::span<const double> draw = recorder_.draw(k, n);
      std::copy(draw.begin(), draw.end(), chain.draws.begin() + n * d);
      chain.stats[static_cast<size_t>(n)] = recorder_.stats(k, n);
    }
    chain.final_state.q.assign(out_q + k * d, out_q + (k + 1) * d);
    chain.final_state.logp = out_logp[k];
    chain.final_state.grad.assign(out_grad + k * d, out_grad + (k + 1) * d);
    chain.final_rng = ChainRng{c.rng.key, out_counter[k]};
    result.chains.push_back(std::move(chain));
    result.leapfrogs.push_back(out_leapfrogs[k]);
    result.divergences.push_back(out_divergences[k]);
    u.gradients_taken += out_gradients[k];
    per_chain_gradients.push_back(out_gradients[k]);
  }
  // Lock-step bound: per iteration, every chain waits for the one that used
  // the most model evaluations.
  const int64_t per_transition_fixed =
      algorithm_ == Algorithm::kHmc ? config_.num_leapfrog_steps : 1;
  int64_t lock_step_slots = 0;
  for (int64_t n = 0; n < num_draws; ++n) {
    int64_t most = 0;
    for (const ScalarChainResult& chain : result.chains) {
      const int64_t used = algorithm_ == Algorithm::kNuts
                               ? chain.stats[static_cast<size_t>(n)].n_leapfrog
                               : per_transition_fixed;
      most = std::max(most, used);
    }
    lock_step_slots += most * batch;
  }
  // Free-running bound, per shard.
  int64_t free_running_slots = 0;
  for (const auto& [first, last] : ShardRanges(batch, options.shards)) {
    const auto begin = per_chain_gradients.begin() + first;
    const auto end = per_chain_gradients.begin() + last;
    if (begin != end) free_running_slots += *std::max_element(begin, end) * (end - begin);
  }
  if (free_running_slots > 0) {
    u.free_running_bound =
        static_cast<double>(u.gradients_taken) / static_cast<double>(free_running_slots);
  }
  if (lock_step_slots > 0) {
    u.lock_step_utilization =
        static_cast<double>(u.gradients_taken) / static_cast<double>(lock_step_slots);
  }
  auto it = result.profile.kernels.find(kLogDensityKernelName);
  if (it != result.profile.kernels.end()) {
    u.kernel_executions = it->second.executions;
    u.kernel_active_lanes = it->second.active_lanes;
    u.kernel_lane_slots = it->second.lane_slots;
  }
  if (model_.AsProgram() != nullptr && u.gradients_taken > 0) {
    u.utilization = std::numeric_limits<double>::quiet_NaN();
  } else if (u.kernel_lane_slots > 0) {
    u.utilization =
        static_cast<double>(u.gradients_taken) / static_cast<double>(u.kernel_lane_slots);
  }
  return result;
}

absl::StatusOr<std::vector<BatchedChain>> MakeBatchedChains(
    const Model& model, const SamplerConfig& config, uint64_t seed,
    std::span<const uint64_t> chain_ids, std::span<const std::vector<double>> inits) {
  if (!inits.empty() && inits.size() != chain_ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MakeBatchedChains: ", inits.size(), " inits for ", chain_ids.size(),
        " chains; give one starting point per chain, or none to initialize randomly"));
  }
  std::vector<ChainStart> starts(chain_ids.size());
  for (size_t k = 0; k < chain_ids.size(); ++k) {
    starts[k].chain_id = chain_ids[k];
    starts[k].seed = seed;
    if (!inits.empty()) starts[k].q = inits[k];
  }
  return MakeBatchedChains(model, config, starts);
}

absl::StatusOr<std::vector<BatchedChain>> MakeBatchedChains(const Model& model,
                                                            const SamplerConfig& config,
                                                            std::span<const ChainStart> starts,
                                                            const InitOptions& init) {
  std::vector<BatchedChain> chains(starts.size());
  for (size_t k = 0; k < starts.size(); ++k) {
    const ChainStart& start = starts[k];
    BatchedChain& c = chains[k];
    c.chain_id = start.chain_id;
    c.rng = MakeChainRng(start.seed, start.chain_id);
    c.step_size = config.step_size;
    c.inv_metric = config.inv_metric;
    auto with_chain = [&](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat("chain ", start.chain_id, ": ",
                                                 std::string(s.message())));
    };
    if (start.q.empty()) {
      absl::StatusOr<InitialPoint> point = InitializeChain(model, c.rng.key, &c.rng.counter, init);
      if (!point.ok()) return with_chain(point.status());
      c.state.q = std::move(point->q);
      c.state.logp = point->log_density;
      c.state.grad = std::move(point->gradient);
    } else {
      absl::StatusOr<ChainState> made = MakeChainState(model, start.q);
      if (!made.ok()) return with_chain(made.status());
      c.state = *std::move(made);
    }
  }
  return chains;
}

absl::StatusOr<BatchedRunResult> RunBatchedChains(const Model& model,
                                                  const SamplerConfig& config, uint64_t seed,
                                                  std::span<const uint64_t> chain_ids,
                                                  int64_t num_draws,
                                                  const BatchedRunOptions& options) {
  AB_RETURN_IF_ERROR(config.Validate(model.dimension()));
  if (num_draws < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("RunBatchedChains: num_draws is ", num_draws, "; it must be >= 0"));
  }
  AB_ASSIGN_OR_RETURN(std::vector<BatchedChain> chains,
                      MakeBatchedChains(model, config, seed, chain_ids, options.inits));
  AB_ASSIGN_OR_RETURN(std::unique_ptr<BatchedSampler> sampler,
                      BatchedSampler::Create(model, options.algorithm, config));
  return sampler->Run(chains, num_draws, options.call);
}

}  // namespace autobatch::mcmc
