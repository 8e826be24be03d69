// Compiled whole programs (codegen/jit.h JitCompiledProgram, at -O1, passed
// in CallOptions::fused_blocks) against the plain stack VM on every program of the
// fuzzer's seed corpus (tests/fuzz/corpus/*.json). At batch sizes 1, 7, 64
// and 1000, unsharded and with shards = 3, the two calls give the same
// outputs bit for bit, or fail with the same status code and message. The
// unsharded calls give the same profile counters, up to the error if both
// fail: steps; each block's executions, active lanes and ops; each
// primitive's and user kernel's executions and active lanes; each lane's
// block count. Every program the stack VM accepts must JIT-compile, once:
// the calls reuse that library (one per program in a fresh cache directory).
//
// Inputs, stand-in user kernels and call options are made as the fuzzer
// makes them (tests/fuzz/fuzz_inputs.h, FuzzLimits), for any batch size: the
// same values, kernels and budgets.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "codegen/jit.h"
#include "frontend/run.h"
#include "gtest/gtest.h"
#include "ir/ir.h"
#include "ir/json.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "support/status.h"
#include "tests/fuzz/fuzz_inputs.h"
#include "tests/fuzz/program_fuzz_target.h"
#include "tests/testing/files.h"
#include "tests/testing/profiles.h"
#include "vm/options.h"
#include "vm/profile.h"
#include "vm/stack/block_plan.h"

namespace autobatch {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpusDir = fs::path(AUTOBATCH_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
constexpr int64_t kBatchSizes[] = {1, 7, 64, 1000};
constexpr int kShards[] = {1, 3};

// ---------------------------------------------------------------------------
// A corpus program and what it runs with.

struct CorpusProgram {
  Program program;
  KernelRegistry kernels;
  std::vector<TensorType> input_types;
  std::vector<bool> uniform;  // per entry parameter: given as one lane
  uint64_t hash = 0;          // of the file's bytes: picks inputs and options
};

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(kCorpusDir)) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "sample_collatz.lowered.json" -> "sample_collatz_lowered" (a gtest name).
std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - std::string(".json").size());
  return absl::StrReplaceAll(name, {{".", "_"}, {"-", "_"}});
}

absl::Status LoadCorpusProgram(const std::string& file, CorpusProgram& out) {
  std::ifstream in(kCorpusDir / file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  out.hash = FuzzHash(bytes.str());
  AB_ASSIGN_OR_RETURN(out.program, LoadProgramJson(bytes.str()));
  AB_RETURN_IF_ERROR(VerifyProgram(out.program));
  for (const auto& [name, sig] : out.program.module.kernels) {
    AB_RETURN_IF_ERROR(out.kernels.Register(
        name, sig, [sig](const KernelCall& call) { return StandInKernel(sig, call); }));
  }
  AB_RETURN_IF_ERROR(out.kernels.CheckBound(out.program.module));
  out.input_types = EntryInputTypes(out.program);
  const Function& entry = out.program.entry_function();
  for (size_t i = 0; i < out.input_types.size(); ++i) {
    out.uniform.push_back(i < entry.params.size() &&
                          out.program.module.var(entry.params[i]).uniform);
  }
  return absl::OkStatus();
}

std::vector<Tensor> Inputs(const CorpusProgram& p, int64_t batch) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < p.input_types.size(); ++i) {
    inputs.push_back(SynthesizeInput(p.input_types[i], p.uniform[i] ? 1 : batch, p.hash + i * 131));
    if (p.uniform[i]) inputs.back().set_uniform();
  }
  return inputs;
}

// The fuzzer's budgets (FuzzLimits) without its wall-clock one, and its
// choices of frame stacks and of dense or compact blocks (no timing, so
// both calls choose alike).
// `compiled`: the compiled program to run, or null for the interpreter.
CallOptions Options(const CorpusProgram& p, int64_t batch, int shards,
                    const FusedProgram* compiled) {
  const FuzzLimits limits;
  CallOptions options{.vm = Vm::kStack};
  options.shards = shards;
  options.max_steps = limits.max_steps;
  options.max_stack_depth = limits.max_stack_depth;
  options.max_value_bytes = limits.max_value_elements * 8 * batch;
  options.max_memory_bytes = limits.max_memory_bytes;
  if ((p.hash >> 40) & 1) options.frame_stack_min_lane_bytes = 1;
  options.time_dense_or_compact = false;
  options.dense_fraction = options.dense_fraction_heavy = ((p.hash >> 41) & 1) ? 0.0 : 1.0;
  options.fused_blocks = compiled;
  return options;
}

// The program the stack VM runs, or its refusal before running (lowering,
// block plan).
absl::StatusOr<Program> StackVmProgram(const CorpusProgram& p) {
  absl::StatusOr<Program> lowered = p.program.stage == Stage::kLowered
                                        ? absl::StatusOr<Program>(p.program)
                                        : LowerProgram(p.program, p.input_types);
  if (lowered.ok()) AB_RETURN_IF_ERROR(BlockPlan::Build(*lowered).status());
  return lowered;
}

// One corpus program on the stack VM and compiled: the same outputs or the
// same error, and for an unsharded call the same profile counters.
void ExpectSameRun(const CorpusProgram& p, int64_t batch, int shards,
                   const FusedProgram* compiled) {
  SCOPED_TRACE(absl::StrCat("batch ", batch, ", shards ", shards));
  const std::vector<Tensor> inputs = Inputs(p, batch);
  Profile stack_profile, jit_profile;
  const absl::StatusOr<std::vector<Tensor>> stack = RunProgram(
      p.program, inputs, &p.kernels, Options(p, batch, shards, nullptr), &stack_profile);
  const absl::StatusOr<std::vector<Tensor>> jit = RunProgram(
      p.program, inputs, &p.kernels, Options(p, batch, shards, compiled), &jit_profile);
  if (stack.ok() && jit.ok()) {
    EXPECT_EQ(CompareOutputs("the stack VM", *stack, "the compiled program", *jit), "");
  } else {
    EXPECT_EQ(jit.status(), stack.status()) << "compiled (left) against the stack VM (right)";
  }
  // Also the counters up to an error both stopped at.
  if (shards == 1 && jit.status() == stack.status()) {
    EXPECT_EQ(testing::CounterDifference(stack_profile, jit_profile), "");
  }
}

std::vector<std::string> CompiledLibraries(const std::string& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("program_") && name.ends_with(".so")) names.push_back(name);
  }
  return names;
}

// Each program JIT-compiles into a cache directory of its own, so that runs
// share no user cache and a second compile would show.
class CompiledCorpusTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cache_dir_ = testing::FreshTempDir(
        absl::StrCat("autobatch_compiled_corpus_", getpid(), "_", TestName({GetParam(), 0})));
    ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", cache_dir_.c_str(), 1), 0);
  }
  void TearDown() override {
    unsetenv("AUTOBATCH_CACHE_DIR");
    // A failed compile leaves its source and log there to look at.
    if (!HasFailure()) fs::remove_all(cache_dir_);
  }
  std::string cache_dir_;
};

TEST_P(CompiledCorpusTest, CompiledProgramMatchesTheStackVm) {
  CorpusProgram p;
  const absl::Status loaded = LoadCorpusProgram(GetParam(), p);
  ASSERT_TRUE(loaded.ok()) << "the seed does not load, verify or bind: " << loaded;
  const absl::StatusOr<Program> lowered = StackVmProgram(p);
  const FusedProgram* compiled = nullptr;
  if (lowered.ok()) {
    // At -O1: the bits do not depend on the level, and the NUTS programs
    // compile in a fifth of the time -O3 takes.
    const absl::StatusOr<const FusedProgram*> jit =
        JitCompiledProgram(*lowered, {.extra_flags = {"-O1"}});
    ASSERT_TRUE(jit.ok()) << "JitCompiledProgram failed: " << jit.status();
    compiled = *jit;
  }
  for (int64_t batch : kBatchSizes) {
    for (int shards : kShards) ExpectSameRun(p, batch, shards, compiled);
  }
  // The calls ran the library compiled above (or refused the program alike).
  EXPECT_EQ(CompiledLibraries(cache_dir_).size(), lowered.ok() ? 1u : 0u)
      << (lowered.ok() ? "" : lowered.status().ToString());
}

INSTANTIATE_TEST_SUITE_P(CompiledCorpus, CompiledCorpusTest, ::testing::ValuesIn(CorpusFiles()),
                         TestName);

}  // namespace
}  // namespace autobatch
