// RunProgram's sharded calls (CallOptions::shards): same bits as one call,
// summed profiles, errors that name the shard, and what is refused.
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/testing/call_trees.h"
#include "passes/pipeline.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/peanuts/peanuts.h"
#include "tests/frontend/peanuts_inputs.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

std::vector<int64_t> FibInputs(int64_t batch) {
  std::vector<int64_t> n;
  for (int64_t i = 0; i < batch; ++i) n.push_back((i * 7919) % 13);
  return n;
}

struct Fib {
  Context ctx;
  BatchFunction fn = samples::DefineFibonacci(ctx);
  Program lowered = *LowerProgram(*ctx.Program(fn), {Scalar(DType::kI64)});
};

// A maximum stack depth below 1 (no room even for the entry's frame) is
// the caller's mistake, refused by every executor; it used to trip an
// internal check in the backend's Push.
TEST(RunOptionsTest, MaxStackDepthBelowOneIsInvalidArgument) {
  Fib fib;
  std::vector<Tensor> in = {*Tensor::FromVector(FibInputs(7))};
  for (int64_t depth : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    for (CallOptions options : {CallOptions{.vm = Vm::kStack}, CallOptions{.vm = Vm::kStackless},
                                CallOptions{.backend = "threaded:2"},
                                CallOptions{.dry_run = true}}) {
      options.max_stack_depth = depth;
      absl::StatusOr<std::vector<Tensor>> out = fib.fn.Run(in, options);
      ASSERT_FALSE(out.ok()) << depth;
      EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(out.status().message(), HasSubstr("max_stack_depth is"));
    }
  }
}

// A recursion deeper than memory allows, with max_stack_depth raised past
// it, stops with an error when a stack would pass max_value_bytes, instead
// of growing the stacks until an allocation fails (an abort).
// fib(1'000'000) on the stack VM with max_stack_depth out of the way: a
// recursion that only the memory limits given can stop.
absl::Status RunawayFibRecursion(int64_t max_value_bytes, int64_t max_stack_bytes) {
  Fib fib;
  std::vector<Tensor> in = {*Tensor::FromVector(std::vector<int64_t>{1'000'000, 3})};
  return RunProgram(fib.lowered, in, &fib.ctx.kernels(),
                    {.vm = Vm::kStack,
                     .max_stack_depth = 1'000'000'000,
                     .max_steps = 20'000'000,
                     .max_value_bytes = max_value_bytes,
                     .max_stack_bytes = max_stack_bytes})
      .status();
}

TEST(RunOptionsTest, RecursionDeeperThanMemoryAllowsIsAnError) {
  const absl::Status out = RunawayFibRecursion(/*max_value_bytes=*/int64_t{1} << 20,
                                               /*max_stack_bytes=*/CallOptions{}.max_stack_bytes);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.message(), HasSubstr("stack overflow"));
  EXPECT_THAT(out.message(), HasSubstr("reach max_value_bytes = 1048576"));
}

// Each stack within max_value_bytes, but all of them together past
// max_stack_bytes: fib's lowered program keeps two i64 values and the
// program counter on stacks, 20 bytes a lane and frame.
TEST(RunOptionsTest, StacksTogetherAreBoundedByMaxStackBytes) {
  const absl::Status out = RunawayFibRecursion(/*max_value_bytes=*/int64_t{1} << 30,
                                               /*max_stack_bytes=*/int64_t{1} << 20);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.message(), HasSubstr("stack overflow"));
  EXPECT_THAT(out.message(), HasSubstr("reach max_stack_bytes = 1048576"));
  // Shallow recursions are not affected.
  Fib fib;
  std::vector<Tensor> small = {*Tensor::FromVector(std::vector<int64_t>{10, 3})};
  absl::StatusOr<std::vector<Tensor>> ok =
      RunProgram(fib.lowered, small, &fib.ctx.kernels(),
                 {.vm = Vm::kStack, .max_stack_bytes = int64_t{1} << 20});
  ASSERT_TRUE(ok.ok()) << ok.status();
  absl::StatusOr<std::vector<Tensor>> zero =
      RunProgram(fib.lowered, small, &fib.ctx.kernels(), {.vm = Vm::kStack, .max_stack_bytes = 0});
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  // Not even the stacks' first frames fit: refused before anything runs.
  absl::StatusOr<std::vector<Tensor>> tiny =
      RunProgram(fib.lowered, small, &fib.ctx.kernels(),
                 {.vm = Vm::kStack, .max_stack_bytes = 100});
  EXPECT_EQ(tiny.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(tiny.status().message()),
              HasSubstr("the stack VM's stacks start with 5 frames of 2 lanes x 20 bytes"));
}

// Every executor: the reference interpreter, the stackless VM and the
// stack VM.
std::vector<CallOptions> EveryExecutor() {
  return {CallOptions{.vm = Vm::kStack}, CallOptions{.vm = Vm::kStackless},
          CallOptions{.dry_run = true}};
}

// A program that may read a variable before assigning it is refused by
// every executor. The stackless VM used to run this one (allocated, as
// `autobatch ir --stage typed` writes it, with the else branch's
// assignment deleted) and return values for lanes that read `ans`
// unassigned, while the reference interpreter failed on those lanes and
// the stack VM refused it (issue 28, item 7).
TEST(ExecutorsAgreeTest, ReadBeforeAssignmentIsRefusedByEveryExecutor) {
  absl::StatusOr<Program> program = ParseProgram(R"(
program stage=allocated entry=@fibonacci

func @fibonacci(%n: i64 full) -> (%r0: i64 register) {
^0 entry:
  %t0: i64 temp = fill_like %n {literal = i64 1}
  %t1: bool temp = gt %n, %t0
  branch %t1, ^1, ^2
^1 then0:
  %t2: i64 temp = fill_like %n {literal = i64 1}
  %t3: i64 temp = sub %n, %t2
  %t4: i64 full = call @fibonacci(%t3)
  %t5: i64 temp = fill_like %n {literal = i64 2}
  %t6: i64 temp = sub %n, %t5
  %t7: i64 temp = call @fibonacci(%t6)
  %ans: i64 register = add %t4, %t7
  goto ^3
^2 else0:
  goto ^3
^3 join1:
  %r0: i64 register = copy %ans
  return
}
)");
  ASSERT_TRUE(program.ok()) << program.status();
  for (const CallOptions& options : EveryExecutor()) {
    absl::StatusOr<std::vector<Tensor>> out =
        RunProgram(*program, {*Tensor::FromVector(std::vector<int64_t>{0, 1, 2, 5})}, nullptr,
                   options);
    ASSERT_FALSE(out.ok()) << "vm " << static_cast<int>(options.vm) << " dry_run "
                           << options.dry_run;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(),
                HasSubstr("variable 'ans' may be read before it is assigned"));
  }
}

// A declared type that the value assigned does not have is refused by every
// executor, also where the compiler's tidying before typing would have
// renamed the variable away (fold_copies: `r = copy c` became `r =
// constant`), which the stack and stackless VMs used to run while the
// reference interpreter, running the program as written, refused it.
TEST(ExecutorsAgreeTest, DeclaredTypeMismatchIsRefusedByEveryExecutor) {
  absl::StatusOr<Program> program = ParseProgram(R"(
program stage=untyped entry=@f

func @f(%n: ? full) -> (%r: ? full) {
  signature (i64) -> (i64)
^0 entry:
  %c: i32 full = constant {literal = i64 1}
  %r: ? full = copy %c
  return
}
)");
  ASSERT_TRUE(program.ok()) << program.status();
  for (const CallOptions& options : EveryExecutor()) {
    absl::StatusOr<std::vector<Tensor>> out = RunProgram(
        *program, {*Tensor::FromVector(std::vector<int64_t>{1, 2})}, nullptr, options);
    ASSERT_FALSE(out.ok()) << "vm " << static_cast<int>(options.vm) << " dry_run "
                           << options.dry_run;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(), HasSubstr("'c'"));
  }
}

TEST(ShardsTest, ShardedRunsGiveTheBitsOfOneCall) {
  Fib fib;
  for (Vm vm : {Vm::kStack, Vm::kStackless}) {
    for (int64_t batch : {1, 7, 64, 1000}) {
      std::vector<Tensor> in = {*Tensor::FromVector(FibInputs(batch))};
      absl::StatusOr<std::vector<Tensor>> one = fib.fn.Run(in, {.vm = vm});
      ASSERT_TRUE(one.ok()) << one.status();
      for (int shards : {2, 3, 8}) {
        for (std::string backend : {"eigen", "threaded:2"}) {
          absl::StatusOr<std::vector<Tensor>> sharded =
              fib.fn.Run(in, {.vm = vm, .backend = backend, .shards = shards});
          ASSERT_TRUE(sharded.ok()) << sharded.status();
          EXPECT_EQ(*sharded, *one) << "batch " << batch << ", " << shards << " shards, "
                                    << backend;
        }
      }
    }
  }
}

TEST(ShardsTest, FloatingPointLanesKeepTheirBits) {
  Context ctx;
  BatchFunction peanuts = samples::DefinePeaNuts(ctx, {.dimension = 8, .max_depth = 4});
  const std::vector<Tensor> in = PeaNutsInputs(37);
  absl::StatusOr<std::vector<Tensor>> one = peanuts.Run(in, {});
  ASSERT_TRUE(one.ok()) << one.status();
  absl::StatusOr<std::vector<Tensor>> sharded = peanuts.Run(in, {.shards = 4});
  ASSERT_TRUE(sharded.ok()) << sharded.status();
  EXPECT_EQ(*sharded, *one);
}

// The summed profile is the sum of the shards' own runs: per-lane trip
// counts equal the unsharded ones, lane slots count each shard's size.
TEST(ShardsTest, ProfileSumsTheShards) {
  Fib fib;
  const std::vector<int64_t> n = FibInputs(10);
  Profile sharded;
  ASSERT_TRUE(RunProgram(fib.lowered, {*Tensor::FromVector(n)}, &fib.ctx.kernels(),
                         {.shards = 3}, &sharded)
                  .ok());
  Profile whole;
  ASSERT_TRUE(
      RunProgram(fib.lowered, {*Tensor::FromVector(n)}, &fib.ctx.kernels(), {}, &whole).ok());
  EXPECT_EQ(sharded.batch, 10);
  EXPECT_EQ(sharded.lane_blocks, whole.lane_blocks);

  // Shards of 10 lanes in 3: lanes [0, 3), [3, 6), [6, 10).
  Profile expected;
  const int64_t bounds[] = {0, 3, 6, 10};
  for (int s = 0; s < 3; ++s) {
    std::vector<int64_t> part(n.begin() + bounds[s], n.begin() + bounds[s + 1]);
    Profile p;
    ASSERT_TRUE(
        RunProgram(fib.lowered, {*Tensor::FromVector(part)}, &fib.ctx.kernels(), {}, &p).ok());
    if (s == 0) {
      expected = p;
    } else {
      expected.Add(p);
    }
  }
  EXPECT_EQ(sharded.steps, expected.steps);
  int64_t slots = 0, active = 0;
  for (size_t f = 0; f < sharded.blocks.size(); ++f) {
    for (size_t b = 0; b < sharded.blocks[f].size(); ++b) {
      const BlockCounters& got = sharded.blocks[f][b];
      const BlockCounters& want = expected.blocks[f][b];
      EXPECT_EQ(got.executions, want.executions);
      EXPECT_EQ(got.active_lanes, want.active_lanes);
      EXPECT_EQ(got.lane_slots, want.lane_slots);
      EXPECT_EQ(got.active_lanes, whole.blocks[f][b].active_lanes);
      slots += got.lane_slots;
      active += got.active_lanes;
    }
  }
  EXPECT_GT(slots, 0);
  EXPECT_DOUBLE_EQ(sharded.Utilization(),
                   static_cast<double>(active) / static_cast<double>(slots));
  EXPECT_EQ(sharded.PrimitiveExecutions("add"), expected.PrimitiveExecutions("add"));
}

TEST(ShardsTest, MoreShardsThanLanesAndEmptyBatchesRun) {
  Fib fib;
  for (int64_t batch : {0, 1, 3}) {
    std::vector<Tensor> in = {*Tensor::FromVector(FibInputs(batch))};
    absl::StatusOr<std::vector<Tensor>> one = fib.fn.Run(in, {});
    absl::StatusOr<std::vector<Tensor>> sharded = fib.fn.Run(in, {.shards = 8});
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_TRUE(sharded.ok()) << sharded.status();
    EXPECT_EQ(*sharded, *one);
  }
}

// The wall-clock budget bounds the whole call, not each shard: shards queued
// behind others get only what is left of it.
TEST(ShardsTest, TimeoutBoundsTheWholeCall) {
  Fib fib;  // fibonacci(60) makes about 3e12 calls: it runs until stopped
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Tensor>> out =
      fib.fn.Run({*Tensor::FromVector<int64_t>({60, 60, 60, 60, 60, 60, 60, 60})},
               {.shards = 8, .max_steps = 0, .timeout_seconds = 0.25});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  // 8 shards each given 0.25 s would take at least 1 s on 2 threads; the
  // call's own budget ends it near 0.25 s.
  EXPECT_LT(seconds, 0.6) << out.status();
}

// The budget covers the compile too (frontend/run.h): a big program whose
// compile takes much longer than its budget (a chain of 3,000 calls: over
// 0.1 s; docs/BENCHMARKS.md, "Compile time against program size") is
// stopped while compiling, on every executor, with the error of a run over
// its time budget. Given the time, the same call runs.
TEST(TimeBudgetTest, CoversTheCompile) {
  for (CallOptions options : {CallOptions{.vm = Vm::kStack}, CallOptions{.vm = Vm::kStackless},
                              CallOptions{.dry_run = true}}) {
    options.timeout_seconds = 1e-3;
    absl::StatusOr<std::vector<Tensor>> out =
        RunProgram(testing::CallChain(3000), {*Tensor::FromVector<int64_t>({1, 2})}, nullptr,
                   options);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
    EXPECT_THAT(std::string(out.status().message()),
                ::testing::StartsWith("time budget exhausted while compiling: the compile was "
                                      "stopped by the time budget (0.001 s) "));
    options.timeout_seconds = 1e6;
    out = RunProgram(testing::CallChain(200), {*Tensor::FromVector<int64_t>({1, 2})}, nullptr,
                     options);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{200, 400}));
  }
}

// The same through a Context (BatchFunction::Run compiles and caches): a
// compile stopped by the budget caches nothing, and a later call given the
// time compiles and runs (on the stack VM, whose program is inlined: the
// stackless VM runs 3,000 nested calls slowly).
TEST(TimeBudgetTest, CoversTheCompileOfABatchFunction) {
  constexpr int kLength = 3000;
  Context ctx;
  std::vector<BatchFunction> chain(kLength);
  chain[kLength - 1] = ctx.Batch(absl::StrCat("f", kLength - 1))([](Value x) { return x; });
  for (int k = kLength - 2; k >= 0; --k) {
    chain[k] = ctx.Batch(absl::StrCat("f", k))(
        [&chain, k](Value x) -> Value { return chain[k + 1](x) + x; });
  }
  const Tensor input = *Tensor::FromVector<int64_t>({1, 2});
  for (CallOptions options : {CallOptions{.vm = Vm::kStack}, CallOptions{.vm = Vm::kStackless},
                              CallOptions{.dry_run = true}}) {
    options.timeout_seconds = 1e-3;
    absl::StatusOr<std::vector<Tensor>> out = chain[0].Run({input}, options);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded) << out.status();
    EXPECT_THAT(std::string(out.status().message()),
                ::testing::StartsWith("time budget exhausted while compiling: "));
  }
  absl::StatusOr<std::vector<Tensor>> out = chain[0].Run({input}, {.timeout_seconds = 1e6});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{kLength, 2 * kLength}));
}

TEST(ShardsTest, ShardCountBelowOneIsInvalid) {
  Fib fib;
  absl::StatusOr<std::vector<Tensor>> out =
      fib.fn.Run({*Tensor::FromVector(FibInputs(4))}, {.shards = 0});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("shards is 0"));
}

TEST(ShardsTest, ShardThreadsBelowZeroIsInvalid) {
  Fib fib;
  absl::StatusOr<std::vector<Tensor>> out =
      fib.fn.Run({*Tensor::FromVector(FibInputs(4))}, {.shards = 2, .shard_threads = -1});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("shard_threads is -1"));
}

// Shards on one thread, or on more threads than shards, give the one-batch
// results.
TEST(ShardsTest, AnyShardThreadCountGivesTheSameResults) {
  Fib fib;
  std::vector<Tensor> in = {*Tensor::FromVector(FibInputs(37))};
  absl::StatusOr<std::vector<Tensor>> one = fib.fn.Run(in, {});
  ASSERT_TRUE(one.ok()) << one.status();
  for (int threads : {1, 2, 8}) {
    absl::StatusOr<std::vector<Tensor>> sharded =
        fib.fn.Run(in, {.shards = 4, .shard_threads = threads});
    ASSERT_TRUE(sharded.ok()) << sharded.status();
    EXPECT_EQ(*sharded, *one) << threads << " threads";
  }
}

// A lane error names the shard and where its lanes start.
TEST(ShardsTest, ErrorsNameTheShardAndItsLanes) {
  Fib fib;
  absl::StatusOr<std::vector<Tensor>> out =
      fib.fn.Run({*Tensor::FromVector<int64_t>({1, 2, 1, 40})},
                 {.shards = 2, .max_stack_depth = 8});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("shard 2 of 2 (lanes 2 to 3; a lane number below counts from 2): "
                        "stack overflow in function 'fibonacci'"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("stack overflow at lane 1"));
}

TEST(ShardsTest, BadBackendAndMismatchedInputsAreReportedOnce) {
  Context ctx;
  BatchFunction add = ctx.Batch("add")([](Value a, Value b) { return a + b; });
  absl::StatusOr<std::vector<Tensor>> out =
      add.Run({*Tensor::FromVector<int64_t>({1, 2}), *Tensor::FromVector<int64_t>({1, 2})},
              {.backend = "gpu", .shards = 2});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("gpu"));
  EXPECT_THAT(std::string(out.status().message()), ::testing::Not(HasSubstr("shard")));

  out = add.Run({*Tensor::FromVector<int64_t>({1, 2, 3}), *Tensor::FromVector<int64_t>({1, 2})},
                {.shards = 2});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

// A kernel that is not bit_stable has not promised to be callable from two
// threads at once: sharding it is refused, naming the kernel.
TEST(ShardsTest, KernelsThatAreNotBitStableAreNotSharded) {
  Context ctx;
  Kernel twice = ctx.RegisterKernel(
      "twice", KernelSignature{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, false},
      [](const KernelCall& call) -> absl::Status {
        const double* x = reinterpret_cast<const double*>(call.inputs[0].data);
        double* out = reinterpret_cast<double*>(call.outputs[0].data);
        for (int64_t l = 0; l < call.num_lanes; ++l) out[l] = 2 * x[l];
        return absl::OkStatus();
      });
  BatchFunction f = ctx.Batch("f")([&](Value x) { return twice(x); });
  std::vector<Tensor> in = {*Tensor::FromVector<double>({1, 2, 3})};
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, {.shards = 2});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("'twice' is not"));
  out = f.Run(in, {.shards = 1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->front().ToVector<double>(), (std::vector<double>{2, 4, 6}));
}

TEST(TilesTest, TileBytesBelowZeroIsInvalid) {
  Fib fib;
  absl::StatusOr<std::vector<Tensor>> out =
      fib.fn.Run({*Tensor::FromVector(FibInputs(4))}, {.tile_bytes = -1});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("tile_bytes is -1"));
}

TEST(FrameStacksTest, AMinimumBelowOneByteIsInvalid) {
  Fib fib;
  absl::StatusOr<std::vector<Tensor>> out =
      fib.fn.Run({*Tensor::FromVector(FibInputs(4))}, {.frame_stack_min_lane_bytes = 0});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("frame_stack_min_lane_bytes is 0"));
}

// A tile as large as int64 allows, on a backend with threads (the tile is
// per thread): one tile, no overflow.
TEST(TilesTest, HugeTilesRunWhole) {
  Fib fib;
  std::vector<Tensor> in = {*Tensor::FromVector(FibInputs(100))};
  absl::StatusOr<std::vector<Tensor>> expected = fib.fn.Run(in, {.tile_bytes = 0});
  ASSERT_TRUE(expected.ok()) << expected.status();
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> got = RunProgram(
      fib.lowered, in, &fib.ctx.kernels(),
      {.backend = "threaded:3", .tile_bytes = std::numeric_limits<int64_t>::max()}, &profile);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, *expected);
  for (const std::vector<BlockCounters>& fn : profile.blocks) {
    for (const BlockCounters& c : fn) EXPECT_EQ(c.tiles, 0);
  }
}

// A block whose values over the batch exceed dense_max_bytes takes the
// heavy blocks' dense/compact threshold: here compact (threshold 1) where
// the others' (0) would run every block dense. The results do not change.
TEST(TilesTest, WideBlocksTakeTheHeavyThreshold) {
  Fib fib;
  std::vector<Tensor> in = {*Tensor::FromVector(FibInputs(100))};
  auto compact_runs = [&](int64_t dense_max_bytes, std::vector<Tensor>* out) {
    Profile profile;
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(fib.lowered, in, &fib.ctx.kernels(),
                   {.dense_fraction = 0.0,
                    .dense_fraction_heavy = 1.0,
                    .dense_max_bytes = dense_max_bytes,
                    .time_dense_or_compact = false},
                   &profile);
    EXPECT_TRUE(got.ok()) << got.status();
    if (got.ok()) *out = *got;
    int64_t compact = 0;
    for (const std::vector<BlockCounters>& fn : profile.blocks) {
      for (const BlockCounters& c : fn) compact += c.compact;
    }
    return compact;
  };
  std::vector<Tensor> narrow, wide;
  EXPECT_EQ(compact_runs(/*dense_max_bytes=*/0, &narrow), 0);
  EXPECT_GT(compact_runs(/*dense_max_bytes=*/1, &wide), 0);
  EXPECT_EQ(compact_runs(/*dense_max_bytes=*/int64_t{1} << 40, &narrow), 0);
  EXPECT_EQ(wide, narrow);
}

// Pea-nuts inputs: a batch of 8-d states with 1 to 3 trajectories.
std::vector<Tensor> VaryingPeaNutsInputs(int64_t batch) {
  std::vector<double> x;
  std::vector<int64_t> seed, traj;
  for (int64_t l = 0; l < batch; ++l) {
    for (int i = 0; i < 8; ++i) x.push_back(0.01 * static_cast<double>(l) - 0.3 * i);
    seed.push_back(l * 31 + 5);
    traj.push_back(1 + l % 3);
  }
  return {*Tensor::FromVector(x, {8}), *Tensor::FromVector(seed), *Tensor::FromVector(traj)};
}

// Compact blocks run in tiles give every lane the bits of the untiled run,
// and the profile counts the same executions, lanes and slots: tiles only add
// lanes to an execution.
TEST(TilesTest, TiledRunsGiveTheBitsAndCountsOfAnUntiledRun) {
  Context ctx;
  BatchFunction peanuts = samples::DefinePeaNuts(ctx, {.dimension = 8, .max_depth = 4});
  const Program program = *ctx.Program(peanuts);
  const std::vector<Tensor> in = VaryingPeaNutsInputs(300);
  const CallOptions untiled{
      .dense_fraction = 1.0, .dense_fraction_heavy = 1.0, .time_dense_or_compact = false};
  Profile whole;
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(program, in, &ctx.kernels(), untiled, &whole);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int64_t tile_bytes : {1, 1000, 1 << 20}) {
    SCOPED_TRACE(tile_bytes);
    CallOptions tiled = untiled;
    tiled.tile_bytes = tile_bytes;
    Profile profile;
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(program, in, &ctx.kernels(), tiled, &profile);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *expected);
    EXPECT_EQ(profile.steps, whole.steps);
    int64_t tiles = 0;
    for (size_t f = 0; f < profile.blocks.size(); ++f) {
      for (size_t b = 0; b < profile.blocks[f].size(); ++b) {
        const BlockCounters& c = profile.blocks[f][b];
        const BlockCounters& w = whole.blocks[f][b];
        EXPECT_EQ(c.executions, w.executions);
        EXPECT_EQ(c.active_lanes, w.active_lanes);
        EXPECT_EQ(w.tiles, 0);
        tiles += c.tiles;
      }
    }
    // 300 lanes and 8-d states: tiles of 8 lanes (the fewest) and of about
    // 38 lanes split every compact execution of many lanes; 1 MiB holds them
    // all in one tile.
    if (tile_bytes < (1 << 20)) {
      EXPECT_GT(tiles, 0);
    } else {
      EXPECT_EQ(tiles, 0);
    }
    for (size_t i = 0; i < profile.builtins.size(); ++i) {
      EXPECT_EQ(profile.builtins[i].executions, whole.builtins[i].executions) << i;
      EXPECT_EQ(profile.builtins[i].active_lanes, whole.builtins[i].active_lanes) << i;
      EXPECT_EQ(profile.builtins[i].lane_slots, whole.builtins[i].lane_slots) << i;
    }
  }
}

// Runs pea-nuts with the batched matrix product (an op whose lanes depend
// on the batch) on `batch` lanes with `options`, then calls
// visit(where, counters, runs_the_product) for every block of the program.
template <typename Visit>
void ForEachBlockOfBatchedPeaNuts(int64_t batch, const CallOptions& options, Visit visit) {
  Context ctx;
  BatchFunction peanuts = samples::DefinePeaNuts(
      ctx, {.dimension = 8, .max_depth = 4, .batched_product = true});
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> got =
      RunProgram(*ctx.Program(peanuts), VaryingPeaNutsInputs(batch), &ctx.kernels(), options,
                 &profile);
  ASSERT_TRUE(got.ok()) << got.status();
  const Program lowered = *LowerProgram(*ctx.Program(peanuts), {Vector(DType::kF64, 8),
                                                               Scalar(DType::kI64),
                                                               Scalar(DType::kI64)});
  for (size_t f = 0; f < lowered.module.functions.size(); ++f) {
    const Function& fn = lowered.module.functions[f];
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      bool product = false;
      for (const Op& op : fn.blocks[b].ops) {
        const auto* prim = std::get_if<PrimOp>(&op);
        product = product || (prim != nullptr && prim->prim == Primitive::kMatVecBatched);
      }
      visit(absl::StrCat(fn.name, " block ", b), profile.blocks[f][b], product);
    }
  }
}

// A block with an op whose lanes depend on the batch (here the batched
// matrix product) runs whole; the blocks around it are still tiled.
TEST(TilesTest, BlocksWithABatchDependentOpAreNotTiled) {
  int64_t product_blocks = 0, tiled_blocks = 0;
  ForEachBlockOfBatchedPeaNuts(
      300,
      {.dense_fraction = 1.0,
       .dense_fraction_heavy = 1.0,
       .time_dense_or_compact = false,
       .tile_bytes = 1},
      [&](const std::string& where, const BlockCounters& c, bool product) {
        if (product) {
          ++product_blocks;
          EXPECT_GT(c.compact, 0) << where;
          EXPECT_EQ(c.tiles, 0) << where;
        } else if (c.tiles > 0) {
          ++tiled_blocks;
        }
      });
  EXPECT_EQ(product_blocks, 1);
  EXPECT_GT(tiled_blocks, 0);
}

// The timed dense/compact choice (CallOptions::time_dense_or_compact) leaves
// a block with an op whose lanes depend on the batch to the fixed rule:
// dense and compact hand that op different batches, so a choice by the clock
// would give different bits from one run to the next. Here the fixed rule
// says dense everywhere (fractions 0); the timed choice, which tries compact
// first, runs the other blocks compact at times.
TEST(TimedModeTest, BlocksWithABatchDependentOpKeepTheFixedMode) {
  int64_t product_executions = 0, timed_compact = 0;
  ForEachBlockOfBatchedPeaNuts(
      64,
      {.dense_fraction = 0.0,
       .dense_fraction_heavy = 0.0,
       .dense_max_bytes = 0,
       .time_dense_or_compact = true},
      [&](const std::string& where, const BlockCounters& c, bool product) {
        if (product) {
          product_executions += c.executions;
          EXPECT_EQ(c.compact, 0) << where;
        } else {
          timed_compact += c.compact;
        }
      });
  EXPECT_GT(product_executions, 1);
  EXPECT_GT(timed_compact, 0);
}

}  // namespace
}  // namespace autobatch
