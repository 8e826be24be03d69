// JIT fused blocks (codegen/jit.h): compiled at run time with the build's
// compiler, they give the interpreter's bits; the cache is reused, repaired
// when corrupt, and written atomically; every failure is a clear error.
#include "codegen/jit.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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
#include "tests/vm/fused_test_programs.h"
#include "codegen/codegen.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

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
  // One library per program, and nothing else left behind.
  std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 4u) << ::testing::PrintToString(files);
  for (const std::string& f : files) {
    EXPECT_THAT(f, ::testing::MatchesRegex("fused_[0-9a-f]{16}\\.so"));
  }
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
  EXPECT_EQ(Files(dir).size(), 1u) << ::testing::PrintToString(Files(dir));
  // The loaded library is reused: the same blocks, without the directory.
  absl::StatusOr<const FusedProgram*> again =
      JitFusedBlocks(*nuts.lowered, {.cache_dir = dir});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_GE((*again)->segments.size(), 10u);
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
  std::vector<std::string> files = Files(first);
  ASSERT_EQ(files.size(), 1u);
  const std::string library = files[0];

  const std::string cached = FreshDir("cached");
  fs::copy_file(fs::path(first) / library, fs::path(cached) / library);
  const ino_t inode = Inode(fs::path(cached) / library);
  absl::StatusOr<const FusedProgram*> fused = JitFusedBlocks(p.lowered, {.cache_dir = cached});
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(Files(cached), std::vector<std::string>{library});
  EXPECT_EQ(Inode(fs::path(cached) / library), inode);  // a compiled one is renamed in

  const std::string corrupt = FreshDir("corrupt");
  std::ofstream(fs::path(corrupt) / library) << "not a shared library";
  fused = JitFusedBlocks(p.lowered, {.cache_dir = corrupt});
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_GT(fs::file_size(fs::path(corrupt) / library), 1000u);
  const std::vector<Tensor> inputs = p.inputs(64, 9);
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(p.lowered, inputs, nullptr, {.vm = Vm::kStack});
  absl::StatusOr<std::vector<Tensor>> got =
      RunProgram(p.lowered, inputs, nullptr, {.vm = Vm::kStack, .fused_blocks = *fused});
  ASSERT_TRUE(expected.ok() && got.ok());
  EXPECT_TRUE(testing::BitIdentical(*got, *expected));
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
  EXPECT_EQ(Files(dir).size(), 1u) << ::testing::PrintToString(Files(dir));
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
  const std::string library = made + "/" + Files(made).at(0);
  EXPECT_EQ(fs::status(library).permissions() & (fs::perms::group_write | fs::perms::others_write),
            fs::perms::none);

  // A library that others may write, in a private directory, is not loaded.
  const std::string tampered = FreshDir("tampered");
  fs::copy_file(library, tampered + "/" + Files(made).at(0));
  fs::permissions(tampered + "/" + Files(made).at(0), fs::perms::group_write,
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
  EXPECT_THAT(fused.status().message(), HasSubstr(link + " is a symbolic link"));
  const std::string linked = FreshDir("linked");
  fs::create_symlink(library, linked + "/" + Files(made).at(0));
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
