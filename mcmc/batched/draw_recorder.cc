// DrawRecorder: the record_draw kernel's buffer, with bounds-checked writes.
#include "mcmc/batched/draw_recorder.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch::mcmc {

DrawRecorder::DrawRecorder(int64_t dimension, int64_t num_slots, int64_t num_iterations)
    : dimension_(dimension) {
  AB_CHECK(dimension >= 1, "DrawRecorder needs dimension >= 1");
  Reset(num_slots, num_iterations);
}

void DrawRecorder::Reset(int64_t num_slots, int64_t num_iterations) {
  AB_CHECK(num_slots >= 0 && num_iterations >= 0,
           "DrawRecorder needs num_slots >= 0 and num_iterations >= 0");
  // Empty first, sized last: if an allocation throws (a memory limit), the
  // recorder holds no slots rather than sizes its buffers do not have.
  num_slots_ = 0;
  num_iterations_ = 0;
  const size_t cells = static_cast<size_t>(num_slots * num_iterations);
  draws_.assign(cells * static_cast<size_t>(dimension_), 0.0);
  stats_.assign(cells * kNumDrawStats, 0.0);
  written_.assign(cells, 0);
  num_slots_ = num_slots;
  num_iterations_ = num_iterations;
  total_recorded_.store(0, std::memory_order_relaxed);
  total_leapfrogs_.store(0, std::memory_order_relaxed);
  total_divergences_.store(0, std::memory_order_relaxed);
}

KernelSignature DrawRecorder::Signature() const {
  return KernelSignature{{Scalar(DType::kI64), Scalar(DType::kI64),
                          Vector(DType::kF64, dimension_), Vector(DType::kF64, kNumDrawStats)},
                         {Scalar(DType::kI64)},
                         /*bit_stable=*/true,
                         /*pure=*/false};  // it writes the draw tables: never merge nor drop
}

absl::Status DrawRecorder::Record(const KernelCall& call) {
  if (call.inputs.size() != 4 || call.outputs.size() != 1 ||
      call.inputs[0].type != Scalar(DType::kI64) || call.inputs[1].type != Scalar(DType::kI64) ||
      call.inputs[2].type != Vector(DType::kF64, dimension_) ||
      call.inputs[3].type != Vector(DType::kF64, kNumDrawStats) ||
      call.outputs[0].type != Scalar(DType::kI64)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record_draw: called with the wrong inputs or outputs; it takes slot i64, iteration "
        "i64, q f64[",
        dimension_, "], stats f64[", kNumDrawStats, "] and returns ack i64"));
  }
  const auto* slots = reinterpret_cast<const int64_t*>(call.inputs[0].data);
  const auto* iterations = reinterpret_cast<const int64_t*>(call.inputs[1].data);
  const auto* q = reinterpret_cast<const double*>(call.inputs[2].data);
  const auto* stats = reinterpret_cast<const double*>(call.inputs[3].data);
  auto* ack = reinterpret_cast<int64_t*>(call.outputs[0].data);
  // Published once per call (and also when a lane fails part way).
  int64_t recorded = 0, leapfrogs = 0, divergences = 0;
  const absl::Cleanup publish = [&] {
    total_recorded_.fetch_add(recorded, std::memory_order_relaxed);
    total_leapfrogs_.fetch_add(leapfrogs, std::memory_order_relaxed);
    total_divergences_.fetch_add(divergences, std::memory_order_relaxed);
  };
  for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
    if (!call.IsActive(lane)) continue;
    const int64_t slot = slots[lane];
    const int64_t iteration = iterations[lane];
    if (slot < 0 || slot >= num_slots_ || iteration < 0 || iteration >= num_iterations_) {
      return absl::OutOfRangeError(absl::StrCat(
          "record_draw: lane ", lane, " records slot ", slot, ", iteration ", iteration,
          " but the recorder holds slots [0, ", num_slots_, ") and iterations [0, ",
          num_iterations_, "); size it with DrawRecorder::Reset before the run"));
    }
    const size_t cell = Cell(slot, iteration);
    if (written_[cell] != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "record_draw: lane ", lane, " records slot ", slot, ", iteration ", iteration,
          " which was already recorded; give every chain its own slot and Reset the "
          "recorder between runs"));
    }
    std::memcpy(&draws_[cell * static_cast<size_t>(dimension_)], q + lane * dimension_,
                static_cast<size_t>(dimension_) * sizeof(double));
    std::memcpy(&stats_[cell * kNumDrawStats], stats + lane * kNumDrawStats,
                kNumDrawStats * sizeof(double));
    written_[cell] = 1;
    ack[lane] = 1;
    const double* lane_stats = stats + lane * kNumDrawStats;
    ++recorded;
    leapfrogs += static_cast<int64_t>(lane_stats[kNLeapfrogStat]);
    divergences += lane_stats[kDivergentStat] != 0 ? 1 : 0;
  }
  return absl::OkStatus();
}

Kernel DrawRecorder::Register(Context& ctx, std::string name) {
  return ctx.RegisterKernel(std::move(name), Signature(),
                            [this](const KernelCall& call) { return Record(call); });
}

size_t DrawRecorder::Cell(int64_t slot, int64_t iteration) const {
  return static_cast<size_t>(slot * num_iterations_ + iteration);
}

bool DrawRecorder::recorded(int64_t slot, int64_t iteration) const {
  AB_CHECK(slot >= 0 && slot < num_slots_ && iteration >= 0 && iteration < num_iterations_);
  return written_[Cell(slot, iteration)] != 0;
}

std::span<const double> DrawRecorder::draw(int64_t slot, int64_t iteration) const {
  AB_CHECK(slot >= 0 && slot < num_slots_ && iteration >= 0 && iteration < num_iterations_);
  return std::span<const double>(&draws_[Cell(slot, iteration) * static_cast<size_t>(dimension_)],
                                 static_cast<size_t>(dimension_));
}

std::span<const double> DrawRecorder::stat_values(int64_t slot, int64_t iteration) const {
  AB_CHECK(slot >= 0 && slot < num_slots_ && iteration >= 0 && iteration < num_iterations_);
  return std::span<const double>(&stats_[Cell(slot, iteration) * kNumDrawStats],
                                 kNumDrawStats);
}

DrawStats DrawRecorder::stats(int64_t slot, int64_t iteration) const {
  std::span<const double> v = stat_values(slot, iteration);
  DrawStats s;
  s.lp = v[0];
  s.accept_stat = v[1];
  s.stepsize = v[2];
  s.treedepth = static_cast<int>(v[3]);
  s.n_leapfrog = static_cast<int64_t>(v[kNLeapfrogStat]);
  s.divergent = v[kDivergentStat] != 0;
  s.energy = v[6];
  return s;
}

int64_t DrawRecorder::count(int64_t slot) const {
  AB_CHECK(slot >= 0 && slot < num_slots_);
  const auto begin = written_.begin() + static_cast<std::ptrdiff_t>(Cell(slot, 0));
  return std::count(begin, begin + num_iterations_, uint8_t{1});
}

}  // namespace autobatch::mcmc
