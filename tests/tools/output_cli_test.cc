// The command line's outputs are never torn or mixed: a failed write of
// stdout or of a file is exit status 1 with its reason, files are replaced
// whole, symbolic links are refused, an output directory is held by one run,
// and an earlier run's extra chain files are removed.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/files.h"

namespace autobatch {
namespace {

using testing::ReadFile;
using testing::FreshTempDir;

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int exit_code = -1;  // -1: killed by a signal
  std::string err;     // stderr (and stdout, unless redirected)
};

// Runs `sh -c "<shell_prefix> exec autobatch <args>"` with standard output
// on `stdout_fd` (-1: closed) and standard error captured. SIGPIPE and
// SIGXFSZ are left at their defaults, as a user's shell leaves them, unless
// `shell_prefix` changes them.
Result RunWithStdout(const std::string& args, int stdout_fd,
                     const std::string& shell_prefix = "") {
  // One file per test process: ctest runs this binary's tests in parallel.
  const std::string err_path =
      ::testing::TempDir() + "output_cli_stderr_" + std::to_string(getpid()) + ".txt";
  const std::string command = shell_prefix + " exec " + AUTOBATCH_CLI + " " + args;
  const pid_t pid = fork();
  if (pid == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, 2);
    if (stdout_fd >= 0) {
      dup2(stdout_fd, 1);
    } else {
      close(1);
    }
    signal(SIGPIPE, SIG_DFL);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Result result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.err = ReadFile(err_path);
  return result;
}

// Runs `autobatch args` through the shell, stdout and stderr together.
Result RunCli(const std::string& args) {
  const std::string command = std::string(AUTOBATCH_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  Result result;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) {
    result.err.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

const std::string kSmallSample =
    "sample --target iid_gaussian --target-params dimension=2 --warmup 100 --samples 100 "
    "--no-progress ";

// Every command that prints: on a full disk it used to exit 0 with its
// output cut mid-way. Now: status 1 and the reason.
TEST(OutputCliTest, StdoutOnAFullDiskFailsWithTheReason) {
  const std::string dir = FreshTempDir("output_cli_stdout");
  { std::ofstream(dir + "/inputs.json") << R"({"inputs": [[1, 6, 27, 97]]})"; }
  const int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  const std::vector<std::string> commands = {
      "ir collatz --json", "ir collatz --stats", "run collatz --inputs " + dir + "/inputs.json",
      "compile collatz", "opt --list-passes", "model eight_schools --json",
      kSmallSample + "--chains 2", kSmallSample + "--print-ir untyped"};
  for (const std::string& args : commands) {
    Result r = RunWithStdout(args, full);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("writing standard output failed: No space left on device"))
        << args;
  }
  close(full);
}

// A closed pipe (the reader gone) is EPIPE, reported, not a silent signal;
// a closed descriptor (`>&-`) is reported too.
TEST(OutputCliTest, StdoutOnAClosedPipeOrDescriptorFailsWithTheReason) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  Result r = RunWithStdout("ir collatz --json", fds[1]);
  close(fds[1]);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("writing standard output failed: Broken pipe"));
  r = RunWithStdout("ir collatz --json", -1);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("writing standard output failed: Bad file descriptor"));
}

// Output files on a full disk: the summary JSON, the adaptation file and
// the generated C++ are errors with the reason.
TEST(OutputCliTest, OutputFilesOnAFullDiskFailWithTheReason) {
  const std::vector<std::string> commands = {kSmallSample + "--summary-json /dev/full",
                                             kSmallSample + "--save-adaptation /dev/full",
                                             kSmallSample + "--output-file /dev/full",
                                             "compile collatz -o /dev/full"};
  const int null = open("/dev/null", O_WRONLY);
  ASSERT_GE(null, 0);
  for (const std::string& args : commands) {
    Result r = RunWithStdout(args, null);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("cannot write '/dev/full'")) << args;
    EXPECT_THAT(r.err, HasSubstr("No space left on device")) << args;
  }
  close(null);
}

// An output path that is a symbolic link is refused before sampling, and
// its target is unchanged (it used to be followed and overwritten).
TEST(OutputCliTest, SymbolicLinksAreRefusedAndTheirTargetsKept) {
  const std::string dir = FreshTempDir("output_cli_symlink");
  { std::ofstream(dir + "/precious") << "keep me"; }
  const std::string link = dir + "/link";
  std::filesystem::create_symlink(dir + "/precious", link);
  for (const std::string option : {"--summary-json", "--save-adaptation", "--output-file"}) {
    Result r = RunCli(kSmallSample + option + " " + link);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(option + ": '" + link + "' is a symbolic link"));
  }
  Result r = RunCli("compile collatz -o " + link);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--output: '" + link + "' is a symbolic link"));
  // A chain's CSV file in the output directory.
  std::filesystem::create_directories(dir + "/out");
  std::filesystem::create_symlink(dir + "/precious", dir + "/out/output_2.csv");
  r = RunCli(kSmallSample + "--chains 2 --output-dir " + dir + "/out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("chain 1: '" + dir + "/out/output_2.csv' is a symbolic link"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/output_1.csv"));
  EXPECT_EQ(ReadFile(dir + "/precious"), "keep me");
}

// Two runs on one output directory used to both exit 0, leaving CSV files
// with one run's header and the other's rows. The second now fails at once
// (before sampling), naming the directory; the lock is the one a run takes
// (flock on <dir>/.autobatch.lock), held here by the test as a running
// sampler would.
TEST(OutputCliTest, ASecondRunOnALockedDirectoryFailsAtOnce) {
  const std::string dir = FreshTempDir("output_cli_lock");
  const int fd = open((dir + "/.autobatch.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  const auto start = std::chrono::steady_clock::now();
  Result r = RunCli(
      "sample --target iid_gaussian --chains 2 --warmup 20000 --samples 20000 --output-dir " +
      dir);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--output-dir: '" + dir +
                               "' is in use: another autobatch run holds its lock"));
  EXPECT_THAT(r.err, Not(HasSubstr("grad/s")));  // nothing sampled
  EXPECT_LT(seconds, 3);  // the 4x10^4 iterations (~15 s) were not run
  EXPECT_FALSE(std::filesystem::exists(dir + "/output_1.csv"));
  close(fd);  // released: the same run goes ahead
  r = RunCli(kSmallSample + "--chains 2 --output-dir " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFile(dir + "/output_2.csv"), HasSubstr("lp__"));
}

// A rerun with fewer chains used to leave the earlier run's extra CSV files
// without a word. They are removed before sampling, and said so; files not
// named as the writer names them are left alone.
TEST(OutputCliTest, AnEarlierRunsExtraChainFilesAreRemoved) {
  const std::string dir = FreshTempDir("output_cli_stale");
  Result r = RunCli(kSmallSample + "--chains 4 --output-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  { std::ofstream(dir + "/output_9.csv.tmp.12345") << "killed run"; }
  { std::ofstream(dir + "/output_01.csv") << "not ours"; }
  { std::ofstream(dir + "/notes.txt") << "not ours"; }
  r = RunCli(kSmallSample + "--chains 2 --output-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("removed 3 file(s) of an earlier run from '" + dir +
                               "' that this run of 2 chain(s) does not write: output_3.csv, "
                               "output_4.csv, output_9.csv.tmp.12345"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/output_2.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/output_3.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/output_4.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/output_9.csv.tmp.12345"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/output_01.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/notes.txt"));
}

// On a full disk (here: a file-size limit, with SIGXFSZ ignored so the
// write fails with EFBIG as on a full disk) the CSV writer used to leave one
// file cut mid-row and name only one chain. Now every failed chain is named,
// no chain's file is left (not even the earlier run's), and the summary
// JSON, small enough to fit, is whole.
TEST(OutputCliTest, FailedChainFilesAreAllNamedAndNoneLeftBehind) {
  const std::string dir = FreshTempDir("output_cli_full");
  const std::string common = "sample --target iid_gaussian --target-params dimension=8 "
                             "--chains 3 --warmup 100 --samples 500 --no-progress ";
  Result r = RunCli(common + "--output-dir " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(dir + "/out/output_3.csv"));
  // ulimit -f counts 512-byte blocks in dash and 1024-byte ones in bash:
  // either way a few 10^4 bytes, below each CSV file (~10^5) and above the
  // summary JSON.
  const int out = open((dir + "/stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  r = RunWithStdout(common + "--output-dir " + dir + "/out --summary-json " + dir + "/s.json",
                    out, "trap '' XFSZ; ulimit -f 60;");
  close(out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("3 of 3 chains' CSV files could not be written and are absent"));
  for (int chain = 0; chain < 3; ++chain) {
    const std::string path = dir + "/out/output_" + std::to_string(chain + 1) + ".csv";
    EXPECT_THAT(r.err, HasSubstr("writing the CSV file of chain " + std::to_string(chain) +
                                 ": Stan CSV file: cannot write '" + path + "'"));
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
  }
  EXPECT_THAT(r.err, HasSubstr("File too large"));
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/out")) {
    EXPECT_EQ(entry.path().filename().string(), ".autobatch.lock");
  }
  EXPECT_NO_THROW(nlohmann::json::parse(ReadFile(dir + "/s.json")));
  EXPECT_THAT(ReadFile(dir + "/stdout.txt"), HasSubstr("lp__"));  // the summary is printed
}

}  // namespace
}  // namespace autobatch
