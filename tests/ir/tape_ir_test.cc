// Tests of tapes in the IR (ir/ir.h, "Tapes"): the op helpers, the text and
// JSON forms, and every verifier rule about them (K1, K2, K3, T6, A7, S1).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/control_ops.h"
#include "ir/dot.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/testing/tape_programs.h"
#include "ir/verifier.h"
#include "passes/analysis/stats.h"
#include "passes/pipeline.h"

namespace autobatch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

Program Parse(std::string_view text) {
  absl::StatusOr<Program> program = ParseProgram(text);
  EXPECT_TRUE(program.ok()) << program.status() << "\n" << text;
  return program.ok() ? *std::move(program) : Program{};
}

std::string VerifierMessage(const Program& program) {
  return std::string(VerifyProgram(program).message());
}

std::vector<Program> TapePrograms() {
  std::vector<Program> out;
  for (Program untyped : {testing::TapeLoopProgram(), testing::RecursiveTapeProgram()}) {
    const std::vector<TensorType> types = {Scalar(DType::kI64), Scalar(DType::kF64)};
    absl::StatusOr<Program> allocated = CompileProgram(untyped, types);
    EXPECT_TRUE(allocated.ok()) << allocated.status();
    absl::StatusOr<Program> lowered = LowerProgram(untyped, types);
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    out.push_back(untyped);
    if (allocated.ok()) out.push_back(*allocated);
    if (lowered.ok()) out.push_back(*lowered);
  }
  return out;
}

TEST(TapeOpTest, ReadsWritesAndTape) {
  const VarId t(0), x(1), y(2);
  const Op push = TapePushOp{t, x, {}};
  const Op pop = TapePopOp{t, y, {}};
  EXPECT_THAT(OpReads(push), ElementsAre(x));
  EXPECT_THAT(OpWrites(push), ElementsAre());
  EXPECT_THAT(OpReads(pop), ElementsAre());
  EXPECT_THAT(OpWrites(pop), ElementsAre(y));
  EXPECT_EQ(TapeOf(push), t);
  EXPECT_EQ(TapeOf(pop), t);
  EXPECT_EQ(TapeOf(Op{PopOp{{x}, {}}}), std::nullopt);
  EXPECT_THAT(OpVariables(push), ElementsAre(x, t));
  EXPECT_THAT(OpVariables(pop), ElementsAre(y, t));

  Op renamed = push;
  RenameVariables(renamed, [](VarId v) { return VarId(v.value + 10); });
  EXPECT_EQ(std::get<TapePushOp>(renamed).tape, VarId(10));
  EXPECT_EQ(std::get<TapePushOp>(renamed).value, VarId(11));
  renamed = pop;
  RenameVariables(renamed, [](VarId v) { return VarId(v.value + 10); });
  EXPECT_EQ(std::get<TapePopOp>(renamed).tape, VarId(10));
  EXPECT_EQ(std::get<TapePopOp>(renamed).result, VarId(12));
}

TEST(TapeOpTest, StorageClassTapeHasAName) {
  EXPECT_EQ(StorageClassName(StorageClass::kTape), "tape");
  EXPECT_EQ(StorageClassFromName("tape"), StorageClass::kTape);
}

TEST(TapeOpTest, PopWritesAFrameOnlyForAFullResult) {
  Program program = testing::TapePopEmptyProgram();
  Module& m = program.module;
  const Op* pop = nullptr;
  for (const Block& block : m.functions[0].blocks) {
    for (const Op& op : block.ops) {
      if (std::holds_alternative<TapePopOp>(op)) pop = &op;
    }
  }
  ASSERT_NE(pop, nullptr);
  const TapePopOp& tape_pop = std::get<TapePopOp>(*pop);
  m.var(tape_pop.tape).storage = StorageClass::kTape;
  m.var(tape_pop.result).storage = StorageClass::kFull;
  EXPECT_THAT(PushedVariables(m, *pop), ElementsAre(tape_pop.result));
  m.var(tape_pop.result).storage = StorageClass::kRegister;
  EXPECT_THAT(PushedVariables(m, *pop), ElementsAre());
}

// --- text and JSON forms ------------------------------------------------------

TEST(TapeTextTest, UntypedProgramsReadBackAsWritten) {
  for (std::string_view text : {testing::kTapeLoopText, testing::kRecursiveTapeText,
                                testing::kTapePopEmptyText, testing::kTapeUnbalancedText,
                                testing::kTapeRunawayText}) {
    const Program program = Parse(text);
    EXPECT_EQ(PrintProgram(program), text);
    EXPECT_TRUE(VerifyProgram(program).ok()) << VerifyProgram(program);
  }
}

TEST(TapeTextTest, TypedTapesShowTheirTypeAndClassOnVarsLines) {
  const Program program =
      *CompileProgram(Parse(testing::kTapePopEmptyText), {Scalar(DType::kF64)});
  const std::string text = PrintProgram(program);
  EXPECT_THAT(text, HasSubstr("  tape_push %t, %x\n"));
  EXPECT_THAT(text, HasSubstr("  %y: f64 register = tape_pop %t\n"));
  EXPECT_THAT(text, HasSubstr("%t: f64 tape"));
  EXPECT_THAT(text, HasSubstr("  vars #0: "));
}

TEST(TapeTextTest, EveryStageRoundTripsThroughTextAndJson) {
  for (const Program& program : TapePrograms()) {
    SCOPED_TRACE(PrintProgram(program));
    ASSERT_TRUE(VerifyProgram(program).ok()) << VerifyProgram(program);
    for (bool locations : {false, true}) {
      const std::string text = PrintProgram(program, {.locations = locations});
      absl::StatusOr<Program> parsed = ParseProgram(text);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_EQ(PrintProgram(*parsed, {.locations = locations}), text);
      if (locations) {
        EXPECT_TRUE(*parsed == program);
      }
    }
    const std::string json = DumpProgramJson(program);
    absl::StatusOr<Program> loaded = LoadProgramJson(json);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_TRUE(*loaded == program);
    EXPECT_EQ(DumpProgramJson(*loaded), json);
  }
}

TEST(TapeTextTest, JsonNamesTheTapeAndTheValue) {
  const Program program = Parse(testing::kTapePopEmptyText);
  const std::string json = DumpProgramJson(program, -1);
  EXPECT_THAT(json, HasSubstr(R"({"kind":"tape_push","tape":)"));
  EXPECT_THAT(json, HasSubstr(R"(,"value":)"));
  EXPECT_THAT(json, HasSubstr(R"({"kind":"tape_pop","tape":)"));
  EXPECT_THAT(json, HasSubstr(R"(,"result":)"));
}

TEST(TapeTextTest, JsonErrorsSayWhatIsMissing) {
  const Program program = Parse(testing::kTapePopEmptyText);
  Json json = ProgramToJson(program);
  Json& push = json["functions"][0]["blocks"][1]["ops"][0];
  ASSERT_EQ(push["kind"], "tape_push");
  push.erase("value");
  absl::StatusOr<Program> loaded = ProgramFromJson(json);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("value"));
  push["value"] = 999;
  loaded = ProgramFromJson(json);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("variable"));
}

TEST(TapeTextTest, ParserErrorsShowTheForm) {
  const std::string head = "program stage=untyped entry=@main\n\nfunc @main(%x: ?) -> (%y: ?) {\n^0:\n";
  absl::StatusOr<Program> two = ParseProgram(head + "  %a: ?, %y: ? = tape_pop %t\n  return\n}\n");
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(std::string(two.status().message()),
              HasSubstr("tape_pop has exactly one result, got 2"));
  absl::StatusOr<Program> none = ParseProgram(head + "  tape_pop %t\n  return\n}\n");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("tape_pop has exactly one result"));
  absl::StatusOr<Program> defs = ParseProgram(head + "  %y: ? = tape_push %t, %x\n  return\n}\n");
  ASSERT_FALSE(defs.ok());
  EXPECT_THAT(std::string(defs.status().message()), HasSubstr("tape_push has no outputs"));
  absl::StatusOr<Program> comma = ParseProgram(head + "  tape_push %t %x\n  return\n}\n");
  ASSERT_FALSE(comma.ok());
  EXPECT_THAT(std::string(comma.status().message()), HasSubstr("','"));
}

TEST(TapeTextTest, StatsAndDotShowTapeOps) {
  const Program program = *CompileProgram(Parse(testing::kTapeLoopText),
                                          {Scalar(DType::kI64), Scalar(DType::kF64)});
  const ProgramStats stats = ComputeStats(program);
  EXPECT_EQ(stats.tape_pushes, 4);
  EXPECT_EQ(stats.tape_pops, 3);
  ASSERT_TRUE(stats.memory.has_value());
  EXPECT_EQ(stats.memory->variables[static_cast<size_t>(StorageClass::kTape)], 3);
  EXPECT_EQ(stats.memory->bytes[static_cast<size_t>(StorageClass::kTape)], 24);
  const std::string text = PrintStats(program, stats);
  EXPECT_THAT(text, HasSubstr("tape_push"));
  EXPECT_THAT(text, HasSubstr("tape (bytes per entry)"));
  EXPECT_THAT(PrintStatsJson(program, stats), HasSubstr("\"tape_pops\": 3"));
  const std::string dot = PrintDot(program);
  EXPECT_THAT(dot, HasSubstr("[tape push]"));
  EXPECT_THAT(dot, HasSubstr("[tape pop]"));
}

// --- the verifier ----------------------------------------------------------------

// `body` is the block of `main(%x) -> (%y)` (an untyped program) after a
// tape_push of %x on %t.
std::string VerifyBody(const std::string& body, const std::string& extra_functions = "") {
  return VerifierMessage(Parse("program stage=untyped entry=@main\n\nfunc @main(%x: ?) -> (%y: ?) {\n"
                               "^0 entry:\n  tape_push %t, %x\n" +
                               body + "}\n" + extra_functions));
}

TEST(TapeVerifierTest, TapeProgramsAreValidAtEveryStage) {
  for (const Program& program : TapePrograms()) {
    EXPECT_TRUE(VerifyProgram(program).ok()) << VerifyProgram(program);
  }
}

TEST(TapeVerifierTest, K1ATapeIsNamedOnlyAsATape) {
  EXPECT_THAT(VerifyBody("  %y: ? = add %t, %x\n  return\n"),
              HasSubstr("function 'main', block ^0 (entry), op 1: tape 't' (#1) is used as "
                        "input 0; a tape is named only as the tape operand of tape_push and "
                        "tape_pop"));
  EXPECT_THAT(VerifyBody("  %t: ? = copy %x\n  %y: ? = tape_pop %t\n  return\n"),
              HasSubstr("tape 't' (#1) is used as output 0"));
  EXPECT_THAT(VerifyBody("  tape_push %t, %t\n  %y: ? = tape_pop %t\n  %z: ? = tape_pop %t\n"
                         "  return\n"),
              HasSubstr("tape 't' (#1) is used as pushed value"));
  EXPECT_THAT(VerifyBody("  %t: ? = tape_pop %t\n  %y: ? = copy %x\n  return\n"),
              HasSubstr("tape 't' (#1) is used as popped result"));
  EXPECT_THAT(VerifyBody("  %y: ? = tape_pop %t\n  branch %t, ^1, ^1\n^1:\n  return\n"),
              HasSubstr("terminator: tape 't' (#1) is used as branch condition"));
  EXPECT_THAT(VerifyBody("  %y: ? = tape_pop %t\n  %z: ? = call @g(%t)\n  return\n",
                         "\nfunc @g(%a: ?) -> (%a: ?) {\n^0:\n  return\n}\n"),
              HasSubstr("tape 't' (#1) is used as argument 0"));
  EXPECT_THAT(VerifyBody("  %y: ? = tape_pop %t\n  %t: ? = call @g(%x)\n  return\n",
                         "\nfunc @g(%a: ?) -> (%a: ?) {\n^0:\n  return\n}\n"),
              HasSubstr("tape 't' (#1) is used as result 0"));
  // A param or result of the function.
  EXPECT_THAT(VerifierMessage(Parse("program stage=untyped entry=@main\n\n"
                                    "func @main(%x: ?) -> (%y: ?) {\n^0:\n  tape_push %x, %y\n"
                                    "  return\n}\n")),
              HasSubstr("function 'main': tape 'x' (#0) is used as parameter 0"));
}

TEST(TapeVerifierTest, K1ATapeIsNeverPoppedAsAFrame) {
  Program program = *LowerProgram(Parse(testing::kTapePopEmptyText), {Scalar(DType::kF64)});
  Function& main = program.module.functions[0];
  VarId tape;
  for (const Block& block : main.blocks) {
    for (const Op& op : block.ops) {
      if (TapeOf(op)) tape = *TapeOf(op);
    }
  }
  ASSERT_TRUE(tape.valid());
  main.blocks.back().ops.push_back(PopOp{{tape}, {"pops.cc", 3}});
  const std::string message = VerifierMessage(program);
  EXPECT_THAT(message, HasSubstr("tape 't' (#"));
  EXPECT_THAT(message, HasSubstr("is used as popped variable 0 (at pops.cc:3)"));
  EXPECT_THAT(message, HasSubstr("PopOp pops 't'"));
}

TEST(TapeVerifierTest, K2ATapeBelongsToTheFunctionOfItsOps) {
  Program program = Parse(testing::kTapeUnbalancedText);
  // Make @main's op push on @leak's tape.
  VarId leak_tape;
  for (const Block& block : program.module.functions[1].blocks) {
    for (const Op& op : block.ops) {
      if (TapeOf(op)) leak_tape = *TapeOf(op);
    }
  }
  Block& entry = program.module.functions[0].blocks[0];
  entry.ops.push_back(TapePushOp{leak_tape, program.module.functions[0].params[0], {}});
  EXPECT_THAT(VerifierMessage(program),
              HasSubstr("function 'main', block ^0 (entry), op 1: tape 't' (#"));
  EXPECT_THAT(VerifierMessage(program), HasSubstr("belongs to function 'leak', not 'main'"));
  // A lowered caller may name its callee's params, never its tapes.
  Program lowered = *LowerProgram(Parse(testing::kRecursiveTapeText),
                                  {Scalar(DType::kI64), Scalar(DType::kF64)},
                                  {.inline_calls = false});
  FunctionId accum = *lowered.module.FindFunction("accum");
  FunctionId rec = *lowered.module.FindFunction("rec");
  VarId vals;
  for (const Block& block : lowered.module.function(accum).blocks) {
    for (const Op& op : block.ops) {
      if (TapeOf(op)) vals = *TapeOf(op);
    }
  }
  ASSERT_TRUE(vals.valid());
  lowered.module.function(rec).blocks[0].ops.push_back(
      TapePushOp{vals, lowered.module.function(rec).params[1], {}});
  EXPECT_THAT(VerifierMessage(lowered), HasSubstr("belongs to function 'accum', not 'rec'"));
}

TEST(TapeVerifierTest, K3ATapeOnlyPushedOrOnlyPoppedIsUnbalanced) {
  const std::string head =
      "program stage=untyped entry=@main\n\nfunc @main(%x: ?) -> (%y: ?) {\n^0 entry:\n";
  // Pushed in a loop, never popped: every activation that pushes leaks.
  const std::string pushed = VerifierMessage(Parse(
      head + "  %y: ? = copy %x\n  goto ^1\n^1 loop:\n  tape_push %t, %x\n"
             "  %again: ? = lt %y, %x\n  branch %again, ^1, ^2\n^2 exit:\n  return\n}\n"));
  EXPECT_THAT(pushed, HasSubstr("function 'main': tape 't' (#"));
  EXPECT_THAT(pushed, HasSubstr("is pushed but never popped; every activation must pop what "
                                "it pushes before it returns"));
  // Popped, never pushed: the first pop fails.
  const std::string popped =
      VerifierMessage(Parse(head + "  %y: ? = tape_pop %t\n  return\n}\n"));
  EXPECT_THAT(popped, HasSubstr("function 'main': tape 't' (#"));
  EXPECT_THAT(popped, HasSubstr("is popped but never pushed; a pop needs a push before it"));
  // Both, each on some path: the balance depends on the lanes' paths, which
  // the executors check (tests/vm/tape_vm_test.cc).
  EXPECT_TRUE(VerifyProgram(testing::TapeUnbalancedProgram()).ok());
  EXPECT_TRUE(VerifyProgram(testing::TapePopEmptyProgram()).ok());
}

TEST(TapeVerifierTest, T6ValuesAndResultsHaveTheTapesType) {
  Program program = *CompileProgram(Parse(testing::kTapeLoopText),
                                    {Scalar(DType::kI64), Scalar(DType::kF64)});
  program.stage = Stage::kTyped;
  for (Variable& v : program.module.variables) {
    if (v.name == "flags") v.type = Scalar(DType::kI32);
  }
  const std::string message = VerifierMessage(program);
  EXPECT_THAT(message, HasSubstr("tape_push value 'r' (#"));
  EXPECT_THAT(message, HasSubstr("has type i64, but tape 'flags' (#"));
  EXPECT_THAT(message, HasSubstr("holds i32"));
  EXPECT_THAT(message, HasSubstr("tape_pop result 'k' (#"));
  EXPECT_THAT(message, HasSubstr("rerun infer_types, or cast the value"));
}

TEST(TapeVerifierTest, A7TapesAndOnlyTapesHaveStorageClassTape) {
  Program program = *CompileProgram(Parse(testing::kTapeLoopText),
                                    {Scalar(DType::kI64), Scalar(DType::kF64)});
  for (Variable& v : program.module.variables) {
    if (v.name == "t") v.storage = StorageClass::kFull;
    if (v.name == "v") v.storage = StorageClass::kTape;
  }
  const std::string message = VerifierMessage(program);
  EXPECT_THAT(message, HasSubstr("tape 't' (#"));
  EXPECT_THAT(message, HasSubstr("has storage class full; a tape's storage class is tape"));
  EXPECT_THAT(message, HasSubstr("variable 'v' (#"));
  EXPECT_THAT(message, HasSubstr("has storage class tape, but no tape_push or tape_pop names "
                                 "it as its tape"));
  // Before allocation the class means nothing.
  program.stage = Stage::kTyped;
  EXPECT_TRUE(VerifyProgram(program).ok()) << VerifyProgram(program);
}

TEST(TapeVerifierTest, TapeOpsAreAllowedAtEveryStage) {
  for (Stage stage : {Stage::kUntyped, Stage::kTyped, Stage::kAllocated, Stage::kLowered}) {
    EXPECT_TRUE(AllowedAt(ControlOp::kTapePushOp, stage));
    EXPECT_TRUE(AllowedAt(ControlOp::kTapePopOp, stage));
  }
  const Program lowered = *LowerProgram(Parse(testing::kTapeLoopText),
                                        {Scalar(DType::kI64), Scalar(DType::kF64)});
  EXPECT_THAT(PrintProgram(lowered), HasSubstr("tape_push"));
  EXPECT_TRUE(VerifyProgram(lowered).ok()) << VerifyProgram(lowered);
}

TEST(TapeVerifierTest, ReportsEveryMisuseAtOnce) {
  const std::string message =
      VerifyBody("  %y: ? = add %t, %x\n  %z: ? = mul %x, %t\n  return\n");
  EXPECT_THAT(message, HasSubstr("op 1: tape 't' (#1) is used as input 0"));
  EXPECT_THAT(message, HasSubstr("op 2: tape 't' (#1) is used as input 1"));
  EXPECT_THAT(message, Not(HasSubstr("op 0:")));
}

}  // namespace
}  // namespace autobatch
