// Pins the compiled programs of every sample and every batched MCMC sampler.
//
// The typed program (what the stackless VM and the reference interpreter
// run) and the lowered program (what the stack VM runs) of each are reduced
// to the size and a 64-bit FNV-1a hash of their JSON (ir/json.h) and
// compared with tests/passes/pinned/pinned_programs.txt. A change of the
// pipeline that changes any of them, even a variable's name, fails here:
// execution bits and benchmark figures follow these programs. When a change
// is meant, regenerate with AUTOBATCH_UPDATE_GOLDENS=1 and say why in the
// commit; `autobatch ir SAMPLE --stage lowered --json` and `autobatch sample
// --target T --algorithm A --print-ir lowered` before and after show how.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "frontend/context.h"
#include "ir/json.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/model/targets/registry.h"
#include "mcmc/sampler_config.h"
#include "mcmc/warmup/warmup_adapter.h"
#include "passes/pipeline.h"
#include "tests/testing/golden.h"
#include "tools/sample_programs.h"

namespace autobatch {
namespace {

std::string Fingerprint(const Program& program) {
  const std::string json = DumpProgramJson(program);
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : json) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return absl::StrCat(json.size(), " bytes, fnv1a ", absl::Hex(hash, absl::kZeroPad16));
}

TEST(PinnedProgramsTest, SamplesAndSamplersCompileToThePinnedPrograms) {
  std::string summary;
  for (const std::string& name : SampleProgramNames()) {
    Context ctx;
    absl::StatusOr<NamedProgram> sample = LoadSampleProgram(name, ctx);
    ASSERT_TRUE(sample.ok()) << sample.status();
    absl::StatusOr<Program> typed = CompileProgram(sample->program, sample->default_types);
    ASSERT_TRUE(typed.ok()) << name << ": " << typed.status();
    absl::StatusOr<Program> lowered = LowerProgram(sample->program, sample->default_types);
    ASSERT_TRUE(lowered.ok()) << name << ": " << lowered.status();
    absl::StrAppend(&summary, "sample ", name, " typed: ", Fingerprint(*typed), "\n");
    absl::StrAppend(&summary, "sample ", name, " lowered: ", Fingerprint(*lowered), "\n");
  }
  absl::StatusOr<mcmc::WindowSchedule> schedule = mcmc::WindowSchedule::Create({});
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  for (const std::string& target_name : mcmc::TargetNames()) {
    absl::StatusOr<std::unique_ptr<mcmc::Target>> target =
        mcmc::MakeTarget(target_name, nlohmann::json::object());
    ASSERT_TRUE(target.ok()) << target.status();
    for (mcmc::Algorithm algorithm :
         {mcmc::Algorithm::kNuts, mcmc::Algorithm::kHmc, mcmc::Algorithm::kRwmh}) {
      // The sampling program, and the warmup program (with the adapter).
      mcmc::WarmupAdapter adapter(**target, {.schedule = *schedule, .heuristic = {}});
      for (mcmc::WarmupAdapter* warmup : {static_cast<mcmc::WarmupAdapter*>(nullptr), &adapter}) {
        absl::StatusOr<std::unique_ptr<mcmc::BatchedSampler>> sampler =
            mcmc::BatchedSampler::Create(**target, algorithm, mcmc::SamplerConfig{}, warmup);
        ASSERT_TRUE(sampler.ok()) << target_name << ": " << sampler.status();
        const std::string label =
            absl::StrCat(target_name, " ", std::string(mcmc::AlgorithmName(algorithm)),
                         warmup != nullptr ? " warmup" : "");
        for (bool lowered : {false, true}) {
          absl::StatusOr<const Program*> program = (*sampler)->ExecutableProgram(lowered);
          ASSERT_TRUE(program.ok()) << label << ": " << program.status();
          absl::StrAppend(&summary, "sampler ", label, lowered ? " lowered: " : " typed: ",
                          Fingerprint(**program), "\n");
        }
      }
    }
  }
  EXPECT_TRUE(testing::MatchesGoldenFile(summary, "tests/passes/pinned", "pinned_programs"));
}

}  // namespace
}  // namespace autobatch
