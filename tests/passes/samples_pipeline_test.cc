// Every sample program through the whole pipeline (passes/pipeline.h).
//
// Each compiles, keeps the storage facts the lowering relies on, runs
// correctly on the test stack machine, and its lowered JSON loads back
// identically.
#include <cstdint>

#include <gtest/gtest.h>

#include "frontend/context.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "passes/fuse_pop_push.h"
#include "passes/pipeline.h"
#include "samples/collatz/collatz.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/mutual_recursion/even_odd.h"
#include "tests/passes/machine.h"

namespace autobatch {
namespace {

const TensorType kI64 = Scalar(DType::kI64);

struct Compiled {
  Program allocated;
  Program lowered;
  Program lowered_unordered;  // without order_blocks
};

Compiled CompileAll(const Program& untyped) {
  Compiled out;
  absl::StatusOr<Program> allocated = CompileProgram(untyped, {kI64});
  EXPECT_TRUE(allocated.ok()) << allocated.status();
  absl::StatusOr<Program> lowered = LowerProgram(untyped, {kI64});
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  PipelineOptions no_order;
  no_order.order_blocks = false;
  absl::StatusOr<Program> unordered = LowerProgram(untyped, {kI64}, no_order);
  EXPECT_TRUE(unordered.ok()) << unordered.status();
  if (allocated.ok()) out.allocated = *allocated;
  if (lowered.ok()) out.lowered = *lowered;
  if (unordered.ok()) out.lowered_unordered = *unordered;
  return out;
}

void ExpectJsonRoundTrip(const Program& p) {
  const std::string json = DumpProgramJson(p);
  absl::StatusOr<Program> loaded = LoadProgramJson(json);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, p);
  EXPECT_EQ(DumpProgramJson(*loaded), json);
}

// Runs the lowered program on the test stack machine for every input and
// compares with `expected`; also checks order_blocks never costs steps.
template <typename Reference>
void ExpectRuns(const Compiled& c, const std::vector<int64_t>& inputs, Reference expected) {
  std::vector<testing::Values> lanes;
  for (int64_t n : inputs) lanes.push_back({static_cast<double>(n)});
  testing::StackRun ordered, unordered;
  ASSERT_TRUE(testing::AgreesWithReference(c.allocated, c.lowered, lanes, &ordered))
      << PrintProgram(c.lowered);
  ASSERT_TRUE(testing::AgreesWithReference(c.allocated, c.lowered_unordered, lanes, &unordered));
  for (size_t l = 0; l < inputs.size(); ++l) {
    EXPECT_EQ(ordered.outputs[l].at(0), static_cast<double>(expected(inputs[l])))
        << "input " << inputs[l];
  }
  EXPECT_LE(ordered.block_executions, unordered.block_executions);
  ::testing::Test::RecordProperty("steps_unordered", static_cast<int>(unordered.block_executions));
  ::testing::Test::RecordProperty("steps_ordered", static_cast<int>(ordered.block_executions));
  ::testing::Test::RecordProperty("steps_busiest_lane",
                                  static_cast<int>(ordered.max_lane_block_executions));
}

// The CallOps of function `name` in the allocated program, in block order.
std::vector<CallOp> Calls(const Program& p, const std::string& name) {
  std::vector<CallOp> out;
  const Function& f = p.module.function(*p.module.FindFunction(name));
  for (const Block& b : f.blocks) {
    for (const Op& op : b.ops) {
      if (const auto* call = std::get_if<CallOp>(&op)) out.push_back(*call);
    }
  }
  return out;
}

std::vector<std::string> FullVariables(const Program& p) {
  std::vector<std::string> out;
  for (const Variable& v : p.module.variables) {
    if (v.storage == StorageClass::kFull) {
      out.push_back(p.module.function(v.function).name + "." + v.name);
    }
  }
  return out;
}

TEST(SamplesPipelineTest, Fibonacci) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> untyped = ctx.Program(fib);
  ASSERT_TRUE(untyped.ok()) << untyped.status();
  Compiled c = CompileAll(*untyped);
  const Module& m = c.allocated.module;
  const Function& f = m.function(*m.FindFunction("fibonacci"));
  // n and the first call's result are live across a recursive call: Full.
  // The branch condition and the arguments n - 1, n - 2 are not.
  EXPECT_EQ(m.var(f.params[0]).storage, StorageClass::kFull);
  std::vector<CallOp> calls = Calls(c.allocated, "fibonacci");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(m.var(calls[0].results[0]).storage, StorageClass::kFull);
  EXPECT_NE(m.var(calls[1].results[0]).storage, StorageClass::kFull);
  for (const CallOp& call : calls) {
    EXPECT_NE(m.var(call.args[0]).storage, StorageClass::kFull);
  }
  for (const Block& b : f.blocks) {
    if (const auto* branch = std::get_if<Branch>(&b.terminator)) {
      EXPECT_NE(m.var(branch->cond).storage, StorageClass::kFull);
    }
  }
  EXPECT_EQ(FullVariables(c.allocated).size(), 2u);
  ExpectJsonRoundTrip(c.lowered);
  ExpectJsonRoundTrip(c.allocated);
  ExpectRuns(c, {0, 1, 2, 3, 5, 8, 10, 12, 7, 7, 4}, samples::FibonacciReference);
}

TEST(SamplesPipelineTest, EvenOdd) {
  Context ctx;
  samples::EvenOdd fns = samples::DefineEvenOdd(ctx);
  absl::StatusOr<Program> untyped = ctx.Program(fns.is_even);
  ASSERT_TRUE(untyped.ok()) << untyped.status();
  Compiled c = CompileAll(*untyped);
  // Both recursive calls are tail calls: nothing is live across them, so
  // despite the mutual recursion no variable needs a stack.
  EXPECT_TRUE(FullVariables(c.allocated).empty());
  ExpectJsonRoundTrip(c.lowered);
  ExpectRuns(c, {0, 1, 2, 3, 10, 17, 30, 5}, samples::IsEvenReference);
}

TEST(SamplesPipelineTest, Collatz) {
  Context ctx;
  BatchFunction collatz = samples::DefineCollatz(ctx);
  absl::StatusOr<Program> untyped = ctx.Program(collatz);
  ASSERT_TRUE(untyped.ok()) << untyped.status();
  Compiled c = CompileAll(*untyped);
  // No calls, so nothing is Full.
  EXPECT_TRUE(FullVariables(c.allocated).empty());
  ExpectJsonRoundTrip(c.lowered);
  ExpectRuns(c, {1, 2, 3, 6, 7, 27, 97, 0, -5}, samples::CollatzStepsReference);
}

}  // namespace
}  // namespace autobatch
