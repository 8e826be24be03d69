// Runs the fuzzer's seed corpus and every saved crash through the fuzzer's body, in every build.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fuzz/program_fuzz_target.h"
#include "tests/testing/golden.h"

namespace autobatch {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = fs::path(AUTOBATCH_SOURCE_DIR) / "tests" / "fuzz";

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != "README.md") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The fuzzer's limits, but with a wall-clock budget far beyond any seed's
// run, so the step budget is always the one that stops a long run: the
// goldens must not depend on the machine's speed (CI's ASan build on a
// loaded machine once took more than the fuzzer's 5 s for one seed, and
// reported DEADLINE_EXCEEDED for RESOURCE_EXHAUSTED).
FuzzLimits GoldenLimits() {
  FuzzLimits limits;
  limits.timeout_seconds = 3600;
  return limits;
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every seed is a valid program (the fuzzer mutates from there) and breaks
// no promise; the per-file outcomes are a golden, so a change in how far a
// sample program gets (e.g. a pass starts rejecting it) shows up.
TEST(FuzzCorpusTest, SeedsLoadVerifyAndAgree) {
  std::vector<fs::path> files = FilesIn(kFuzzDir / "corpus");
  ASSERT_GE(files.size(), 25u) << "the seed corpus is missing; run tools/make_fuzz_corpus.sh";
  std::string summary;
  int compared = 0;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    FuzzOutcome outcome = RunFuzzInput(ReadBytes(file), GoldenLimits());
    EXPECT_TRUE(outcome.loaded && outcome.verified) << outcome.rejected;
    EXPECT_EQ(outcome.finding, "");
    compared += outcome.compared ? 1 : 0;
    summary += file.filename().string() + ": " + outcome.Summary() + "\n";
  }
  // The seeds must exercise the comparison of the three executors, not only
  // the loader: most untyped and allocated seeds finish within the budgets.
  EXPECT_GE(compared, static_cast<int>(files.size()) / 3) << summary;
  EXPECT_TRUE(testing::MatchesGoldenFile(summary, "tests/fuzz/golden", "corpus_outcomes"));
}

// Each file in regressions/ once crashed the fuzzer (docs/FUZZING.md says
// which bug); now it must run to an outcome without a finding.
TEST(FuzzCorpusTest, RegressionsNoLongerFail) {
  std::string summary;
  for (const fs::path& file : FilesIn(kFuzzDir / "regressions")) {
    SCOPED_TRACE(file.string());
    FuzzOutcome outcome = RunFuzzInput(ReadBytes(file), GoldenLimits());
    EXPECT_EQ(outcome.finding, "");
    summary += file.filename().string() + ": " + outcome.Summary() + "\n";
  }
  EXPECT_TRUE(testing::MatchesGoldenFile(summary, "tests/fuzz/golden", "regression_outcomes"));
}

}  // namespace
}  // namespace autobatch
