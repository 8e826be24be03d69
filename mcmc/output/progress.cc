// Progress reporting of Sample(): the terminal bar and the plain lines.
#include "mcmc/output/progress.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace autobatch::mcmc {

std::string_view SamplePhaseName(SamplePhase phase) {
  switch (phase) {
    case SamplePhase::kWarmup:
      return "warmup";
    case SamplePhase::kSampling:
      return "sampling";
    case SamplePhase::kDone:
      return "done";
  }
  return "?";
}

ProgressPrinter::ProgressPrinter(std::FILE* out, bool terminal, double min_redraw_seconds,
                                 double max_plain_silence_seconds)
    : out_(out),
      terminal_(terminal),
      min_redraw_seconds_(min_redraw_seconds),
      max_plain_silence_seconds_(max_plain_silence_seconds) {}

namespace {

// "42 s", "3 min 05 s", "2 h 07 min": a duration short enough for a line.
std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s < 60) return absl::StrFormat("%d s", s);
  if (s < 3600) return absl::StrFormat("%d min %02d s", s / 60, s % 60);
  return absl::StrFormat("%d h %02d min", s / 3600, (s % 3600) / 60);
}

}  // namespace

std::string ProgressPrinter::FormatLine(const SampleProgress& p) {
  const double percent =
      p.total_iterations > 0
          ? 100.0 * static_cast<double>(p.total_iteration) / static_cast<double>(p.total_iterations)
          : 100.0;
  // Gradients per second of iterating: compilation left out.
  const double iterating = p.elapsed_seconds - p.compile_seconds;
  const double rate =
      iterating > 0 ? static_cast<double>(p.gradient_evaluations) / iterating : 0.0;
  // NaN: not measured (a model written as a program, sample.h).
  const std::string utilization = std::isnan(p.utilization)
                                      ? std::string("utilization n/a")
                                      : absl::StrFormat("utilization %.1f%%", 100.0 * p.utilization);
  const std::string time =
      p.phase == SamplePhase::kDone
          ? absl::StrFormat("%.1f s (compile %.1f s)", p.elapsed_seconds, p.compile_seconds)
          : absl::StrFormat("%.1f s  ETA %s", p.elapsed_seconds, FormatDuration(p.eta_seconds));
  const std::string processes =
      p.num_processes > 1 ? absl::StrFormat(" on %d ranks", p.num_processes) : std::string();
  return absl::StrFormat("%-8s %6d/%d (%3.0f%%)  chains %d%s  divergences %d  %.3g grad/s  %s  %s",
                         std::string(SamplePhaseName(p.phase)), p.total_iteration,
                         p.total_iterations, percent, p.num_chains, processes, p.divergences,
                         rate, utilization, time);
}

void ProgressPrinter::Report(const SampleProgress& p) {
  const bool done = p.phase == SamplePhase::kDone;
  if (terminal_) {
    if (!done && p.elapsed_seconds - last_redraw_ < min_redraw_seconds_) return;
    last_redraw_ = p.elapsed_seconds;
    std::string line = FormatLine(p);
    const size_t width = line.size();
    // Blank out what a longer previous line left behind.
    if (width < last_width_) line.append(last_width_ - width, ' ');
    last_width_ = width;
    std::fprintf(out_, "\r%s%s", line.c_str(), done ? "\n" : "");
    std::fflush(out_);
    return;
  }
  const int tenth = p.total_iterations > 0
                        ? static_cast<int>(10 * p.total_iteration / p.total_iterations)
                        : 10;
  if (!done && tenth <= last_tenth_ &&
      p.elapsed_seconds - last_redraw_ < max_plain_silence_seconds_) {
    return;
  }
  last_tenth_ = std::max(tenth, last_tenth_);
  last_redraw_ = p.elapsed_seconds;
  std::fprintf(out_, "%s\n", FormatLine(p).c_str());
  std::fflush(out_);
}

ProgressCallback ProgressPrinter::AsCallback() {
  return [this](const SampleProgress& p) { Report(p); };
}

}  // namespace autobatch::mcmc
