// Tests for the compiler pipeline (passes/pipeline.h).
#include "passes/pipeline.h"

#include <chrono>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/testing/call_trees.h"
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
  for (const char* pass : {"infer_types", "infer_uniformity", "fold_constants",
                           "simplify_arithmetic", "cse", "propagate_copies", "remove_dead_ops",
                           "fuse_glm", "inline_calls", "thread_jumps", "allocate_variables", "lower_calls",
                           "fuse_pop_push", "coalesce_copies",
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

// Both pipelines run the cleanup group after infer_types: `exp(x) * 1`
// twice becomes one exp, and the group can be turned off.
TEST(PipelineTest, BothPipelinesCleanUpTypedCode) {
  // The frontend's temporaries (t<N>), whose copies propagate_copies removes.
  absl::StatusOr<Program> program = ParseProgram(R"(program stage=untyped entry=@main

func @main(%x: ?) -> (%r: ?) {
  vars #0: %x, %r, %t0, %t1, %t2, %t3, %t4
^0 entry:
  %t0: ? = fill_like %x {literal = f64 1}
  %t1: ? = exp %x
  %t2: ? = mul %t1, %t0
  %t3: ? = exp %x
  %t4: ? = mul %t0, %t3
  %r: ? = add %t2, %t4
  return
}
)");
  ASSERT_TRUE(program.ok()) << program.status();
  auto count = [](const Program& p) {
    return testing::CountOps(p, [](const Op& op) { return std::holds_alternative<PrimOp>(op); });
  };
  const std::vector<TensorType> types = {Scalar(DType::kF64)};
  absl::StatusOr<Program> compiled = CompileProgram(*program, types);
  absl::StatusOr<Program> lowered = LowerProgram(*program, types);
  PipelineOptions off;
  off.cleanup = false;
  absl::StatusOr<Program> uncleaned = CompileProgram(*program, types, off);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_TRUE(uncleaned.ok()) << uncleaned.status();
  // t = exp x; r = add t, t: the copies propagated, the rest dead.
  const std::vector<std::string> block = testing::BlockText(*compiled, "main", 0);
  ASSERT_EQ(block.size(), 3u);
  EXPECT_THAT(block[0], ::testing::EndsWith(" = exp %x"));
  EXPECT_THAT(block[1], ::testing::StartsWith("%r: f64 register = add %t"));
  EXPECT_EQ(count(*lowered), 2);
  EXPECT_EQ(count(*uncleaned), 6);
}

// The cleanup runs after infer_uniformity and keeps U1-U5 (the pipeline
// verifies after every pass): the two sums of the uniform X become one, and
// the Branch keeps a varying condition though cse finds its value in a
// uniform variable.
TEST(PipelineTest, TheCleanupKeepsTheUniformRules) {
  absl::StatusOr<Program> program = ParseProgram(R"(program stage=untyped entry=@main

func @main(%X: ? uniform, %y: ?) -> (%r: ?) {
  vars #0: %X, %y, %r, %t0, %t1, %t2, %t3, %t4
^0 entry:
  %t0: ? = reduce_sum %X
  %t1: ? = reduce_sum %X
  %t2: ? = lt %t0, %t1
  %r: ? = select %t2, %y, %t0
  %t3: ? = lt %t0, %t1
  branch %t3, ^1, ^2
^1 then:
  %t4: ? = mul %t0, %t1
  %r: ? = add %r, %t4
  goto ^2
^2 exit:
  return
}
)");
  ASSERT_TRUE(program.ok()) << program.status();
  const std::vector<TensorType> types = {Vector(DType::kF64, 3), Scalar(DType::kF64)};
  PipelineOptions off;
  off.cleanup = false;
  for (const absl::StatusOr<Program>& out :
       {CompileProgram(*program, types), LowerProgram(*program, types)}) {
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(testing::CountOps(*out,
                                [](const Op& op) {
                                  const auto* prim = std::get_if<PrimOp>(&op);
                                  return prim != nullptr && prim->prim == Primitive::kReduceSum;
                                }),
              1);
  }
  absl::StatusOr<Program> uncleaned = CompileProgram(*program, types, off);
  ASSERT_TRUE(uncleaned.ok()) << uncleaned.status();
  EXPECT_EQ(testing::CountOps(*uncleaned,
                              [](const Op& op) {
                                const auto* prim = std::get_if<PrimOp>(&op);
                                return prim != nullptr && prim->prim == Primitive::kReduceSum;
                              }),
            2);
}

TEST(PipelineTest, AFailingPassIsNamedWithTheIrItReceivedOnRequest) {
  // fib called with a bool: sub on bools breaks the arithmetic type rule.
  PipelineOptions dump;
  dump.show_ir_on_error = true;
  absl::StatusOr<Program> result =
      LowerProgram(autobatch::testing::MakeFibonacciProgram(), {Scalar(DType::kBool)}, dump);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(result.status().message());
  EXPECT_THAT(message, ::testing::StartsWith("pass infer_types failed: type error in "
                                             "function 'fibonacci'"));
  EXPECT_THAT(message, ::testing::HasSubstr("--- IR given to infer_types ---\n"
                                            "program stage=untyped entry=@main"));
  EXPECT_THAT(message, ::testing::HasSubstr("// fib.cc:11"));  // with locations

  // By default: the error and a line saying how to see the IR.
  result = LowerProgram(autobatch::testing::MakeFibonacciProgram(), {Scalar(DType::kBool)});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::Not(::testing::HasSubstr("--- IR")));
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::EndsWith(absl::StrCat("\n", kIrOnErrorHint)));
}

TEST(PipelineTest, RejectsMalformedInputBeforeAnyPass) {
  Program p = autobatch::testing::MakeFibonacciProgram();
  p.module.functions[1].blocks[0].terminator = Goto{BlockId(42)};
  absl::StatusOr<Program> result = CompileProgram(p, {Scalar(DType::kI64)});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::StartsWith("the program given to the compiler is malformed:\n"));
  EXPECT_THAT(std::string(result.status().message()), ::testing::HasSubstr(kIrOnErrorHint));
  PipelineOptions dump;
  dump.show_ir_on_error = true;
  result = CompileProgram(p, {Scalar(DType::kI64)}, dump);
  ASSERT_FALSE(result.ok());
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

TEST(PipelineTest, ThePipelinesAreListsOfRegisteredPasses) {
  EXPECT_EQ(TidyPipelineText(),
            "remove_unreachable_blocks,repeat(thread_jumps,fold_branches,merge_blocks,"
            "fold_copies,propagate_copies,remove_dead_ops),compact_variables");
  const std::string typed =
      ",infer_types,differentiate,infer_uniformity,repeat(fold_constants,simplify_arithmetic,cse,"
      "propagate_copies,remove_dead_ops),fuse_glm";
  EXPECT_EQ(CompilePipelineText(), TidyPipelineText() + typed + ",thread_jumps,allocate_variables");
  EXPECT_EQ(LowerPipelineText(),
            TidyPipelineText() + typed +
                ",inline_calls,thread_jumps,allocate_variables,lower_calls,"
                "fuse_pop_push,coalesce_copies,coalesce_registers,coalesce_copies(any_reads),"
                "thread_jumps,order_blocks");
  PipelineOptions bare;
  bare.cleanup = bare.inline_calls = bare.thread_jumps = bare.fuse_pop_push =
      bare.coalesce_copies = bare.coalesce_registers = bare.order_blocks = false;
  EXPECT_EQ(LowerPipelineText(bare),
            "remove_unreachable_blocks,repeat(fold_branches,merge_blocks,fold_copies,"
            "propagate_copies,remove_dead_ops),compact_variables,infer_types,"
            "differentiate,infer_uniformity,allocate_variables,lower_calls");
  for (const std::string& text : {CompilePipelineText(), LowerPipelineText(), std::string()}) {
    absl::StatusOr<Pipeline> pipeline = ParsePipeline(text);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    EXPECT_EQ(PipelineText(*pipeline), text);
  }
}

TEST(PipelineTest, ParsePipelineSaysWhatIsWrongWithAList) {
  struct Bad {
    std::string text;
    absl::StatusCode code;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"infer_types,thread_jump", absl::StatusCode::kNotFound,
            "no pass is called 'thread_jump'; the passes are: remove_unreachable_blocks, "},
           {"infer_types,,order_blocks", absl::StatusCode::kInvalidArgument,
            "has an empty name"},
           {"repeat(thread_jumps", absl::StatusCode::kInvalidArgument, "unbalanced parentheses"},
           {"thread_jumps)", absl::StatusCode::kInvalidArgument, "unbalanced parentheses"},
           {"repeat(repeat(thread_jumps))", absl::StatusCode::kInvalidArgument, "do not nest"},
           {"repeat(thread_jumps)merge_blocks", absl::StatusCode::kInvalidArgument,
            "put a comma after the ')'"},
       }) {
    absl::StatusOr<Pipeline> pipeline = ParsePipeline(bad.text);
    ASSERT_FALSE(pipeline.ok()) << bad.text;
    EXPECT_EQ(pipeline.status().code(), bad.code) << bad.text;
    EXPECT_THAT(std::string(pipeline.status().message()), ::testing::HasSubstr(bad.message))
        << bad.text;
  }
}

TEST(PipelineTest, ARepeatedGroupRunsUntilARoundChangesNothing) {
  // ^0: t0 = copy x; goto ^1   ^1: r = neg t0; return
  // Round 1 merges ^1 into ^0, which puts the copy and its read in one
  // block, and propagates the copy; round 2 changes nothing.
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x"), t = fn.Var("t0"), r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  BlockId next = fn.Block("next");
  fn.Prim(entry, 2, Primitive::kCopy, {x}, t);
  fn.Goto(entry, 3, next);
  fn.Prim(next, 4, Primitive::kNeg, {t}, r);
  fn.Return(next, 5);
  std::ostringstream out;
  PipelineOptions options;
  options.print_ir_after_each_pass = &out;
  absl::StatusOr<Pipeline> pipeline = ParsePipeline(TidyPipelineText());
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  absl::StatusOr<Program> tidied = RunPipeline(program, *pipeline, {}, options);
  ASSERT_TRUE(tidied.ok()) << tidied.status();
  EXPECT_EQ(testing::BlockText(*tidied, "f", 0),
            (std::vector<std::string>{"%r: ? full = neg %x", "return"}));
  const std::string text = out.str();
  const size_t round2 = text.find("=== after thread_jumps (round 2) ===\n");
  const size_t compact = text.find("=== after compact_variables ===\n");
  ASSERT_NE(round2, std::string::npos) << text;
  ASSERT_NE(compact, std::string::npos) << text;
  EXPECT_EQ(text.find("(round 3)"), std::string::npos) << text;
  const std::string last_round = text.substr(round2, compact - round2);
  for (const char* pass : {"thread_jumps", "fold_branches", "merge_blocks", "fold_copies",
                           "propagate_copies", "remove_dead_ops"}) {
    EXPECT_THAT(last_round, ::testing::HasSubstr(absl::StrCat("=== after ", pass,
                                                              " (round 2) ===\n(unchanged)\n")));
  }
}

// The tidy passes and infer_types keep a gradient stub as it is (every
// pass's output verified), whatever they do to its caller and primal; in a
// pipeline without differentiate, the first pass that cannot take a stub,
// allocate_variables, says to run it.
TEST(PipelineTest, TidyPassesAndInferTypesKeepGradientStubs) {
  const Program program = testing::MakeGradientStubCallerProgram();
  const Function& stub = program.module.functions[2];
  std::ostringstream out;
  PipelineOptions options;
  options.print_ir_after_each_pass = &out;
  absl::StatusOr<Pipeline> pipeline = ParsePipeline(TidyPipelineText() + ",infer_types");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PassContext context;
  context.input_types = {Scalar(DType::kF64), Scalar(DType::kF64)};
  absl::StatusOr<Program> typed = RunPipeline(program, *pipeline, context, options);
  ASSERT_TRUE(typed.ok()) << typed.status();
  // The tidy passes changed main (its two blocks merged).
  EXPECT_EQ(testing::BlockText(*typed, "main", 0),
            (std::vector<std::string>{"%t: f64 full = copy %x",
                                      "%v: f64 full, %dy: f64 full = call @grad_f(%t, %y)",
                                      "return"}));
  const Function& kept = testing::FindFunction(*typed, "grad_f");
  EXPECT_EQ(kept.gradient_of, (GradientOf{*typed->module.FindFunction("f"), {1}}));
  EXPECT_TRUE(kept.blocks.empty());
  EXPECT_EQ(kept.params.size(), stub.params.size());
  EXPECT_EQ(kept.results.size(), stub.results.size());
  EXPECT_THAT(out.str(), ::testing::HasSubstr(
                             "func @grad_f(%a: f64, %b: f64) -> (%value: f64, %db: f64) = "
                             "gradient @f wrt 1\n"));

  absl::StatusOr<Pipeline> skipping =
      ParsePipeline(TidyPipelineText() + ",infer_types,allocate_variables");
  ASSERT_TRUE(skipping.ok()) << skipping.status();
  absl::StatusOr<Program> undifferentiated = RunPipeline(program, *skipping, context);
  ASSERT_FALSE(undifferentiated.ok());
  EXPECT_EQ(undifferentiated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(undifferentiated.status().message()),
              ::testing::StartsWith(
                  "pass allocate_variables failed: allocate_variables cannot take function "
                  "'grad_f', a gradient stub of 'f' with no body yet: run the differentiate "
                  "pass first (CompileProgram and LowerProgram do)"));
  // CompileProgram does: the stub gets its body.
  absl::StatusOr<Program> compiled =
      CompileProgram(program, {Scalar(DType::kF64), Scalar(DType::kF64)});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(testing::FindFunction(*compiled, "grad_f").blocks.empty());
}

// A pass whose output does not verify is our bug: Internal, naming the pass.
absl::StatusOr<Program> BreakTheProgram(Program program, const PassContext&) {
  program.module.functions[0].blocks[0].terminator = Goto{BlockId(99)};
  return program;
}

TEST(PipelineTest, APassProducingAnInvalidProgramIsAnInternalError) {
  const PassInfo broken{"broken", "breaks every program", BreakTheProgram};
  absl::StatusOr<Program> result =
      RunPipeline(autobatch::testing::MakeCollatzProgram(), Pipeline{{{&broken}}}, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::StartsWith("pass broken produced an invalid program (a bug in "
                                    "autobatch; please report it):\n"));
}

TEST(PipelineTest, APassGivenTheWrongStageSaysSo) {
  absl::StatusOr<Pipeline> pipeline = ParsePipeline("lower_calls");
  ASSERT_TRUE(pipeline.ok());
  absl::StatusOr<Program> result =
      RunPipeline(autobatch::testing::MakeCollatzProgram(), *pipeline, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::StartsWith("pass lower_calls failed: lower_calls needs an allocated "
                                    "program"));
}

// --- the time budget (PipelineOptions::deadline) ---------------------------

constexpr char kRaise[] =
    "; raise the time budget (CallOptions::timeout_seconds, --timeout) if the program is just "
    "big";

PipelineOptions WithDeadline(Deadline deadline, std::ostream* printed = nullptr) {
  PipelineOptions options;
  options.deadline = deadline;
  options.print_ir_after_each_pass = printed;
  return options;
}

// A deadline already passed stops the compile before its first pass (none
// prints its IR), with the error a VM gives for a run over its time budget.
TEST(PipelineTest, APassedDeadlineStopsTheCompileBeforeItsFirstPass) {
  const Deadline passed(Deadline::Clock::now() - std::chrono::seconds(1), /*seconds=*/0.5);
  for (bool lower : {false, true}) {
    std::ostringstream printed;
    const PipelineOptions options = WithDeadline(passed, &printed);
    const Program chain = autobatch::testing::CallChain(3000);
    absl::StatusOr<Program> result = lower ? LowerProgram(chain, {Scalar(DType::kI64)}, options)
                                           : CompileProgram(chain, {Scalar(DType::kI64)}, options);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
    EXPECT_EQ(result.status().message(),
              absl::StrCat("time budget exhausted while compiling: the compile was stopped by "
                           "the time budget (0.5 s) before pass remove_unreachable_blocks",
                           kRaise));
    EXPECT_EQ(printed.str(), "");
  }
}

// A deadline that passes while a big program compiles stops the compile
// between two passes or inside one (a chain of 3,000 calls takes over 0.1 s
// to lower; see docs/BENCHMARKS.md, "Compile time against program size").
TEST(PipelineTest, ACompileStopsOnceItsDeadlinePasses) {
  absl::StatusOr<Program> result = LowerProgram(autobatch::testing::CallChain(3000),
                                                {Scalar(DType::kI64)},
                                                WithDeadline(Deadline::In(1e-3)));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::MatchesRegex(absl::StrCat(
                  R"(time budget exhausted while compiling: the compile was stopped by the )"
                  R"(time budget \(0.001 s\) (before|in|after) pass [a-z_()]+)"
                  R"(( \(round [0-9]+\))?)",
                  R"(; raise the time budget \(CallOptions::timeout_seconds, --timeout\) if )"
                  R"(the program is just big)")));
}

// A pass that stops on its deadline (PassContext::deadline, set from
// PipelineOptions::deadline) is named, without the IR it was given.
absl::StatusOr<Program> StopIfTimed(Program program, const PassContext& context) {
  if (context.deadline.set()) return PassOutOfTime("slow");
  return program;
}

TEST(PipelineTest, APassStoppedByItsDeadlineIsNamed) {
  const PassInfo slow{"slow", "stops whenever it has a deadline", StopIfTimed};
  const Pipeline pipeline{{{&slow}}, {{&slow}, /*repeat=*/true}};
  absl::StatusOr<Program> untimed =
      RunPipeline(autobatch::testing::MakeCollatzProgram(), pipeline, {});
  EXPECT_TRUE(untimed.ok()) << untimed.status();
  absl::StatusOr<Program> timed = RunPipeline(autobatch::testing::MakeCollatzProgram(), pipeline,
                                              {}, WithDeadline(Deadline::In(1e6)));
  EXPECT_EQ(timed.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(timed.status().message(),
            absl::StrCat("time budget exhausted while compiling: the compile was stopped by the "
                         "time budget (1e+06 s) in pass slow",
                         kRaise));
}

// A deadline far away changes nothing in the compile's output.
TEST(PipelineTest, ADeadlineThatDoesNotPassChangesNothing) {
  const PipelineOptions timed = WithDeadline(Deadline::In(1e6));
  std::vector<std::pair<Program, std::vector<TensorType>>> programs = {
      {autobatch::testing::CallChain(200), {Scalar(DType::kI64)}}};
  for (const Case& c : Cases()) programs.emplace_back(c.make(), c.types);
  for (const auto& [program, types] : programs) {
    absl::StatusOr<Program> lowered = LowerProgram(program, types);
    absl::StatusOr<Program> compiled = CompileProgram(program, types);
    ASSERT_TRUE(lowered.ok() && compiled.ok());
    EXPECT_EQ(*LowerProgram(program, types, timed), *lowered);
    EXPECT_EQ(*CompileProgram(program, types, timed), *compiled);
  }
}

}  // namespace
}  // namespace autobatch
