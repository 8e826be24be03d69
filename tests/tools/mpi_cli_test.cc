// `mpirun -n R autobatch sample|run` (R = 2 and 3, more ranks than chains
// included): every chain's CSV file (17 significant digits) and the summary
// are a one-process run's, the elapsed times and run figures that depend on
// the processes masked; rank 0 alone prints progress, of every rank; `run` prints the same outputs byte for byte; bad
// input ends every rank with one message of ours and exit status 1.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/files.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using testing::FreshTempDir;

struct Result {
  int exit_code = -1;
  std::string out;  // stdout
};

// Runs `command` through the shell; returns its stdout and exit status.
Result Shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  Result result;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::string Mpirun(int ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "OMPI_MCA_btl_vader_single_copy_mechanism=none " MPIEXEC " --oversubscribe "
         "--bind-to none -n " + std::to_string(ranks) + " ";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A CSV file without its elapsed-time block.
std::string WithoutTimes(const std::string& csv) {
  return std::regex_replace(csv, std::regex("#  Elapsed Time:[^]*"), "");
}

// The summary text without the lines whose figures depend on the processes.
std::string WithoutRunFigures(const std::string& summary) {
  return std::regex_replace(summary,
                            std::regex("(Wall time|ESS_bulk\\(lp__\\)|Batch utilization)[^\\n]*\\n"),
                            "");
}

nlohmann::json Masked(nlohmann::json j) {
  for (const char* key : {"compile_seconds", "warmup_seconds", "sampling_seconds", "vm_calls",
                          "num_processes", "ess_bulk_lp_per_second", "leapfrogs_computed",
                          "utilization"}) {
    j.erase(key);
  }
  return j;
}

TEST(MpiCliTest, SampleGivesTheOneProcessFiles) {
  const std::string dir = FreshTempDir("mpi_cli_sample");
  for (const int chains : {5, 2}) {
    SCOPED_TRACE(std::to_string(chains) + " chains");
    const std::string args = " sample --target eight_schools --chains " +
                             std::to_string(chains) +
                             " --warmup 100 --samples 60 --seed 3 --thin 2 --save-warmup "
                             "--no-progress --sig-figs 17 ";
    const std::string one = dir + "/one" + std::to_string(chains);
    Result single = Shell(std::string(AUTOBATCH_CLI) + args + "--output-dir " + one +
                        " --summary-json " + one + ".json 2>&1");
    ASSERT_EQ(single.exit_code, 0) << single.out;
    for (const int ranks : {2, 3}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks");
      const std::string many = dir + "/many" + std::to_string(chains) + "_" + std::to_string(ranks);
      Result sharded = Shell(Mpirun(ranks) + AUTOBATCH_CLI + args + "--output-dir " + many +
                           " --summary-json " + many + ".json 2>/dev/null");
      ASSERT_EQ(sharded.exit_code, 0) << sharded.out;
      EXPECT_EQ(WithoutRunFigures(sharded.out), WithoutRunFigures(single.out));
      EXPECT_THAT(sharded.out, HasSubstr("(the longest of " + std::to_string(ranks) +
                                         " processes)"));
      for (int k = 1; k <= chains; ++k) {
        const std::string name = "/output_" + std::to_string(k) + ".csv";
        EXPECT_EQ(WithoutTimes(ReadFile(many + name)), WithoutTimes(ReadFile(one + name))) << k;
      }
      const nlohmann::json a = nlohmann::json::parse(ReadFile(one + ".json"));
      const nlohmann::json b = nlohmann::json::parse(ReadFile(many + ".json"));
      EXPECT_EQ(b["num_processes"], ranks);
      EXPECT_EQ(Masked(b), Masked(a));
    }
  }
}

// Progress (stderr, plain lines: not a terminal) comes from rank 0 only and
// counts every rank's chains: one "done" line, and every line says so.
TEST(MpiCliTest, ProgressIsPrintedOnceForEveryRank) {
  const std::string dir = FreshTempDir("mpi_cli_progress");
  Result sharded = Shell(Mpirun(2) + AUTOBATCH_CLI +
                         " sample --target eight_schools --chains 6 --warmup 100 --samples 60 "
                         "--output-dir " + dir + " 2>&1 >/dev/null");
  ASSERT_EQ(sharded.exit_code, 0) << sharded.out;
  const std::regex line("(warmup|sampling|done) +[0-9]+/160 .*chains 6 on 2 ranks.*");
  int lines = 0, done = 0;
  std::istringstream in(sharded.out);
  for (std::string text; std::getline(in, text);) {
    if (text.rfind("warmup", 0) != 0 && text.rfind("sampling", 0) != 0 &&
        text.rfind("done", 0) != 0) {
      continue;
    }
    ++lines;
    EXPECT_TRUE(std::regex_match(text, line)) << text;
    done += text.rfind("done", 0) == 0 ? 1 : 0;
  }
  EXPECT_GE(lines, 2) << sharded.out;
  EXPECT_EQ(done, 1) << sharded.out;
}

TEST(MpiCliTest, RunPrintsTheOneProcessOutputs) {
  const std::string dir = FreshTempDir("mpi_cli_run");
  std::ofstream(dir + "/in.json") << R"({"inputs": [[6, 7, 8, 7, 3, 12, 1]]})";
  const std::string args = std::string(AUTOBATCH_CLI) + " run fibonacci --inputs " + dir + "/in.json";
  Result single = Shell(args);
  ASSERT_EQ(single.exit_code, 0) << single.out;
  for (const int ranks : {2, 3}) {
    Result sharded = Shell(Mpirun(ranks) + args);
    EXPECT_EQ(sharded.exit_code, 0);
    EXPECT_EQ(sharded.out, single.out) << ranks << " ranks";
  }
}

// One message of ours, on stderr, before Open MPI's own banner; exit 1.
// The kinds: a bad argument, an unwritable output path, a missing and a
// malformed file, a memory budget every rank exceeds, and a stack budget
// only rank 1's lanes exceed (named in the one message).
TEST(MpiCliTest, BadInputEndsEveryRankWithOneMessage) {
  const std::string dir = FreshTempDir("mpi_cli_errors");
  std::ofstream(dir + "/malformed.json") << R"({"inputs": [[6, 7)";
  // 6 lanes over 2 ranks: rank 1 runs lanes 3 to 5, and lane 5 recurses deep.
  std::ofstream(dir + "/deep.json") << R"({"inputs": [[5, 5, 5, 5, 5, 40]]})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" sample --target nonexistent", "nonexistent"},
      {" sample --target eight_schools --chains 3 --warmup 10 --samples 10 --output-dir " + dir +
           "/out/../../../../../../../proc/x",
       "/proc/x"},
      {" run fibonacci --inputs " + dir + "/missing.json", "missing.json"},
      {" run fibonacci --inputs " + dir + "/malformed.json", "malformed.json"},
      {" sample --target eight_schools --chains 64 --warmup 10 --samples 1000 --max-memory 1000000 "
       "--output-dir " + dir + "/budget",
       "memory"},
      {" run fibonacci --max-stack-depth 20 --inputs " + dir + "/deep.json", "rank 1: lanes 3 to 5"},
  };
  for (const auto& [args, named] : cases) {
    SCOPED_TRACE(args);
    Result r = Shell(Mpirun(2) + AUTOBATCH_CLI + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.out, HasSubstr(named));
    const std::regex ours_pattern("autobatch[a-z ]*: error:");
    const auto count = std::distance(
        std::sregex_iterator(r.out.begin(), r.out.end(), ours_pattern), std::sregex_iterator());
    EXPECT_EQ(count, 1) << r.out;
    const size_t ours = r.out.find(": error:");
    const size_t banner = r.out.find("-----");
    if (banner != std::string::npos) {
      EXPECT_LT(ours, banner) << r.out;
    }
  }
}

// A rank killed with SIGKILL ends the job: mpirun ends the other ranks and
// exits non-zero, within seconds, instead of leaving them waiting for the
// dead rank at the next collective step.
TEST(MpiCliTest, ARankKilledEndsTheJob) {
  const std::string dir = FreshTempDir("mpi_cli_kill");
  // A run of seconds (55 MB of warmup draws); its rank 1 is killed as it starts.
  const std::string command =
      Mpirun(2) + AUTOBATCH_CLI +
      " sample --target eight_schools --chains 4 --warmup 100000 --samples 100 --output-dir " +
      dir + "/out > " + dir +
      "/out.txt 2> " + dir + "/err.txt & echo $!";
  Result started = Shell(command);
  const std::string mpirun_pid = started.out.substr(0, started.out.find('\n'));
  ASSERT_FALSE(mpirun_pid.empty());
  // The ranks are mpirun's children running autobatch; wait for two of them.
  std::string ranks;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    ranks = Shell("pgrep -P " + mpirun_pid + " -f 'autobatch sample'").out;
    if (std::count(ranks.begin(), ranks.end(), '\n') >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(std::count(ranks.begin(), ranks.end(), '\n'), 2) << ranks;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string victim = ranks.substr(ranks.find('\n') + 1);
  ASSERT_EQ(Shell("kill -9 " + victim).exit_code, 0);
  // mpirun (not our child: the shell's) exits; poll until it is gone.
  bool gone = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    gone = Shell("kill -0 " + mpirun_pid + " 2>/dev/null").exit_code != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "mpirun still runs a minute after a rank was killed";
  if (!gone) Shell("kill -9 " + mpirun_pid);
  // No rank is left behind ("[m]" keeps pgrep's own shell from matching).
  EXPECT_EQ(Shell("pgrep -f '[m]pi_cli_kill/out'").out, "");
  EXPECT_THAT(ReadFile(dir + "/err.txt"), HasSubstr("signal 9"));
}

}  // namespace
}  // namespace autobatch
