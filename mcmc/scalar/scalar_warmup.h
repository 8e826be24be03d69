// RunScalarWarmup: CmdStan's adaptive warmup (step size by dual averaging,
// diagonal metric by windowed variance estimates) for one chain with the
// scalar reference samplers, and the JSON file of its result.
//
// A chain's warmup, in order (adaptation.h has the per-iteration math; the
// configured step size is eps, the metric m):
//   da.Restart(DualAveragingMu(eps))            mu = log(10 eps) with the
//                                               CONFIGURED eps: CmdStan sets
//                                               mu before the first heuristic
//   [adapt_step_size] eps = InitialStepSize(state, m, eps)
//   for i = 0 .. num_warmup - 1:
//     transition with ClampStepSize(eps) and m  -> accept_stat, new q
//     [adapt_step_size] eps = da.Update(accept_stat)
//     [adapt_metric]    if schedule.InWindow(i): welford.Add(q)
//                       if schedule.IsWindowEnd(i):
//                         m = RegularizedMetric(welford, m); welford.Restart()
//                         [adapt_step_size] eps = InitialStepSize(state, m, eps)
//                                           da.Restart(DualAveragingMu(eps))
//   [adapt_step_size] eps = da.FinalStepSize(eps)
//
// Random draws, all from the chain's stream: the heuristic's momenta
// (step_size_heuristic.h: one NextNormals(d) per trial) before the first
// transition and right after each window-end transition, and each
// transition's own draws (sampler_config.h). Nothing else draws, so a
// batched driver that runs the same steps per chain reproduces the chain
// bit for bit.
//
// With adapt_step_size = false the step size stays the configured one (no
// heuristic, no dual averaging); with adapt_metric = false the metric stays
// the configured one (no windows). With both false the warmup is plain
// burn-in transitions.
#ifndef AUTOBATCH_MCMC_SCALAR_SCALAR_WARMUP_H_
#define AUTOBATCH_MCMC_SCALAR_SCALAR_WARMUP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mcmc/warmup/adaptation.h"
#include "mcmc/chain_rng.h"
#include "mcmc/draw_stats.h"
#include "mcmc/model/model.h"
#include "mcmc/sampler_config.h"
#include "mcmc/warmup/step_size_heuristic.h"

namespace autobatch::mcmc {

// CmdStan's defaults ("sample adapt ..." arguments).
struct WarmupOptions {
  // kNuts or kHmc (static HMC adapts the same way, as CmdStan's
  // adapt_diag_e_static_hmc); kRwmh is rejected.
  Algorithm algorithm = Algorithm::kNuts;
  int64_t num_warmup = 1000;  // in [0, 2^31 - 1]; 0 only with no adaptation
  double delta = 0.8;         // dual averaging target accept_stat, in (0, 1)
  double gamma = 0.05;
  double kappa = 0.75;
  double t0 = 10;
  int64_t init_buffer = 75;
  int64_t term_buffer = 50;
  int64_t window = 25;
  // false: keep SamplerConfig::step_size throughout (a fixed step size).
  bool adapt_step_size = true;
  // false: keep SamplerConfig::inv_metric throughout (a fixed metric, e.g.
  // loaded with LoadAdaptation).
  bool adapt_metric = true;
  // Options of the initial step-size heuristic (Stan's constants).
  StepSizeHeuristicOptions heuristic;
  // Keep every warmup draw's unconstrained point (CmdStan save_warmup).
  bool keep_draws = false;

  DualAveragingOptions dual_averaging() const { return {delta, gamma, kappa, t0}; }
  WindowScheduleOptions schedule() const {
    return {num_warmup, init_buffer, term_buffer, window};
  }
};

struct WarmupResult {
  // What sampling should use (CmdStan's "# Step size = ..." and
  // "# Diagonal elements of inverse mass matrix:"): finite, > 0.
  double step_size = 0;
  std::vector<double> inv_metric;  // dimension() values, finite, > 0
  // num_warmup entries: each warmup transition's statistics (stepsize__ is
  // the step size that transition used).
  std::vector<DrawStats> stats;
  // num_warmup x dimension, row-major, when keep_draws; else empty.
  std::vector<double> draws;
  int64_t metric_updates = 0;      // window ends passed
  int64_t heuristic_trials = 0;    // momenta drawn by the step-size heuristic
};

// Runs `options.num_warmup` warmup iterations of the chain at `state` with
// stream `rng`, starting from `config`'s step size and inverse metric (empty
// = identity), as described at the top. On success `state` and `rng` are
// where the chain stands after warmup (sampling continues from them with
// the returned step size and metric). Allocates.
// Errors: InvalidArgument for a bad config (SamplerConfig::Validate), bad
// options (naming the field), algorithm kRwmh, num_warmup == 0 while
// adapting (as CmdStan), or a state of the wrong dimension; FailedPrecondition
// when the state's log density or gradient is not finite, when the
// heuristic fails (step_size_heuristic.h), when a metric estimate is not
// finite, when the step size becomes NaN (each naming the warmup
// iteration), or when the final step size is not finite and > 0. On error
// `state` and `rng` are unspecified.
absl::StatusOr<WarmupResult> RunScalarWarmup(const Model& model,
                                             const SamplerConfig& config, ChainRng& rng,
                                             ChainState& state,
                                             const WarmupOptions& options = {});

// ---------------------------------------------------------------------------
// The adapted parameters as a JSON file:
//   {"inv_metric": [1.02, 0.98, ...], "step_size": 0.53}
// Doubles are written with the shortest text that reads back to the same
// bits, so a save / load round trip is exact.

struct AdaptedParameters {
  double step_size = 0;
  std::vector<double> inv_metric;
};

// The JSON text (with a trailing newline). InvalidArgument if the step size
// or an inv_metric entry is not finite and > 0, or inv_metric is empty.
absl::StatusOr<std::string> AdaptedParametersToJson(const AdaptedParameters& params);

// Parses the text. `expected_dimension` >= 1 requires exactly that many
// inv_metric entries; -1 accepts any number >= 1 (other values: checked). InvalidArgument, naming
// `source` (a file name or "<string>") and the JSON path ("inv_metric[3]"),
// when the text is not JSON (ParseJsonText: a key given twice is an error
// too), not an object, lacks "step_size" or
// "inv_metric", has another key, has a value of the wrong type, a value
// that is not finite and > 0, or the wrong number of entries.
absl::StatusOr<AdaptedParameters> AdaptedParametersFromJson(
    std::string_view text, int64_t expected_dimension = -1,
    std::string_view source = "<string>");

// File forms: SaveAdaptation replaces `path` whole (WriteFileAtomically,
// support/output_file.h: never through a symbolic link); LoadAdaptation reads
// it. Errors as above (the source named is the path), plus
// WriteFileAtomically's naming the path and the reason when it cannot be
// written and NotFound when it cannot be opened for reading.
absl::Status SaveAdaptation(const std::string& path, const AdaptedParameters& params);
absl::StatusOr<AdaptedParameters> LoadAdaptation(const std::string& path,
                                                 int64_t expected_dimension = -1);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_SCALAR_SCALAR_WARMUP_H_
