// Batched VMs: budgets, stack limits, batch sizes, input errors, execution
// modes, scheduling policies and the profiling counters' anchor figures.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "frontend/context.h"
#include "ir/testing/fib_program.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/infer_types.h"
#include "passes/pipeline.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/peanuts/peanuts.h"
#include "frontend/run.h"
#include "vm/stack/stack_vm.h"
#include "vm/stackless_vm.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

class BothVmsTest : public ::testing::TestWithParam<Vm> {
 protected:
  CallOptions Options() const { return {.vm = GetParam()}; }
};

Tensor I64(std::vector<int64_t> v) { return *Tensor::FromVector(v); }

TEST_P(BothVmsTest, NeverHaltingLoopRunsOutOfSteps) {
  Context ctx;
  BatchFunction spin = ctx.Batch("spin")([](Builder& b, Value x0) {
    Var x = b.Local("x", x0);
    b.While([&] { return x == x; }).Do([&] { x = x + 1; });
    return x;
  });
  CallOptions options = Options();
  options.max_steps = 1000;
  absl::StatusOr<std::vector<Tensor>> out = spin.Run({I64({1, 2, 3})}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(), HasSubstr("max_steps"));
}

// A value far bigger than memory is refused before anything is allocated,
// on every executor, with the variable named and the option to raise.
TEST_P(BothVmsTest, ValueLargerThanMaxValueBytesIsRefused) {
  Context ctx;
  BatchFunction huge = ctx.Batch("huge")([](Builder& b, Value x) {
    Var wide = b.Local("wide", broadcast(x, {int64_t{1} << 40}));
    return wide;
  });
  for (bool dry_run : {false, true}) {
    CallOptions options = Options();
    options.dry_run = dry_run;
    absl::StatusOr<std::vector<Tensor>> out = huge.Run({I64({1, 2})}, options);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(out.status().message()),
                ::testing::ContainsRegex("variable '[a-z0-9]+' of function 'huge' has type "
                                         "i64\\[1099511627776\\]: [12] lane\\(s\\)"));
    EXPECT_THAT(out.status().message(),
                HasSubstr("max_value_bytes = 4294967296 bytes; raise CallOptions::max_value_bytes"));
  }
  // Within a raised bound the same program is only limited by that bound.
  CallOptions small = Options();
  small.max_value_bytes = 1 << 10;
  BatchFunction ok = ctx.Batch("fits")([](Builder&, Value x) { return broadcast(x, {64}); });
  EXPECT_TRUE(ok.Run({I64({1, 2})}, small).ok());
  EXPECT_EQ(ok.Run({I64({1, 2, 3})}, small).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_P(BothVmsTest, NeverHaltingLoopRunsOutOfTime) {
  Context ctx;
  BatchFunction spin = ctx.Batch("spin")([](Builder& b, Value x0) {
    Var x = b.Local("x", x0);
    b.While([&] { return x == x; }).Do([&] { x = x + 1; });
    return x;
  });
  CallOptions options = Options();
  options.max_steps = 0;
  options.timeout_seconds = 0.2;
  absl::StatusOr<std::vector<Tensor>> out = spin.Run({I64({1, 2, 3})}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
}

// CallOptions::cancel stops a loop that would never halt, from another
// thread, as a signal handler would: Cancelled, naming the option.
TEST_P(BothVmsTest, CancelFlagStopsTheCall) {
  Context ctx;
  BatchFunction spin = ctx.Batch("spin")([](Builder& b, Value x0) {
    Var x = b.Local("x", x0);
    b.While([&] { return x == x; }).Do([&] { x = x + 1; });
    return x;
  });
  std::atomic<bool> cancel{false};
  CallOptions options = Options();
  options.max_steps = 0;
  options.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel.store(true);
  });
  absl::StatusOr<std::vector<Tensor>> out = spin.Run({I64({1, 2, 3})}, options);
  canceller.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(out.status().message(), HasSubstr("CallOptions::cancel"));
}

TEST_P(BothVmsTest, RecursionDeeperThanTheLimitIsAnErrorNamingTheFunction) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  CallOptions options = Options();
  options.max_stack_depth = 6;
  absl::StatusOr<std::vector<Tensor>> out = fib.Run({I64({3, 20})}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(), HasSubstr("fibonacci"));
  EXPECT_THAT(out.status().message(), HasSubstr("lane"));
}

TEST_P(BothVmsTest, UnboundedRecursionStopsAtTheDefaultLimitWithoutCrashing) {
  Context ctx;
  BatchFunction down = ctx.Declare("down", {.param_names = {"n"}});
  ctx.Batch(down)([down](Builder& b, Value n) {
    Var out = b.Local("out");
    b.If(n == -1).Then([&] { out = n; }).Else([&] { out = down(n + 1) + 1; });
    return out;
  });
  absl::StatusOr<std::vector<Tensor>> out = down.Run({I64({0, 5})}, Options());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
}

// count(n) = n for n >= 0, in n + 1 frames.
BatchFunction DefineCount(Context& ctx) {
  BatchFunction count = ctx.Declare("count", {.param_names = {"n"}});
  ctx.Batch(count)([count](Builder& b, Value n) {
    Var out = b.Local("out");
    b.If(n <= 0).Then([&] { out = n; }).Else([&] { out = count(n - 1) + 1; });
    return out;
  });
  return count;
}

// max_stack_depth counts frames, the entry's included: a lane needing exactly
// that many runs, one needing more is ResourceExhausted naming the function
// and the lane, as on the reference interpreter. The limits straddle the
// stack VM's initial 4 saved return addresses per lane, and go past them.
TEST_P(BothVmsTest, MaxStackDepthAllowsExactlyThatManyFrames) {
  Context ctx;
  BatchFunction count = DefineCount(ctx);
  for (int64_t limit : {4, 5, 6, 50}) {
    for (bool dry_run : {false, true}) {
      SCOPED_TRACE(absl::StrCat("limit ", limit, dry_run ? " dry_run" : ""));
      CallOptions options = Options();
      options.max_stack_depth = limit;
      options.dry_run = dry_run;
      const std::vector<int64_t> fitting = {2, limit - 1, 0};
      absl::StatusOr<std::vector<Tensor>> out = count.Run({I64(fitting)}, options);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->front().ToVector<int64_t>(), fitting);
      out = count.Run({I64({2, 0, limit})}, options);
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
      EXPECT_THAT(out.status().message(), HasSubstr("'count'"));
      EXPECT_THAT(std::string(out.status().message()), ::testing::ContainsRegex("lane:? 2"));
    }
  }
}

TEST_P(BothVmsTest, DeepButBoundedRecursionWorks) {
  Context ctx;
  BatchFunction count = DefineCount(ctx);
  absl::StatusOr<std::vector<Tensor>> out =
      count.Run({I64({9000, 10, 0})}, Options());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->front().ToVector<int64_t>(),
            (std::vector<int64_t>{9000, 10, 0}));
}

TEST_P(BothVmsTest, BatchSizesZeroAndOne) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<std::vector<Tensor>> empty = fib.Run({I64({})}, Options());
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->front().batch(), 0);
  absl::StatusOr<std::vector<Tensor>> one = fib.Run({I64({10})}, Options());
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->front().ToVector<int64_t>(), std::vector<int64_t>{89});
}

// Values with no elements (f64[0]) have no storage; passing them in and out,
// through calls (stack pushes and pops) and ops must move no bytes and hand
// memcpy no null pointer, on the VM and on the reference interpreter
// (dry_run), which copies every lane in and out (fuzzer finding F5 in
// docs/FUZZING.md; the sanitizer builds catch it).
TEST_P(BothVmsTest, ZeroElementValuesPassThroughCalls) {
  Context ctx;
  BatchFunction down = ctx.Declare("down", {.param_names = {"n", "e"}});
  ctx.Batch(down)([down](Builder& b, Value n, Value e) {
    Var out = b.Local("out", e + broadcast(cast(n, DType::kF64), {0}));
    b.If(n > 0).Then([&] { out = down(n - 1, out); });
    return out;
  });
  const TensorType empty_vector{DType::kF64, {0}};
  for (bool dry_run : {false, true}) {
    CallOptions options = Options();
    options.dry_run = dry_run;
    absl::StatusOr<std::vector<Tensor>> out =
        down.Run({I64({3, 0, 5}), Tensor(empty_vector, 3)}, options);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->front() == Tensor(empty_vector, 3));
  }
}

TEST_P(BothVmsTest, WrongInputsAreErrorsNamingTheParameter) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> untyped = ctx.Program(fib);
  ASSERT_TRUE(untyped.ok());
  // Compile for i64, then call with f64: the typed program names the parameter.
  absl::StatusOr<Program> typed =
      GetParam() == Vm::kStack ? LowerProgram(*untyped, {Scalar(DType::kI64)})
                               : CompileProgram(*untyped, {Scalar(DType::kI64)});
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<std::vector<Tensor>> out = RunProgram(
      *typed, {*Tensor::FromVector<double>({1.0})}, &ctx.kernels(), Options());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("'n'"));
  out = RunProgram(*typed, {I64({1}), I64({2})}, &ctx.kernels(), Options());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(BothVmsTest, DenseAndCompactExecutionGiveIdenticalBits) {
  Context ctx;
  BatchFunction peanuts =
      samples::DefinePeaNuts(ctx, {.dimension = 16, .max_depth = 5});
  std::vector<int64_t> seed, traj;
  for (int64_t i = 0; i < 200; ++i) {
    seed.push_back(i * 7919);
    traj.push_back(i % 4);
  }
  std::vector<double> x(seed.size() * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01 * static_cast<double>(i % 97) - 0.4;
  std::vector<Tensor> inputs = {*Tensor::FromVector(x, {16}),
                                *Tensor::FromVector(seed),
                                *Tensor::FromVector(traj)};
  CallOptions dense = Options(), compact = Options();
  dense.dense_fraction = dense.dense_fraction_heavy = 0.0;      // never compact
  compact.dense_fraction = compact.dense_fraction_heavy = 2.0;  // always compact
  dense.time_dense_or_compact = compact.time_dense_or_compact = false;
  Profile dense_profile, compact_profile;
  absl::StatusOr<Program> program = ctx.Program(peanuts);
  ASSERT_TRUE(program.ok());
  auto a = RunProgram(*program, inputs, &ctx.kernels(), dense, &dense_profile);
  auto b = RunProgram(*program, inputs, &ctx.kernels(), compact, &compact_profile);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(a->front() == b->front());
  // Both modes really ran.
  int64_t dense_runs = 0, compact_runs = 0;
  for (const auto& fn : dense_profile.blocks)
    for (const BlockCounters& c : fn) {
      dense_runs += c.dense;
      compact_runs += c.compact;
    }
  EXPECT_GT(dense_runs, 0);
  EXPECT_EQ(compact_runs, 0);
  dense_runs = compact_runs = 0;
  for (const auto& fn : compact_profile.blocks)
    for (const BlockCounters& c : fn) {
      dense_runs += c.dense;
      compact_runs += c.compact;
    }
  EXPECT_EQ(dense_runs, 0);
  EXPECT_GT(compact_runs, 0);
}

INSTANTIATE_TEST_SUITE_P(Vms, BothVmsTest,
                         ::testing::Values(Vm::kStack, Vm::kStackless),
                         [](const auto& info) {
                           return info.param == Vm::kStack ? "Stack" : "Stackless";
                         });

// TFP's README definition: fib(n) = 1 if n <= 2 else fib(n - 1) + fib(n - 2).
BatchFunction DefineTfpFibonacci(Context& ctx) {
  BatchFunction fib = ctx.Declare("fibonacci", {.param_names = {"n"}});
  ctx.Batch(fib)([fib](Builder& b, Value n) {
    Var ans = b.Local("ans");
    b.If(n <= 2).Then([&] { ans = 1; }).Else([&] {
      Value left = fib(n - 1);
      ans = left + fib(n - 2);
    });
    return ans;
  });
  return fib;
}

struct AnchorCounts {
  int64_t additions;
  int64_t base_cases;
};

AnchorCounts CountFib(Context& ctx, BatchFunction fib, Vm vm,
                      std::vector<int64_t> expected, bool order_blocks = true) {
  absl::StatusOr<Program> untyped = ctx.Program(fib);
  AB_CHECK(untyped.ok());
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> out;
  if (vm == Vm::kStack) {
    absl::StatusOr<Program> lowered = LowerProgram(
        *untyped, {Scalar(DType::kI64)}, {.order_blocks = order_blocks});
    AB_CHECK(lowered.ok());
    out = RunProgram(*lowered, {I64({6, 7, 8, 7})}, &ctx.kernels(),
                     {.vm = vm}, &profile);
  } else {
    out = RunProgram(*untyped, {I64({6, 7, 8, 7})}, &ctx.kernels(), {.vm = vm},
                     &profile);
  }
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) {
    EXPECT_EQ(out->front().ToVector<int64_t>(), expected);
  }
  return {profile.PrimitiveExecutions("add"),
          profile.PrimitiveExecutions("constant")};
}

// TFP's stack VM executes the addition 20 times and the base case 21 times
// in batch on [6, 7, 8, 7] (lanes separately: 51 and 55); its stackless VM
// 20 and 34. Ours must need no more.
TEST(AnchorTest, TfpReadmeFibonacci) {
  Context ctx;
  BatchFunction fib = DefineTfpFibonacci(ctx);
  AnchorCounts stack = CountFib(ctx, fib, Vm::kStack, {8, 13, 21, 13});
  EXPECT_LE(stack.additions, 20);
  EXPECT_LE(stack.base_cases, 21);
  AnchorCounts stackless = CountFib(ctx, fib, Vm::kStackless, {8, 13, 21, 13});
  EXPECT_LE(stackless.additions, 20);
  EXPECT_LE(stackless.base_cases, 34);
  RecordProperty("stack_additions", static_cast<int>(stack.additions));
  RecordProperty("stack_base_cases", static_cast<int>(stack.base_cases));
}

// With fib(0) = fib(1) = 1: TFP needs 33 additions and 34 base cases on the
// stack VM (33 and 55 stackless).
TEST(AnchorTest, SampleFibonacci) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  AnchorCounts stack = CountFib(ctx, fib, Vm::kStack, {13, 21, 34, 21});
  EXPECT_LE(stack.additions, 33);
  EXPECT_LE(stack.base_cases, 34);
  AnchorCounts stackless = CountFib(ctx, fib, Vm::kStackless, {13, 21, 34, 21});
  EXPECT_LE(stackless.additions, 33);
  EXPECT_LE(stackless.base_cases, 55);
}

// order_blocks never increases the stack VM's batched counts.
TEST(AnchorTest, BlockOrderingDoesNotIncreaseBatchedCounts) {
  for (bool tfp : {true, false}) {
    Context ctx;
    BatchFunction fib = tfp ? DefineTfpFibonacci(ctx) : samples::DefineFibonacci(ctx);
    std::vector<int64_t> expected =
        tfp ? std::vector<int64_t>{8, 13, 21, 13} : std::vector<int64_t>{13, 21, 34, 21};
    AnchorCounts ordered = CountFib(ctx, fib, Vm::kStack, expected, true);
    AnchorCounts unordered = CountFib(ctx, fib, Vm::kStack, expected, false);
    EXPECT_LE(ordered.additions, unordered.additions);
    EXPECT_LE(ordered.base_cases, unordered.base_cases);
  }
}

// The fibonacci sample untyped and lowered for i64 (aborts on error).
struct FibPrograms {
  Program untyped, lowered;
};
FibPrograms MakeFibPrograms(Context& ctx) {
  absl::StatusOr<Program> untyped = ctx.Program(samples::DefineFibonacci(ctx));
  AB_CHECK(untyped.ok());
  absl::StatusOr<Program> lowered = LowerProgram(*untyped, {Scalar(DType::kI64)});
  AB_CHECK(lowered.ok());
  return {*std::move(untyped), *std::move(lowered)};
}

TEST(StackVmTest, MostLanesPolicyGivesTheSameResults) {
  Context ctx;
  const FibPrograms fib = MakeFibPrograms(ctx);
  const Program* lowered = &fib.lowered;
  std::unique_ptr<Backend> backend = MakeBackend(BackendKind::kEigen);
  std::vector<int64_t> n = {0, 1, 5, 12, 3, 9, 9, 2};
  auto a = RunStackVm(*lowered, {I64(n)}, &ctx.kernels(), *backend,
                      {.block_policy = BlockPolicy::kLowestIndex});
  auto b = RunStackVm(*lowered, {I64(n)}, &ctx.kernels(), *backend,
                      {.block_policy = BlockPolicy::kMostLanes});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->front() == b->front());
  std::vector<int64_t> values = a->front().ToVector<int64_t>();
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(values[i], samples::FibonacciReference(n[i]));
  }
}

// Temporaries written only by fill_like / constant ops with one literal are
// filled once per run (vm/stack/storage.h, HoistConstants): fibonacci's compare and
// subtract constants cost no op executions, and the results do not change.
TEST(StackVmTest, ConstantTemporariesAreFilledOnce) {
  Context ctx;
  const FibPrograms fib = MakeFibPrograms(ctx);
  const Program* untyped = &fib.untyped;
  const Program* lowered = &fib.lowered;
  std::vector<int64_t> n = {0, 1, 5, 12, 3, 9, 9, 2};
  Profile stack, stackless;
  auto a = RunProgram(*lowered, {I64(n)}, &ctx.kernels(), {.vm = Vm::kStack}, &stack);
  auto b = RunProgram(*untyped, {I64(n)}, &ctx.kernels(), {.vm = Vm::kStackless}, &stackless);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->front() == b->front());
  EXPECT_EQ(stack.PrimitiveExecutions("fill_like"), 0);
  EXPECT_GT(stackless.PrimitiveExecutions("fill_like"), 0);
  EXPECT_GT(stack.PrimitiveExecutions("sub"), 0);

  // A fill whose literal is bad is not filled ahead: it fails only if it
  // runs. Here it sits in a block no lane reaches.
  Program p = *lowered;
  Function& f = p.module.functions[p.entry.value];
  const VarId junk = p.module.AddVariable(
      {"junk", p.entry, Scalar(DType::kI64), StorageClass::kTemporary});
  Literal bad = Literal::I64(1);
  bad.ints.push_back(2);  // two values: fill_like needs one scalar
  PrimOp fill{Primitive::kFillLike, {f.params[0]}, {junk}, {}, {}, {}};
  fill.attrs.literal = bad;
  f.blocks.push_back(Block{"unreachable", {fill}, Halt{}, SourceLoc{}});
  auto c = RunProgram(p, {I64(n)}, &ctx.kernels(), {.vm = Vm::kStack});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->front() == a->front());
}

TEST(StackVmTest, UnloweredProgramIsAClearError) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> compiled =
      CompileProgram(*ctx.Program(fib), {Scalar(DType::kI64)});
  ASSERT_TRUE(compiled.ok());
  std::unique_ptr<Backend> backend = MakeBackend(BackendKind::kEigen);
  auto out = RunStackVm(*compiled, {I64({1})}, nullptr, *backend, {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("lowered"));
}

// A program with a gradient stub runs on every executor, each pipeline
// differentiating it (f(a, b) = a * b * a, the gradient in b); one that
// skipped the differentiate pass is a clear error on both VMs, never a crash.
TEST(RunProgramTest, GradientStubIsDifferentiatedOrAClearErrorOnEveryExecutor) {
  const Program untyped = testing::MakeGradientStubProgram();
  const std::vector<Tensor> inputs = {*Tensor::FromVector(std::vector<double>{1, 2}),
                                      *Tensor::FromVector(std::vector<double>{3, 4})};
  const std::string stub_error =
      "function 'grad_f' is a gradient stub of 'f'; run the differentiate pass "
      "(CompileProgram/LowerProgram do)";
  for (CallOptions options : {CallOptions{.dry_run = true}, CallOptions{.vm = Vm::kStackless},
                              CallOptions{.vm = Vm::kStack}}) {
    auto out = RunProgram(untyped, inputs, nullptr, options);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{3, 16}));
    EXPECT_EQ((*out)[1].ToVector<double>(), (std::vector<double>{1, 4}));
  }
  std::unique_ptr<Backend> backend = MakeBackend(BackendKind::kEigen);
  // The VMs themselves check too: a typed program on the stackless VM...
  absl::StatusOr<Program> typed =
      InferTypes(untyped, {{Scalar(DType::kF64), Scalar(DType::kF64)}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  auto stackless = RunStacklessVm(*typed, inputs, nullptr, *backend, {});
  ASSERT_FALSE(stackless.ok());
  EXPECT_EQ(stackless.status().message(), stub_error);
  // ... and a lowered one holding a stub (which the verifier refuses) on the
  // stack VM.
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> lowered = LowerProgram(*ctx.Program(fib), {Scalar(DType::kI64)});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  Function stub;
  stub.name = "grad_fib";
  stub.gradient_of = GradientOf{lowered->entry, {0}};
  lowered->module.functions.push_back(stub);
  auto stack = RunStackVm(*lowered, {I64({1})}, nullptr, *backend, {});
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.status().message(),
            "function 'grad_fib' is a gradient stub of 'fibonacci'; run the differentiate pass "
            "(CompileProgram/LowerProgram do)");
}

TEST(RunProgramTest, UnknownBackendListsTheKnownOnes) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  auto out = RunProgram(*ctx.Program(fib), {I64({1})}, &ctx.kernels(),
                        {.backend = "cuda"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("eigen"));
}

}  // namespace
}  // namespace autobatch
