// Concurrency: Contexts and compiled programs used from several threads at
// once give exactly the results of sequential runs (tools/sanitize.sh thread
// runs these tests under ThreadSanitizer).
#include <cstdint>
#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backends/tensor.h"
#include "frontend/context.h"
#include "support/status.h"
#include "samples/collatz/collatz.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/mutual_recursion/even_odd.h"

namespace autobatch {
namespace {

constexpr int kThreads = 2;
constexpr int64_t kDampWidth = 16;

struct Executor {
  std::string name;
  CallOptions options;
};

// Both VMs on both backends, sharded runs (CallOptions::shards), and the
// reference interpreter.
std::vector<Executor> Executors() {
  std::vector<Executor> out;
  for (std::string backend : {"eigen", "threaded:2"}) {
    out.push_back({"stack/" + backend, {.vm = Vm::kStack, .backend = backend}});
    out.push_back({"stackless/" + backend, {.vm = Vm::kStackless, .backend = backend}});
  }
  out.push_back({"stack/shards:2", {.vm = Vm::kStack, .shards = 2}});
  out.push_back({"stackless/threaded:2/shards:3",
                 {.vm = Vm::kStackless, .backend = "threaded:2", .shards = 3}});
  out.push_back({"dry_run", {.dry_run = true}});
  return out;
}

// The samples registered on one Context, and `damp`, a loop over vectors
// whose elementwise ops on a large batch are big enough for the threaded
// backend to split them over its pool.
struct Programs {
  BatchFunction fib, is_even, collatz, damp;
};

Programs Define(Context& ctx) {
  Programs p;
  p.fib = samples::DefineFibonacci(ctx);
  p.is_even = samples::DefineEvenOdd(ctx).is_even;
  p.collatz = samples::DefineCollatz(ctx);
  p.damp = ctx.Batch("damp", {.param_names = {"x0", "k0"}})([](Builder& b, Value x0, Value k0) {
    Var x = b.Local("x", x0);
    Var k = b.Local("k", k0);
    b.While([&] { return k > 0; }).Do([&] {
      x = tanh(x) * 0.5 + exp(-(x * x));
      k = k - 1;
    });
    return x;
  });
  return p;
}

struct Inputs {
  std::vector<int64_t> fib_n, even_n, collatz_n, damp_k;
  std::vector<double> damp_x;  // damp_k.size() x kDampWidth
};

Inputs MakeInputs(uint64_t seed, int64_t batch, int64_t damp_batch) {
  std::mt19937_64 rng(seed);
  auto ints = [&](int64_t n, int64_t lo, int64_t hi) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t& x : v) x = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    return v;
  };
  Inputs in;
  in.fib_n = ints(batch, -2, 13);
  in.even_n = ints(batch, 0, 40);
  in.collatz_n = ints(batch, -3, 500);
  in.damp_k = ints(damp_batch, 0, 6);
  in.damp_x.resize(static_cast<size_t>(damp_batch * kDampWidth));
  for (double& x : in.damp_x) x = std::normal_distribution<double>()(rng);
  return in;
}

// Every program's outputs on one executor, in order, or the first error.
absl::StatusOr<std::vector<Tensor>> RunAll(const Programs& p, const Inputs& in,
                                           const CallOptions& options) {
  std::vector<Tensor> out;
  for (const auto& [f, n] : {std::pair{p.fib, in.fib_n}, std::pair{p.is_even, in.even_n},
                             std::pair{p.collatz, in.collatz_n}}) {
    AB_ASSIGN_OR_RETURN(Tensor input, Tensor::FromVector(n));
    AB_ASSIGN_OR_RETURN(Tensor result, f(input, options));
    out.push_back(std::move(result));
  }
  AB_ASSIGN_OR_RETURN(Tensor x, Tensor::FromVector(in.damp_x, {kDampWidth}));
  AB_ASSIGN_OR_RETURN(Tensor k, Tensor::FromVector(in.damp_k));
  AB_ASSIGN_OR_RETURN(std::vector<Tensor> damped, p.damp.Run({x, k}, options));
  out.insert(out.end(), damped.begin(), damped.end());
  return out;
}

// The outputs every executor must give, from the plain C++ samples (and,
// for damp, the reference interpreter, run on its own Context).
std::vector<Tensor> Expected(const Inputs& in) {
  std::vector<int64_t> fib, collatz;
  std::vector<bool> even;
  for (int64_t n : in.fib_n) fib.push_back(samples::FibonacciReference(n));
  for (int64_t n : in.even_n) even.push_back(samples::IsEvenReference(n));
  for (int64_t n : in.collatz_n) collatz.push_back(samples::CollatzStepsReference(n));
  std::vector<Tensor> out = {*Tensor::FromVector(fib), *Tensor::FromVector(even),
                             *Tensor::FromVector(collatz)};
  Context ctx;
  Programs p = Define(ctx);
  absl::StatusOr<std::vector<Tensor>> damped =
      p.damp.Run({*Tensor::FromVector(in.damp_x, {kDampWidth}), *Tensor::FromVector(in.damp_k)},
                 {.dry_run = true});
  EXPECT_TRUE(damped.ok()) << damped.status();
  if (damped.ok()) out.insert(out.end(), damped->begin(), damped->end());
  return out;
}

void ExpectEqual(const absl::StatusOr<std::vector<Tensor>>& got, const std::vector<Tensor>& want,
                 const std::string& what) {
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  ASSERT_EQ(got->size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE((*got)[i] == want[i]) << what << ", output " << i;
  }
}

// Runs body(t) on kThreads threads released together.
template <typename F>
void OnThreads(F body) {
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// The damp program really splits on the threaded backend only with a large
// batch; the samples use a small one.
constexpr int64_t kBatch = 61;
constexpr int64_t kDampBatch = 2048;

TEST(ConcurrencyTest, SequentialRunsAgreeWithThePlainCxxSamples) {
  // The baseline the concurrent tests compare with is itself right.
  const Inputs in = MakeInputs(/*seed=*/7, kBatch, kDampBatch);
  const std::vector<Tensor> want = Expected(in);
  ASSERT_EQ(want.size(), 4u);
  Context ctx;
  Programs p = Define(ctx);
  for (const Executor& ex : Executors()) ExpectEqual(RunAll(p, in, ex.options), want, ex.name);
}

TEST(ConcurrencyTest, TwoContextsOnTwoThreadsGiveTheSequentialResults) {
  std::vector<Inputs> inputs;
  std::vector<std::vector<Tensor>> want;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(MakeInputs(/*seed=*/100 + t, kBatch + t, kDampBatch));
    want.push_back(Expected(inputs.back()));
  }
  const std::vector<Executor> executors = Executors();
  // Each thread registers its own Context (concurrently with the other's),
  // then runs every executor twice; results are checked on the main thread.
  constexpr int kRounds = 2;
  std::vector<std::vector<absl::StatusOr<std::vector<Tensor>>>> got(kThreads);
  OnThreads([&](int t) {
    Context ctx;
    Programs p = Define(ctx);
    for (int round = 0; round < kRounds; ++round) {
      for (const Executor& ex : executors) got[t].push_back(RunAll(p, inputs[t], ex.options));
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), kRounds * executors.size());
    for (size_t i = 0; i < got[t].size(); ++i) {
      ExpectEqual(got[t][i], want[t],
                  absl::StrCat("thread ", t, ", ", executors[i % executors.size()].name));
    }
  }
}

TEST(ConcurrencyTest, OneCompiledProgramOnTwoThreadsGivesTheSequentialResults) {
  Context ctx;
  Programs p = Define(ctx);
  const std::vector<Executor> executors = Executors();
  std::vector<Inputs> inputs;
  std::vector<std::vector<Tensor>> want;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(MakeInputs(/*seed=*/200 + t, kBatch, kDampBatch));
    want.push_back(Expected(inputs.back()));
    // Sequential runs first: they compile every program, so the threads
    // below share the cached compiled programs.
    for (const Executor& ex : executors) {
      ExpectEqual(RunAll(p, inputs[t], ex.options), want[t], "sequential " + ex.name);
    }
  }
  // Thread 1 walks the executors backwards, so different VMs and backends
  // overlap as well as the same ones (in the middle).
  std::vector<std::vector<absl::StatusOr<std::vector<Tensor>>>> got(kThreads);
  OnThreads([&](int t) {
    for (size_t i = 0; i < executors.size(); ++i) {
      const Executor& ex = executors[t == 0 ? i : executors.size() - 1 - i];
      got[t].push_back(RunAll(p, inputs[t], ex.options));
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), executors.size());
    for (size_t i = 0; i < executors.size(); ++i) {
      const Executor& ex = executors[t == 0 ? i : executors.size() - 1 - i];
      ExpectEqual(got[t][i], want[t], absl::StrCat("thread ", t, ", ", ex.name));
    }
  }
}

TEST(ConcurrencyTest, FirstCallsFromTwoThreadsCompileEachProgramOnce) {
  // A fresh Context each time: no body is built and nothing is cached when
  // both threads make their first call at once.
  const Inputs in = MakeInputs(/*seed=*/300, kBatch, /*damp_batch=*/1);
  const std::vector<Tensor> want = Expected(in);
  const std::vector<TensorType> types = {Scalar(DType::kI64)};
  for (int repeat = 0; repeat < 8; ++repeat) {
    Context ctx;
    Programs p = Define(ctx);
    std::vector<absl::StatusOr<Tensor>> fib(kThreads), collatz(kThreads);
    std::vector<absl::StatusOr<const Program*>> lowered(kThreads), compiled(kThreads);
    OnThreads([&](int t) {
      const Vm vm = (t + repeat) % 2 == 0 ? Vm::kStack : Vm::kStackless;
      fib[t] = p.fib(*Tensor::FromVector(in.fib_n), {.vm = vm});
      collatz[t] = p.collatz(*Tensor::FromVector(in.collatz_n), {.vm = Vm::kStack});
      lowered[t] = ctx.LoweredProgram(p.fib, types);
      compiled[t] = ctx.CompiledProgram(p.fib, types);
    });
    for (int t = 0; t < kThreads; ++t) {
      SCOPED_TRACE(absl::StrCat("repeat ", repeat, ", thread ", t));
      ASSERT_TRUE(fib[t].ok()) << fib[t].status();
      EXPECT_TRUE(*fib[t] == want[0]);
      ASSERT_TRUE(collatz[t].ok()) << collatz[t].status();
      EXPECT_TRUE(*collatz[t] == want[2]);
      ASSERT_TRUE(lowered[t].ok()) << lowered[t].status();
      ASSERT_TRUE(compiled[t].ok()) << compiled[t].status();
      // One cache entry per (program, signature), whoever filled it.
      EXPECT_EQ(*lowered[t], *lowered[0]);
      EXPECT_EQ(*compiled[t], *compiled[0]);
      EXPECT_EQ((*lowered[t])->stage, Stage::kLowered);
    }
  }
}

TEST(ConcurrencyTest, RegisteringOnOneThreadWhileAnotherRuns) {
  // Registration makes cached programs stale; a run on another thread keeps
  // the program it started with and later runs recompile, with the same
  // results. Kernels registered meanwhile are seen by later bodies.
  Context ctx;
  Programs p = Define(ctx);
  const Inputs in = MakeInputs(/*seed=*/400, kBatch, /*damp_batch=*/1);
  const std::vector<Tensor> want = Expected(in);
  constexpr int kRegistrations = 6;
  std::vector<absl::StatusOr<Tensor>> runs;
  std::vector<absl::StatusOr<Tensor>> added(kRegistrations);
  OnThreads([&](int t) {
    if (t == 0) {
      for (int i = 0; i < 2 * kRegistrations; ++i) {
        runs.push_back(p.fib(*Tensor::FromVector(in.fib_n),
                             {.vm = i % 2 == 0 ? Vm::kStack : Vm::kStackless}));
      }
      return;
    }
    for (int i = 0; i < kRegistrations; ++i) {
      // plus_i(n) = fib(n) + twice_i(n), with twice_i a user kernel.
      Kernel twice = ctx.RegisterKernel(
          absl::StrCat("twice_", i),
          KernelSignature{{Scalar(DType::kI64)}, {Scalar(DType::kI64)}, /*bit_stable=*/true},
          [](const KernelCall& call) -> absl::Status {
            const int64_t* x = reinterpret_cast<const int64_t*>(call.inputs[0].data);
            int64_t* y = reinterpret_cast<int64_t*>(call.outputs[0].data);
            // Inactive lanes may hold junk: wrap instead of overflowing.
            for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
              y[lane] = static_cast<int64_t>(2 * static_cast<uint64_t>(x[lane]));
            }
            return absl::OkStatus();
          });
      BatchFunction plus = ctx.Batch(absl::StrCat("plus_", i))(
          [fib = p.fib, twice](Value n) {
            Value f = fib(n);
            return f + twice(n);
          });
      added[i] = plus(*Tensor::FromVector(in.fib_n),
                      {.vm = i % 2 == 0 ? Vm::kStack : Vm::kStackless});
    }
  });
  ASSERT_EQ(runs.size(), 2u * kRegistrations);
  for (const absl::StatusOr<Tensor>& run : runs) {
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_TRUE(*run == want[0]);
  }
  std::vector<int64_t> plus_want;
  for (int64_t n : in.fib_n) plus_want.push_back(samples::FibonacciReference(n) + 2 * n);
  for (int i = 0; i < kRegistrations; ++i) {
    ASSERT_TRUE(added[i].ok()) << "plus_" << i << ": " << added[i].status();
    EXPECT_EQ(added[i]->ToVector<int64_t>(), plus_want) << "plus_" << i;
  }
}

}  // namespace
}  // namespace autobatch
