// Warmup adaptation math: dual averaging, window schedule, Welford, metric.
#include "mcmc/warmup/adaptation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "support/status.h"
#include "mcmc/sampler_config.h"
#include "support/math/math.h"

namespace autobatch::mcmc {
namespace {

absl::Status OutOfRange(std::string_view what, std::string_view field, double value,
                        std::string_view allowed) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": ", std::string(field),
                                                 " = ", value, " is out of range; it must be ",
                                                 std::string(allowed)));
}

}  // namespace

absl::Status DualAveragingOptions::Validate() const {
  constexpr std::string_view kWhat = "step size adaptation";
  if (!(delta > 0 && delta < 1)) return OutOfRange(kWhat, "delta", delta, "in (0, 1)");
  if (!(std::isfinite(gamma) && gamma > 0)) {
    return OutOfRange(kWhat, "gamma", gamma, "finite and > 0");
  }
  if (!(std::isfinite(kappa) && kappa > 0)) {
    return OutOfRange(kWhat, "kappa", kappa, "finite and > 0");
  }
  if (!(std::isfinite(t0) && t0 > 0)) return OutOfRange(kWhat, "t0", t0, "finite and > 0");
  return absl::OkStatus();
}

void DualAveraging::Restart(double new_mu) {
  mu = new_mu;
  t = 0;
  s_bar = 0;
  x_bar = 0;
}

double DualAveraging::Update(double accept_stat) {
  t = t + 1;
  // Stan caps the statistic at 1; a NaN would poison every later step size,
  // so it counts as a rejection.
  double a = accept_stat > 1 ? 1.0 : accept_stat;
  if (a != a) a = 0;
  const double eta = 1.0 / (t + options.t0);
  s_bar = (1.0 - eta) * s_bar + eta * (options.delta - a);
  const double x = mu - s_bar * std::sqrt(t) / options.gamma;
  const double w = math::Pow(t, -options.kappa);
  x_bar = (1.0 - w) * x_bar + w * x;
  return SamplerExp(x);
}

double DualAveraging::FinalStepSize(double current) const {
  if (t == 0) return current;
  return SamplerExp(x_bar);
}

double DualAveragingMu(double step_size) { return math::Log(10.0 * step_size); }

double ClampStepSize(double step_size) {
  if (step_size != step_size) return step_size;
  return std::clamp(step_size, std::numeric_limits<double>::min(),
                    std::numeric_limits<double>::max());
}

// ---------------------------------------------------------------------------

absl::StatusOr<WindowSchedule> WindowSchedule::Create(const WindowScheduleOptions& options) {
  constexpr std::string_view kWhat = "warmup schedule";
  constexpr int64_t kMaxWarmup = (int64_t{1} << 31) - 1;
  if (options.num_warmup < 0 || options.num_warmup > kMaxWarmup) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(kWhat), ": num_warmup = ", options.num_warmup,
                     " is out of range; it must be in [0, ", kMaxWarmup, "]"));
  }
  for (const auto& [name, value] : {std::pair<std::string_view, int64_t>{
                                        "init_buffer", options.init_buffer},
                                    {"term_buffer", options.term_buffer},
                                    {"window", options.window}}) {
    if (value < 0 || value > kMaxWarmup) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(kWhat), ": ", std::string(name), " = ", value,
                       " is out of range; it must be in [0, ", kMaxWarmup, "]"));
    }
  }

  WindowSchedule s;
  s.num_warmup_ = options.num_warmup;
  if (options.num_warmup < 20) return s;  // no metric adaptation
  if (options.init_buffer + options.window + options.term_buffer > options.num_warmup) {
    // Stan's 15% / 75% / 10% partition, truncated as Stan's unsigned
    // assignment truncates.
    s.used_fallback_ = true;
    s.init_buffer_ = static_cast<int64_t>(0.15 * static_cast<double>(options.num_warmup));
    s.term_buffer_ = static_cast<int64_t>(0.10 * static_cast<double>(options.num_warmup));
    s.window_ = options.num_warmup - (s.init_buffer_ + s.term_buffer_);
  } else {
    s.init_buffer_ = options.init_buffer;
    s.term_buffer_ = options.term_buffer;
    s.window_ = options.window;
  }
  if (s.window_ == 0) return s;

  // Stan's compute_next_window, run ahead of time. `last` is the final
  // iteration of the slow phase; every window ends at or before it.
  const int64_t last = s.num_warmup_ - s.term_buffer_ - 1;
  int64_t size = s.window_;
  int64_t end = s.init_buffer_ + size - 1;
  AB_CHECK(end <= last);
  while (true) {
    s.window_ends_.push_back(end);
    if (end == last) break;
    size *= 2;
    const int64_t next = end + size;
    // Stretch to the end of the slow phase when the window after this one
    // would not fit.
    end = (next == last || next + 2 * size >= last + 1) ? last : next;
  }
  return s;
}

bool WindowSchedule::InWindow(int64_t iteration) const {
  return adapts_metric() && iteration >= init_buffer_ &&
         iteration < num_warmup_ - term_buffer_;
}

bool WindowSchedule::IsWindowEnd(int64_t iteration) const {
  return std::binary_search(window_ends_.begin(), window_ends_.end(), iteration);
}

// ---------------------------------------------------------------------------

WelfordVariance::WelfordVariance(int64_t dimension) {
  AB_CHECK(dimension >= 0);
  mean_.assign(static_cast<size_t>(dimension), 0.0);
  m2_.assign(static_cast<size_t>(dimension), 0.0);
}

void WelfordVariance::Restart() {
  n_ = 0;
  std::fill(mean_.begin(), mean_.end(), 0.0);
  std::fill(m2_.begin(), m2_.end(), 0.0);
}

void WelfordVariance::Add(std::span<const double> q) {
  AB_CHECK(q.size() == mean_.size(), "WelfordVariance::Add: sample of the wrong dimension");
  ++n_;
  const double n = static_cast<double>(n_);
  for (size_t i = 0; i < q.size(); ++i) {
    const double delta = q[i] - mean_[i];
    mean_[i] = mean_[i] + delta / n;
    m2_[i] = m2_[i] + delta * (q[i] - mean_[i]);
  }
}

bool WelfordVariance::SampleVariance(std::span<double> out) const {
  AB_CHECK(out.size() == mean_.size(), "WelfordVariance::SampleVariance: wrong dimension");
  if (n_ <= 1) return false;
  const double denominator = static_cast<double>(n_) - 1.0;
  for (size_t i = 0; i < out.size(); ++i) out[i] = m2_[i] / denominator;
  return true;
}

absl::Status RegularizedMetric(const WelfordVariance& welford,
                               std::span<const double> current,
                               std::span<double> inv_metric) {
  const size_t d = static_cast<size_t>(welford.dimension());
  AB_CHECK(current.size() == d && inv_metric.size() == d,
           "RegularizedMetric: spans must have the estimator's dimension");
  if (!welford.SampleVariance(inv_metric) && inv_metric.data() != current.data()) {
    std::copy(current.begin(), current.end(), inv_metric.begin());
  }
  const double n = static_cast<double>(welford.num_samples());
  const double weight = n / (n + 5.0);
  const double shrink = 1e-3 * (5.0 / (n + 5.0));
  for (size_t i = 0; i < d; ++i) {
    inv_metric[i] = weight * inv_metric[i] + shrink;
    if (!std::isfinite(inv_metric[i])) {
      return absl::FailedPreconditionError(absl::StrCat(
          "metric adaptation: the variance of unconstrained coordinate ", i,
          " over the last warmup window (", welford.num_samples(),
          " draws) is not finite (", inv_metric[i],
          "); the chain reached extreme values, which happens when the posterior is "
          "too wide or improper: check the model (priors, constraints)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace autobatch::mcmc
