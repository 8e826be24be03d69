// The benchmark suite against native code: fibonacci and the NUTS-shaped
// pea-nuts program on the stack VM, the stackless VM, dry-run (the reference
// interpreter looped over lanes) and the same algorithm written natively in
// C++ for one example and looped over the batch — side by side in one run.
//
// Usage: vm_bench [--json FILE] [--quick] [--peanuts-only | --fibonacci-only]
//                 [--timeout S]
// --timeout gives every batched and dry run that wall-clock budget
// (CallOptions::timeout_seconds), to measure what checking the deadline
// costs: compare with the default 0 (no deadline).
// Prints one row per (workload, batch, executor): seconds, ratio to native,
// batch utilization, VM overhead (time outside primitive kernels) and the
// per-block dispatch cost. Figures and the command go to docs/BENCHMARKS.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "frontend/context.h"
#include "nlohmann/json.hpp"
#include "passes/pipeline.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/peanuts/peanuts.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Row {
  std::string workload;
  int64_t batch;
  std::string executor;
  double seconds;
  double native_seconds;
  double utilization = -1;
  double lock_step_bound = -1;
  double overhead_fraction = -1;  // time outside primitive kernels / total
  double dispatch_ns = -1;        // per block execution, outside kernels
};

std::vector<Row> rows;

void Print(const Row& r) {
  std::printf("%-22s %6lld %-26s %10.4f %9.2fx", r.workload.c_str(),
              static_cast<long long>(r.batch), r.executor.c_str(), r.seconds,
              r.seconds / r.native_seconds);
  if (r.utilization >= 0) std::printf(" %6.1f%%", 100 * r.utilization);
  else std::printf(" %7s", "-");
  if (r.lock_step_bound >= 0) std::printf(" %6.1f%%", 100 * r.lock_step_bound);
  else std::printf(" %7s", "-");
  if (r.overhead_fraction >= 0) std::printf(" %6.1f%% %8.0f", 100 * r.overhead_fraction, r.dispatch_ns);
  std::printf("\n");
  std::fflush(stdout);
  rows.push_back(r);
}

// CallOptions::timeout_seconds of every run (--timeout).
double timeout_seconds = 0;

// Best of `reps` runs of a batched executor; also a profiled run (timing on)
// for the overhead split.
Row TimeVm(const std::string& workload, const std::string& name,
           const Program& program, const std::vector<Tensor>& inputs,
           const KernelRegistry& kernels, CallOptions options, double native,
           int reps) {
  options.timeout_seconds = timeout_seconds;
  double best = 1e300;
  Profile profile;
  for (int r = 0; r < reps; ++r) {
    double start = Now();
    auto out = RunProgram(program, inputs, &kernels, options, &profile);
    double t = Now() - start;
    if (!out.ok()) {
      std::fprintf(stderr, "%s %s: %s\n", workload.c_str(), name.c_str(),
                   std::string(out.status().message()).c_str());
      std::exit(1);
    }
    best = std::min(best, t);
  }
  Row row{workload, inputs.front().batch(), name, best, native};
  if (!options.dry_run) {
    // For pea-nuts the useful work is the leaf product: its utilization is
    // the one to compare with the lock-step bound (computed from leaves).
    row.utilization = profile.Utilization();
    for (Primitive p : {Primitive::kMatVec, Primitive::kMatVecBatched}) {
      const PrimitiveCounters& c = profile.builtins[static_cast<size_t>(p)];
      if (c.executions > 0) {
        row.utilization =
            static_cast<double>(c.active_lanes) / static_cast<double>(c.lane_slots);
      }
    }
  }
  // Kernel time summed over the shards' threads is not wall time: the
  // overhead split is reported for unsharded runs only.
  if (!options.dry_run && options.shards == 1) {
    CallOptions timed = options;
    timed.profile_timing = true;
    Profile tp;
    double start = Now();
    (void)RunProgram(program, inputs, &kernels, timed, &tp);
    double total = Now() - start;
    int64_t kernel_ns = 0;
    for (const auto& c : tp.builtins) kernel_ns += c.nanoseconds;
    for (const auto& [n, c] : tp.kernels) kernel_ns += c.nanoseconds;
    double outside = std::max(0.0, total - static_cast<double>(kernel_ns) * 1e-9);
    row.overhead_fraction = outside / total;
    row.dispatch_ns = outside * 1e9 / static_cast<double>(std::max<int64_t>(tp.steps, 1));
  }
  return row;
}

double TimeNative(const std::function<void()>& f, int reps) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    double start = Now();
    f();
    best = std::min(best, Now() - start);
  }
  return best;
}

void Fibonacci(const std::vector<int64_t>& batches, const std::vector<int>& threads) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  Program untyped = *ctx.Program(fib);
  Program lowered = *LowerProgram(untyped, {Scalar(DType::kI64)});
  Program compiled = *CompileProgram(untyped, {Scalar(DType::kI64)});
  for (int64_t batch : batches) {
    std::mt19937_64 rng(42);
    std::vector<int64_t> n(static_cast<size_t>(batch));
    for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(15, 20)(rng);
    std::vector<Tensor> inputs = {*Tensor::FromVector(n)};
    volatile int64_t sink = 0;
    double native = TimeNative([&] {
      int64_t s = 0;
      for (int64_t v : n) s += samples::FibonacciReference(v);
      sink = s;
    }, 5);
    (void)sink;
    std::string w = "fibonacci";
    Print({w, batch, "native", native, native});
    Print(TimeVm(w, "stack", lowered, inputs, ctx.kernels(), {.vm = Vm::kStack}, native, 3));
    Print(TimeVm(w, "stack/most-lanes", lowered, inputs, ctx.kernels(),
                 {.vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes}, native, 3));
    Print(TimeVm(w, "stackless", compiled, inputs, ctx.kernels(), {.vm = Vm::kStackless}, native, 3));
    if (batch <= 64) {
      Print(TimeVm(w, "dry-run", compiled, inputs, ctx.kernels(), {.dry_run = true}, native, 1));
    }
    if (batch == batches.back()) {
      for (int t : threads) {
        CallOptions o{.vm = Vm::kStack, .backend = "threaded:" + std::to_string(t)};
        if (!MakeBackend(o.backend).ok()) continue;
        Print(TimeVm(w, "stack/threaded:" + std::to_string(t), lowered, inputs,
                     ctx.kernels(), o, native, 3));
      }
      for (int t : threads) {
        Print(TimeVm(w, "stack/shards:" + std::to_string(t), lowered, inputs, ctx.kernels(),
                     {.vm = Vm::kStack, .shards = t}, native, 3));
      }
    }
  }
}

void PeaNuts(const std::vector<int64_t>& batches, const std::vector<int>& threads,
             int64_t trajectories) {
  const int64_t d = 100, max_depth = 8;
  for (int64_t batch : batches) {
    std::mt19937_64 rng(7);
    std::vector<double> x(static_cast<size_t>(batch * d));
    for (double& v : x) v = std::normal_distribution<double>()(rng);
    std::vector<int64_t> seed(static_cast<size_t>(batch)),
        traj(static_cast<size_t>(batch), trajectories);
    for (int64_t& s : seed) s = static_cast<int64_t>(rng() >> 1);
    std::vector<Tensor> inputs = {*Tensor::FromVector(x, {d}), *Tensor::FromVector(seed),
                                  *Tensor::FromVector(traj)};
    // Utilization bounds of the leaf product from per-lane trip counts.
    // Free-running: every leaf execution serves every lane that still has
    // leaves to do: total / (max over lanes of its total * batch).
    // Lock-step (vmap of the trajectory loop): trajectory t costs the
    // slowest lane's leaves: total / (sum over t of max over lanes * batch).
    double total = 0, max_lane = 0, lock_step_cost = 0;
    for (int64_t s : seed) {
      double lane = static_cast<double>(samples::PeaNutsLeaves(s, trajectories, max_depth));
      total += lane;
      max_lane = std::max(max_lane, lane);
    }
    for (int64_t t = 0; t < trajectories; ++t) {
      int64_t worst = 0;
      for (int64_t s : seed) {
        worst = std::max(worst, int64_t{1} << samples::TrajectoryDepth(s, t, max_depth));
      }
      lock_step_cost += static_cast<double>(worst);
    }
    const double b = static_cast<double>(batch);
    double free_running = total / (max_lane * b);
    double lock_step = total / (lock_step_cost * b);
    std::printf("%-22s %6lld bounds: free-running %.1f%%, lock-step %.1f%%\n", "peanuts",
                static_cast<long long>(batch), 100 * free_running, 100 * lock_step);

    auto matrix = samples::PeaNutsMatrix(d);
    std::vector<double> work = x, scratch(static_cast<size_t>(d));
    double native = TimeNative([&] {
      work = x;
      for (int64_t l = 0; l < batch; ++l) {
        samples::PeaNutsNative(*matrix, seed[l], trajectories, max_depth,
                               work.data() + l * d, scratch.data());
      }
    }, batch >= 1024 ? 2 : 3);
    std::string w = "peanuts";
    Row nat{w, batch, "native", native, native};
    nat.lock_step_bound = lock_step;
    Print(nat);
    for (bool batched : {false, true}) {
      Context ctx;
      BatchFunction f = samples::DefinePeaNuts(
          ctx, {.dimension = d, .max_depth = max_depth, .batched_product = batched});
      Program untyped = *ctx.Program(f);
      std::vector<TensorType> types = {Vector(DType::kF64, d), Scalar(DType::kI64),
                                       Scalar(DType::kI64)};
      Program lowered = *LowerProgram(untyped, types);
      Program compiled = *CompileProgram(untyped, types);
      std::string suffix = batched ? "(batched mm)" : "(per-lane mv)";
      int reps = batch >= 1024 ? 2 : 3;
      Row r = TimeVm(w, "stack " + suffix, lowered, inputs, ctx.kernels(), {.vm = Vm::kStack}, native, reps);
      r.lock_step_bound = lock_step;
      Print(r);
      r = TimeVm(w, "stack/most-lanes " + suffix, lowered, inputs, ctx.kernels(),
                 {.vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes}, native, reps);
      r.lock_step_bound = lock_step;
      Print(r);
      r = TimeVm(w, "stackless " + suffix, compiled, inputs, ctx.kernels(), {.vm = Vm::kStackless}, native, reps);
      r.lock_step_bound = lock_step;
      Print(r);
      if (!batched && batch <= 64) {
        Print(TimeVm(w, "dry-run", compiled, inputs, ctx.kernels(), {.dry_run = true}, native, 1));
      }
      if (batch == batches.back()) {
        for (int t : threads) {
          CallOptions o{.vm = Vm::kStack, .backend = "threaded:" + std::to_string(t)};
          if (!MakeBackend(o.backend).ok()) continue;
          Print(TimeVm(w, "stack/threaded:" + std::to_string(t) + " " + suffix, lowered,
                       inputs, ctx.kernels(), o, native, reps));
        }
        for (int t : threads) {
          Print(TimeVm(w, "stack/shards:" + std::to_string(t) + " " + suffix, lowered, inputs,
                       ctx.kernels(), {.vm = Vm::kStack, .shards = t}, native, reps));
        }
      }
    }
  }
}

int Main(int argc, char** argv) {
  std::string json_path;
  bool quick = false;
  bool peanuts_only = false;
  bool fibonacci_only = false;
  std::vector<int> threads = {1, 2};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json_path = argv[++i];
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--peanuts-only")) peanuts_only = true;
    else if (!std::strcmp(argv[i], "--fibonacci-only")) fibonacci_only = true;
    else if (!std::strcmp(argv[i], "--timeout") && i + 1 < argc) {
      timeout_seconds = std::atof(argv[++i]);
    }
  }
  std::vector<int64_t> batches = quick ? std::vector<int64_t>{1, 64}
                                       : std::vector<int64_t>{1, 64, 1024};
  std::printf("%-22s %6s %-26s %10s %10s %7s %7s %7s %8s\n", "workload", "batch",
              "executor", "seconds", "vs native", "util", "lockstep", "outside", "ns/block");
  if (!peanuts_only) Fibonacci(batches, threads);
  if (!fibonacci_only) PeaNuts(batches, threads, quick ? 2 : 4);
  if (!json_path.empty()) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      out.push_back({{"workload", r.workload}, {"batch", r.batch}, {"executor", r.executor},
                     {"seconds", r.seconds}, {"ratio_to_native", r.seconds / r.native_seconds},
                     {"utilization", r.utilization}, {"lock_step_bound", r.lock_step_bound},
                     {"outside_kernels", r.overhead_fraction}, {"dispatch_ns", r.dispatch_ns}});
    }
    std::ofstream(json_path) << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
