// `autobatch ir PROGRAM --dot` and `--stats`, run as a user would: Graphviz
// accepts the graph of every sample at every stage and of every fuzz corpus
// program; the stats print as text and JSON; conflicting flags are errors.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;     // stdout, and stderr too unless the command redirects it
};

Result RunShell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  Result result;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) {
    result.out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

Result RunCli(const std::string& args) {
  return RunShell(std::string(AUTOBATCH_CLI) + " " + args + " 2>&1");
}

bool HaveGraphviz() { return std::string(AUTOBATCH_DOT).find("NOTFOUND") == std::string::npos; }

// Writes `ir <args> --dot` to a file and has dot render it as SVG; fails
// when either command fails.
void ExpectGraphvizAccepts(const std::string& args, const std::string& name) {
  SCOPED_TRACE("ir " + args + " --dot");
  Result dot = RunShell(std::string(AUTOBATCH_CLI) + " ir " + args + " --dot");
  ASSERT_EQ(dot.exit_code, 0) << dot.out;
  ASSERT_THAT(dot.out, StartsWith("digraph autobatch {\n"));
  const std::string path = ::testing::TempDir() + "ir_dot_" + name + ".dot";
  std::ofstream(path, std::ios::binary) << dot.out;
  Result svg = RunShell(std::string(AUTOBATCH_DOT) + " -Tsvg " + path + " -o " + path +
                        ".svg 2>&1");
  EXPECT_EQ(svg.exit_code, 0) << "dot rejected " << path << ":\n" << svg.out;
  EXPECT_GT(std::filesystem::file_size(path + ".svg"), 0u);
}

TEST(IrDotGraphviz, EverySampleAtEveryStage) {
  if (!HaveGraphviz()) GTEST_SKIP() << "Graphviz's dot is not installed (tools/install_deps.sh)";
  for (const char* sample : {"collatz", "fibonacci", "is_even", "peanuts"}) {
    for (const char* stage : {"untyped", "typed", "lowered"}) {
      ExpectGraphvizAccepts(std::string(sample) + " --stage " + stage,
                            std::string(sample) + "_" + stage);
    }
  }
}

// The corpus holds every sample and the MCMC programs (NUTS: blocks of
// hundreds of ops) as JSON at stages untyped, allocated and lowered.
TEST(IrDotGraphviz, EveryCorpusProgram) {
  if (!HaveGraphviz()) GTEST_SKIP() << "Graphviz's dot is not installed (tools/install_deps.sh)";
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(AUTOBATCH_SOURCE_DIR "/tests/fuzz/corpus"))) {
    ExpectGraphvizAccepts(entry.path().string(), entry.path().stem().string());
    ++programs;
  }
  EXPECT_GE(programs, 20);
}

// A JSON program whose names hold quotes, backslashes, a newline, braces
// and angle brackets.
TEST(IrDotGraphviz, HostileNamesFromAJsonFile) {
  if (!HaveGraphviz()) GTEST_SKIP() << "Graphviz's dot is not installed (tools/install_deps.sh)";
  Result dump = RunCli("ir fibonacci --stage lowered --json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  nlohmann::json program = nlohmann::json::parse(dump.out);
  const std::string hostile = "\"x\\N\\\"\n{a|b}<c>\\";
  for (auto& function : program["functions"]) {
    function["name"] = function["name"].get<std::string>() + hostile;
    for (auto& block : function["blocks"]) block["label"] = "l" + hostile;
  }
  for (auto& variable : program["variables"]) {
    variable["name"] = variable["name"].get<std::string>() + hostile;
  }
  const std::string path = ::testing::TempDir() + "ir_dot_hostile.json";
  std::ofstream(path) << program.dump();
  ExpectGraphvizAccepts(path, "hostile");
  Result stats = RunCli("ir " + path + " --stats");
  EXPECT_EQ(stats.exit_code, 0) << stats.out;
  EXPECT_THAT(stats.out, HasSubstr("@\"fibonacci\\x22x\\x5cN\\x5c\\x22\\x0a{a|b}<c>\\x5c\""));
}

TEST(IrStatsCli, TextAtEveryStage) {
  Result untyped = RunCli("ir fibonacci --stats");
  ASSERT_EQ(untyped.exit_code, 0) << untyped.out;
  EXPECT_THAT(untyped.out, StartsWith("program stage=untyped entry=@fibonacci: "));
  EXPECT_THAT(untyped.out, HasSubstr("no memory estimate"));
  EXPECT_THAT(untyped.out, HasSubstr("--types"));

  Result lowered = RunCli("ir fibonacci --stage lowered --stats");
  ASSERT_EQ(lowered.exit_code, 0) << lowered.out;
  EXPECT_THAT(lowered.out, StartsWith("program stage=lowered entry=@fibonacci: "));
  EXPECT_THAT(lowered.out, HasSubstr("memory per lane (estimate)"));
  EXPECT_THAT(lowered.out, HasSubstr("stack per recursion depth"));
  EXPECT_THAT(lowered.out, HasSubstr("  recursive\n"));
  EXPECT_THAT(lowered.out, HasSubstr("  push_goto "));

  Result typed = RunCli("ir peanuts --stage typed --stats");
  ASSERT_EQ(typed.exit_code, 0) << typed.out;
  EXPECT_THAT(typed.out, StartsWith("program stage=allocated "));
  EXPECT_THAT(typed.out, HasSubstr("  register "));
}

TEST(IrStatsCli, Json) {
  Result untyped = RunCli("ir collatz --stats --json");
  ASSERT_EQ(untyped.exit_code, 0) << untyped.out;
  nlohmann::json json = nlohmann::json::parse(untyped.out);
  EXPECT_EQ(json["stage"], "untyped");
  EXPECT_TRUE(json["memory"].is_null());
  EXPECT_GT(json["ops"].get<int>(), 0);

  Result lowered = RunCli("ir collatz --stage lowered --types i64 --stats --json");
  ASSERT_EQ(lowered.exit_code, 0) << lowered.out;
  json = nlohmann::json::parse(lowered.out);
  EXPECT_EQ(json["stage"], "lowered");
  EXPECT_GT(json["memory"]["stored_bytes"].get<int>(), 0);
  EXPECT_EQ(json["memory"]["pc_entry_bytes"], 4);
}

TEST(IrDotStatsCli, ConflictingFlagsAreErrors) {
  Result dot_json = RunCli("ir fibonacci --dot --json");
  EXPECT_EQ(dot_json.exit_code, 1) << dot_json.out;
  EXPECT_EQ(dot_json.out,
            "autobatch: error: --dot writes a Graphviz graph and cannot be combined with "
            "--json: drop one (--stats --json writes the stats as JSON)\n");
  Result dot_stats = RunCli("ir fibonacci --stats --dot");
  EXPECT_EQ(dot_stats.exit_code, 1) << dot_stats.out;
  EXPECT_THAT(dot_stats.out, HasSubstr("cannot be combined with --stats"));
  // --types and --stage keep their own errors.
  Result no_types = RunCli("ir fibonacci --stage lowered --types f64[ --dot");
  EXPECT_EQ(no_types.exit_code, 1) << no_types.out;
  EXPECT_THAT(no_types.out, HasSubstr("--types: cannot read 'f64['"));
}

}  // namespace
}  // namespace autobatch
