// Measures what the threaded backend's split rule needs: (1) the per-element
// cost factors of ThreadedBackend::LaneCost, from single-thread times of a
// few primitives relative to an f64 add; (2) for an elementwise op, a
// transcendental, a matvec and a masked update, the time per op on 1 thread
// vs 2 threads (every op split) over a range of lane counts, and the
// crossover lane count and cost where 2 threads start to win; (3) from the
// same runs, the split overhead and the break-even chunk cost it implies
// (what the crossover would be with a second core to spare: on a loaded
// machine the measured crossover may not exist).
//
// Usage: threaded_bench [--max-lanes N] [--trial-ms N]
// Times are the minimum over 7 trials of the mean over >= trial-ms of runs
// (the minimum resists other processes on a shared machine). The constants
// kDefaultMinChunkCost and the k*Factor values in
// backends/threaded_backend.cc come from this output; figures go to
// docs/BENCHMARKS.md together with the command and `uptime`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/threaded_backend.h"
#include "ir/ir.h"

namespace autobatch {
namespace {

double trial_seconds = 0.02;

// Minimum over trials of the mean time of one call of `run`.
double Time(const std::function<void()>& run) {
  for (int i = 0; i < 3; ++i) run();  // warm up scratch buffers and workers
  // Calibrate the number of runs per trial.
  int64_t reps = 1;
  for (;;) {
    auto start = std::chrono::steady_clock::now();
    for (int64_t r = 0; r < reps; ++r) run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s >= trial_seconds / 4 || reps > (int64_t{1} << 30)) break;
    reps *= 2;
  }
  reps = std::max<int64_t>(1, reps * 4);
  double best = 1e30;
  for (int t = 0; t < 7; ++t) {
    auto start = std::chrono::steady_clock::now();
    for (int64_t r = 0; r < reps; ++r) run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s / static_cast<double>(reps));
  }
  return best;
}

// One benchmarked op with its operands at some lane count.
struct Workload {
  std::string name;
  PrimOp op;
  std::vector<TensorType> inputs;
  TensorType output;
  bool masked_update = false;  // time Backend::MaskedUpdate instead of RunOp
};

struct Operands {
  std::vector<Tensor> ins;
  Tensor out;
  LaneSet lanes;
};

Operands Make(const Workload& w, int64_t lanes, std::mt19937_64& rng) {
  Operands o;
  for (const TensorType& t : w.inputs) {
    Tensor x(t, lanes);
    for (int64_t i = 0; i < lanes * x.lane_elements(); ++i) {
      const double v = std::uniform_real_distribution<double>(0.5, 1.5)(rng);
      if (t.dtype == DType::kF64) x.data<double>()[i] = v;
      if (t.dtype == DType::kU64) x.data<uint64_t>()[i] = rng();
    }
    o.ins.push_back(std::move(x));
  }
  o.out = Tensor(w.output, lanes);
  if (w.masked_update) {
    std::vector<uint8_t> mask(static_cast<size_t>(lanes));
    for (auto& m : mask) m = rng() % 2;
    o.lanes = LaneSet::FromMask(mask);
  } else {
    o.lanes = LaneSet::All(lanes);
  }
  return o;
}

double TimeWorkload(Backend& backend, const Workload& w, Operands& o) {
  std::vector<const Tensor*> ins;
  for (const Tensor& t : o.ins) ins.push_back(&t);
  Tensor* outs[] = {&o.out};
  if (w.masked_update) {
    return Time([&] { backend.MaskedUpdate(o.ins[0], o.lanes, &o.out); });
  }
  return Time([&] {
    absl::Status s = backend.RunOp(w.op, ins, outs, o.lanes, ExecMode::kDense, nullptr);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
  });
}

double LaneCostOf(const Workload& w, Operands& o) {
  if (w.masked_update) return static_cast<double>(o.out.lane_elements());
  std::vector<const Tensor*> ins;
  for (const Tensor& t : o.ins) ins.push_back(&t);
  Tensor* outs[] = {&o.out};
  return ThreadedBackend::LaneCost(w.op, ins, outs);
}

PrimOp Op(Primitive p, int num_inputs) {
  PrimOp op;
  op.prim = p;
  for (int i = 0; i < num_inputs; ++i) op.inputs.push_back(VarId(i));
  op.outputs.push_back(VarId(num_inputs));
  return op;
}

Workload MatVec(int64_t n, std::mt19937_64& rng) {
  auto m = std::make_shared<DenseMatrix>();
  m->rows = m->cols = n;
  for (int64_t i = 0; i < n * n; ++i) {
    m->data.push_back(std::normal_distribution<double>(0, 0.1)(rng));
  }
  PrimOp op = Op(Primitive::kMatVec, 1);
  op.attrs.matrix = m;
  const std::string name = "matvec_" + std::to_string(n) + "x" + std::to_string(n);
  return {name, op, {Vector(DType::kF64, n)}, Vector(DType::kF64, n), false};
}

int Main(int argc, char** argv) {
  int64_t max_lanes = 65536;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max-lanes")) max_lanes = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--trial-ms")) trial_seconds = std::atof(argv[i + 1]) / 1e3;
  }
  std::mt19937_64 rng(1);
  const TensorType f64 = Scalar(DType::kF64), u64 = Scalar(DType::kU64);
  const Workload add{"add_f64", Op(Primitive::kAdd, 2), {f64, f64}, f64, false};
  const Workload exp{"exp_f64", Op(Primitive::kExp, 1), {f64}, f64, false};
  const Workload pow{"pow_f64", Op(Primitive::kPow, 2), {f64, f64}, f64, false};
  PrimOp normal_op = Op(Primitive::kRandomNormal, 2);
  normal_op.attrs.ints = {8};
  const Workload normal{"random_normal_8", normal_op, {u64, u64}, Vector(DType::kF64, 8), false};
  const Workload mv8 = MatVec(8, rng), mv32 = MatVec(32, rng);
  const Workload masked{"masked_update_half", Op(Primitive::kCopy, 1), {f64}, f64, true};
  const TensorType v10 = Vector(DType::kF64, 10), v100 = Vector(DType::kF64, 100);
  const Workload dot10{"dot_f64x10", Op(Primitive::kDot, 2), {v10, v10}, f64, false};
  const Workload dot100{"dot_f64x100", Op(Primitive::kDot, 2), {v100, v100}, f64, false};

  ThreadedBackend one(ThreadedBackendOptions{.num_threads = 1});
  ThreadedBackend two_split(ThreadedBackendOptions{.num_threads = 2, .min_chunk_cost = 0});
  ThreadedBackend two_auto(ThreadedBackendOptions{.num_threads = 2});

  // (1) Cost factors, single thread. unit = a third of an f64 add's lane
  // time (an add touches 3 elements).
  const int64_t factor_lanes = 16384;
  std::printf("== cost factors (1 thread, %lld lanes, ns per lane) ==\n",
              static_cast<long long>(factor_lanes));
  Operands add_o = Make(add, factor_lanes, rng);
  const double add_ns = TimeWorkload(one, add, add_o) * 1e9 / static_cast<double>(factor_lanes);
  const double unit_ns = add_ns / 3;
  std::printf("%-20s %10s %12s %12s  %s\n", "op", "ns/lane", "units/lane", "model units",
              "implied factor");
  struct FactorRow {
    const Workload* w;
    double base;     // elements touched
    double scaled;   // what the factor multiplies
    const char* what;
  };
  const FactorRow rows[] = {
      {&add, 3, 0, ""},
      {&exp, 2, 1, "kTranscendentalFactor (per result element)"},
      {&pow, 3, 1, "kPowFactor (per result element)"},
      {&normal, 10, 8, "kRandomFactor (per variate)"},
      {&mv8, 16, 64, "kMatVecFactor (per rows*cols)"},
      {&mv32, 64, 1024, "kMatVecFactor (per rows*cols)"},
      {&dot10, 21, 0, ""},
      {&dot100, 201, 0, ""},
  };
  for (const FactorRow& r : rows) {
    Operands o = Make(*r.w, factor_lanes, rng);
    const double ns = TimeWorkload(one, *r.w, o) * 1e9 / static_cast<double>(factor_lanes);
    const double units = ns / unit_ns;
    std::printf("%-20s %10.2f %12.1f %12.1f", r.w->name.c_str(), ns, units, LaneCostOf(*r.w, o));
    if (r.scaled > 0) {
      std::printf("  %.2f = %s", (units - r.base) / r.scaled, r.what);
    }
    std::printf("\n");
  }

  // (2) 1 vs 2 threads.
  std::printf("\n== 1 vs 2 threads (us per op; 2t = every op split in 2; auto = the "
              "default threshold, %.0f units per chunk) ==\n",
              ThreadedBackend::kDefaultMinChunkCost);
  std::printf("%-20s %8s %12s %10s %10s %10s %8s\n", "op", "lanes", "cost_units", "1t_us",
              "2t_us", "auto_us", "1t/2t");
  std::vector<double> break_evens;
  for (const Workload* w : {&add, &exp, &mv8, &mv32, &masked}) {
    int64_t crossover = -1;
    double crossover_cost = 0, lane_cost = 0;
    std::vector<double> overheads;  // 2t - 1t/2 at the three smallest sizes
    double ns_per_unit = 0;         // 1t at the largest size
    for (int64_t lanes = 16; lanes <= max_lanes; lanes *= 2) {
      Operands o = Make(*w, lanes, rng);
      lane_cost = LaneCostOf(*w, o);
      const double t1 = TimeWorkload(one, *w, o);
      const double t2 = TimeWorkload(two_split, *w, o);
      const double ta = TimeWorkload(two_auto, *w, o);
      if (overheads.size() < 3) overheads.push_back(t2 - t1 / 2);
      ns_per_unit = t1 * 1e9 / (lane_cost * static_cast<double>(lanes));
      std::printf("%-20s %8lld %12.0f %10.2f %10.2f %10.2f %8.2f\n", w->name.c_str(),
                  static_cast<long long>(lanes), lane_cost * static_cast<double>(lanes), t1 * 1e6,
                  t2 * 1e6, ta * 1e6, t1 / t2);
      if (t2 < t1) {
        if (crossover < 0) {
          crossover = lanes;
          crossover_cost = lane_cost * static_cast<double>(lanes);
        }
      } else {
        crossover = -1;  // must stay a win at every larger size
      }
    }
    if (crossover < 0) {
      std::printf("crossover %-20s none up to %lld lanes\n", w->name.c_str(),
                  static_cast<long long>(max_lanes));
    } else {
      std::printf("crossover %-20s at %lld lanes (between %lld and %lld) = %.0f cost units, "
                  "%.0f per chunk of 2\n",
                  w->name.c_str(), static_cast<long long>(crossover),
                  static_cast<long long>(crossover / 2), static_cast<long long>(crossover),
                  crossover_cost, crossover_cost / 2);
    }
    // On an idle machine 2t ~ 1t/2 + overhead, so splitting pays once a
    // chunk's own time exceeds the overhead: break-even chunk cost =
    // overhead / (1t time per unit).
    std::sort(overheads.begin(), overheads.end());
    const double overhead_ns = overheads[overheads.size() / 2] * 1e9;
    break_evens.push_back(overhead_ns / ns_per_unit);
    std::printf("break-even %-20s split overhead %.2f us, 1t %.3f ns per cost unit -> "
                "%.0f cost units per chunk\n",
                w->name.c_str(), overhead_ns / 1e3, ns_per_unit, break_evens.back());
  }
  std::sort(break_evens.begin(), break_evens.end());
  std::printf("\nmedian break-even chunk cost over the ops: %.0f units (kDefaultMinChunkCost "
              "is %.0f)\n",
              break_evens[break_evens.size() / 2], ThreadedBackend::kDefaultMinChunkCost);
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
