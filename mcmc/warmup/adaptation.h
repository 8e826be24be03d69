// Warmup adaptation math, CmdStan's: dual averaging of the step size, the
// windowed schedule of metric adaptation, Welford variances and the
// regularized diagonal metric. Pure per-chain state and arithmetic, no
// sampler, no randomness, so a batched driver holds one of each per chain
// and calls the same functions to get the same bits as the scalar driver
// (scalar_warmup.h).
//
// One warmup iteration, CmdStan's order (stan::mcmc::adapt_diag_e_nuts):
//   transition with the current step size and metric -> accept_stat, q
//   step = dual_averaging.Update(accept_stat)
//   if schedule.InWindow(i): welford.Add(q)
//   if schedule.IsWindowEnd(i):
//     metric = RegularizedMetric(welford, metric); welford.Restart()
//     step = InitialStepSize(...) (step_size_heuristic.h), from `step`
//     dual_averaging.Restart(DualAveragingMu(step))        mu = log(10 step)
// and after the last warmup iteration step = dual_averaging.FinalStepSize().
//
// Every value below is Stan's expression, evaluated in the stated order in
// IEEE double without contraction, using only operations with a primitive
// (ir/primitives.def) of the same bits: + - * / and comparisons, `sqrt`
// (exact), and `pow`, `exp` and `log` (support/math/math.h, the primitives'
// definitions). So a batched per-example program that
// does the adaptation with primitives reproduces the scalar driver bit for
// bit, and so does a host-side driver that calls these functions per chain.
#ifndef AUTOBATCH_MCMC_WARMUP_ADAPTATION_H_
#define AUTOBATCH_MCMC_WARMUP_ADAPTATION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace autobatch::mcmc {

// ---------------------------------------------------------------------------
// Dual averaging of log(step size) (Hoffman & Gelman 2014, Stan's
// stepsize_adaptation), CmdStan defaults.

struct DualAveragingOptions {
  double delta = 0.8;   // target accept_stat, in (0, 1)
  double gamma = 0.05;  // adaptation regularization scale, > 0
  double kappa = 0.75;  // adaptation relaxation exponent, > 0
  double t0 = 10;       // adaptation iteration offset, > 0

  // OK if every field is finite and in range; otherwise InvalidArgument
  // naming the field, its value and the range (CmdStan's "adapt" names).
  absl::Status Validate() const;
};

// One chain's dual averaging state. A plain value: copy it, store arrays of
// it. Fields are public so a batched driver can hold them in columns; use
// the member functions to change them.
struct DualAveraging {
  DualAveragingOptions options;
  double mu = 0;      // shrinkage target of log(step); set by Restart
  double t = 0;       // adaptation iterations since the last restart
  double s_bar = 0;   // averaged (delta - accept_stat)
  double x_bar = 0;   // averaged log(step)

  // t = s_bar = x_bar = 0 and the new target mu (CmdStan sets
  // mu = DualAveragingMu(step) with the step size in use at the restart).
  void Restart(double new_mu);

  // One adaptation iteration with the transition's accept_stat__; returns
  // the step size for the next warmup transition. Exactly Stan's
  // expressions, in this order:
  //   t = t + 1
  //   a = accept_stat > 1 ? 1 : accept_stat        (NaN counts as 0)
  //   eta = 1.0 / (t + t0)
  //   s_bar = (1.0 - eta) * s_bar + eta * (delta - a)
  //   x = mu - s_bar * std::sqrt(t) / gamma        ((s_bar * sqrt(t)) / gamma)
  //   w = math::Pow(t, -kappa)                     (`pow`; -kappa is a constant)
  //   x_bar = (1.0 - w) * x_bar + w * x
  //   return SamplerExp(x)                         (`exp`)
  // The result may be 0 or +inf in pathological runs (x beyond +-709):
  // ClampStepSize before handing it to a sampler.
  double Update(double accept_stat);

  // The step size after warmup: SamplerExp(x_bar). With t == 0 (no update
  // since the last restart, e.g. term_buffer 0) Stan returns exp(0) = 1;
  // this returns `current` instead (the step size then in use).
  double FinalStepSize(double current) const;
};

// Stan's restart target for a step size: log(10 * step_size), i.e.
// 10.0 * step_size (`mul`) then the `log` primitive, bit for bit
// (math::Log). 0 gives -inf, +inf gives +inf, NaN gives NaN.
double DualAveragingMu(double step_size);

// A dual-averaged step size made safe for a sampler (finite, > 0):
// NaN stays NaN (callers treat it as an error), 0 and values below
// DBL_MIN become DBL_MIN, +inf and values above DBL_MAX become DBL_MAX.
// Stan runs such transitions with 0 / inf; with DBL_MIN / DBL_MAX the
// transitions are equally degenerate (the chain does not move / the first
// leapfrog diverges) and dual averaging moves away in the same direction.
double ClampStepSize(double step_size);

// ---------------------------------------------------------------------------
// The windowed schedule of metric adaptation (Stan's windowed_adaptation).

struct WindowScheduleOptions {
  int64_t num_warmup = 1000;  // in [0, 2^31 - 1]
  int64_t init_buffer = 75;   // fast phase before the first slow window, >= 0
  int64_t term_buffer = 50;   // fast phase after the last slow window, >= 0
  int64_t window = 25;        // first slow window's length, >= 0
};

// Warmup iterations are numbered 0 .. num_warmup - 1. The slow phase is
// [init_buffer, num_warmup - term_buffer); its windows double in length
// from `window`, and a window is stretched to the end of the slow phase
// when the window after it would not fit (its end plus twice its doubled
// length reaching the end). With the defaults and 1000 warmup iterations
// the windows are [75, 100), [100, 150), [150, 250), [250, 450), [450, 950):
// lengths 25, 50, 100, 200, 500.
//
// Rules, as CmdStan applies them:
//  - num_warmup < 20: no metric adaptation (no windows); step size
//    adaptation still runs.
//  - init_buffer + window + term_buffer > num_warmup: init_buffer =
//    (int64_t)(0.15 * num_warmup), term_buffer = (int64_t)(0.10 *
//    num_warmup), one window of the rest (100 -> 15 | 75 | 10,
//    20 -> 3 | 15 | 2).
// Two deliberate differences from Stan's code, both where Stan's code
// disagrees with its manual:
//  - after the 15%/75%/10% fallback Stan does not restart its window
//    counter (windowed_adaptation::set_window_params returns before
//    restart()), so CmdStan itself never ends a window when e.g.
//    num_warmup = 100; here the fallback schedule is used as documented.
//  - window == 0 means no windows (the initial metric is kept); Stan ends an
//    empty "window" at init_buffer - 1 and rescales the metric to 1e-3
//    (stan-dev/stan PR #3037).
class WindowSchedule {
 public:
  // InvalidArgument naming the option if a value is out of range.
  static absl::StatusOr<WindowSchedule> Create(const WindowScheduleOptions& options);

  int64_t num_warmup() const { return num_warmup_; }
  // The buffers and first window actually used (after the fallback).
  int64_t init_buffer() const { return init_buffer_; }
  int64_t term_buffer() const { return term_buffer_; }
  int64_t window() const { return window_; }
  bool used_fallback() const { return used_fallback_; }
  bool adapts_metric() const { return !window_ends_.empty(); }

  // Whether the draw after warmup iteration `iteration` enters the
  // variance estimate: a window exists and init_buffer <= iteration <
  // num_warmup - term_buffer.
  bool InWindow(int64_t iteration) const;
  // Whether a slow window ends after warmup iteration `iteration` (the
  // metric is updated then).
  bool IsWindowEnd(int64_t iteration) const;
  // The iterations after which a window ends, increasing ({99, 149, 249,
  // 449, 949} for the defaults).
  const std::vector<int64_t>& window_ends() const { return window_ends_; }

 private:
  WindowSchedule() = default;
  int64_t num_warmup_ = 0;
  int64_t init_buffer_ = 0;
  int64_t term_buffer_ = 0;
  int64_t window_ = 0;
  bool used_fallback_ = false;
  std::vector<int64_t> window_ends_;
};

// ---------------------------------------------------------------------------
// Welford's running mean and variance (Stan's welford_var_estimator).

class WelfordVariance {
 public:
  explicit WelfordVariance(int64_t dimension);

  int64_t dimension() const { return static_cast<int64_t>(mean_.size()); }
  int64_t num_samples() const { return n_; }
  const std::vector<double>& mean() const { return mean_; }

  // Forget every sample (n = 0, mean = m2 = 0). No allocation.
  void Restart();
  // Adds a sample of dimension() values (checked). Per element, Stan's
  // expressions: n = n + 1; delta = q - mean; mean = mean + delta / n;
  // m2 = m2 + delta * (q - mean) (the updated mean). No allocation.
  void Add(std::span<const double> q);
  // The sample variance m2 / (n - 1.0) into `out` (dimension() values,
  // checked) if n > 1; otherwise `out` is left unchanged and false is
  // returned (as Stan's sample_variance).
  bool SampleVariance(std::span<double> out) const;

 private:
  int64_t n_ = 0;
  std::vector<double> mean_;
  std::vector<double> m2_;
};

// The inverse metric at a window end, as Stan's var_adaptation computes it:
// var = the sample variance if n > 1, else `current` (the metric in use);
// then with n = num_samples()
//   inv_metric[i] = (n / (n + 5.0)) * var[i] + 1e-3 * (5.0 / (n + 5.0))
// (the scalar factors computed first). Writes `inv_metric` (dimension()
// values, checked; may alias `current`). FailedPrecondition if an entry is
// not finite (a draw far out in the tails: Stan's "Numerical overflow in
// metric adaptation"); every finite result is > 0.
absl::Status RegularizedMetric(const WelfordVariance& welford,
                               std::span<const double> current,
                               std::span<double> inv_metric);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_WARMUP_ADAPTATION_H_
