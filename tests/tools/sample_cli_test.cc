// `autobatch sample` run as a user would: summary on stdout, CSV files,
// summary JSON, adaptation files, and exit status 1 with a message on errors.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "mcmc/output/stan_csv.h"
#include "tests/testing/files.h"
#include "tests/testing/sanitizers.h"

extern char** environ;

namespace autobatch {
namespace {

using testing::ReadFile;
using testing::FreshTempDir;

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;     // stdout and stderr together
};

// Runs `autobatch args` (prefix_cli = false: `args` is the whole command).
Result RunCli(const std::string& args, bool prefix_cli = true) {
  std::string command = (prefix_cli ? std::string(AUTOBATCH_CLI) + " " : "") + args + " 2>&1";
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

// A command line that must fail before doing anything: `args` (after the
// subcommand) and a part of its one error message.
struct ErrorCase {
  std::string args;
  std::string message;
};

// Runs `prefix + args` for every case: exit status 1, "error" and the message.
void ExpectErrors(const std::string& prefix, std::span<const ErrorCase> cases) {
  for (const ErrorCase& c : cases) {
    Result r = RunCli(prefix + c.args);
    SCOPED_TRACE(c.args);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.out, HasSubstr("error"));
    EXPECT_THAT(r.out, HasSubstr(c.message));
  }
}

TEST(SampleCliTest, RunsAndWritesCsvAndSummaryJson) {
  const std::string dir = FreshTempDir("sample_cli_run");
  Result r = RunCli("sample --target iid_gaussian --target-params dimension=2 --chains 4 "
                    "--warmup 100 --samples 100 --output-dir " + dir + "/out --summary-json " +
                    dir + "/s.json --save-adaptation " + dir + "/adapt.json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* text : {"Mean", "MCSE", "StdDev", "MAD", "5%", "50%", "95%", "ESS_bulk",
                           "ESS_tail", "R_hat", "lp__", "x.2", "Divergences:",
                           "during sampling (", "during warmup (", "Gradient evaluations:",
                           "Batch utilization"}) {
    EXPECT_THAT(r.out, HasSubstr(text));
  }
  // Not a terminal: plain progress lines, no carriage returns.
  EXPECT_THAT(r.out, HasSubstr("grad/s"));
  EXPECT_THAT(r.out, Not(HasSubstr("\r")));
  for (int k = 1; k <= 4; ++k) {
    const std::string csv = ReadFile(dir + "/out/output_" + std::to_string(k) + ".csv");
    EXPECT_THAT(csv, HasSubstr("lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,"
                               "divergent__,energy__,x.1,x.2"));
    EXPECT_THAT(csv, HasSubstr("# Step size = "));
    EXPECT_THAT(csv, HasSubstr("# Diagonal elements of inverse mass matrix:"));
    EXPECT_THAT(csv, HasSubstr("Elapsed Time"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/.autobatch_write_probe"));
  const nlohmann::json j = nlohmann::json::parse(ReadFile(dir + "/s.json"));
  ASSERT_EQ(j["columns"].size(), 9u);
  const nlohmann::json& x1 = j["columns"][7];
  EXPECT_EQ(x1["name"], "x.1");
  ASSERT_TRUE(x1["rhat"].is_number());
  EXPECT_LT(x1["rhat"].get<double>(), 1.1);
  EXPECT_GT(x1["ess_bulk"].get<double>(), 50);
  EXPECT_TRUE(x1["ess_tail"].is_number());
  EXPECT_GT(j["gradient_evaluations"].get<int64_t>(), 0);
  EXPECT_EQ(j["num_chains"], 4);

  // The saved adaptation runs again without adaptation.
  Result again = RunCli("sample --target iid_gaussian --target-params '{\"dimension\": 2}' "
                        "--chains 2 --warmup 10 --samples 20 --no-progress --load-adaptation " +
                        dir + "/adapt.json --summary-json " + dir + "/s2.json");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_THAT(again.out, Not(HasSubstr("grad/s")));  // --no-progress
  const nlohmann::json adapt = nlohmann::json::parse(ReadFile(dir + "/adapt.json"));
  const nlohmann::json j2 = nlohmann::json::parse(ReadFile(dir + "/s2.json"));
  EXPECT_EQ(j2["chains"][1]["step_size"], adapt["step_size"]);
  EXPECT_EQ(j2["chains"][1]["inv_metric"], adapt["inv_metric"]);
}

// --shards runs the chains on several threads: the same summary numbers.
TEST(SampleCliTest, ShardsGiveTheSameSummary) {
  const std::string dir = FreshTempDir("sample_cli_shards");
  nlohmann::json columns[2];
  const char* shards[2] = {"1", "3"};
  for (int i = 0; i < 2; ++i) {
    const std::string json = dir + "/s" + shards[i] + ".json";
    Result r = RunCli(std::string("sample --target eight_schools --chains 5 --warmup 150 ") +
                      "--samples 50 --delta 0.9 --no-progress --shards " + shards[i] +
                      " --summary-json " + json);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    columns[i] = nlohmann::json::parse(ReadFile(json))["columns"];
  }
  EXPECT_EQ(columns[0], columns[1]);
}

// Runs `common` (a sample command ending in --summary-json) into
// <dir>/plain.json, then with `flag` (a JIT's) and a cache directory of its
// own, <dir>/cache, into <dir>/jit.json; fails unless both succeed with the
// same summary. Returns how many libraries the JIT left in its cache.
int JitLibrariesOfTheSameSummary(const std::string& dir, const std::string& common,
                                 const std::string& flag) {
  Result plain = RunCli(common + dir + "/plain.json");
  EXPECT_EQ(plain.exit_code, 0) << plain.out;
  Result jit = RunCli("AUTOBATCH_CACHE_DIR=" + dir + "/cache " + std::string(AUTOBATCH_CLI) +
                          " " + common + dir + "/jit.json " + flag,
                      /*prefix_cli=*/false);
  EXPECT_EQ(jit.exit_code, 0) << jit.out;
  if (plain.exit_code != 0 || jit.exit_code != 0) return -1;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir + "/plain.json"))["columns"],
            nlohmann::json::parse(ReadFile(dir + "/jit.json"))["columns"]);
  int libraries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/cache")) {
    libraries += entry.path().extension() == ".so";
  }
  return libraries;
}

// --fused compiles the warmup and sampling programs' fused blocks (two
// libraries in the cache directory) and gives the same draws; without a
// compiler it fails with the JIT's message.
TEST(SampleCliTest, FusedGivesTheSameSummary) {
  const std::string dir = FreshTempDir("sample_cli_fused");
  const std::string common =
      "sample --target eight_schools --chains 5 --warmup 150 --samples 50 --delta 0.9 "
      "--no-progress --summary-json ";
  EXPECT_EQ(JitLibrariesOfTheSameSummary(dir, common, "--fused"), 2);

  Result no_compiler = RunCli("AUTOBATCH_JIT_CXX=/nonexistent/c++ AUTOBATCH_CACHE_DIR=" + dir +
                                  "/cache2 " + std::string(AUTOBATCH_CLI) + " " + common + dir +
                                  "/none.json --fused",
                              /*prefix_cli=*/false);
  EXPECT_EQ(no_compiler.exit_code, 1);
  EXPECT_THAT(no_compiler.out, HasSubstr("cannot run the C++ compiler '/nonexistent/c++'"));
}

// --compiled compiles the sampling program whole (a library in the cache)
// and gives the same draws. (Random-walk Metropolis: its program compiles in
// seconds, NUTS's in about 25 s.)
TEST(SampleCliTest, CompiledGivesTheSameSummary) {
  const std::string dir = FreshTempDir("sample_cli_compiled");
  const std::string common =
      "sample --target eight_schools --algorithm rwmh --chains 5 --warmup 150 --samples 50 "
      "--no-progress --summary-json ";
  EXPECT_EQ(JitLibrariesOfTheSameSummary(dir, common, "--compiled"), 1);
}

// With --fused, every program's fused blocks are compiled before warmup: a
// compiler that works once and then fails (the second of the two programs)
// fails the run before its first warmup iteration, so no finished warmup is
// thrown away (before, the sampling program was compiled after warmup).
TEST(SampleCliTest, FusedCompilesEveryProgramBeforeWarmup) {
  const std::string dir = FreshTempDir("sample_cli_fused_first");
  const std::string compiler = dir + "/c++-once";
  {
    std::ofstream script(compiler);
    script << "#!/bin/sh\n"
           << "if [ -e '" << dir << "/compiled' ]; then\n"
           << "  echo 'c++-once: refusing a second compile' >&2; exit 1\n"
           << "fi\n"
           << "touch '" << dir << "/compiled'\n"
           << "exec '" << AUTOBATCH_TEST_CXX << "' \"$@\"\n";
  }
  ASSERT_EQ(chmod(compiler.c_str(), 0700), 0);
  Result r = RunCli("AUTOBATCH_JIT_CXX=" + compiler + " AUTOBATCH_CACHE_DIR=" + dir +
                        "/cache " + std::string(AUTOBATCH_CLI) +
                        " sample --target iid_gaussian --target-params dimension=2 "
                        "--algorithm hmc --chains 2 --warmup 300 --samples 100 --fused",
                    /*prefix_cli=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("refusing a second compile"));
  // The progress printer's first line comes with the first warmup report.
  EXPECT_THAT(r.out, Not(::testing::ContainsRegex("warmup +[0-9]+/")));
  EXPECT_TRUE(std::filesystem::exists(dir + "/compiled"));
}

// A running `autobatch sample` (stdout and stderr to files) and its pid.
struct Background {
  pid_t pid = -1;
  std::string out, err;
};

Background StartCli(const std::vector<std::string>& args, const std::string& dir) {
  Background b{.pid = -1, .out = dir + "/stdout", .err = dir + "/stderr"};
  std::vector<std::string> argv = {AUTOBATCH_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, b.out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, b.err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  EXPECT_EQ(posix_spawn(&b.pid, cargv[0], &actions, nullptr, cargv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return b;
}

// SIGINT or SIGTERM (mpirun forwards the latter before its SIGKILL) while
// sampling: the run stops at once, writes every chain's CSV file with the
// draws so far and a closing note, prints the summary of those draws, and
// exits 130 / 143 as a shell reports that signal.
TEST(SampleCliTest, InterruptedRunWritesTheDrawsSoFar) {
  for (const int signo : {SIGINT, SIGTERM}) {
    const std::string name = signo == SIGINT ? "SIGINT" : "SIGTERM";
    SCOPED_TRACE(name);
    const std::string dir = FreshTempDir("sample_cli_interrupt_" + name);
    // The non-terminal progress printer first says "sampling" at 10% of the
    // run (or 10 s after its last line), so most of it remains when the
    // signal comes, whatever the speed.
    Background run = StartCli({"sample", "--target", "iid_gaussian", "--target-params",
                               "dimension=2", "--chains", "2", "--warmup", "100", "--samples",
                               "30000", "--output-dir", dir + "/out", "--summary-json",
                               dir + "/s.json"},
                              dir);
    ASSERT_GT(run.pid, 0);
    // Sampling has begun once the progress printer says so; the bound only
    // guards against a hang.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (ReadFile(run.err).find("sampling") == std::string::npos &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(kill(run.pid, signo), 0);
    int status = 0;
    ASSERT_EQ(waitpid(run.pid, &status, 0), run.pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + signo);
    const std::string err = ReadFile(run.err), out = ReadFile(run.out);
    EXPECT_THAT(err, HasSubstr(name + ": sampling stopped after "));
    EXPECT_THAT(out, HasSubstr("Sampling interrupted by " + name + " after "));
    EXPECT_THAT(out, HasSubstr("lp__"));  // the summary table

    const nlohmann::json summary = nlohmann::json::parse(ReadFile(dir + "/s.json"));
    EXPECT_EQ(summary["interrupted"], name);
    const int64_t draws = summary["num_draws"];
    EXPECT_GT(draws, 0);
    EXPECT_LT(draws, 30000);
    for (const char* file : {"/out/output_1.csv", "/out/output_2.csv"}) {
      absl::StatusOr<mcmc::StanCsv> csv = mcmc::ReadStanCsv(dir + file);
      ASSERT_TRUE(csv.ok()) << csv.status();
      EXPECT_EQ(csv->draws.rows(), draws);
      EXPECT_THAT(csv->notes,
                  ::testing::ElementsAre("Sampling interrupted by " + name + " after " +
                                         std::to_string(draws) + " of 30000 draws"));
    }
  }
}

// Interrupted during warmup there are no draws: nothing is written, the
// message says so, and the exit status is still the signal's.
TEST(SampleCliTest, InterruptedWarmupWritesNothing) {
  const std::string dir = FreshTempDir("sample_cli_interrupt_warmup");
  // The printer's first line comes early in the long warmup.
  Background run = StartCli({"sample", "--target", "iid_gaussian", "--target-params",
                             "dimension=2", "--chains", "2", "--warmup", "100000", "--samples",
                             "100", "--output-dir", dir + "/out", "--summary-json",
                             dir + "/s.json"},
                            dir);
  ASSERT_GT(run.pid, 0);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (ReadFile(run.err).find("warmup") == std::string::npos &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(kill(run.pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(run.pid, &status, 0), run.pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_THAT(ReadFile(run.err), HasSubstr("SIGTERM: Sample: interrupted during warmup"));
  EXPECT_THAT(ReadFile(run.err), HasSubstr("no output written"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/output_1.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.json"));
}

// --print-ir prints the sampling program at each stage and samples nothing:
// the untyped program has calls and no types, the lowered one is
// what the stack VM runs (push_goto / indirect_goto, storage classes), and
// the dimension shows in the typed and lowered types.
TEST(SampleCliTest, PrintIrShowsTheSamplingProgramAtEachStage) {
  const Result untyped =
      RunCli("sample --target iid_gaussian --target-params dimension=7 "
             "--print-ir untyped");
  ASSERT_EQ(untyped.exit_code, 0) << untyped.out;
  EXPECT_THAT(untyped.out, HasSubstr("program stage=untyped entry=@chain"));
  EXPECT_THAT(untyped.out, HasSubstr("call @"));
  EXPECT_THAT(untyped.out, HasSubstr(": ?"));  // types not inferred yet
  EXPECT_THAT(untyped.out, Not(HasSubstr("push_goto")));
  EXPECT_THAT(untyped.out, Not(HasSubstr("lp__")));  // no summary: nothing sampled

  const Result typed = RunCli(
      "sample --target iid_gaussian --target-params dimension=7 --print-ir typed");
  ASSERT_EQ(typed.exit_code, 0) << typed.out;
  // Typed, with storage classes allocated: what the stackless VM runs.
  EXPECT_THAT(typed.out, HasSubstr("program stage=allocated entry=@chain"));
  EXPECT_THAT(typed.out, HasSubstr("f64[7] register"));
  EXPECT_THAT(typed.out, Not(HasSubstr("push_goto")));

  const Result lowered = RunCli(
      "sample --target iid_gaussian --target-params dimension=7 --print-ir lowered");
  ASSERT_EQ(lowered.exit_code, 0) << lowered.out;
  EXPECT_THAT(lowered.out, HasSubstr("program stage=lowered entry=@chain"));
  EXPECT_THAT(lowered.out, HasSubstr("push_goto @"));
  EXPECT_THAT(lowered.out, HasSubstr("indirect_goto"));
  EXPECT_THAT(lowered.out, HasSubstr("f64[7] full"));
  EXPECT_THAT(lowered.out, Not(HasSubstr("call @")));
}

// --output-file: every chain's draws in one Stan CSV file with chain__
// first, the same draws as the files per chain.
TEST(SampleCliTest, OutputFileHoldsEveryChainWithAChainColumn) {
  const std::string dir = FreshTempDir("sample_cli_output_file");
  Result r = RunCli("sample --target iid_gaussian --target-params dimension=2 --chains 3 "
                    "--warmup 50 --samples 40 --no-progress --output-dir " + dir +
                    "/out --output-file " + dir + "/all.csv");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  absl::StatusOr<mcmc::StanCsv> all = mcmc::ReadStanCsv(dir + "/all.csv");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->column_names.size(), 10u);
  EXPECT_EQ(all->column_names[0], "chain__");
  EXPECT_EQ(all->column_names[1], "lp__");
  ASSERT_EQ(all->draws.rows(), 3 * 40);
  for (int k = 0; k < 3; ++k) {
    absl::StatusOr<mcmc::StanCsv> chain =
        mcmc::ReadStanCsv(dir + "/out/output_" + std::to_string(k + 1) + ".csv");
    ASSERT_TRUE(chain.ok()) << chain.status();
    EXPECT_TRUE((all->draws.block(40 * k, 0, 40, 1).array() == k + 1).all()) << k;
    EXPECT_EQ(all->draws.block(40 * k, 1, 40, 9), chain->draws) << k;
  }
  // Alone, without --output-dir.
  r = RunCli("sample --target iid_gaussian --target-params dimension=2 --chains 2 --warmup 20 "
             "--samples 10 --no-progress --output-file " + dir + "/alone.csv");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  absl::StatusOr<mcmc::StanCsv> alone = mcmc::ReadStanCsv(dir + "/alone.csv");
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->draws.rows(), 20);
}

// CmdStan's everyday options: per-chain seeds, thinning and saved warmup in
// the CSV files (warmup rows before the adaptation block), initial values
// from a file of constrained values or a radius; bad values are one clear
// error each.
TEST(SampleCliTest, SeedsThinSaveWarmupAndInit) {
  const std::string dir = FreshTempDir("sample_cli_cmdstan_options");
  Result r = RunCli("sample --target iid_gaussian --target-params dimension=2 --chains 2 "
                    "--warmup 30 --samples 20 --thin 3 --save-warmup --seed 5,6 --init 0.5 "
                    "--no-progress --output-dir " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (int k = 0; k < 2; ++k) {
    absl::StatusOr<mcmc::StanCsv> csv =
        mcmc::ReadStanCsv(dir + "/out/output_" + std::to_string(k + 1) + ".csv");
    ASSERT_TRUE(csv.ok()) << csv.status();
    EXPECT_EQ(csv->draws.rows(), 10 + 7);  // ceil(30 / 3) warmup, ceil(20 / 3) sampling
    ASSERT_TRUE(csv->adaptation.has_value());
    EXPECT_EQ(csv->adaptation->draws_before, 10);
    EXPECT_THAT(csv->config, ::testing::Contains("    thin = 3"));
    EXPECT_THAT(csv->config, ::testing::Contains("    save_warmup = 1"));
    EXPECT_THAT(csv->config, ::testing::Contains("  seed = " + std::to_string(5 + k)));
    EXPECT_THAT(csv->config, ::testing::Contains("init = 0.5"));
  }
  // Chain 2 of `--seed 5,6` is chain 2 of `--seed 6`.
  r = RunCli("sample --target iid_gaussian --target-params dimension=2 --chains 2 "
             "--warmup 30 --samples 20 --seed 6 --init 0.5 --no-progress --output-dir " + dir +
             "/common");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  absl::StatusOr<mcmc::StanCsv> per_chain = mcmc::ReadStanCsv(dir + "/out/output_2.csv");
  absl::StatusOr<mcmc::StanCsv> common = mcmc::ReadStanCsv(dir + "/common/output_2.csv");
  ASSERT_TRUE(per_chain.ok() && common.ok());
  EXPECT_EQ(per_chain->draws.row(10), common->draws.row(0));

  // Initial values from a file, for a model written as a program.
  const std::string model = "--model eight_schools --data " + std::string(AUTOBATCH_SOURCE_DIR) +
                            "/samples/models/eight_schools.data.json --chains 2 --warmup 20 "
                            "--samples 10 --no-progress ";
  {
    std::ofstream(dir + "/init.json")
        << R"({"mu": 1, "tau": 2, "eta": [0, 0, 0, 0, 0, 0, 0, 0]})";
    std::ofstream(dir + "/outside.json")
        << R"({"mu": 1, "tau": -2, "eta": [0, 0, 0, 0, 0, 0, 0, 0]})";
    std::ofstream(dir + "/missing.json") << R"({"mu": 1, "tau": 2})";
  }
  r = RunCli("sample " + model + "--init " + dir + "/init.json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::vector<ErrorCase> errors = {
      {"--init " + dir + "/outside.json", "chain 0: initial values:"},
      {"--init " + dir + "/missing.json", "eta"},
      {"--init " + dir + "/none.json", "--init: cannot read"},
      {"--init -1", "--init '-1' is not a radius >= 0"},
      {"--thin 0", "--thin '0' is not an integer in [1, 2147483647]"},
      {"--seed 1,2,3", "lists 3 seeds for 2 chains"},
      {"--seed 1,x", "--seed 'x' is not an integer"},
  };
  ExpectErrors("sample " + model, errors);
}

// Every output path is checked before sampling starts: a directory where
// chain 0's CSV file (output_1.csv) or the summary JSON goes fails at once,
// naming it, with nothing sampled or written. (It used to sample, write
// chains 2-4, then fail, losing the summary and the summary JSON.)
TEST(SampleCliTest, OutputPathsAreCheckedBeforeSampling) {
  const std::string dir = FreshTempDir("sample_cli_output_paths");
  std::filesystem::create_directories(dir + "/out/output_1.csv");
  std::filesystem::create_directories(dir + "/a_dir");
  const std::string common =
      "sample --target iid_gaussian --chains 4 --warmup 200 --samples 200 ";
  Result r = RunCli(common + "--output-dir " + dir + "/out --summary-json " + dir + "/s.json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--output-dir: cannot write the CSV file of chain 0: '" + dir +
                               "/out/output_1.csv' is a directory"));
  EXPECT_THAT(r.out, Not(HasSubstr("grad/s")));  // no progress: nothing sampled
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/output_2.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.json"));
  for (const char* option : {"--summary-json", "--save-adaptation"}) {
    r = RunCli(common + option + " " + dir + "/a_dir");
    EXPECT_EQ(r.exit_code, 1) << option << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(std::string(option) + ": '" + dir + "/a_dir' is a directory"));
    EXPECT_THAT(r.out, Not(HasSubstr("grad/s")));
  }
  // With the way clear the same run writes every output.
  std::filesystem::remove(dir + "/out/output_1.csv");
  r = RunCli(common + "--no-progress --output-dir " + dir + "/out --summary-json " + dir +
             "/s.json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (int k = 1; k <= 4; ++k) {
    EXPECT_THAT(ReadFile(dir + "/out/output_" + std::to_string(k) + ".csv"), HasSubstr("lp__"));
  }
  EXPECT_THAT(ReadFile(dir + "/s.json"), HasSubstr("\"columns\""));
}

// A run whose draws cannot fit in memory is refused before anything starts
// (it used to die of std::bad_alloc), saying what to lower; no output
// directory is made.
TEST(SampleCliTest, RunsTooBigForMemoryAreRefusedBeforeSampling) {
  const std::string dir = FreshTempDir("sample_cli_memory");
  for (const char* size : {"--samples 100000000 --chains 1", "--samples 2147483647 --chains 1",
                           "--samples 1000 --chains 16777216"}) {
    SCOPED_TRACE(size);
    // A fixed limit: the default follows the machine's memory.
    const Result r =
        RunCli(std::string("sample --target iid_gaussian --target-params dimension=1 "
                           "--warmup 0 --no-adapt --max-memory 16G ") +
               size + " --output-dir " + dir + "/out");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.out, HasSubstr("the memory limit allows (max_memory_bytes = "));
    EXPECT_THAT(r.out, HasSubstr("lower num_samples (--samples) or num_chains (--chains)"));
    EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
  }
}

// The pre-run check counts the sampler's program too: a model of 5 million
// coordinates keeps dozens of 40 MB vectors per chain, so even one draw of
// two chains does not fit a 1 GiB limit, or the default one under a 4 GB
// ulimit -v (where it used to abort); refused before sampling, exit 1.
TEST(SampleCliTest, ThePreRunCheckCountsTheSamplersProgram) {
  const std::string run =
      "sample --target iid_gaussian --target-params dimension=5000000 --chains 2 --warmup 0 "
      "--no-adapt --samples 1 --no-progress";
  Result r = RunCli(run + " --max-memory 1G");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("as it starts: its variables and first stack frames"));
  EXPECT_THAT(r.out, HasSubstr("(max_memory_bytes = 1073741824, 1.0 GiB)"));
  Result bad = RunCli(run + " --max-memory 0");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("--max-memory: give at least 1 byte"));
  if (!testing::kUnderSanitizer) {  // (a sanitizer's shadow memory does not fit ulimit -v)
    Result limited =
        RunCli("ulimit -v 4000000; exec " + std::string(AUTOBATCH_CLI) + " " + run, false);
    EXPECT_EQ(limited.exit_code, 1) << limited.out;
    EXPECT_THAT(limited.out, HasSubstr("as it starts"));
    EXPECT_THAT(limited.out, HasSubstr("3/4 of the smallest of physical memory, RLIMIT_AS"));
  }
}

// A model written as a program, with its data file: the summary names its
// parameters, and the sampling program calls the model's gradient function.
TEST(SampleCliTest, SamplesAModelWrittenAsAProgram) {
  const std::string data = std::string(AUTOBATCH_SOURCE_DIR "/samples/models/eight_schools.data.json");
  // An example model without --data samples its own data set.
  Result r = RunCli("sample --model eight_schools --chains 4 --warmup 150 --samples 100 "
                    "--delta 0.9 --no-progress");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("lp__"));
  EXPECT_THAT(r.out, HasSubstr("tau"));
  EXPECT_THAT(r.out, HasSubstr("eta.8"));
  EXPECT_THAT(r.out, HasSubstr("y_rep.8"));  // its generated quantities
  // Saved to a file and sampled from it with the data file: the same summary.
  const std::string dir = FreshTempDir("sample_cli_model_file");
  Result dump = RunCli("model eight_schools --json > " + dir + "/m.json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  Result from_file = RunCli("sample --model " + dir + "/m.json --data " + data +
                            " --chains 4 --warmup 150 --samples 100 --delta 0.9 --no-progress");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.out;
  auto table = [](const std::string& out) { return out.substr(out.find("lp__")); };
  auto without_times = [](std::string s) {
    return s.substr(0, s.find("Wall time"));
  };
  EXPECT_EQ(without_times(table(from_file.out)), without_times(table(r.out)));
  Result ir = RunCli("sample --model eight_schools --data " + data + " --print-ir untyped");
  ASSERT_EQ(ir.exit_code, 0) << ir.out;
  EXPECT_THAT(ir.out, HasSubstr("call @eight_schools.log_density.grad("));
  EXPECT_THAT(ir.out, HasSubstr("%y: f64[8] uniform"));
}

// A model file whose log density calls a user kernel is refused by
// `sample --model`: the kernel's code is not in the file.
TEST(SampleCliTest, AModelFileThatCallsAUserKernelIsRefused) {
  const std::string dir = FreshTempDir("sample_cli_model_kernel");
  Result dump = RunCli("model eight_schools --json > " + dir + "/m.json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  std::ifstream in(dir + "/m.json");
  nlohmann::json model = nlohmann::json::parse(in);
  nlohmann::json& program = model["program"];
  // `k = twice(t0)` after t0, the log density's first value (a constant).
  program["kernels"].push_back(nlohmann::json::object(
      {{"name", "twice"}, {"inputs", {"f64"}}, {"outputs", {"f64"}}}));
  const int entry = program["entry"].get<int>();
  program["variables"].push_back(nlohmann::json::object({{"name", "k"}, {"function", entry}}));
  const int k = static_cast<int>(program["variables"].size()) - 1;
  nlohmann::json& ops = program["functions"][entry]["blocks"][0]["ops"];
  const int t0 = ops[0]["outputs"][0].get<int>();
  ops.insert(ops.begin() + 1, nlohmann::json::object({{"kind", "prim"},
                                                      {"prim", "kernel"},
                                                      {"inputs", nlohmann::json::array({t0})},
                                                      {"outputs", nlohmann::json::array({k})},
                                                      {"attrs", {{"kernel", "twice"}}}}));
  std::ofstream(dir + "/kernel.json") << model.dump();
  const std::string data = std::string(AUTOBATCH_SOURCE_DIR "/samples/models/eight_schools.data.json");
  Result r = RunCli("sample --model " + dir + "/kernel.json --data " + data +
                    " --chains 2 --warmup 10 --samples 10 --no-progress --output-dir " + dir + "/out");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("calls user kernel 'twice'")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/output_1.csv"));
}

// `autobatch model`: the model as JSON, and CmdStan's log_prob at given
// constrained values (checked against the density written out by hand).
// A model file keeps the data's size names: written once, it samples data
// of another size. A model whose parameter sizes come from the data is
// written for the sizes of the --data given.
TEST(SampleCliTest, AModelFileSamplesDataOfAnotherSize) {
  const std::string dir = FreshTempDir("sample_cli_sizes");
  Result dump = RunCli("model mixture --json > " + dir + "/mixture.json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  std::ofstream(dir + "/small.json") << R"({"N": 5, "y": [-1.5, 2.1, 1.8, -1.2, 2.4]})";
  Result r = RunCli("sample --model " + dir + "/mixture.json --data " + dir +
                    "/small.json --chains 2 --warmup 100 --samples 50 --no-progress");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("mu.2"));
  const std::string data =
      std::string(AUTOBATCH_SOURCE_DIR "/samples/models/hierarchical.data.json");
  Result sized = RunCli("model hierarchical --json --data " + data);
  ASSERT_EQ(sized.exit_code, 0) << sized.out;
  EXPECT_THAT(sized.out, HasSubstr("\"N\""));
  // Without --data, an example model is written for its own data set.
  Result own_data = RunCli("model hierarchical --json");
  EXPECT_EQ(own_data.exit_code, 0) << own_data.out;
  EXPECT_EQ(own_data.out, sized.out);
}

TEST(SampleCliTest, ModelCommandShowsTheModelAndItsLogDensity) {
  Result json = RunCli("model eight_schools --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const nlohmann::json model = nlohmann::json::parse(json.out);
  EXPECT_EQ(model["format"], "autobatch-model");
  EXPECT_EQ(model["parameters"][1]["name"], "tau");
  EXPECT_EQ(model["parameters"][1]["transform"]["kind"], "lower");
  EXPECT_EQ(model["data"][0]["name"], "y");
  EXPECT_EQ(model["data"][1]["lower"], 0.0);
  EXPECT_EQ(model["program"]["format"], "autobatch-ir");
  EXPECT_EQ(model["generated_quantities"]["quantities"][1]["name"], "y_rep");
  EXPECT_EQ(model["generated_quantities"]["program"]["format"], "autobatch-ir");

  const std::string dir = FreshTempDir("model_cli");
  const std::string data = std::string(AUTOBATCH_SOURCE_DIR "/samples/models/eight_schools.data.json");
  const double mu = 1.5, tau = 2.0;
  const std::array<double, 8> eta = {0.5, -1, 0.25, 0, 1, -0.5, 2, -2};
  const std::array<double, 8> y = {28, 8, -3, 7, -1, 1, 18, 12};
  const std::array<double, 8> sigma = {15, 10, 16, 11, 9, 11, 10, 18};
  {
    nlohmann::json at = {{"mu", mu}, {"tau", tau}, {"eta", eta}};
    std::ofstream(dir + "/at.json") << at.dump();
  }
  Result r = RunCli("model eight_schools --log-prob --data " + data + " --at " + dir + "/at.json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  // lp__: the _lupdf terms (log(2 pi) / 2 and log(pi) dropped) plus log|J| = log(tau).
  double lp = -0.5 * (mu / 5) * (mu / 5) - std::log(5.0);
  lp += -std::log(5.0) - std::log1p((tau / 5) * (tau / 5)) + std::log(tau);
  double d_mu = -mu / 25;
  for (int j = 0; j < 8; ++j) {
    const double z = (y[j] - (mu + tau * eta[j])) / sigma[j];
    lp += -0.5 * eta[j] * eta[j] - 0.5 * z * z - std::log(sigma[j]);
    d_mu += z / sigma[j];
  }
  EXPECT_NEAR(out["log_density"].get<double>(), lp, 1e-12 * (1 + std::abs(lp)));
  EXPECT_NEAR(out["gradient"]["mu"].get<double>(), d_mu, 1e-12);
  EXPECT_TRUE(out["gradient"].contains("eta.8"));

  // A model file needs its data given; an example model's is its own data set.
  std::ofstream(dir + "/eight_schools.json") << json.out;
  Result from_file = RunCli("model " + dir + "/eight_schools.json --log-prob --data " + data +
                            " --at " + dir + "/at.json");
  EXPECT_EQ(from_file.out, r.out);
  Result own_data = RunCli("model eight_schools --log-prob --at " + dir + "/at.json");
  EXPECT_EQ(own_data.out, r.out);
  {
    std::ofstream(dir + "/negative.json") << R"({"mu": 0, "tau": -1, "eta": [0,0,0,0,0,0,0,0]})";
    std::ofstream(dir + "/short.json") << R"({"mu": 0, "tau": 1})";
  }
  const ErrorCase cases[] = {
      {"model eight_schools", "give --json or --log-prob"},
      {"model eight_schools --json --log-prob", "give --json or --log-prob"},
      {"model nope --json", "no example model 'nope'"},
      {"model eight_schools --log-prob --data " + data, "--log-prob needs --at FILE"},
      {"model " + dir + "/eight_schools.json --log-prob --at " + dir + "/at.json",
       "eight_schools.json needs --data FILE"},
      {"model eight_schools --json --at " + data, "--at belongs to --log-prob"},
      {"model eight_schools --log-prob --data " + data + " --at " + dir + "/negative.json",
       "tau"},
      {"model eight_schools --log-prob --data " + data + " --at " + dir + "/short.json",
       "'eta'"},
  };
  ExpectErrors("", cases);
}

TEST(SampleCliTest, ModelMistakesExitOneWithAMessage) {
  const std::string dir = FreshTempDir("sample_cli_model_errors");
  const std::string data = std::string(AUTOBATCH_SOURCE_DIR "/samples/models/eight_schools.data.json");
  { std::ofstream(dir + "/short.json") << R"({"y": [1, 2, 3], "sigma": [1, 1, 1]})"; }
  Result dump = RunCli("model eight_schools --json > " + dir + "/eight_schools.json");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  const ErrorCase cases[] = {
      {"--chains 2", "give either --target (a built-in target) or --model"},
      {"--target eight_schools --model eight_schools --data " + data, "give either --target"},
      {"--model " + dir + "/eight_schools.json", "eight_schools.json needs --data FILE"},
      {"--model no_such_model --data " + data, "no example model 'no_such_model'; the models are"},
      {"--model eight_schools --data " + dir + "/missing.json", "--data: cannot read"},
      {"--model eight_schools --data " + dir + "/short.json",
       "short.json: 'y' should have shape [8] but it is an array of 3 values, not 8"},
      {"--model eight_schools --data " + data + " --target-params dimension=2",
       "--target-params belongs to --target"},
      {"--target iid_gaussian --data " + data, "--data belongs to --model"},
  };
  ExpectErrors("sample ", cases);
}

TEST(SampleCliTest, ErrorsExitOneWithAMessage) {
  const std::string dir = FreshTempDir("sample_cli_errors");
  { std::ofstream(dir + "/file") << "x"; }
  const ErrorCase cases[] = {
      {"--target no_such_target", "eight_schools"},  // lists the known names
      {"--target iid_gaussian --chains 0", "--chains"},
      {"--target iid_gaussian --chains many", "--chains 'many'"},
      {"--target iid_gaussian --warmup -5", "--warmup"},
      {"--target iid_gaussian --samples 1e3x", "--samples"},
      {"--target iid_gaussian --seed -1", "--seed"},
      {"--target iid_gaussian --delta 1.5", "--delta"},
      {"--target iid_gaussian --max-depth 99", "--max-depth"},
      {"--target iid_gaussian --algorithm gibbs", "--algorithm"},
      {"--target iid_gaussian --vm gpu", "--vm"},
      {"--target iid_gaussian --shards 0", "--shards"},
      {"--target iid_gaussian --shards two", "--shards 'two'"},
      {"--target iid_gaussian --target-params dimension=-3", "dimension"},
      {"--target iid_gaussian --target-params nokey=1", "nokey"},
      {"--target iid_gaussian --warmup 0", "--no-adapt"},
      {"--target iid_gaussian --load-adaptation " + dir + "/missing.json", "missing.json"},
      {"--target iid_gaussian --output-dir " + dir + "/file/sub", "--output-dir"},
      {"--target iid_gaussian --print-ir assembly", "--print-ir: unknown stage 'assembly'"},
      {"--target iid_gaussian --print-ir lowered --max-depth 0", "--max-depth"},
      {"--target iid_gaussian --summary-json " + dir + "/no/such/dir/s.json", "--summary-json"},
      {"--target iid_gaussian --output-file " + dir + "/no/such/dir/all.csv",
       "--output-file: cannot write"},
      {"--target iid_gaussian --output-file " + dir, "--output-file: '" + dir + "' is a directory"},
      {"--target iid_gaussian --output-dir " + dir + "/out --output-file " + dir +
           "/out/output_2.csv",
       "--output-file '" + dir + "/out/output_2.csv' is named like a chain's file in "
       "--output-dir (output_<n>.csv)"},
      {"--target iid_gaussian --chains 2 --output-dir " + dir + "/out2 --output-file " + dir +
           "/out2/./output_9.csv",
       "is named like a chain's file in --output-dir"},
      {"--target iid_gaussian --summary-json " + dir + "/s.json --output-file " + dir + "/s.json",
       "is also --summary-json's file: give each output its own path"},
      {"--target iid_gaussian --vm stackless --fused",
       "--fused runs fused blocks on the stack VM; with --vm stackless drop --fused"},
      {"--target iid_gaussian --vm stackless --compiled",
       "--compiled compiles the sampler for the stack VM's runtime; with --vm stackless drop "
       "--compiled"},
      {"--target iid_gaussian --compiled --fused",
       "--compiled and --fused: a compiled program already runs every block compiled"},
  };
  ExpectErrors("sample ", cases);  // every case fails before any sampling starts
}

}  // namespace
}  // namespace autobatch
