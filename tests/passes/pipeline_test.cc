// Tests for the compiler pipeline (passes/pipeline.h).
#include "passes/pipeline.h"

#include <sstream>

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"

namespace autobatch {
namespace {

using testing::RunReference;
using testing::RunStackMachine;
using testing::Values;

struct Case {
  std::string name;
  Program (*make)();
  std::vector<TensorType> types;
  std::vector<Values> inputs;
};

std::vector<Case> Cases() {
  const TensorType i64 = Scalar(DType::kI64);
  std::vector<Values> small;
  for (int n = 0; n <= 12; ++n) small.push_back({static_cast<double>(n)});
  std::vector<Values> pairs;
  for (int a = -1; a <= 2; ++a) {
    for (int n = -1; n <= 6; ++n) pairs.push_back({static_cast<double>(a), static_cast<double>(n)});
  }
  std::vector<Values> triples;
  for (int n = -1; n <= 7; ++n) triples.push_back({5, 2, static_cast<double>(n)});
  std::vector<Values> collatz;
  for (int n = 1; n <= 30; ++n) collatz.push_back({static_cast<double>(n)});
  return {
      {"fib", autobatch::testing::MakeFibonacciProgram, {i64}, small},
      {"even_odd", autobatch::testing::MakeEvenOddProgram, {i64}, small},
      {"even_odd_non_tail", autobatch::testing::MakeEvenOddNonTailProgram, {i64}, small},
      {"collatz", autobatch::testing::MakeCollatzProgram, {i64}, collatz},
      {"swap", autobatch::testing::MakeSwapProgram, {i64, i64, i64}, triples},
      {"accumulate", autobatch::testing::MakeAccumulateProgram, {i64, i64}, pairs},
      {"edge", autobatch::testing::MakeEdgeProgram, {i64}, small},
      {"loop0", autobatch::testing::MakeLoopToEntryProgram, {i64, i64}, pairs},
  };
}

TEST(PipelineTest, LoweredProgramsAgreeWithTheReference) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Program> compiled = CompileProgram(c.make(), c.types);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    for (bool optimize : {false, true}) {
      PipelineOptions options;
      options.fuse_pop_push = optimize;
      options.order_blocks = optimize;
      absl::StatusOr<Program> lowered = LowerProgram(c.make(), c.types, options);
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      absl::StatusOr<testing::StackRun> run = RunStackMachine(*lowered, c.inputs);
      ASSERT_TRUE(run.ok()) << run.status() << "\n" << PrintProgram(*lowered);
      for (size_t l = 0; l < c.inputs.size(); ++l) {
        absl::StatusOr<Values> expected = RunReference(*compiled, c.inputs[l]);
        ASSERT_TRUE(expected.ok()) << expected.status();
        EXPECT_EQ(run->outputs[l], *expected) << "lane " << l;
      }
      std::cout << c.name << " optimize=" << optimize << " blocks=" << run->block_executions
                << " lane-blocks=" << run->lane_block_executions << "\n";
    }
  }
}

}  // namespace
}  // namespace autobatch
