// The `autobatch` command line: printing, dumping, running, and clear errors
// (non-zero exit, a message, never a signal) on bad input; `opt` running any
// list of passes.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/testing/call_trees.h"
#include "nlohmann/json.hpp"
#include "tests/testing/sanitizers.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;     // stdout and stderr together
};

// Runs `shell_prefix autobatch args` through the shell (e.g. a prefix
// "ulimit -v 1000000; exec").
Result RunCli(const std::string& args, const std::string& shell_prefix = "") {
  std::string command = shell_prefix + " " + AUTOBATCH_CLI + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  Result result;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) {
    result.out.append(buffer.data(), n);
  }
  int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// Runs `autobatch args`, keeping only stdout (--profile's tables go to
// stderr).
Result RunCliStdout(const std::string& args) {
  return RunCli(args + " 2>/dev/null; }", "{");
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliTest, PrintsEveryStageOfASample) {
  for (const char* stage : {"untyped", "typed", "lowered"}) {
    Result r = RunCli(std::string("ir fibonacci --stage ") + stage);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr(std::string("stage=") + (std::string(stage) == "typed" ? "allocated" : stage)));
  }
  Result lowered = RunCli("ir fibonacci --stage lowered");
  EXPECT_THAT(lowered.out, HasSubstr("push_goto @fibonacci"));
}

// The NUTS chain program (a fuzz seed) calls nuts_transition and nuts_leaf
// once each: lowering inlines them unless told not to.
TEST(CliTest, LoweringInlinesNonRecursiveCallsUnlessToldNot) {
  const std::string program = std::string(AUTOBATCH_SOURCE_DIR "/tests/fuzz/corpus/sample_mcmc_nuts.untyped.json");
  const std::string args = "ir " + program +
                           " --stage lowered --types f64[2],f64,f64[2],u64,u64,f64,f64[2],i64,i64";
  Result inlined = RunCli(args);
  Result kept = RunCli(args + " --no-inline");
  ASSERT_EQ(inlined.exit_code, 0) << inlined.out;
  ASSERT_EQ(kept.exit_code, 0) << kept.out;
  EXPECT_THAT(inlined.out, HasSubstr(" nuts_transition.loop0:"));
  EXPECT_THAT(inlined.out, ::testing::Not(HasSubstr("func @nuts_leaf")));
  EXPECT_THAT(inlined.out, ::testing::Not(HasSubstr("push_goto @nuts_leaf")));
  EXPECT_THAT(inlined.out, HasSubstr("push_goto @nuts_build_tree"));
  EXPECT_THAT(kept.out, HasSubstr("func @nuts_leaf"));
  EXPECT_THAT(kept.out, HasSubstr("push_goto @nuts_leaf"));
}

// An input written {"uniform": ...} is given once and makes its parameter
// uniform; the profile reports the storage that holds it once.
TEST(CliTest, UniformInputsFromJson) {
  std::string program = WriteFile("scale.ir", R"(program stage=untyped entry=@main

func @main(%x: ?, %w: ?) -> (%r: ?) {
^0 entry:
  %s: ? = reduce_sum %x
  %r: ? = mul %s, %w
  return
}
)");
  std::string inputs = WriteFile(
      "scale_inputs.json",
      R"({"inputs": [{"dtype": "f64", "shape": [2, 2], "uniform": [[1, 2], [3, 4]]},
                     [1.0, -1.0, 0.5]]})");
  for (const char* vm : {"stack", "stackless", "reference"}) {
    const bool reference = std::string(vm) == "reference";
    Result r = RunCliStdout("run " + program + " --inputs " + inputs + " --vm " + vm +
                            (reference ? "" : " --profile"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    nlohmann::json out = nlohmann::json::parse(r.out);
    EXPECT_EQ(out["outputs"][0]["values"], nlohmann::json({10.0, -10.0, 5.0})) << vm;
    if (!reference) {
      // x once (32 bytes), w, s and r per lane (3 x 8 x 3 lanes) at most.
      EXPECT_LE(out["profile"]["storage_bytes"].get<int>(), 32 + 3 * 8 * 3) << vm;
    }
  }
  std::string both = WriteFile("scale_both.json",
                               R"({"inputs": [{"uniform": [1, 2], "values": [[1, 2]]}, [1]]})");
  Result bad = RunCli("run " + program + " --inputs " + both);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.out, HasSubstr("has \"values\" (one per lane) or \"uniform\""));
}

// A mistake in the inputs file is reported as one, before any type
// inference: the file, the input, its parameter, what was expected and what
// to write. The program's IR comes with an error only on request.
constexpr char kHalfProgram[] = R"(program stage=untyped entry=@main

func @main(%x: ?) -> (%r: ?) {
^0 entry:
  %h: ? = constant {literal = f64 0.5}
  %r: ? = mul %x, %h
  return
}
)";

TEST(CliTest, InputErrorsPointAtTheInputsFile) {
  const std::string program = WriteFile("half.ir", kHalfProgram);
  const std::string integers = WriteFile("half_integers.json", R"({"inputs": [[2, 9, 16]]})");
  Result guessed = RunCli("run " + program + " --inputs " + integers);
  EXPECT_EQ(guessed.exit_code, 1);
  EXPECT_EQ(guessed.out,
            "autobatch: error: " + integers +
                ": inputs[0] holds only integers, so it was read as i64, but it is for "
                "parameter 'x' (1 of 1) of 'main', which the program needs as f64: write its "
                "values as floats (2.0, not 2), declare \"dtype\": \"f64\" on it, or pass "
                "--types f64\n");

  Result typed = RunCli("run " + program + " --inputs " + integers + " --types f64");
  ASSERT_EQ(typed.exit_code, 0) << typed.out;
  EXPECT_EQ(nlohmann::json::parse(typed.out)["outputs"][0]["values"],
            nlohmann::json({1.0, 4.5, 8.0}));

  // The compiler's error for the types given: no IR unless asked for.
  Result wrong = RunCli("run " + program + " --inputs " + integers + " --types i64");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_THAT(wrong.out, HasSubstr("pass infer_types failed: type error in function 'main'"));
  EXPECT_THAT(wrong.out, HasSubstr("(pass --dump-ir-on-error"));
  EXPECT_THAT(wrong.out, Not(HasSubstr("--- IR")));
  Result dumped = RunCli("run " + program + " --inputs " + integers +
                         " --types i64 --dump-ir-on-error");
  EXPECT_EQ(dumped.exit_code, 1);
  EXPECT_THAT(dumped.out, HasSubstr("--- IR given to infer_types ---\n"
                                    "program stage=untyped entry=@main"));
  Result ir_dumped = RunCli("ir " + program + " --stage typed --types bool --dump-ir-on-error");
  EXPECT_THAT(ir_dumped.out, HasSubstr("--- IR given to infer_types ---"));
  EXPECT_THAT(RunCli("ir " + program + " --stage typed --types bool").out,
              Not(HasSubstr("--- IR")));

  EXPECT_EQ(RunCli("run " + program + " --inputs " + integers + " --types f64,i64").out,
            "autobatch: error: --types gives 2 types but 'main' takes 1 parameter (x): give "
            "one type per parameter, in order\n");
  EXPECT_EQ(RunCli("run " + program + " --inputs " + integers + " --types f64[3]").out,
            "autobatch: error: " + integers +
                ": inputs[0][0]: expected an array of 3 elements, got 2 (inputs[0] is for "
                "parameter 'x' (1 of 1) of 'main', which is f64[3] as --types gives)\n");
  const std::string two = WriteFile("half_two.json", R"({"inputs": [[1.5], [2.5]]})");
  EXPECT_EQ(RunCli("run " + program + " --inputs " + two).out,
            "autobatch: error: " + two +
                ": holds 2 inputs but 'main' takes 1 parameter (x): write one entry of "
                "\"inputs\" per parameter, in order\n");
}

// A program file's literals keep their value as the Context's do
// (ir/type_rules.h): 0.5 with an i64 operand is an error, 2.0 is 2.
TEST(CliTest, LiteralsThatChangeValueAreTypeErrors) {
  const std::string program = WriteFile("fill.ir", R"(program stage=untyped entry=@main

func @main(%n: ?) -> (%r: ?) {
^0 entry:
  %h: ? = fill_like %n {literal = f64 0.5}
  %r: ? = mul %n, %h
  return
}
)");
  const std::string inputs = WriteFile("fill_inputs.json", R"({"inputs": [[4]]})");
  Result half = RunCli("run " + program + " --inputs " + inputs + " --types i64");
  EXPECT_EQ(half.exit_code, 1);
  EXPECT_THAT(half.out, HasSubstr("fill_like (at <unknown>): the literal 0.5 would become 0 as "
                                  "i64, the dtype of the value it is combined with"));
  Result floats = RunCli("run " + program + " --inputs " + inputs + " --types f64");
  ASSERT_EQ(floats.exit_code, 0) << floats.out;
  EXPECT_EQ(nlohmann::json::parse(floats.out)["outputs"][0]["values"], nlohmann::json({2.0}));
}

TEST(CliTest, InputsAreCheckedAgainstDeclaredParameterTypes) {
  const std::string program = WriteFile("declared.ir", R"(program stage=untyped entry=@main

func @main(%x: f64, %n: i64) -> (%r: ?) {
^0 entry:
  %c: ? = cast %n {dtype = f64}
  %r: ? = mul %x, %c
  return
}
)");
  // JSON integers are fine for an f64 parameter.
  const std::string ok = WriteFile("declared_ok.json", R"({"inputs": [[2, 0.5], [3, 4]]})");
  Result run = RunCli("run " + program + " --inputs " + ok);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(nlohmann::json::parse(run.out)["outputs"][0]["values"], nlohmann::json({6.0, 2.0}));
  const std::string fraction = WriteFile("declared_fraction.json",
                                         R"({"inputs": [[2, 0.5], [3, 4.5]]})");
  EXPECT_EQ(RunCli("run " + program + " --inputs " + fraction).out,
            "autobatch: error: " + fraction +
                ": inputs[1] element 1: expected an integer for dtype i64, got 4.5; write "
                "whole numbers without a fraction or exponent, or use dtype f64 (inputs[1] is "
                "for parameter 'n' (2 of 2) of 'main', which is i64 as the program declares)\n");
  const std::string other = WriteFile(
      "declared_other.json", R"({"inputs": [{"dtype": "f32", "values": [2]}, [3]]})");
  EXPECT_EQ(RunCli("run " + program + " --inputs " + other).out,
            "autobatch: error: " + other +
                ": inputs[0] is f32 (its \"dtype\" or \"shape\" says so) but it is for "
                "parameter 'x' (1 of 2) of 'main', which is f64 as the program declares: write "
                "\"dtype\": \"f64\", \"shape\": [] there, or drop both\n");
  EXPECT_EQ(RunCli("run " + program + " --inputs " + ok + " --types f64,f64").out,
            "autobatch: error: --types gives f64 for parameter 'n' (2 of 2) of 'main' but the "
            "program declares it i64: give i64 there, or drop --types\n");
}

TEST(CliTest, DumpedJsonRunsLikeTheSample) {
  Result dump = RunCli("ir collatz --json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  std::string program = WriteFile("collatz.json", dump.out);
  std::string inputs = WriteFile("collatz_inputs.json", R"({"inputs": [[1, 6, 27, 97]]})");
  // `--fused` compiles into a cache directory of the test's own.
  const std::string cache = ::testing::TempDir() + "autobatch_cli_jit_cache";
  ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", cache.c_str(), 1), 0);
  for (const char* vm : {"stack", "stackless", "reference", "stack --fused", "stack --compiled"}) {
    const bool reference = std::string(vm) == "reference";
    Result r = RunCliStdout("run " + program + " --inputs " + inputs + " --vm " + vm +
                            (reference ? "" : " --profile"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    nlohmann::json out = nlohmann::json::parse(r.out);
    EXPECT_EQ(out["outputs"][0]["values"], nlohmann::json({0, 8, 111, 118})) << vm;
    if (!reference) {
      EXPECT_GT(out["profile"]["steps"].get<int>(), 0);
    }
  }
  unsetenv("AUTOBATCH_CACHE_DIR");
  EXPECT_TRUE(std::filesystem::exists(cache));  // --fused compiled there
  Result stackless = RunCli("run " + program + " --inputs " + inputs + " --vm stackless --fused");
  EXPECT_EQ(stackless.exit_code, 1);
  EXPECT_THAT(stackless.out, HasSubstr("--fused runs fused blocks on the stack VM; with --vm "
                                       "stackless drop --fused (or use --vm stack)"));
  Result compiled_stackless =
      RunCli("run " + program + " --inputs " + inputs + " --vm stackless --compiled");
  EXPECT_EQ(compiled_stackless.exit_code, 1);
  EXPECT_THAT(compiled_stackless.out,
              HasSubstr("--compiled compiles the program for the stack VM's runtime; with --vm "
                        "stackless drop --compiled (or use --vm stack)"));
  Result both = RunCli("run " + program + " --inputs " + inputs + " --compiled --fused");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_THAT(both.out, HasSubstr("pass one of them"));
}

// `run --fused` with a cached library cut short (a valid ELF header, then
// nothing: loading it died of SIGBUS on every run) compiles it again and
// says so; a cache directory named through a symbolic link is refused,
// however the path is spelled (codegen/jit.h).
TEST(CliTest, FusedRunRepairsItsCacheAndRefusesALinkedOne) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::path(::testing::TempDir()) / ("autobatch_cli_jit_repair_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string cache = (root / "cache").string();
  const std::string inputs = WriteFile("repair_inputs.json", R"({"inputs": [[1, 6, 27, 97]]})");
  const std::string run = "run collatz --inputs " + inputs + " --vm stack --fused";
  ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", cache.c_str(), 1), 0);
  Result compiled = RunCli(run);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.out;
  fs::path library;
  for (const auto& entry : fs::directory_iterator(cache)) {
    if (entry.path().extension() == ".so") library = entry.path();
  }
  ASSERT_FALSE(library.empty());
  const uintmax_t size = fs::file_size(library);
  fs::resize_file(library, 4096);
  Result repaired = RunCli(run);
  EXPECT_EQ(repaired.exit_code, 0) << repaired.out;
  EXPECT_THAT(repaired.out, HasSubstr("does not match its checksum"));
  EXPECT_THAT(repaired.out, HasSubstr("so it is compiled again"));
  const size_t json = repaired.out.find("{\n");  // after the note on stderr
  ASSERT_NE(json, std::string::npos) << repaired.out;
  EXPECT_EQ(nlohmann::json::parse(repaired.out.substr(json))["outputs"][0]["values"],
            nlohmann::json({0, 8, 111, 118}));
  EXPECT_EQ(fs::file_size(library), size);

  const std::string link = (root / "link").string();
  fs::create_directory_symlink(cache, link);
  for (const std::string& spelling : {link, link + "/", link + "/."}) {
    ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", spelling.c_str(), 1), 0);
    Result refused = RunCli(run);
    EXPECT_EQ(refused.exit_code, 1) << spelling << "\n" << refused.out;
    EXPECT_THAT(refused.out, HasSubstr("goes through " + link + ", which is a symbolic link"))
        << spelling;
  }
  unsetenv("AUTOBATCH_CACHE_DIR");
}

// `ir --stage typed --json` writes an allocated program, which every VM
// runs (the stack VM's path lowers it again).
TEST(CliTest, TypedJsonRunsOnEveryVm) {
  Result dump = RunCli("ir collatz --stage typed --types i64 --json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  EXPECT_EQ(nlohmann::json::parse(dump.out)["stage"], "allocated");
  const std::string program = WriteFile("collatz_typed.json", dump.out);
  const std::string inputs =
      WriteFile("collatz_typed_inputs.json", R"({"inputs": [[1, 6, 27, 97]]})");
  for (const char* vm : {"stack", "stackless", "reference"}) {
    Result r = RunCli("run " + program + " --inputs " + inputs + " --vm " + vm);
    ASSERT_EQ(r.exit_code, 0) << vm << ": " << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)["outputs"][0]["values"],
              nlohmann::json({0, 8, 111, 118}))
        << vm;
  }
}

// A key given twice would silently lose one of its values.
TEST(CliTest, DuplicateJsonKeysAreErrors) {
  const std::string program = WriteFile("collatz_dup.json", RunCli("ir collatz --json").out);
  const std::string inputs =
      WriteFile("dup_inputs.json", R"({"inputs": [[1, 6]], "inputs": [[27]]})");
  Result r = RunCli("run " + program + " --inputs " + inputs);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr(inputs + ": not valid JSON: the key \"inputs\" appears twice "
                               "in the object at the top level"));
  nlohmann::json json = nlohmann::json::parse(RunCli("ir collatz --json").out);
  std::string text = json.dump();
  text.insert(1, R"("entry": 0, )");
  Result p = RunCli("run " + WriteFile("collatz_dup_entry.json", text) + " --inputs " +
                    WriteFile("ok_inputs.json", R"({"inputs": [[1]]})"));
  EXPECT_EQ(p.exit_code, 1) << p.out;
  EXPECT_THAT(p.out, HasSubstr("malformed autobatch IR JSON: not valid JSON: the key "
                               "\"entry\" appears twice"));
}

// A lowered dump prints as it is with --stage lowered, and runs like the
// sample: pea-nuts' tree lists its x as both param and result
// (coalesce_registers), which the JSON form keeps.
// `autobatch compile` writes a program's fused blocks (codegen/codegen.h): the
// same source from the sample and from its lowered JSON dump (one program,
// one fingerprint), and clear errors for a bad symbol or an unwritable file.
TEST(CliTest, CompileWritesFusedBlocks) {
  const std::string out = WriteFile("collatz_blocks.cc", "");
  Result compiled = RunCli("compile collatz --symbol CollatzBlocks -o " + out);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.out;
  std::ifstream file(out);
  const std::string source((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_THAT(source, HasSubstr("const autobatch::FusedProgram& CollatzBlocks()"));
  EXPECT_THAT(source, HasSubstr("void Segment0(const autobatch::FusedArgs& args)"));

  Result dump = RunCli("ir collatz --stage lowered --json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  const std::string program = WriteFile("collatz_lowered.json", dump.out);
  Result from_dump = RunCli("compile " + program + " --symbol CollatzBlocks");
  ASSERT_EQ(from_dump.exit_code, 0) << from_dump.out;
  EXPECT_EQ(from_dump.out, source);

  Result bad_symbol = RunCli("compile collatz --symbol 9lives");
  EXPECT_EQ(bad_symbol.exit_code, 1);
  EXPECT_THAT(bad_symbol.out, HasSubstr("'9lives' is not a C++ identifier"));
  Result bad_file = RunCli("compile collatz -o /nonexistent-dir/blocks.cc");
  EXPECT_EQ(bad_file.exit_code, 1);
  EXPECT_THAT(bad_file.out, HasSubstr("cannot write '/nonexistent-dir/blocks.cc'"));
  const std::string untyped = WriteFile("collatz_untyped.json", RunCli("ir collatz --json").out);
  Result no_types = RunCli("compile " + untyped);
  EXPECT_EQ(no_types.exit_code, 1);
  EXPECT_THAT(no_types.out, HasSubstr("compile needs the input types: pass --types"));
  Result typed = RunCli("compile " + untyped + " --types i64 --symbol CollatzBlocks");
  EXPECT_EQ(typed.exit_code, 0) << typed.out;
  EXPECT_EQ(typed.out, source);
}

TEST(CliTest, LoweredJsonPrintsAndRunsAsItIs) {
  Result dump = RunCli("ir peanuts --stage lowered --json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  const std::string program = WriteFile("peanuts_lowered.json", dump.out);
  Result text = RunCli("ir peanuts --stage lowered");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("func @tree(%x: f64[100] register, %depth: i64 full) -> "
                                  "(%x: f64[100] register)"));
  for (const char* stage : {"untyped", "lowered"}) {
    Result again = RunCli("ir " + program + " --stage " + stage);
    EXPECT_EQ(again.exit_code, 0) << again.out;
    EXPECT_EQ(again.out, text.out) << stage;
  }
  Result typed = RunCli("ir " + program + " --stage typed");
  EXPECT_EQ(typed.exit_code, 1) << typed.out;
  EXPECT_THAT(typed.out, HasSubstr("is already lowered, and --stage typed cannot undo that"));

  std::string x = "[";
  for (int i = 0; i < 100; ++i) x += (i ? ", " : "") + std::to_string(0.01 * i);
  x += "]";
  const std::string inputs = WriteFile(
      "peanuts_inputs.json", "{\"inputs\": [[" + x + ", " + x + "], [1, 2], [2, 3]]}");
  Result from_sample = RunCli("run peanuts --inputs " + inputs);
  Result from_dump = RunCli("run " + program + " --inputs " + inputs);
  Result reference = RunCli("run peanuts --vm reference --inputs " + inputs);
  ASSERT_EQ(from_sample.exit_code, 0) << from_sample.out;
  ASSERT_EQ(from_dump.exit_code, 0) << from_dump.out;
  ASSERT_EQ(reference.exit_code, 0) << reference.out;
  const nlohmann::json want = nlohmann::json::parse(reference.out)["outputs"];
  EXPECT_EQ(nlohmann::json::parse(from_sample.out)["outputs"], want);
  EXPECT_EQ(nlohmann::json::parse(from_dump.out)["outputs"], want);
}

TEST(CliTest, BlockPoliciesGiveTheSameOutputsOnOtherSchedules) {
  std::string inputs = WriteFile("fib_policy_inputs.json",
                                 R"({"inputs": [[0, 1, 5, 12, 3, 9, 9, 2, 15, 4]]})");
  nlohmann::json outputs[2];
  int steps[2];
  const char* policies[2] = {"lowest-index", "most-lanes"};
  for (int i = 0; i < 2; ++i) {
    Result r = RunCliStdout("run fibonacci --inputs " + inputs + " --profile --block-policy " +
                            policies[i]);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    nlohmann::json out = nlohmann::json::parse(r.out);
    outputs[i] = out["outputs"];
    steps[i] = out["profile"]["steps"].get<int>();
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_NE(steps[0], steps[1]);  // the option reaches the stack VM
  Result bad = RunCli("run fibonacci --inputs " + inputs + " --block-policy fastest");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.out, HasSubstr("most-lanes"));

  // Sharded runs (--shards): the same outputs; the summed profile.
  Result sharded = RunCliStdout("run fibonacci --inputs " + inputs + " --profile --shards 3");
  ASSERT_EQ(sharded.exit_code, 0) << sharded.out;
  nlohmann::json out = nlohmann::json::parse(sharded.out);
  EXPECT_EQ(out["outputs"], outputs[0]);
  EXPECT_EQ(out["profile"]["batch"], 10);
  bad = RunCli("run fibonacci --inputs " + inputs + " --shards 0");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.out, HasSubstr("--shards"));
}

TEST(CliTest, NonFiniteInputsAndOutputsAreStrings) {
  // Fibonacci typed for f64 inputs still returns i64: nan and inf lanes take
  // the base case (nan > 1 is false; inf recurses forever: bounded by depth).
  std::string inputs = WriteFile("nan_inputs.json", R"({"inputs": [["nan", "-inf", 3.0]]})");
  Result r = RunCli("run fibonacci --inputs " + inputs);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["outputs"][0]["values"].size(), 3u);
}

TEST(CliTest, ProfileFlagPrintsTables) {
  std::string inputs = WriteFile("fib_inputs.json", R"({"inputs": [[6, 7, 8, 7]]})");
  Result r = RunCli("run fibonacci --inputs " + inputs + " --profile");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("utilization"));
  EXPECT_THAT(r.out, HasSubstr("seconds"));
}

// `run` prints the outputs only; the profile (in the JSON, and its tables on
// stderr) only with --profile, which the reference interpreter cannot give.
TEST(CliTest, RunPrintsTheProfileOnlyOnRequest) {
  std::string inputs = WriteFile("fib_profile_inputs.json", R"({"inputs": [[6, 7, 8, 7]]})");
  Result plain = RunCli("run fibonacci --inputs " + inputs);
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  const nlohmann::json out = nlohmann::json::parse(plain.out);  // stderr is empty too
  ASSERT_EQ(out.size(), 1u) << out;  // {"outputs": ...} alone
  EXPECT_EQ(out["outputs"][0]["values"], nlohmann::json({13, 21, 34, 21}));
  Result profiled = RunCliStdout("run fibonacci --inputs " + inputs + " --profile");
  ASSERT_EQ(profiled.exit_code, 0) << profiled.out;
  const nlohmann::json with = nlohmann::json::parse(profiled.out);
  EXPECT_EQ(with["outputs"], out["outputs"]);
  EXPECT_GT(with["profile"]["steps"].get<int>(), 0);
  Result reference = RunCli("run fibonacci --inputs " + inputs + " --vm reference --profile");
  EXPECT_EQ(reference.exit_code, 1) << reference.out;
  EXPECT_THAT(reference.out,
              HasSubstr("error: --profile counts the batched VMs' blocks and primitives; the "
                        "reference interpreter keeps no profile: drop --profile or use --vm "
                        "stack or stackless"));
}

// `autobatch --version` prints the project's version (CMake's
// project(VERSION)).
TEST(CliTest, VersionPrintsTheProjectVersion) {
  Result r = RunCli("--version");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, std::string("autobatch ") + AUTOBATCH_VERSION + "\n");
}

// Every subcommand's --help shows each option's type (no bare TEXT), the
// integer ranges and the choices.
TEST(CliTest, HelpShowsTypesRangesAndChoices) {
  for (const char* command : {"ir", "run", "compile", "sample", "targets", "model", "opt"}) {
    Result r = RunCli(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out;
    EXPECT_THAT(r.out, Not(HasSubstr("TEXT"))) << command << "\n" << r.out;
  }
  Result sample = RunCli("sample --help");
  for (const char* text : {"--chains INT in [1, 16777216]", "--warmup INT in [0, 2147483647]",
                           "--seed INT in [0, 18446744073709551615]", "--delta NUMBER in (0, 1)",
                           "--max-depth INT in [1, 30]", "--algorithm {nuts,hmc,rwmh}",
                           "--shards INT in [1, 256] or auto", "--sig-figs INT in [1, 18]",
                           "--print-ir {untyped,typed,lowered}", "--output-file FILE",
                           "(default 4)", "(default 1000)", "`autobatch targets` describes"}) {
    EXPECT_THAT(sample.out, HasSubstr(text)) << sample.out;
  }
  // The samplers' test mocks are not offered to users.
  EXPECT_THAT(sample.out, Not(HasSubstr("energy_jump")));
  EXPECT_THAT(sample.out, Not(HasSubstr("never_uturn")));
  Result run = RunCli("run --help");
  for (const char* text : {"--vm {stack,stackless,reference}", "--shards INT in [1, 256]",
                           "--max-steps INT >= 0", "--timeout SECONDS in [0, 1e9]",
                           "--max-memory BYTES", "--inputs FILE REQUIRED", "(default 1)"}) {
    EXPECT_THAT(run.out, HasSubstr(text)) << run.out;
  }
  // A bad value is still a usage error naming the option and the range.
  Result bad = RunCli("run fibonacci --inputs x.json --shards 300");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("--shards: '300' is not an integer in [1, 256]"));
}

// `autobatch targets`: each target with its description, what it samples
// and its --target-params; the example models; the mocks only with --all.
TEST(CliTest, TargetsListsEachTargetWithItsParameters) {
  Result r = RunCli("targets");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* text :
       {"autobatch sample --target NAME", "  eight_schools\n      the non-centred eight schools",
        "samples mu, tau, eta[8] (10 coordinates)\n      no --target-params",
        "  iid_gaussian\n", "samples x[100] (100 coordinates with the defaults)",
        "      dimension  integer >= 1 (default 100)", "rho        correlation in (-1, 1)",
        "autobatch sample --model NAME --data samples/models/NAME.data.json",
        "  hierarchical\n      varying intercepts", "  poisson_regression\n"}) {
    EXPECT_THAT(r.out, HasSubstr(text)) << r.out;
  }
  EXPECT_THAT(r.out, Not(HasSubstr("energy_jump")));
  EXPECT_THAT(r.out, Not(HasSubstr("never_uturn")));
  EXPECT_THAT(r.out, Not(HasSubstr("mock")));
  Result all = RunCli("targets --all");
  ASSERT_EQ(all.exit_code, 0) << all.out;
  EXPECT_THAT(all.out, HasSubstr(r.out));  // the same, then the test targets
  EXPECT_THAT(all.out, HasSubstr("Test targets (mocks for the samplers' tests"));
  EXPECT_THAT(all.out, HasSubstr("  energy_jump\n      mock: "));
  EXPECT_THAT(all.out, HasSubstr("  never_uturn\n"));
  // The test targets still sample.
  Result mock = RunCli("sample --target never_uturn --chains 1 --warmup 0 --no-adapt "
                       "--samples 2 --max-depth 3 --no-progress");
  EXPECT_EQ(mock.exit_code, 0) << mock.out;
  Result extra = RunCli("targets extra");
  EXPECT_EQ(extra.exit_code, 2) << extra.out;
}

TEST(CliTest, ErrorsExitNonZeroWithAMessage) {
  std::string good = WriteFile("good_inputs.json", R"({"inputs": [[1, 2]]})");
  std::string truncated = WriteFile("truncated.json", R"({"format": "autobatch-ir", "vers)");
  std::string wrong_arity = WriteFile("two_inputs.json", R"({"inputs": [[1], [2]]})");
  std::string not_json = WriteFile("not_json.json", "this is not json");
  std::string deep = WriteFile("deep_inputs.json", R"({"inputs": [[1, 20]]})");
  std::string ragged = WriteFile("ragged.json", R"({"inputs": [[[1, 2], [3]]]})");
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"run nosuchsample --inputs " + good, "neither a .json program file nor a sample"},
           {"run " + truncated + " --inputs " + good, "truncated.json"},
           {"run fibonacci --inputs /nonexistent/inputs.json", "cannot open inputs file"},
           {"run fibonacci --inputs " + not_json, "not valid JSON"},
           {"run fibonacci --inputs " + wrong_arity, "takes 1 parameter (n)"},
           {"run fibonacci --inputs " + ragged, "expected an array of 2 elements"},
           {"run fibonacci --inputs " + good + " --backend cuda", "eigen"},
           {"run fibonacci --inputs " + deep + " --max-stack-depth 3", "max_stack_depth"},
           {"ir fibonacci --stage typed --types f64[", "--types"},
       }) {
    Result r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args;
  }
  Result usage = RunCli("frobnicate");
  EXPECT_EQ(usage.exit_code, 2) << usage.out;
}

// --tile-bytes reaches the stack VM: with the smallest tiles the profile
// counts tiles and the outputs do not change; a negative size is a usage
// error.
TEST(CliTest, TileBytesSplitsCompactBlocksIntoTiles) {
  std::string n = "[";
  for (int i = 0; i < 200; ++i) n += std::to_string(i % 12) + (i < 199 ? ", " : "]");
  std::string inputs = WriteFile("tile_inputs.json", R"({"inputs": [)" + n + "]}");
  Result whole = RunCliStdout("run fibonacci --inputs " + inputs + " --profile --tile-bytes 0");
  Result tiled = RunCliStdout("run fibonacci --inputs " + inputs + " --profile --tile-bytes 1");
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  ASSERT_EQ(tiled.exit_code, 0) << tiled.out;
  const nlohmann::json a = nlohmann::json::parse(whole.out);
  const nlohmann::json b = nlohmann::json::parse(tiled.out);
  EXPECT_EQ(a["outputs"], b["outputs"]);
  int64_t tiles_whole = 0, tiles = 0;
  for (const nlohmann::json& block : a["profile"]["blocks"]) tiles_whole += block["tiles"].get<int64_t>();
  for (const nlohmann::json& block : b["profile"]["blocks"]) tiles += block["tiles"].get<int64_t>();
  EXPECT_EQ(tiles_whole, 0);
  EXPECT_GT(tiles, 0);
  EXPECT_EQ(RunCli("run fibonacci --inputs " + inputs + " --tile-bytes -1").exit_code, 2);
}

// The run options' numbers are read exactly: out of the option's range, not
// a number of its kind, or too large for its type is a usage error (exit 2)
// naming the option and the value; never wrapped, clamped, read as octal,
// silently taken as "no limit", or passed on to abort in a backend.
TEST(CliTest, RunNumberOptionsAreCheckedExactly) {
  const std::string inputs = WriteFile("number_option_inputs.json", R"({"inputs": [[27]]})");
  for (const char* option : {
           "--max-stack-depth -1", "--max-stack-depth 0", "--max-stack-depth 1000000001",
           "--max-stack-depth 9223372036854775808", "--max-steps -1",
           "--max-steps 18446744073709551632", "--max-steps 1.5", "--max-steps 0x10",
           "--timeout nan", "--timeout -1", "--timeout -1e400", "--timeout inf",
           "--timeout 1e400", "--timeout 2e9", "--tile-bytes 18446744073709551616",
           "--tile-bytes -1", "--shards 4294967297", "--shards 0"}) {
    const std::string text(option);
    const Result r = RunCli("run collatz --inputs " + inputs + " " + text);
    EXPECT_EQ(r.exit_code, 2) << text << "\n" << r.out;
    const std::string name = text.substr(0, text.find(' '));
    const std::string value = text.substr(text.find(' ') + 1);
    EXPECT_THAT(r.out, HasSubstr(name + ": '" + value + "' is not")) << text;
  }
  // Decimal, not octal: 010 is ten steps (strtoll's base 0 read eight).
  const Result decimal = RunCli("run collatz --inputs " + inputs + " --max-steps 010");
  EXPECT_EQ(decimal.exit_code, 1) << decimal.out;
  EXPECT_THAT(decimal.out, HasSubstr("ran more than 10 block executions"));
  // 0 is "no limit" for both budgets; the largest timeout runs.
  const Result unlimited = RunCli("run collatz --inputs " + inputs + " --max-steps 0 --timeout 0");
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.out;
  const Result longest = RunCli("run collatz --inputs " + inputs + " --timeout 1e9");
  EXPECT_EQ(longest.exit_code, 0) << longest.out;
}

// --timeout bounds the compile too: a chain of 3,000 calls, whose compile
// takes over 0.1 s (docs/BENCHMARKS.md, "Compile time against program
// size"), run with --timeout 0.001 stops while compiling, on every VM, with
// the exit status and the start of the message of a run over its budget.
TEST(CliTest, TimeoutStopsTheCompileOfABigProgram) {
  const std::string program =
      WriteFile("call_chain_3000.ir", PrintProgram(testing::CallChain(3000)));
  const std::string inputs = WriteFile("call_chain_inputs.json", R"({"inputs": [[1, 2]]})");
  for (const char* vm : {"stack", "stackless", "reference"}) {
    const Result r = RunCli(absl::StrCat("run ", program, " --inputs ", inputs, " --vm ", vm,
                                         " --timeout 0.001"));
    EXPECT_EQ(r.exit_code, 1) << vm << "\n" << r.out;
    EXPECT_THAT(r.out, ::testing::StartsWith(
                           "autobatch: error: time budget exhausted while compiling: the "
                           "compile was stopped by the time budget (0.001 s) "))
        << vm;
    EXPECT_THAT(r.out, HasSubstr("raise the time budget (CallOptions::timeout_seconds, "
                                 "--timeout) if the program is just big\n"))
        << vm;
  }
  const Result given_time = RunCli("run " + program + " --inputs " + inputs + " --timeout 1e9");
  EXPECT_EQ(given_time.exit_code, 0) << given_time.out;
}

// A directory given where a file is read or written is called a directory,
// not read as an empty ("truncated") or invalid JSON file.
TEST(CliTest, DirectoriesGivenAsFilesAreNamedAsSuch) {
  const std::string dir = ::testing::TempDir() + "cli_a_directory.json";
  std::filesystem::create_directories(dir);
  const std::string good = WriteFile("dir_test_inputs.json", R"({"inputs": [[1, 2]]})");
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"ir " + dir, "'" + dir + "' is a directory, not a program file"},
           {"run " + dir + " --inputs " + good, "'" + dir + "' is a directory, not a program file"},
           {"run fibonacci --inputs " + dir, "--inputs: '" + dir + "' is a directory"},
           {"compile collatz -o " + dir, "-o/--output: '" + dir + "' is a directory"},
       }) {
    const Result r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("truncated"))) << c.args;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("not valid JSON"))) << c.args;
  }
}

// `compile --symbol` refuses the identifiers no C++ function can be named
// (EmitFusedBlocks would write source that does not compile): keywords,
// main, the namespaces the file uses, the types and macros of its headers
// (int64_t, size_t, INT64_MAX), the JIT's own names, reserved names. A name
// that merely contains a keyword is fine.
TEST(CliTest, CompileRejectsSymbolsNoFunctionCanHave) {
  for (const char* symbol : {"int", "class", "return", "co_await", "and", "char8_t", "main",
                             "std", "NULL", "__blocks", "_Blocks", "int64_t", "size_t",
                             "uint64_t", "INT64_MAX", "autobatch_jit_entry"}) {
    const Result r = RunCli(std::string("compile collatz --symbol ") + symbol);
    EXPECT_EQ(r.exit_code, 1) << symbol << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(std::string("--symbol '") + symbol + "' ")) << symbol;
    EXPECT_THAT(r.out, HasSubstr("so the generated C++ would not compile: choose another name"))
        << symbol;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("FusedProgram"))) << symbol;  // no source
  }
  EXPECT_THAT(RunCli("compile collatz --symbol int").out, HasSubstr("'int' is a C++ keyword"));
  const Result fine = RunCli("compile collatz --symbol int_blocks");
  EXPECT_EQ(fine.exit_code, 0) << fine.out;
  EXPECT_THAT(fine.out, HasSubstr("const autobatch::FusedProgram& int_blocks()"));
}

TEST(CliTest, NeverHaltingProgramHitsTheStepBudget) {
  // collatz on a negative number terminates immediately; use max-steps on a
  // long run instead: 27 needs 111 iterations.
  std::string inputs = WriteFile("long_inputs.json", R"({"inputs": [[27]]})");
  Result r = RunCli("run collatz --inputs " + inputs + " --max-steps 20");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("step budget exhausted"));
}

// The lists `autobatch opt --list-passes` prints under "pipelines".
std::string ListedPipeline(const std::string& listing, const std::string& label) {
  const size_t at = listing.find(label);
  if (at == std::string::npos) return "";
  const size_t begin = listing.find_first_not_of(' ', at + label.size());
  return listing.substr(begin, listing.find('\n', begin) - begin);
}

TEST(CliTest, OptListsEveryPassAndThePipelines) {
  Result r = RunCli("opt --list-passes");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* line :
       {"  thread_jumps                jumps through blocks that hold no ops go straight on\n",
        "  coalesce_copies(any_reads)  coalesce_copies, forwarding temporaries with other reads "
        "too\n",
        "  merge_blocks ", "  fold_copies ", "  propagate_copies ", "  remove_dead_ops ",
        "  remove_unreachable_blocks ", "  fold_branches ", "  compact_variables ",
        "  infer_types ", "  lower_calls ", "  order_blocks "}) {
    EXPECT_THAT(r.out, HasSubstr(line));
  }
  EXPECT_THAT(ListedPipeline(r.out, "lowered (LowerProgram):"),
              ::testing::StartsWith("remove_unreachable_blocks,repeat(thread_jumps,"));
}

// Running LowerProgram's list with opt gives what `ir --stage lowered` prints.
TEST(CliTest, OptRunsAnyListOfPassesAndMatchesThePipelines) {
  const std::string listing = RunCli("opt --list-passes").out;
  for (const char* sample : {"fibonacci", "collatz", "peanuts"}) {
    for (const auto& [stage, label] :
         {std::pair{"lowered", "lowered (LowerProgram):"}, std::pair{"typed", "typed (CompileProgram):"}}) {
      const std::string passes = ListedPipeline(listing, label);
      ASSERT_FALSE(passes.empty()) << listing;
      Result opt = RunCli(std::string("opt ") + sample + " --json --passes '" + passes + "'");
      Result ir = RunCli(std::string("ir ") + sample + " --json --stage " + stage);
      ASSERT_EQ(opt.exit_code, 0) << opt.out;
      ASSERT_EQ(ir.exit_code, 0) << ir.out;
      EXPECT_EQ(opt.out, ir.out) << sample << " " << stage;
    }
  }
  Result some = RunCli("opt collatz --passes 'infer_types, thread_jumps,allocate_variables'");
  ASSERT_EQ(some.exit_code, 0) << some.out;
  EXPECT_THAT(some.out, HasSubstr("program stage=allocated entry=@collatz"));
  Result none = RunCli("opt collatz --passes remove_unreachable_blocks");
  ASSERT_EQ(none.exit_code, 0) << none.out;
  EXPECT_THAT(none.out, HasSubstr("program stage=untyped entry=@collatz"));
}

TEST(CliTest, OptPrintsTheIrAfterEveryPass) {
  Result r = RunCli("opt fibonacci --passes 'repeat(thread_jumps,merge_blocks),infer_types' "
                    "--print-after-all");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("=== after thread_jumps ===\n"));
  EXPECT_THAT(r.out, HasSubstr("=== after merge_blocks ===\n"));
  EXPECT_THAT(r.out, HasSubstr("=== after infer_types ===\nprogram stage=typed"));
}

TEST(CliTest, OptErrorsNameTheProblem) {
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"opt fibonacci --passes thread_jumps,nope",
            "autobatch: error: no pass is called 'nope'; the passes are: "
            "remove_unreachable_blocks, thread_jumps, "},
           {"opt fibonacci --passes lower_calls",
            "autobatch: error: pass lower_calls failed: lower_calls needs an allocated program"},
           {"opt fibonacci --passes infer_types,coalesce_registers",
            "autobatch: error: pass coalesce_registers failed: coalesce_registers needs a "
            "lowered program"},
           {"opt fibonacci --passes 'repeat(thread_jumps'", "unbalanced parentheses"},
           {"opt fibonacci --passes thread_jumps,,merge_blocks", "has an empty name"},
           {"opt fibonacci", "autobatch: error: opt needs --passes, e.g. --passes "},
           {"opt --passes thread_jumps", "autobatch: error: opt needs a program"},
           {"opt no_such_sample --passes thread_jumps", "is neither a .json program file"},
           {"opt fibonacci --passes infer_types --types i64,i64",
            "takes 1 input(s) but 2 input type(s) were given"},
           {"opt fibonacci --passes infer_types --types int", "--types: cannot read 'int'"},
       }) {
    Result r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args;
  }
  // A program file without types needs --types for infer_types.
  Result dump = RunCli("ir collatz --json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  const std::string program = WriteFile("opt_collatz.json", dump.out);
  Result untyped = RunCli("opt " + program + " --passes infer_types");
  EXPECT_EQ(untyped.exit_code, 1) << untyped.out;
  EXPECT_THAT(untyped.out, HasSubstr("--passes runs infer_types, which needs the entry's input "
                                     "types: pass --types (e.g. --types i64)"));
  Result typed = RunCli("opt " + program + " --passes infer_types --types i64");
  EXPECT_EQ(typed.exit_code, 0) << typed.out;
}

}  // namespace
}  // namespace autobatch

namespace autobatch {
namespace {

// `ir`, `run` and `compile` take the IR's text form (tools/program_loader.h)
// as they take JSON: printing a text at its own stage gives it back without
// recompiling, and it runs like the sample it came from.
TEST(CliTest, TextProgramsLoadLikeJson) {
  for (const char* stage : {"untyped", "typed", "lowered"}) {
    Result text = RunCli(std::string("ir collatz --types i64 --stage ") + stage);
    ASSERT_EQ(text.exit_code, 0) << text.out;
    const std::string path = WriteFile(std::string("collatz_") + stage + ".ir", text.out);
    // The CLI prints a newline after the program.
    Result again = RunCli("ir " + path);
    EXPECT_EQ(again.exit_code, 0) << again.out;
    EXPECT_EQ(again.out, text.out) << stage;
    Result at_stage = RunCli("ir " + path + " --stage " + stage);
    EXPECT_EQ(at_stage.out, text.out) << stage;
    const std::string txt = WriteFile(std::string("collatz_") + stage + ".txt", text.out);
    EXPECT_EQ(RunCli("ir " + txt).out, text.out) << stage;
    // The text has no locations; everything else survives the trip to JSON.
    const std::string json = WriteFile(std::string("collatz_") + stage + "_text.json",
                                       RunCli("ir " + path + " --json").out);
    EXPECT_EQ(RunCli("ir " + json).out, text.out) << stage;
  }
  const std::string inputs = WriteFile("collatz_text_inputs.json", R"({"inputs": [[1, 6, 27, 97]]})");
  const std::string lowered = WriteFile("collatz_run.ir", RunCli("ir collatz --stage lowered").out);
  Result from_text = RunCli("run " + lowered + " --inputs " + inputs);
  ASSERT_EQ(from_text.exit_code, 0) << from_text.out;
  EXPECT_EQ(nlohmann::json::parse(from_text.out)["outputs"],
            nlohmann::json::parse(RunCli("run collatz --inputs " + inputs).out)["outputs"]);
  const std::string lowered_json =
      WriteFile("collatz_run.json", RunCli("ir " + lowered + " --json").out);
  Result compiled = RunCli("compile " + lowered + " --symbol B");
  EXPECT_EQ(compiled.exit_code, 0) << compiled.out;
  EXPECT_EQ(compiled.out, RunCli("compile " + lowered_json + " --symbol B").out);
  // JSON content is JSON whatever the extension.
  const std::string json_in_ir = WriteFile("collatz_json.ir", RunCli("ir collatz --json").out);
  EXPECT_EQ(RunCli("ir " + json_in_ir).out, RunCli("ir collatz").out);
}

TEST(CliTest, BadTextProgramsNameFileLineAndColumn) {
  const std::string bad = WriteFile("bad_text.ir",
                                    "program stage=untyped entry=@main\n\n"
                                    "func @main(%x: i64) -> (%y: ?) {\n^0:\n"
                                    "  %y: ? = frobnicate %x\n  return\n}\n");
  Result r = RunCli("ir " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr(bad + ":5:11: expected an op (a primitive of ir/primitives.def"));
  EXPECT_THAT(r.out, HasSubstr("found \"frobnicate\""));
  const std::string invalid = WriteFile("invalid_text.ir",
                                        "program stage=untyped entry=@main\n\n"
                                        "func @main(%x: i64) -> (%y: ?) {\n^0:\n"
                                        "  %y: ? = copy %x\n  indirect_goto\n}\n");
  Result v = RunCli("run " + invalid + " --inputs " +
                    WriteFile("ok_text_inputs.json", R"({"inputs": [[1]]})"));
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_THAT(v.out, HasSubstr(invalid + ": the program is not valid IR:\n"));
  Result missing = RunCli("ir /nonexistent/prog.ir");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.out, HasSubstr("cannot open program file '/nonexistent/prog.ir'"));
}

// Memory: a run that needs more than its limit (--max-memory, or by
// default 3/4 of what ulimit -v, the cgroup or physical memory allow) stops
// with exit status 1 and a message naming the limit; memory or threads the
// system refuses are the same kind of error, never an abort.
constexpr char kWideProgram[] = R"(program stage=untyped entry=@main

func @main(%x: ?) -> (%r: ?) {
^0 entry:
  %a: ? = broadcast %x {ints = [16777216]}
  %b: ? = add %a, %a
  %s: ? = reduce_sum %b
  %t: ? = reduce_sum %a
  %r: ? = add %s, %t
  return
}
)";

TEST(CliTest, MaxMemoryBoundsARun) {
  const std::string program = WriteFile("wide.ir", kWideProgram);
  const std::string inputs = WriteFile("wide_inputs.json", R"({"inputs": [[1, 2, 3, 4]]})");
  for (const char* vm : {"stack", "stackless", "reference"}) {
    Result r = RunCli("run " + program + " --inputs " + inputs + " --vm " + vm +
                      " --max-memory 64M");
    EXPECT_EQ(r.exit_code, 1) << vm << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr("memory limit, max_memory_bytes = 67108864 (64.0 MiB)")) << vm;
  }
  Result bad = RunCli("run " + program + " --inputs " + inputs + " --max-memory 4Q");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("'4Q' is not a byte count"));
  Result help = RunCli("run --help");
  EXPECT_THAT(help.out, HasSubstr("3/4 of the smallest of physical memory"));
}

// A sanitizer reserves terabytes of address space for its shadow memory,
// so nothing runs under `ulimit -v` there.
TEST(CliTest, UlimitVBoundsTheDefaultLimit) {
  if (autobatch::testing::kUnderSanitizer) GTEST_SKIP() << "a sanitizer's shadow memory does not fit ulimit -v";
  const std::string program = WriteFile("wide.ir", kWideProgram);
  const std::string inputs = WriteFile("wide_inputs.json", R"({"inputs": [[1, 2, 3, 4]]})");
  // 512 MiB a value over 4 lanes, under a 1 GB address space.
  const std::string limit = "ulimit -s 8192; ulimit -v 1000000; exec";
  Result ours = RunCli("run " + program + " --inputs " + inputs, limit);
  EXPECT_EQ(ours.exit_code, 1) << ours.out;
  EXPECT_THAT(ours.out, HasSubstr("would hold more than its memory limit"));
  // Told to go past it, the run meets the system's refusal: still an error.
  Result system = RunCli("run " + program + " --inputs " + inputs + " --max-memory 1T", limit);
  EXPECT_EQ(system.exit_code, 1) << system.out;
  EXPECT_THAT(system.out, HasSubstr("ran out of memory: the system refused an allocation"));
  // 255 backend threads of 8 MiB stacks do not fit: a thread that does not
  // start is an error too.
  const std::string fib_inputs = WriteFile("fib_inputs.json", R"({"inputs": [[5, 6]]})");
  Result threads = RunCli("run fibonacci --inputs " + fib_inputs + " --backend threaded:256", limit);
  EXPECT_EQ(threads.exit_code, 1) << threads.out;
  EXPECT_THAT(threads.out, HasSubstr("could not start a thread"));
}

}  // namespace
}  // namespace autobatch
