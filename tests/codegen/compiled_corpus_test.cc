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
// makes them (tests/fuzz/program_fuzz_target.cc, whose helpers are not
// exported), for any batch size: the same values, kernels and budgets.
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
#include "tests/fuzz/program_fuzz_target.h"
#include "tests/testing/files.h"
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
// As the fuzzer makes them (tests/fuzz/program_fuzz_target.cc).

constexpr int64_t kIntValues[] = {0, 1, 2, 3, 5, 8, -1, 13, 4, 7,
                                  std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max()};
constexpr double kFloatValues[] = {0.0, 1.0, -1.5, 0.25, 3.0, -0.0, 2.5, -7.0,
                                   1e300, std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity()};
constexpr uint64_t kUnsignedValues[] = {0, 1, 42, 7, 3, 1ull << 63,
                                        std::numeric_limits<uint64_t>::max()};

uint64_t HashBytes(std::string_view bytes) {  // FNV-1a
  uint64_t h = 14695981039346656037ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

template <typename T, size_t N>
T Pick(const T (&table)[N], uint64_t index) {
  return table[index % N];
}

Tensor SynthesizeInput(const TensorType& type, int64_t batch, uint64_t seed) {
  Tensor tensor(type, batch);
  const int64_t n = batch * type.NumElements();
  VisitDType(type.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* data = tensor.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t k = seed + static_cast<uint64_t>(i) * 7;
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = ((seed >> 3) + static_cast<uint64_t>(i)) % 2 == 1;
      } else if constexpr (std::is_floating_point_v<T>) {
        data[i] = static_cast<T>(Pick(kFloatValues, k));
      } else if constexpr (std::is_same_v<T, uint64_t>) {
        data[i] = Pick(kUnsignedValues, k);
      } else {
        const int64_t v = Pick(kIntValues, k);
        data[i] = static_cast<T>(std::clamp<int64_t>(v, std::numeric_limits<T>::min(),
                                                     std::numeric_limits<T>::max()));
      }
    }
  });
  return tensor;
}

// Each entry parameter's type if known, else its signature's, else i64.
std::vector<TensorType> EntryInputTypes(const Program& program) {
  const Function& entry = program.entry_function();
  std::vector<TensorType> types;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const Variable& var = program.module.var(entry.params[i]);
    if (var.type) {
      types.push_back(*var.type);
    } else if (entry.signature && entry.signature->params.size() == entry.params.size()) {
      types.push_back(entry.signature->params[i]);
    } else {
      types.push_back(Scalar(DType::kI64));
    }
  }
  return types;
}

// q f64[d] -> (logp f64, grad f64[d]) (mcmc/batched/model_kernel.h).
bool IsModelShaped(const KernelSignature& sig) {
  return sig.inputs.size() == 1 && sig.outputs.size() == 2 &&
         sig.inputs[0].dtype == DType::kF64 && sig.inputs[0].Rank() == 1 &&
         sig.outputs[0] == Scalar(DType::kF64) && sig.outputs[1] == sig.inputs[0];
}

// A standard normal log density and gradient for model-shaped kernels,
// zeros otherwise.
absl::Status StandInKernel(const KernelSignature& sig, const KernelCall& call) {
  if (IsModelShaped(sig)) {
    const int64_t d = sig.inputs[0].shape[0];
    const auto* q = reinterpret_cast<const double*>(call.inputs[0].data);
    auto* logp = reinterpret_cast<double*>(call.outputs[0].data);
    auto* grad = reinterpret_cast<double*>(call.outputs[1].data);
    for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
      double sum = 0;
      for (int64_t i = 0; i < d; ++i) {
        const double x = q[lane * d + i];
        sum += x * x;
        grad[lane * d + i] = -x;
      }
      logp[lane] = -0.5 * sum;
    }
    return absl::OkStatus();
  }
  for (size_t k = 0; k < call.outputs.size(); ++k) {
    const TensorType& type = call.outputs[k].type;
    const int64_t bytes = call.num_lanes * type.NumElements() * DTypeSize(type.dtype);
    if (bytes > 0) std::memset(call.outputs[k].data, 0, static_cast<size_t>(bytes));
  }
  return absl::OkStatus();
}

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
  out.hash = HashBytes(bytes.str());
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

// ---------------------------------------------------------------------------
// Comparisons: "" when equal, else what differs.

std::string Bytes(const std::byte* p, int64_t size) {
  std::string hex = "0x";
  for (int64_t j = size - 1; j >= 0; --j) {
    absl::StrAppend(&hex, absl::Hex(static_cast<unsigned>(p[j]), absl::kZeroPad2));
  }
  return hex;
}

std::string OutputDifference(const std::vector<Tensor>& stack, const std::vector<Tensor>& jit) {
  if (stack.size() != jit.size()) {
    return absl::StrCat("stack VM gives ", stack.size(), " outputs, compiled ", jit.size());
  }
  for (size_t k = 0; k < stack.size(); ++k) {
    const Tensor& a = stack[k];
    const Tensor& b = jit[k];
    if (a == b) continue;
    if (a.type() != b.type() || a.batch() != b.batch()) {
      return absl::StrCat("output ", k, ": stack VM ", a.type().ToString(), " x ", a.batch(),
                          ", compiled ", b.type().ToString(), " x ", b.batch());
    }
    const int64_t size = DTypeSize(a.type().dtype);
    for (int64_t lane = 0; lane < a.batch(); ++lane) {
      for (int64_t i = 0; i < a.type().NumElements(); ++i) {
        const std::byte* pa = a.lane_bytes_ptr(lane) + i * size;
        const std::byte* pb = b.lane_bytes_ptr(lane) + i * size;
        if (std::memcmp(pa, pb, static_cast<size_t>(size)) == 0) continue;
        return absl::StrCat("output ", k, " (", a.type().ToString(), ") lane ", lane,
                            " element ", i, ": stack VM ", Bytes(pa, size), ", compiled ",
                            Bytes(pb, size));
      }
    }
    return absl::StrCat("output ", k, " differs (operator==) in no element");
  }
  return "";
}

// Appends "what: a vs b" to `out` when a != b.
void Diff(std::string& out, const std::string& what, int64_t a, int64_t b) {
  if (a != b) absl::StrAppend(&out, "\n  ", what, ": stack VM ", a, ", compiled ", b);
}

std::string ProfileDifference(const Profile& a, const Profile& b) {
  std::string out;
  Diff(out, "steps", a.steps, b.steps);
  Diff(out, "functions", static_cast<int64_t>(a.blocks.size()),
       static_cast<int64_t>(b.blocks.size()));
  for (size_t f = 0; f < std::min(a.blocks.size(), b.blocks.size()); ++f) {
    Diff(out, absl::StrCat("blocks of function ", f), static_cast<int64_t>(a.blocks[f].size()),
         static_cast<int64_t>(b.blocks[f].size()));
    for (size_t k = 0; k < std::min(a.blocks[f].size(), b.blocks[f].size()); ++k) {
      const std::string name =
          absl::StrCat("block ", a.function_names[f], "/", a.block_labels[f][k]);
      Diff(out, name + " executions", a.blocks[f][k].executions, b.blocks[f][k].executions);
      Diff(out, name + " active_lanes", a.blocks[f][k].active_lanes, b.blocks[f][k].active_lanes);
      Diff(out, name + " ops", a.blocks[f][k].ops, b.blocks[f][k].ops);
    }
  }
  for (size_t i = 0; i < std::max(a.builtins.size(), b.builtins.size()); ++i) {
    const PrimitiveCounters none;
    const PrimitiveCounters& x = i < a.builtins.size() ? a.builtins[i] : none;
    const PrimitiveCounters& y = i < b.builtins.size() ? b.builtins[i] : none;
    const std::string name(PrimitiveName(static_cast<Primitive>(i)));
    Diff(out, name + " executions", x.executions, y.executions);
    Diff(out, name + " active_lanes", x.active_lanes, y.active_lanes);
  }
  std::map<std::string, std::pair<PrimitiveCounters, PrimitiveCounters>> kernels;
  for (const auto& [name, c] : a.kernels) kernels[name].first = c;
  for (const auto& [name, c] : b.kernels) kernels[name].second = c;
  for (const auto& [name, c] : kernels) {
    Diff(out, "kernel " + name + " executions", c.first.executions, c.second.executions);
    Diff(out, "kernel " + name + " active_lanes", c.first.active_lanes, c.second.active_lanes);
  }
  if (a.lane_blocks != b.lane_blocks) absl::StrAppend(&out, "\n  lane_blocks differ");
  return out;
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
    EXPECT_EQ(OutputDifference(*stack, *jit), "");
  } else {
    EXPECT_EQ(jit.status(), stack.status()) << "compiled (left) against the stack VM (right)";
  }
  // Also the counters up to an error both stopped at.
  if (shards == 1 && jit.status() == stack.status()) {
    EXPECT_EQ(ProfileDifference(stack_profile, jit_profile), "");
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
