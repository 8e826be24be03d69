// Text-in, text-out pass tests: every tests/passes/text/*.ir runs one pass.
//
// A test file holds, in order:
//   // RUN: <pass> [--types T1,T2,...]      (the pass; --types for infer_types)
//   the input program, in the IR's text form (ir/parser.h)
//   // ----- expected output -----
//   the program the pass returns, as PrintProgram prints it
// The runner parses the input, checks that it verifies, runs exactly the
// named pass, verifies the result and compares its text with the expected
// part. AUTOBATCH_UPDATE_GOLDENS=1 rewrites the expected part instead (review
// the diff). Add a case by writing the first two parts and running with
// AUTOBATCH_UPDATE_GOLDENS=1.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/registry.h"

namespace autobatch {
namespace {

constexpr char kRunPrefix[] = "// RUN: ";
constexpr char kSeparator[] = "// ----- expected output -----\n";

std::string TextDir() { return AUTOBATCH_SOURCE_DIR "/tests/passes/text"; }

std::vector<std::string> TestFiles() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(TextDir())) {
    if (entry.path().extension() == ".ir") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// `i64,f64[3]` (commas inside brackets belong to a shape).
std::vector<TensorType> ParseTypes(const std::string& text, std::string* error) {
  std::vector<TensorType> types;
  std::string current;
  int depth = 0;
  auto flush = [&] {
    std::optional<TensorType> t = ParseTensorType(current);
    if (!t) *error = "cannot read type '" + current + "'";
    if (t) types.push_back(*t);
    current.clear();
  };
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      flush();
    } else if (c != ' ') {
      current += c;
    }
  }
  if (!current.empty()) flush();
  return types;
}

class PassTextTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PassTextTest, MatchesExpectedOutput) {
  const std::string path = TextDir() + "/" + GetParam() + ".ir";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream contents;
  contents << in.rdbuf();
  const std::string text = contents.str();

  ASSERT_EQ(text.rfind(kRunPrefix, 0), 0u)
      << path << ": the first line must be '" << kRunPrefix << "<pass> [--types ...]'";
  const std::string run_line = text.substr(0, text.find('\n'));
  std::string pass_name = run_line.substr(std::string(kRunPrefix).size());
  std::vector<TensorType> types;
  if (size_t flag = pass_name.find(" --types "); flag != std::string::npos) {
    std::string error;
    types = ParseTypes(pass_name.substr(flag + 9), &error);
    ASSERT_TRUE(error.empty()) << path << ": " << error;
    pass_name = pass_name.substr(0, flag);
  }
  absl::StatusOr<const PassInfo*> pass = FindPass(pass_name);
  ASSERT_TRUE(pass.ok()) << path << ": " << pass.status();

  const size_t separator = text.find(kSeparator);
  const std::string input = text.substr(0, separator);
  absl::StatusOr<Program> program = ParseProgram(input);
  ASSERT_TRUE(program.ok()) << path << ": " << program.status();
  ASSERT_TRUE(VerifyProgram(*program).ok()) << path << ": the input does not verify:\n"
                                            << VerifyProgram(*program);
  absl::StatusOr<Program> output =
      (*pass)->run(*std::move(program), PassContext{.input_types = types});
  ASSERT_TRUE(output.ok()) << path << ": " << pass_name << " failed: " << output.status();
  ASSERT_TRUE(VerifyProgram(*output).ok()) << path << ": the output does not verify:\n"
                                           << VerifyProgram(*output);
  const std::string actual = PrintProgram(*output);

  const char* update = std::getenv("AUTOBATCH_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary);
    out << input << kSeparator << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  ASSERT_NE(separator, std::string::npos)
      << path << ": no line '" << kSeparator
      << "' (run with AUTOBATCH_UPDATE_GOLDENS=1 to add the expected output)";
  EXPECT_EQ(actual, text.substr(separator + std::string(kSeparator).size()))
      << path << " differs from the pass's output (if the change is intended, rerun with "
      << "AUTOBATCH_UPDATE_GOLDENS=1 and review the diff)";
}

INSTANTIATE_TEST_SUITE_P(Files, PassTextTest, ::testing::ValuesIn(TestFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// A test of the runner itself: it finds the converted pass goldens.
TEST(PassTextFilesTest, EveryPassHasACase) {
  std::vector<std::string> files = TestFiles();
  for (const char* pass : {"allocate_variables", "coalesce_copies", "coalesce_registers", "cse",
                           "fold_constants", "fuse_pop_push", "infer_types", "inline_calls",
                           "lower_calls", "order_blocks", "remove_dead_ops",
                           "simplify_arithmetic"}) {
    EXPECT_TRUE(std::any_of(files.begin(), files.end(),
                            [&](const std::string& f) { return f.rfind(pass, 0) == 0; }))
        << pass;
  }
}

}  // namespace
}  // namespace autobatch
