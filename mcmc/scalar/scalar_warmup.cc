// CmdStan's adaptive warmup for one chain, and the adapted-parameters file.
#include "mcmc/scalar/scalar_warmup.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "support/json_text.h"
#include "support/output_file.h"
#include "support/status.h"
#include "mcmc/scalar/scalar_hmc.h"
#include "mcmc/scalar/scalar_nuts.h"

namespace autobatch::mcmc {
namespace {

absl::Status AtIteration(int64_t iteration, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("warmup iteration ", iteration, ": ",
                                                  std::string(status.message())));
}

absl::Status CheckState(const Model& model, const ChainState& state) {
  const int64_t d = model.dimension();
  if (static_cast<int64_t>(state.q.size()) != d ||
      static_cast<int64_t>(state.grad.size()) != d) {
    return absl::InvalidArgumentError(absl::StrCat(
        "warmup of model '", model.name(), "': the chain state has ", state.q.size(),
        " coordinates and ", state.grad.size(), " gradient entries but the model has ", d,
        "; make it with MakeChainState"));
  }
  bool finite = std::isfinite(state.logp);
  for (const double g : state.grad) finite = finite && std::isfinite(g);
  if (!finite) {
    return absl::FailedPreconditionError(absl::StrCat(
        "warmup of model '", model.name(),
        "': the log density or its gradient is not finite at the starting point; "
        "start where both are finite (see initialize.h)"));
  }
  return absl::OkStatus();
}

template <typename Sampler>
absl::StatusOr<WarmupResult> Warmup(const Model& model, const SamplerConfig& config,
                                    ChainRng& rng, ChainState& state,
                                    const WarmupOptions& options,
                                    const WindowSchedule& schedule) {
  const int64_t d = model.dimension();
  Sampler sampler(model, config);
  WarmupResult result;
  result.inv_metric = sampler.config().inv_metric;  // the sampler fills in the identity
  result.stats.resize(static_cast<size_t>(options.num_warmup));
  if (options.keep_draws) result.draws.resize(static_cast<size_t>(options.num_warmup * d));

  const bool adapt_step = options.adapt_step_size;
  const bool adapt_metric = options.adapt_metric && schedule.adapts_metric();
  DualAveraging da{options.dual_averaging()};
  WelfordVariance welford(adapt_metric ? d : 0);

  double eps = config.step_size;
  // Runs the heuristic from eps at the current state and metric, then
  // restarts dual averaging around its result.
  auto reset_step_size = [&](int64_t iteration) -> absl::Status {
    absl::StatusOr<StepSizeHeuristicResult> found =
        InitialStepSize(model, state, result.inv_metric, eps, rng, options.heuristic);
    if (!found.ok()) return AtIteration(iteration, found.status());
    eps = found->step_size;
    result.heuristic_trials += found->trials;
    da.Restart(DualAveragingMu(eps));
    return absl::OkStatus();
  };

  if (adapt_step) {
    da.Restart(DualAveragingMu(eps));  // CmdStan: mu from the configured step size
    absl::StatusOr<StepSizeHeuristicResult> found =
        InitialStepSize(model, state, result.inv_metric, eps, rng, options.heuristic);
    if (!found.ok()) return AtIteration(0, found.status());
    eps = found->step_size;
    result.heuristic_trials += found->trials;
  }

  for (int64_t i = 0; i < options.num_warmup; ++i) {
    if (eps != eps) {
      return AtIteration(i, absl::FailedPreconditionError(
                                "step size adaptation produced a NaN step size; check that "
                                "the model's log density is finite where the chain moves"));
    }
    sampler.set_step_size(ClampStepSize(eps));
    DrawStats& stats = result.stats[static_cast<size_t>(i)];
    sampler.Transition(state, rng, &stats);
    if (options.keep_draws) {
      std::copy(state.q.begin(), state.q.end(), result.draws.begin() + i * d);
    }
    if (adapt_step) eps = da.Update(stats.accept_stat);
    if (!adapt_metric) continue;
    if (schedule.InWindow(i)) welford.Add(state.q);
    if (schedule.IsWindowEnd(i)) {
      const absl::Status estimated =
          RegularizedMetric(welford, result.inv_metric, result.inv_metric);
      if (!estimated.ok()) return AtIteration(i, estimated);
      welford.Restart();
      sampler.set_inv_metric(result.inv_metric);
      ++result.metric_updates;
      if (adapt_step) AB_RETURN_IF_ERROR(reset_step_size(i));
    }
  }

  result.step_size = adapt_step ? da.FinalStepSize(eps) : config.step_size;
  if (!(std::isfinite(result.step_size) && result.step_size > 0)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "warmup of model '", model.name(), "': the adapted step size is ", result.step_size,
        " after ", options.num_warmup,
        " iterations; adaptation failed (look for divergences in the warmup statistics)"));
  }
  return result;
}

}  // namespace

absl::StatusOr<WarmupResult> RunScalarWarmup(const Model& model,
                                             const SamplerConfig& config, ChainRng& rng,
                                             ChainState& state,
                                             const WarmupOptions& options) {
  AB_RETURN_IF_ERROR(config.Validate(model.dimension()));
  AB_RETURN_IF_ERROR(options.dual_averaging().Validate());
  AB_ASSIGN_OR_RETURN(const WindowSchedule schedule, WindowSchedule::Create(options.schedule()));
  if (options.num_warmup == 0 && (options.adapt_step_size || options.adapt_metric)) {
    return absl::InvalidArgumentError(
        "warmup: num_warmup is 0 but adaptation is on; give num_warmup > 0, or turn "
        "adapt_step_size and adapt_metric off to sample with the configured step size and "
        "metric");
  }
  AB_RETURN_IF_ERROR(CheckState(model, state));
  switch (options.algorithm) {
    case Algorithm::kNuts:
      return Warmup<ScalarNuts>(model, config, rng, state, options, schedule);
    case Algorithm::kHmc:
      return Warmup<ScalarHmc>(model, config, rng, state, options, schedule);
    case Algorithm::kRwmh:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("warmup: algorithm '", std::string(AlgorithmName(options.algorithm)),
                   "' has no step size or metric adaptation; use nuts or hmc"));
}

// ---------------------------------------------------------------------------
// JSON.

namespace {

using json = nlohmann::json;

bool PositiveFinite(double v) { return std::isfinite(v) && v > 0; }

absl::Status Malformed(std::string_view source, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(source), ": ", std::string(what),
      "; expected an adaptation file {\"step_size\": 0.5, \"inv_metric\": [1.0, ...]}"));
}

}  // namespace

absl::StatusOr<std::string> AdaptedParametersToJson(const AdaptedParameters& params) {
  if (!PositiveFinite(params.step_size)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "adaptation file: step_size = ", params.step_size, " must be finite and > 0"));
  }
  if (params.inv_metric.empty()) {
    return absl::InvalidArgumentError("adaptation file: inv_metric is empty");
  }
  for (size_t i = 0; i < params.inv_metric.size(); ++i) {
    if (!PositiveFinite(params.inv_metric[i])) {
      return absl::InvalidArgumentError(absl::StrCat("adaptation file: inv_metric[", i,
                                                     "] = ", params.inv_metric[i],
                                                     " must be finite and > 0"));
    }
  }
  json j = json::object();
  j["step_size"] = params.step_size;
  j["inv_metric"] = params.inv_metric;
  return j.dump(2) + "\n";
}

absl::StatusOr<AdaptedParameters> AdaptedParametersFromJson(std::string_view text,
                                                            int64_t expected_dimension,
                                                            std::string_view source) {
  AB_CHECK(expected_dimension == -1 || expected_dimension >= 1);
  absl::StatusOr<json> parsed = ParseJsonText(text);
  if (!parsed.ok()) return Malformed(source, std::string(parsed.status().message()));
  const json& j = *parsed;
  if (!j.is_object()) return Malformed(source, "the top level is not a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "step_size" && key != "inv_metric") {
      return Malformed(source, absl::StrCat("unknown key ", QuotedExcerpt(key)));
    }
  }
  AdaptedParameters out;
  const auto step = j.find("step_size");
  if (step == j.end()) return Malformed(source, "\"step_size\" is missing");
  if (!step->is_number()) {
    return Malformed(source, absl::StrCat("step_size is ", step->type_name(), ", not a number"));
  }
  out.step_size = step->get<double>();
  if (!PositiveFinite(out.step_size)) {
    return Malformed(source,
                     absl::StrCat("step_size = ", out.step_size, " must be finite and > 0"));
  }
  const auto metric = j.find("inv_metric");
  if (metric == j.end()) return Malformed(source, "\"inv_metric\" is missing");
  if (!metric->is_array()) {
    return Malformed(source,
                     absl::StrCat("inv_metric is ", metric->type_name(), ", not an array"));
  }
  if (metric->empty()) return Malformed(source, "inv_metric is empty");
  if (expected_dimension != -1 && static_cast<int64_t>(metric->size()) != expected_dimension) {
    return Malformed(source, absl::StrCat("inv_metric has ", metric->size(),
                                          " entries but the model has dimension ",
                                          expected_dimension));
  }
  out.inv_metric.reserve(metric->size());
  for (size_t i = 0; i < metric->size(); ++i) {
    const json& v = (*metric)[i];
    if (!v.is_number()) {
      return Malformed(source, absl::StrCat("inv_metric[", i, "] is ", v.type_name(),
                                            ", not a number"));
    }
    const double x = v.get<double>();
    if (!PositiveFinite(x)) {
      return Malformed(source,
                       absl::StrCat("inv_metric[", i, "] = ", x, " must be finite and > 0"));
    }
    out.inv_metric.push_back(x);
  }
  return out;
}

absl::Status SaveAdaptation(const std::string& path, const AdaptedParameters& params) {
  AB_ASSIGN_OR_RETURN(const std::string text, AdaptedParametersToJson(params));
  return WriteFileAtomically(path, text, "adaptation file");
}

absl::StatusOr<AdaptedParameters> LoadAdaptation(const std::string& path,
                                                 int64_t expected_dimension) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open adaptation file '", path, "'"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return AdaptedParametersFromJson(text.str(), expected_dimension, path);
}

}  // namespace autobatch::mcmc
