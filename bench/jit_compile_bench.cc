// How long the JIT takes to compile a whole program (codegen/jit.h,
// JitCompiledProgram: generate the C++, run the compiler, load the library)
// into an empty cache, and to load it from the cache in a process that has
// not loaded it (the source generated again and hashed, the checksum
// checked, the library dlopen()ed): the batched samplers' programs and
// fibonacci. Compile times are one run each (they take seconds); load times
// the best of --reps.
//
// Usage: jit_compile_bench [--reps R] [--programs fibonacci,nuts_eight_schools,...]
//   programs: fibonacci, nuts_eight_schools, hmc_eight_schools,
//   rwmh_eight_schools, nuts_ar1 (default: all)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codegen/jit.h"
#include "frontend/context.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/model/targets/registry.h"
#include "passes/pipeline.h"
#include "samples/fibonacci/fibonacci.h"

namespace autobatch {
namespace {

namespace fs = std::filesystem;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "jit_compile_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

// A lowered program, with what must outlive it.
struct Bench {
  std::string name;
  std::unique_ptr<Context> context;
  std::unique_ptr<mcmc::Target> model;
  std::unique_ptr<mcmc::BatchedSampler> sampler;
  Program lowered;
};

Bench Sampler(const std::string& name, const std::string& target, mcmc::Algorithm algorithm) {
  Bench b{name, nullptr, nullptr, nullptr, {}};
  absl::StatusOr<std::unique_ptr<mcmc::Target>> model =
      mcmc::MakeTarget(target, nlohmann::json::object());
  if (!model.ok()) Die("MakeTarget", model.status());
  b.model = *std::move(model);
  mcmc::SamplerConfig config;
  config.step_size = 0.3;
  absl::StatusOr<std::unique_ptr<mcmc::BatchedSampler>> sampler =
      mcmc::BatchedSampler::Create(*b.model, algorithm, config);
  if (!sampler.ok()) Die("BatchedSampler::Create", sampler.status());
  b.sampler = *std::move(sampler);
  absl::StatusOr<const Program*> lowered = b.sampler->ExecutableProgram(/*lowered=*/true);
  if (!lowered.ok()) Die("ExecutableProgram", lowered.status());
  b.lowered = **lowered;
  return b;
}

Bench Make(const std::string& name) {
  if (name == "fibonacci") {
    Bench b{name, std::make_unique<Context>(), nullptr, nullptr, {}};
    BatchFunction fib = samples::DefineFibonacci(*b.context);
    absl::StatusOr<Program> lowered =
        LowerProgram(*b.context->Program(fib), {Scalar(DType::kI64)});
    if (!lowered.ok()) Die("LowerProgram", lowered.status());
    b.lowered = *std::move(lowered);
    return b;
  }
  if (name == "nuts_eight_schools") return Sampler(name, "eight_schools", mcmc::Algorithm::kNuts);
  if (name == "hmc_eight_schools") return Sampler(name, "eight_schools", mcmc::Algorithm::kHmc);
  if (name == "rwmh_eight_schools") return Sampler(name, "eight_schools", mcmc::Algorithm::kRwmh);
  if (name == "nuts_ar1") return Sampler(name, "ar1", mcmc::Algorithm::kNuts);
  std::fprintf(stderr, "jit_compile_bench: unknown program '%s'\n", name.c_str());
  std::exit(2);
}

int64_t Ops(const Program& program) {
  int64_t ops = 0;
  for (const Function& fn : program.module.functions) {
    for (const Block& block : fn.blocks) ops += static_cast<int64_t>(block.ops.size());
  }
  return ops;
}

int Main(int argc, char** argv) {
  int reps = 5;
  std::vector<std::string> names = {"fibonacci", "nuts_eight_schools", "hmc_eight_schools",
                                    "rwmh_eight_schools", "nuts_ar1"};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--programs") && i + 1 < argc) {
      names = absl::StrSplit(argv[++i], ',');
    } else {
      std::fprintf(stderr, "usage: jit_compile_bench [--reps R] [--programs a,b,...]\n");
      return 2;
    }
  }
  const fs::path root = fs::temp_directory_path() / absl::StrCat("jit_compile_bench_", getpid());
  std::printf("%-22s %6s %12s %14s\n", "program", "ops", "compile s", "cache load ms");
  for (const std::string& name : names) {
    const Bench b = Make(name);
    const fs::path cold = root / name;
    double start = Now();
    absl::StatusOr<const FusedProgram*> compiled =
        JitCompiledProgram(b.lowered, {.cache_dir = cold.string()});
    const double compile_seconds = Now() - start;
    if (!compiled.ok()) Die("JitCompiledProgram(" + name + ")", compiled.status());
    // A cache directory this process has not loaded from: a copy.
    double load = 1e300;
    for (int r = 0; r < reps; ++r) {
      const fs::path warm = root / absl::StrCat(name, "_copy", r);
      fs::copy(cold, warm, fs::copy_options::recursive);
      fs::permissions(warm, fs::perms::owner_all);
      start = Now();
      absl::StatusOr<const FusedProgram*> loaded =
          JitCompiledProgram(b.lowered, {.cache_dir = warm.string()});
      load = std::min(load, Now() - start);
      if (!loaded.ok()) Die("JitCompiledProgram from the cache", loaded.status());
    }
    std::printf("%-22s %6lld %12.2f %14.1f\n", name.c_str(), static_cast<long long>(Ops(b.lowered)),
                compile_seconds, load * 1e3);
    std::fflush(stdout);
  }
  std::error_code error;
  fs::remove_all(root, error);
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
