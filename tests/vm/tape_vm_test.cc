// Tapes on the executors (ir/ir.h, "Tapes"; vm/tapes.h): popping an empty
// tape, unbalanced activations and runaway tapes are clear errors on every
// executor; the batched tapes grow on demand and count their memory.
#include <string>
#include <vector>

#include "backends/backend.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/testing/tape_programs.h"
#include "passes/pipeline.h"
#include "vm/tapes.h"

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

struct Executor {
  std::string name;
  CallOptions options;
};

// The reference interpreter, the stackless VM and the stack VM with every
// block dense, compact and compact in tiles of one lane's worth.
std::vector<Executor> Executors() {
  return {{"reference", {.dry_run = true}},
          {"stackless", {.vm = Vm::kStackless}},
          {"stack/dense",
           {.vm = Vm::kStack, .dense_fraction = 0, .dense_fraction_heavy = 0,
            .time_dense_or_compact = false}},
          {"stack/compact",
           {.vm = Vm::kStack, .dense_fraction = 1, .dense_fraction_heavy = 1,
            .time_dense_or_compact = false}},
          {"stack/frames/compact",
           {.vm = Vm::kStack, .dense_fraction = 1, .dense_fraction_heavy = 1,
            .time_dense_or_compact = false, .tile_bytes = 1, .frame_stack_min_lane_bytes = 1}}};
}

absl::Status RunTape(const Program& program, const std::vector<double>& x,
                 const CallOptions& options) {
  KernelRegistry kernels;
  return RunProgram(program, {*Tensor::FromVector(x)}, &kernels, options).status();
}

TEST(TapeErrorsTest, PoppingAnEmptyTapeNamesTheTapeFunctionBlockAndLane) {
  const Program program = testing::TapePopEmptyProgram();
  for (const Executor& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    EXPECT_TRUE(RunTape(program, {1.0, 2.0, 3.0}, ex.options).ok());
    const absl::Status status = RunTape(program, {1.0, -1.0, 2.0}, ex.options);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr("tape 't'"), HasSubstr("function 'main', block ^"),
                      HasSubstr("lane 1"), HasSubstr("every pop needs a push before it")))
        << status;
  }
}

TEST(TapeErrorsTest, AnActivationEndingDeeperThanItBeganIsAnError) {
  const Program program = testing::TapeUnbalancedProgram();
  for (const Executor& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    EXPECT_TRUE(RunTape(program, {-1.0, 0.0}, ex.options).ok());
    const absl::Status status = RunTape(program, {-1.0, 2.0}, ex.options);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr("lane 1"), HasSubstr("1 value(s)"), HasSubstr("'leak"),
                      HasSubstr("every activation pops what it pushes before it ends")))
        << status;
  }
  // The error names the returning function, its block and the lane.
  EXPECT_THAT(RunTape(program, {-1.0, 2.0}, {.dry_run = true}).message(),
              HasSubstr("'leak' returns with 1 value(s) pushed on tape 't' of 'leak'"));
  EXPECT_THAT(std::string(RunTape(program, {-1.0, 2.0}, {.vm = Vm::kStackless}).message()),
              HasSubstr("'leak' returns (function 'leak', block ^4 (exit)) at lane 1 with 1 "
                        "value(s) it pushed on tape 't' and did not pop"));
  // The stack VM runs the lowered program, where leak is inlined into main
  // with its tape.
  for (const Executor& ex : Executors()) {
    if (ex.options.vm != Vm::kStack || ex.options.dry_run) continue;
    SCOPED_TRACE(ex.name);
    EXPECT_THAT(std::string(RunTape(program, {-1.0, 2.0}, ex.options).message()),
                HasSubstr("'main' returns (function 'main', block ^4 (leak.exit)) at lane 1 "
                          "with 1 value(s) it pushed on tape 'leak.t' and did not pop"));
  }
}

// rec pops, at the bottom of its recursion, the value its caller pushed,
// and pushes another: the counts balance, but an activation pops what it
// did not push. Every executor says so.
TEST(TapeErrorsTest, PoppingWhatACallerPushedIsAnError) {
  const Program program = *ParseProgram(R"(program stage=untyped entry=@rec

func @rec(%x: ?) -> (%y: ?) {
^0 entry:
  %zero: ? = fill_like %x {literal = f64 0}
  %deep: ? = gt %x, %zero
  branch %deep, ^1, ^2
^1 recurse:
  tape_push %t, %x
  %one: ? = fill_like %x {literal = f64 1}
  %x1: ? = sub %x, %one
  %r: ? = call @rec(%x1)
  %y: ? = tape_pop %t
  return
^2 bottom:
  %y: ? = tape_pop %t
  tape_push %t, %x
  return
}
)");
  for (const Executor& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    const absl::Status status = RunTape(program, {2.0, 3.0}, ex.options);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("no value that this activation of 'rec'"));
  }
}

TEST(TapeLimitsTest, ARunawayTapeStopsAtTheMemoryLimits) {
  const Program program = testing::TapeRunawayProgram();
  for (const Executor& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    CallOptions options = ex.options;
    options.max_stack_bytes = int64_t{1} << 20;
    absl::Status status = RunTape(program, {1.0, 2.0}, options);
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr("tape 't'"), HasSubstr("max_stack_bytes = 1048576"),
                      HasSubstr("loop that never ends")))
        << status;
    options = ex.options;
    options.max_value_bytes = int64_t{64} << 10;
    status = RunTape(program, {1.0, 2.0}, options);
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr("tape 't'"), HasSubstr("max_value_bytes = 65536")))
        << status;
  }
}

// --- LaneTapes ------------------------------------------------------------------

struct LaneTapesFixture {
  LaneTapesFixture() {
    program = *CompileProgram(testing::TapeRunawayProgram(), {Scalar(DType::kF64)});
    for (const Block& block : program.module.functions[0].blocks) {
      for (const Op& op : block.ops) {
        if (TapeOf(op)) tape = *TapeOf(op);
      }
    }
  }
  Program program;
  VarId tape;
  std::unique_ptr<Backend> backend = MakeBackend(BackendKind::kEigen);
};

TEST(LaneTapesTest, PushesAndPopsPerLaneInLastInFirstOutOrder) {
  LaneTapesFixture f;
  const CallOptions options;
  LaneTapes tapes;
  tapes.Reset(f.program.module, 4, *f.backend, options);
  ASSERT_EQ(tapes.TapesOf(FunctionId(0)).size(), 1u);
  const Function& fn = f.program.module.functions[0];
  const SourceLoc loc;
  const TapeSite site{fn, BlockId(0), loc};
  const std::vector<int64_t> lanes = {0, 2, 3}, other = {1, 2}, first_two = {0, 1};
  const std::vector<int64_t> all = {0, 1, 2, 3}, lane0 = {0}, lane2 = {2}, lane3 = {3};
  // Lanes 0, 2, 3 push 10, 12, 13; lanes 1, 2 push 21, 22; ten times each.
  for (int round = 0; round < 10; ++round) {
    const Tensor a = *Tensor::FromVector<double>({10.0 + round, 0, 12.0 + round, 13.0 + round});
    ASSERT_TRUE(tapes.Push(f.tape, a, lanes, lanes, site).ok());
    const Tensor b = *Tensor::FromVector<double>({21.0 + round, 22.0 + round});
    ASSERT_TRUE(tapes.Push(f.tape, b, first_two, other, site).ok());
  }
  EXPECT_EQ(tapes.depth(f.tape, 0), 10);
  EXPECT_EQ(tapes.depth(f.tape, 1), 10);
  EXPECT_EQ(tapes.depth(f.tape, 2), 20);
  Tensor out(Scalar(DType::kF64), 4);
  ASSERT_TRUE(tapes.Pop(f.tape, all, &out, all, site).ok());
  EXPECT_EQ(out.ToVector<double>(), (std::vector<double>{19, 30, 31, 22}));
  ASSERT_TRUE(tapes.Pop(f.tape, lane2, &out, lane0, site).ok());
  EXPECT_EQ(out.ToVector<double>()[0], 21);
  // Lane 0 enters an activation of main at depth 9: it may not pop the 9
  // values below, and returns only at depth 9 again.
  tapes.Enter(FunctionId(0), lane0);
  const absl::Status below = tapes.Pop(f.tape, lane0, &out, lane0, site);
  EXPECT_THAT(std::string(below.message()), HasSubstr("finds no value that this activation"));
  EXPECT_EQ(tapes.depth(f.tape, 0), 9);
  ASSERT_TRUE(tapes.Push(f.tape, out, lane0, lane0, site).ok());
  EXPECT_THAT(std::string(tapes.Leave(FunctionId(0), lane0, site).message()),
              HasSubstr("at lane 0 with 1 value(s) it pushed on tape 't' and did not pop"));
  ASSERT_TRUE(tapes.Pop(f.tape, lane0, &out, lane0, site).ok());
  ASSERT_TRUE(tapes.Leave(FunctionId(0), lane0, site).ok());
  // Back in the outer activation (no Enter began it): its floor is 0.
  ASSERT_TRUE(tapes.Pop(f.tape, lane0, &out, lane0, site).ok());
  EXPECT_EQ(tapes.depth(f.tape, 0), 8);
  EXPECT_THAT(std::string(tapes.CheckEmpty(lane3, "at the end").message()),
              HasSubstr("lane 3 ends (at the end) with 9 value(s) on tape 't' of function "
                        "'main'"));
}

}  // namespace
}  // namespace autobatch
