// JIT fused blocks (codegen/jit.h): compiled at run time with the build's
// compiler, they give the interpreter's bits; the cache is reused, repaired
// when corrupt, and written atomically; every failure is a clear error.
#include "codegen/jit.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "frontend/context.h"
#include "passes/pipeline.h"
#include "mcmc/batched/batched_sampler.h"
#include "tests/testing/files.h"
#include "tests/vm/fused_test_programs.h"
#include "codegen/codegen.h"
#include "codegen/jit_headers.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// What the JIT leaves in its cache directory: per program a library, its
// checksum and its lock file; the headers they were compiled against.
constexpr char kCacheEntry[] = "fused_[0-9a-f]{16}\\.(so|sum|lock)|include_[0-9a-f]{16}";

// A fresh, empty directory under the test's temporary directory, named
// after this process too: two runs of the suite at once (a sanitizer build's
// beside a plain one) must not share one.
std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("autobatch_jit_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The compiled libraries in `dir` (beside them: each one's checksum and its
// program's lock file).
std::vector<std::string> Libraries(const std::string& dir) {
  std::vector<std::string> names;
  for (const std::string& f : Files(dir)) {
    if (f.ends_with(".so")) names.push_back(f);
  }
  return names;
}

const testing::FusedTestProgram& Program(const std::string& name) {
  static const auto* programs =
      new std::vector<testing::FusedTestProgram>(testing::FusedTestPrograms());
  for (const testing::FusedTestProgram& p : *programs) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no test program " << name;
  return programs->front();
}

TEST(JitTest, CompiledBlocksGiveTheInterpretersBits) {
  const std::string dir = FreshDir("bits");
  // tape_loop: segments end at its tape ops, which the VM runs between them.
  for (const char* name : {"collatz", "peanuts", "compact_state", "tape_loop"}) {
    SCOPED_TRACE(name);
    const testing::FusedTestProgram& p = Program(name);
    absl::StatusOr<const FusedProgram*> fused = JitFusedBlocks(p.lowered, {.cache_dir = dir});
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_EQ((*fused)->segments.size(), PlanFusedSegments(p.lowered).size());
    EXPECT_GT((*fused)->segments.size(), 0u);
    for (int64_t batch : {1, 7, 1000}) {
      const std::vector<Tensor> inputs = p.inputs(batch, static_cast<uint64_t>(batch) + 3);
      absl::StatusOr<std::vector<Tensor>> expected =
          RunProgram(p.lowered, inputs, &p.context->kernels(), {.vm = Vm::kStack});
      ASSERT_TRUE(expected.ok()) << expected.status();
      for (const char* backend : {"eigen", "threaded"}) {
        absl::StatusOr<std::vector<Tensor>> got =
            RunProgram(p.lowered, inputs, &p.context->kernels(),
                       {.vm = Vm::kStack, .backend = backend, .fused_blocks = *fused});
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_TRUE(testing::BitIdentical(*got, *expected)) << "batch " << batch << " " << backend;
      }
    }
  }
  // One library per program with its checksum and lock file, the headers
  // they were compiled against, and nothing else left behind.
  std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 13u) << ::testing::PrintToString(files);
  for (const std::string& f : files) {
    EXPECT_THAT(f, ::testing::MatchesRegex(kCacheEntry));
  }
}

// The headers the generated code includes are the copies this library
// carries (codegen/jit_headers.h), written into the cache, not read from the
// source or build tree: an installed library JIT-compiles without either. A
// copy that was changed is written again before the next compile.
TEST(JitTest, CompilesAgainstTheHeaderCopiesItCarries) {
  const std::string dir = FreshDir("headers");
  ASSERT_TRUE(JitFusedBlocks(Program("collatz").lowered, {.cache_dir = dir}).ok());
  std::vector<fs::path> includes;
  for (const std::string& f : Files(dir)) {
    if (f.starts_with("include_")) includes.push_back(fs::path(dir) / f);
  }
  ASSERT_EQ(includes.size(), 1u) << ::testing::PrintToString(Files(dir));
  const fs::path include = includes[0];
  ASSERT_GE(JitHeaders().size(), 9u);
  for (const JitHeader& header : JitHeaders()) {
    EXPECT_EQ(testing::ReadFile(include / header.path), header.text) << header.path;
    EXPECT_EQ(header.text, testing::ReadFile(std::string(AUTOBATCH_SOURCE_DIR) + "/" +
                                             std::string(header.path)))
        << header.path;
  }
  // Damaged: the next compile (another program) replaces it.
  const std::string ir_h = include / "ir/ir.h";
  std::ofstream(ir_h, std::ios::app) << "\n#error a stale copy\n";
  absl::StatusOr<const FusedProgram*> again =
      JitFusedBlocks(Program("fibonacci").lowered, {.cache_dir = dir});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(testing::ReadFile(ir_h), testing::ReadFile(AUTOBATCH_SOURCE_DIR "/ir/ir.h"));
}

// pow with an exponent the generated code knows (a literal of the same
// segment): the compiler must not expand it (GCC turns pow(x, 2.0) into
// x * x and pow(x, -1.0) into 1.0 / x, which differ from the C library's pow
// in the last bit for about one x in a thousand; -0.31668616797776666 is
// one). The interpreter's kernel calls pow; so must the segment, through
// the out-of-line element::Pow, which no compiler can expand. (GCC 12 does
// not carry the literal into the call as the code is emitted today, so the
// bits alone would not catch a return to std::pow: the source is checked.)
TEST(JitTest, PowWithALiteralExponentKeepsThePowBits) {
  Context ctx;
  BatchFunction f = ctx.Batch("powers")([](Builder&, Value x) {
    return pow(x, 2.0) + pow(x, -1.0) * pow(x, 3.0);
  });
  absl::StatusOr<autobatch::Program> lowered =
      LowerProgram(*ctx.Program(f), {Scalar(DType::kF64)});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<std::string> source = EmitFusedBlocks(*lowered, "Powers");
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT(*source, HasSubstr("E::Pow("));
  EXPECT_THAT(*source, ::testing::Not(HasSubstr("pow(static_cast")));
  absl::StatusOr<const FusedProgram*> fused =
      JitFusedBlocks(*lowered, {.cache_dir = FreshDir("pow")});
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_GT((*fused)->segments.size(), 0u);
  std::vector<double> x = {-0.31668616797776666, -8.5542973186694197e-05, -198.75408965692549};
  std::mt19937_64 rng(5);
  for (int i = 0; i < 4000; ++i) x.push_back(std::uniform_real_distribution<double>(-3, 3)(rng));
  const std::vector<Tensor> inputs = {*Tensor::FromVector(x)};
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(*lowered, inputs, &ctx.kernels(), {.vm = Vm::kStack});
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::vector<Tensor>> got = RunProgram(
      *lowered, inputs, &ctx.kernels(), {.vm = Vm::kStack, .fused_blocks = *fused});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(testing::BitIdentical(*got, *expected));
}

// CallOptions::jit_fused_blocks: the NUTS sampler's draws are those of the
// interpreter, and the library lands in the default cache directory
// (AUTOBATCH_CACHE_DIR).
TEST(JitTest, CallOptionsCompileTheSamplersBlocks) {
  const std::string dir = FreshDir("nuts");
  ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", dir.c_str(), 1), 0);
  testing::FusedTestSampler nuts = testing::EightSchoolsNuts();
  const std::vector<mcmc::BatchedChain> chains = testing::StartingChains(nuts, 40, /*seed=*/11);
  CallOptions plain{.vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes};
  absl::StatusOr<mcmc::BatchedRunResult> expected = nuts.sampler->Run(chains, 10, plain);
  ASSERT_TRUE(expected.ok()) << expected.status();
  CallOptions jit = plain;
  jit.jit_fused_blocks = true;
  jit.shards = 2;
  absl::StatusOr<mcmc::BatchedRunResult> got = nuts.sampler->Run(chains, 10, jit);
  unsetenv("AUTOBATCH_CACHE_DIR");
  ASSERT_TRUE(got.ok()) << got.status();
  testing::ExpectSameDraws(*got, *expected);
  EXPECT_EQ(Libraries(dir).size(), 1u) << ::testing::PrintToString(Files(dir));
  // The loaded library is reused: the same blocks, without the directory.
  absl::StatusOr<const FusedProgram*> again =
      JitFusedBlocks(*nuts.lowered, {.cache_dir = dir});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_GE((*again)->segments.size(), 10u);
}

// CallOptions::jit_compiled_program compiles the whole program on the first
// call and runs it: the interpreter's bits, every block run by the compiled
// runtime (counted compact, never dense), one library, reused.
TEST(JitTest, CallOptionsCompileTheWholeProgram) {
  const std::string dir = FreshDir("whole");
  ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", dir.c_str(), 1), 0);
  const testing::FusedTestProgram& p = Program("fibonacci");
  const std::vector<Tensor> inputs = p.inputs(300, 5);
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(p.lowered, inputs, &p.context->kernels(), {.vm = Vm::kStack});
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int shards : {1, 2}) {
    Profile profile;
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(p.lowered, inputs, &p.context->kernels(),
                   {.vm = Vm::kStack, .shards = shards, .jit_compiled_program = true}, &profile);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(testing::BitIdentical(*got, *expected));
    for (const std::vector<BlockCounters>& fn : profile.blocks) {
      for (const BlockCounters& block : fn) {
        EXPECT_EQ(block.dense, 0);
        EXPECT_EQ(block.compact, block.executions);
      }
    }
  }
  unsetenv("AUTOBATCH_CACHE_DIR");
  EXPECT_EQ(Libraries(dir).size(), 1u) << ::testing::PrintToString(Files(dir));
  absl::StatusOr<const FusedProgram*> again = JitCompiledProgram(p.lowered, {.cache_dir = dir});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE((*again)->blocks.empty());
}

ino_t Inode(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

// A library already in the cache is loaded as it is (the same file: a
// compiled one would be renamed over it); a corrupt one is compiled again.
TEST(JitTest, UsesTheCacheAndRepairsACorruptEntry) {
  const testing::FusedTestProgram& p = Program("collatz");
  const std::string first = FreshDir("first");
  ASSERT_TRUE(JitFusedBlocks(p.lowered, {.cache_dir = first}).ok());
  std::vector<std::string> files = Libraries(first);
  ASSERT_EQ(files.size(), 1u);
  const std::string library = files[0];
  const std::string sum = library.substr(0, library.size() - 3) + ".sum";

  const std::string cached = FreshDir("cached");
  fs::copy_file(fs::path(first) / library, fs::path(cached) / library);
  fs::copy_file(fs::path(first) / sum, fs::path(cached) / sum);
  const ino_t inode = Inode(fs::path(cached) / library);
  absl::StatusOr<const FusedProgram*> fused = JitFusedBlocks(p.lowered, {.cache_dir = cached});
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(Libraries(cached), std::vector<std::string>{library});
  EXPECT_EQ(Inode(fs::path(cached) / library), inode);  // a compiled one is renamed in

  // Not a library at all; a library cut short after its ELF header (dlopen
  // maps past its end and the first call dies of SIGBUS); a library with no
  // checksum: each is compiled again, and the new one runs.
  const std::string whole = (fs::path(first) / library).string();
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> damages = {
      {"garbage", [&](const fs::path& dir) {
         std::ofstream(dir / library) << "not a shared library";
         fs::copy_file(fs::path(first) / sum, dir / sum);
       }},
      {"truncated", [&](const fs::path& dir) {
         fs::copy_file(whole, dir / library);
         fs::copy_file(fs::path(first) / sum, dir / sum);
         fs::resize_file(dir / library, 4096);
       }},
      {"unvouched", [&](const fs::path& dir) { fs::copy_file(whole, dir / library); }},
  };
  for (const auto& [name, damage] : damages) {
    SCOPED_TRACE(name);
    const std::string corrupt = FreshDir("corrupt_" + name);
    damage(corrupt);
    const ino_t damaged = Inode(fs::path(corrupt) / library);
    fused = JitFusedBlocks(p.lowered, {.cache_dir = corrupt});
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_EQ(fs::file_size(fs::path(corrupt) / library), fs::file_size(whole));
    EXPECT_NE(Inode(fs::path(corrupt) / library), damaged);
    const std::vector<Tensor> inputs = p.inputs(64, 9);
    absl::StatusOr<std::vector<Tensor>> expected =
        RunProgram(p.lowered, inputs, nullptr, {.vm = Vm::kStack});
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(p.lowered, inputs, nullptr, {.vm = Vm::kStack, .fused_blocks = *fused});
    ASSERT_TRUE(expected.ok() && got.ok());
    EXPECT_TRUE(testing::BitIdentical(*got, *expected));
  }
}

// Threads whose first calls ask for the same program's blocks at once: one
// compiles, all run the same library, each gets the interpreter's bits (the
// ThreadSanitizer stage runs this, tools/sanitize.sh).
TEST(JitTest, ConcurrentFirstCallsShareOneLibrary) {
  const std::string dir = FreshDir("concurrent");
  ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", dir.c_str(), 1), 0);
  const testing::FusedTestProgram& p = Program("compact_state");
  constexpr int kThreads = 3;
  std::vector<std::vector<Tensor>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(p.inputs(50 + t, static_cast<uint64_t>(t)));
    absl::StatusOr<std::vector<Tensor>> plain =
        RunProgram(p.lowered, inputs.back(), &p.context->kernels(), {.vm = Vm::kStack});
    ASSERT_TRUE(plain.ok()) << plain.status();
    expected.push_back(*plain);
  }
  std::vector<absl::StatusOr<std::vector<Tensor>>> got(kThreads, absl::UnknownError(""));
  std::vector<absl::StatusOr<const FusedProgram*>> blocks(kThreads, absl::UnknownError(""));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      got[t] = RunProgram(p.lowered, inputs[t], &p.context->kernels(),
                          {.vm = Vm::kStack, .jit_fused_blocks = true});
      blocks[t] = JitFusedBlocks(p.lowered);
    });
  }
  for (std::thread& thread : threads) thread.join();
  unsetenv("AUTOBATCH_CACHE_DIR");
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(got[t].ok()) << got[t].status();
    EXPECT_TRUE(testing::BitIdentical(*got[t], expected[t])) << "thread " << t;
    ASSERT_TRUE(blocks[t].ok()) << blocks[t].status();
    EXPECT_EQ(*blocks[t], *blocks[0]);
  }
  EXPECT_EQ(Libraries(dir).size(), 1u) << ::testing::PrintToString(Files(dir));
}

// Runs in a child process (below): compiles collatz's blocks into
// $AUTOBATCH_JIT_TEST_DIR with $AUTOBATCH_JIT_TEST_CXX, under a file size
// limit of $AUTOBATCH_JIT_TEST_FSIZE bytes if set (writes past it fail with
// EFBIG, as on a full disk), and writes "ok" or the error to
// $AUTOBATCH_JIT_TEST_OUT. Disabled: only the tests below run it.
TEST(JitTest, DISABLED_ChildProcess) {
  const char* dir = std::getenv("AUTOBATCH_JIT_TEST_DIR");
  const char* out = std::getenv("AUTOBATCH_JIT_TEST_OUT");
  ASSERT_TRUE(dir != nullptr && out != nullptr);
  if (const char* fsize = std::getenv("AUTOBATCH_JIT_TEST_FSIZE"); fsize != nullptr) {
    std::signal(SIGXFSZ, SIG_IGN);  // inherited by the compiler: EFBIG, not a signal
    const rlimit limit = {static_cast<rlim_t>(std::atoll(fsize)),
                          static_cast<rlim_t>(std::atoll(fsize))};
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  const char* cxx = std::getenv("AUTOBATCH_JIT_TEST_CXX");
  absl::StatusOr<const FusedProgram*> fused = JitFusedBlocks(
      Program("collatz").lowered, {.cache_dir = dir, .compiler = cxx != nullptr ? cxx : ""});
  std::ofstream(out) << (fused.ok() ? std::string("ok") : fused.status().ToString());
}

// Starts this test binary running DISABLED_ChildProcess with `env` added.
pid_t StartChild(const std::vector<std::string>& env) {
  std::vector<std::string> args = {"/proc/self/exe", "--gtest_also_run_disabled_tests",
                                   "--gtest_filter=JitTest.DISABLED_ChildProcess"};
  std::vector<std::string> environment = env;
  for (char** e = environ; *e != nullptr; ++e) environment.push_back(*e);
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  for (std::string& e : environment) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

std::string WaitForChild(pid_t pid, const std::string& out) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  std::ifstream in(out);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Processes that compile one program at once: the first compiles, the others
// wait on the program's lock file and load its library (the compiler, a
// wrapper that counts its runs and takes its time, runs once).
TEST(JitTest, ConcurrentProcessesCompileOnce) {
  const std::string work = FreshDir("processes");
  const std::string dir = work + "/cache";
  const std::string count = work + "/count";
  const std::string wrapper = work + "/cxx.sh";
  std::ofstream(wrapper) << "#!/bin/sh\necho run >> '" << count << "'\nsleep 2\nexec '"
                         << AUTOBATCH_TEST_CXX << "' \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  std::vector<std::pair<pid_t, std::string>> children;
  for (int i = 0; i < 3; ++i) {
    const std::string out = work + "/out" + std::to_string(i);
    children.emplace_back(StartChild({"AUTOBATCH_JIT_TEST_DIR=" + dir,
                                      "AUTOBATCH_JIT_TEST_OUT=" + out,
                                      "AUTOBATCH_JIT_TEST_CXX=" + wrapper}),
                          out);
  }
  for (const auto& [pid, out] : children) EXPECT_EQ(WaitForChild(pid, out), "ok");
  std::ifstream in(count);
  const std::string runs(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(runs, "run\n");
  EXPECT_EQ(Libraries(dir).size(), 1u) << ::testing::PrintToString(Files(dir));
  for (const std::string& f : Files(dir)) {
    EXPECT_THAT(f, ::testing::MatchesRegex(kCacheEntry));
  }
}

// A full disk (here a file size limit: writes fail with EFBIG, as with
// ENOSPC) is named as such, with the cache directory, not left as the
// linker's "collect2: ld returned 1", and no temporary file stays.
TEST(JitTest, AFullCacheDirectoryIsNamedAndLeavesNoTemporaries) {
  // The source is about 6 KB, the library 16 KB and the biggest header the
  // JIT writes (ir/ir.h) 16 KB: at 2000 bytes our write of the headers
  // fails; at 10000, with the headers already in the cache (a compile
  // before, whose library is then removed), the compiler's.
  for (const char* limit : {"2000", "10000"}) {
    SCOPED_TRACE(limit);
    const std::string work = FreshDir(std::string("full_") + limit);
    const std::string dir = work + "/cache";
    const std::string out = work + "/out";
    if (std::string_view(limit) == "10000") {
      ASSERT_TRUE(JitFusedBlocks(Program("collatz").lowered, {.cache_dir = dir}).ok());
      for (const std::string& f : Files(dir)) {
        if (f.starts_with("fused_")) fs::remove(fs::path(dir) / f);
      }
    }
    const std::string message =
        WaitForChild(StartChild({"AUTOBATCH_JIT_TEST_DIR=" + dir, "AUTOBATCH_JIT_TEST_OUT=" + out,
                                 std::string("AUTOBATCH_JIT_TEST_FSIZE=") + limit}),
                     out);
    EXPECT_THAT(message, HasSubstr("the cache directory " + dir + " is full"));
    EXPECT_THAT(message, HasSubstr("File too large"));
    EXPECT_THAT(message, HasSubstr("omit --fused"));
    for (const std::string& f : Files(dir)) {
      EXPECT_THAT(f, ::testing::MatchesRegex("fused_[0-9a-f]{16}\\.lock|include_[0-9a-f]{16}"));
    }
  }
}

// Names the generated library defines or its headers declare cannot name the
// blocks: the source would not compile.
TEST(JitTest, GeneratedSymbolsThatCollideAreRefused) {
  const autobatch::Program& lowered = Program("collatz").lowered;
  for (const char* symbol : {"int64_t", "size_t", "uint64_t", "ptrdiff_t", "INT64_MAX", "NAN",
                             "std", "autobatch", "autobatch_jit_entry", "jit_host", "int"}) {
    absl::StatusOr<std::string> source = EmitFusedBlocks(lowered, symbol);
    ASSERT_FALSE(source.ok()) << symbol;
    EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(source.status().message(), HasSubstr(std::string("'") + symbol + "' "));
    EXPECT_THAT(source.status().message(), HasSubstr("choose another name"));
  }
  EXPECT_TRUE(EmitFusedBlocks(lowered, "int64_blocks").ok());
}

TEST(JitTest, AMissingCompilerIsAClearError) {
  absl::StatusOr<const FusedProgram*> fused =
      JitFusedBlocks(Program("collatz").lowered,
                     {.cache_dir = FreshDir("nocompiler"), .compiler = "/nonexistent/c++"});
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(fused.status().message(), HasSubstr("cannot run the C++ compiler '/nonexistent/c++'"));
  EXPECT_THAT(fused.status().message(), HasSubstr("omit --fused"));

  // Through CallOptions, with the compiler named by the environment.
  const testing::FusedTestProgram& p = Program("peanuts");
  ASSERT_EQ(setenv("AUTOBATCH_JIT_CXX", "/nonexistent/c++", 1), 0);
  ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", FreshDir("nocompiler_env").c_str(), 1), 0);
  absl::StatusOr<std::vector<Tensor>> run =
      RunProgram(p.lowered, p.inputs(4, 1), &p.context->kernels(),
                 {.vm = Vm::kStack, .jit_fused_blocks = true});
  unsetenv("AUTOBATCH_JIT_CXX");
  unsetenv("AUTOBATCH_CACHE_DIR");
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("cannot run the C++ compiler"));
}

TEST(JitTest, ACompilerFailureShowsTheCommandAndItsOutput) {
  const std::string dir = FreshDir("badflag");
  absl::StatusOr<const FusedProgram*> fused =
      JitFusedBlocks(Program("collatz").lowered,
                     {.cache_dir = dir, .extra_flags = {"-fno-such-flag-autobatch"}});
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(fused.status().message(), HasSubstr("the C++ compiler failed (exit status"));
  EXPECT_THAT(fused.status().message(), HasSubstr("-fno-such-flag-autobatch"));  // command
  EXPECT_THAT(fused.status().message(), HasSubstr("unrecognized"));              // output
  EXPECT_THAT(fused.status().message(), HasSubstr("(the source is " + dir));
  // The source and the log stay for the user; no library is left.
  int sources = 0, logs = 0;
  for (const std::string& f : Files(dir)) {
    EXPECT_THAT(f, ::testing::Not(HasSubstr(".so")));
    sources += f.ends_with(".cc");
    logs += f.ends_with(".log");
  }
  EXPECT_EQ(sources, 1);
  EXPECT_EQ(logs, 1);

  // The environment's AUTOBATCH_JIT_FLAGS reach the compiler too (the
  // sanitizer stage sets it: restored after).
  const char* outer = std::getenv("AUTOBATCH_JIT_FLAGS");
  const std::string outer_flags = outer == nullptr ? "" : outer;
  ASSERT_EQ(setenv("AUTOBATCH_JIT_FLAGS", " -O1\t-fno-such-env-flag-autobatch ", 1), 0);
  absl::StatusOr<const FusedProgram*> from_env =
      JitFusedBlocks(Program("collatz").lowered, {.cache_dir = FreshDir("badflag_env")});
  if (outer == nullptr) {
    unsetenv("AUTOBATCH_JIT_FLAGS");
  } else {
    setenv("AUTOBATCH_JIT_FLAGS", outer_flags.c_str(), 1);
  }
  ASSERT_FALSE(from_env.ok());
  EXPECT_THAT(from_env.status().message(), HasSubstr("-O1 -fno-such-env-flag-autobatch"));
  EXPECT_THAT(from_env.status().message(), HasSubstr("unrecognized"));
}

TEST(JitTest, AnUnwritableCacheDirectoryIsAClearError) {
  absl::StatusOr<const FusedProgram*> fused =
      JitFusedBlocks(Program("collatz").lowered, {.cache_dir = "/proc/autobatch-cache"});
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(fused.status().message(),
              HasSubstr("cannot create the cache directory /proc/autobatch-cache"));
}

// Code in the cache runs in the process: a directory or a library that
// others may write, or a symbolic link, is refused, and a directory the JIT
// creates is private.
TEST(JitTest, RefusesACacheOthersCanWrite) {
  const testing::FusedTestProgram& p = Program("collatz");
  const std::string dir = FreshDir("shared");
  fs::permissions(dir, fs::perms::all);  // 0777
  absl::StatusOr<const FusedProgram*> fused = JitFusedBlocks(p.lowered, {.cache_dir = dir});
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(fused.status().message(),
              HasSubstr(dir + " is writable by other users or not owned by this one"));

  const std::string made = FreshDir("made") + "/sub";
  ASSERT_TRUE(JitFusedBlocks(p.lowered, {.cache_dir = made}).ok());
  EXPECT_EQ(fs::status(made).permissions(), fs::perms::owner_all);
  const std::string library = made + "/" + Libraries(made).at(0);
  EXPECT_EQ(fs::status(library).permissions() & (fs::perms::group_write | fs::perms::others_write),
            fs::perms::none);

  // A library that others may write, in a private directory, is not loaded.
  const std::string tampered = FreshDir("tampered");
  fs::copy_file(library, tampered + "/" + Libraries(made).at(0));
  fs::permissions(tampered + "/" + Libraries(made).at(0), fs::perms::group_write,
                  fs::perm_options::add);
  fused = JitFusedBlocks(p.lowered, {.cache_dir = tampered});
  ASSERT_FALSE(fused.ok());
  EXPECT_THAT(fused.status().message(), HasSubstr("is writable by other users"));

  // Nor is a symbolic link, to a directory or a library, even one of this
  // user's: what it points to could change after the check.
  const std::string link = FreshDir("link") + "/cache";
  fs::create_directory_symlink(made, link);
  fused = JitFusedBlocks(p.lowered, {.cache_dir = link});
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(fused.status().message(),
              HasSubstr("goes through " + link + ", which is a symbolic link"));
  // However the path is spelled: lstat() of "link/" or "link/." follows it.
  for (const std::string& spelling : {link + "/", link + "/.", link + "//", link + "/./",
                                      link + "/sub/..", link + "/sub"}) {
    SCOPED_TRACE(spelling);
    fused = JitFusedBlocks(p.lowered, {.cache_dir = spelling});
    ASSERT_FALSE(fused.ok());
    EXPECT_EQ(fused.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(fused.status().message(), HasSubstr("goes through " + link + ", which is a "
                                                    "symbolic link"));
  }
  EXPECT_FALSE(fs::exists(made + "/sub"));  // nothing created through the link
  const std::string linked = FreshDir("linked");
  fs::create_symlink(library, linked + "/" + Libraries(made).at(0));
  fused = JitFusedBlocks(p.lowered, {.cache_dir = linked});
  ASSERT_FALSE(fused.ok());
  EXPECT_THAT(fused.status().message(), HasSubstr("is a symbolic link"));
}

TEST(JitTest, AnUnloweredProgramIsInvalidArgument) {
  autobatch::Program typed = Program("collatz").lowered;
  typed.stage = Stage::kTyped;
  absl::StatusOr<const FusedProgram*> fused = JitFusedBlocks(typed, {.cache_dir = FreshDir("x")});
  ASSERT_FALSE(fused.ok());
  EXPECT_EQ(fused.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace autobatch
