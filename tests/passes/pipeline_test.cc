// Tests for the compiler pipeline (passes/pipeline.h).
#include "passes/pipeline.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/json.h"
#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

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
      {"scale", autobatch::testing::MakeScaleProgram, {i64, i64}, pairs},
      {"scale_mutual", autobatch::testing::MakeScaleMutualProgram, {i64, i64}, pairs},
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
      EXPECT_EQ(lowered->stage, Stage::kLowered);
      EXPECT_TRUE(testing::AgreesWithReference(*compiled, *lowered, c.inputs));
    }
  }
}

TEST(PipelineTest, CompileProgramStopsAtAllocated) {
  absl::StatusOr<Program> compiled =
      CompileProgram(autobatch::testing::MakeFibonacciProgram(), {Scalar(DType::kI64)});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->stage, Stage::kAllocated);
  EXPECT_EQ(compiled->module.var(testing::FindVar(*compiled, "fibonacci", "n")).storage,
            StorageClass::kFull);
}

// `autobatch ir --stage typed --json` writes an allocated program; the
// stack VM's path lowers whatever it is given, so that stage must lower too,
// to the program the untyped one lowers to.
TEST(PipelineTest, AllocatedProgramsCompileAndLowerAgain) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Program> compiled = CompileProgram(c.make(), c.types);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    absl::StatusOr<Program> lowered = LowerProgram(*compiled, c.types);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    absl::StatusOr<Program> direct = LowerProgram(c.make(), c.types);
    ASSERT_TRUE(direct.ok()) << direct.status();
    EXPECT_EQ(PrintProgram(*lowered), PrintProgram(*direct));
    absl::StatusOr<Program> recompiled = CompileProgram(*compiled, c.types);
    ASSERT_TRUE(recompiled.ok()) << recompiled.status();
    EXPECT_EQ(*recompiled, *compiled);
  }
}

TEST(PipelineTest, LoweredProgramsRoundTripThroughJson) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Program> lowered = LowerProgram(c.make(), c.types);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    const std::string json = DumpProgramJson(*lowered);
    absl::StatusOr<Program> loaded = LoadProgramJson(json);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(*loaded, *lowered);
    EXPECT_EQ(DumpProgramJson(*loaded), json);
  }
}

TEST(PipelineTest, PrintsTheIrAfterEveryPass) {
  std::ostringstream out;
  PipelineOptions options;
  options.print_ir_after_each_pass = &out;
  absl::StatusOr<Program> lowered =
      LowerProgram(autobatch::testing::MakeFibonacciProgram(), {Scalar(DType::kI64)}, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::string text = out.str();
  size_t last = 0;
  bool first = true;
  for (const char* pass : {"infer_types", "inline_calls", "thread_jumps", "allocate_variables",
                           "lower_calls", "fuse_pop_push", "coalesce_copies",
                           "coalesce_registers", "coalesce_copies(any_reads)", "thread_jumps",
                           "order_blocks"}) {
    // Each pass is looked for after the one before (thread_jumps runs twice).
    const size_t at = text.find(std::string("=== after ") + pass + " ===\n", first ? 0 : last + 1);
    ASSERT_NE(at, std::string::npos) << pass;
    if (!first) {
      EXPECT_GT(at, last) << pass << " out of order";
    }
    first = false;
    last = at;
  }
  EXPECT_THAT(text, ::testing::HasSubstr("=== after infer_types ===\nprogram stage=typed"));
  // fib's blocks are already in order: order_blocks changes nothing.
  EXPECT_THAT(text, ::testing::EndsWith("=== after order_blocks ===\n(unchanged)\n"));
  EXPECT_THAT(text, ::testing::HasSubstr(PrintProgram(*lowered)));
}

TEST(PipelineTest, AFailingPassIsNamedWithTheIrItReceived) {
  // fib called with a bool: sub on bools breaks the arithmetic type rule.
  absl::StatusOr<Program> result =
      LowerProgram(autobatch::testing::MakeFibonacciProgram(), {Scalar(DType::kBool)});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(result.status().message());
  EXPECT_THAT(message, ::testing::StartsWith("pass infer_types failed: type error in "
                                             "function 'fibonacci'"));
  EXPECT_THAT(message, ::testing::HasSubstr("--- IR given to infer_types ---\n"
                                            "program stage=untyped entry=@main"));
  EXPECT_THAT(message, ::testing::HasSubstr("// fib.cc:11"));  // with locations

  PipelineOptions quiet;
  quiet.show_ir_on_error = false;
  result = LowerProgram(autobatch::testing::MakeFibonacciProgram(), {Scalar(DType::kBool)},
                        quiet);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::Not(::testing::HasSubstr("--- IR")));
}

TEST(PipelineTest, RejectsMalformedInputBeforeAnyPass) {
  Program p = autobatch::testing::MakeFibonacciProgram();
  p.module.functions[1].blocks[0].terminator = Goto{BlockId(42)};
  absl::StatusOr<Program> result = CompileProgram(p, {Scalar(DType::kI64)});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::StartsWith("the program given to the compiler is malformed:\n"));
  EXPECT_THAT(std::string(result.status().message()), ::testing::HasSubstr("^<bad:42>"));
}

TEST(PipelineTest, VerificationCanBeTurnedOff) {
  PipelineOptions options;
  options.verify = false;
  absl::StatusOr<Program> lowered =
      LowerProgram(autobatch::testing::MakeSwapProgram(),
                   {Scalar(DType::kI64), Scalar(DType::kI64), Scalar(DType::kI64)}, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<Program> verified =
      LowerProgram(autobatch::testing::MakeSwapProgram(),
                   {Scalar(DType::kI64), Scalar(DType::kI64), Scalar(DType::kI64)});
  ASSERT_TRUE(verified.ok());
  EXPECT_EQ(*lowered, *verified);
}

}  // namespace
}  // namespace autobatch
