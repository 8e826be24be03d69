// Writes the fused blocks (codegen/codegen.h) of the batched NUTS programs that
// nuts_bench runs, as one C++ file, at build time:
//   emit_nuts_fused_blocks OUTPUT.cc
// Each target's program is built exactly as nuts_bench builds it (same
// registry parameters, default SamplerConfig); the VM checks the fingerprint.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/model/targets/registry.h"
#include "codegen/codegen.h"

namespace {

[[noreturn]] void Die(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "emit_nuts_fused_blocks: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace autobatch;  // NOLINT: a short build tool
  if (argc != 2) {
    std::fprintf(stderr, "usage: emit_nuts_fused_blocks OUTPUT.cc\n");
    return 2;
  }
  const nlohmann::json ar1_params = {{"dimension", 100}};
  const std::pair<const char*, nlohmann::json> targets[] = {
      {"eight_schools", nlohmann::json::object()},
      {"ar1", ar1_params},
      {"ar1_batched", ar1_params},
      {"ar1_dense", ar1_params},
  };
  std::string source;
  for (const auto& [name, params] : targets) {
    absl::StatusOr<std::unique_ptr<mcmc::Target>> model = mcmc::MakeTarget(name, params);
    if (!model.ok()) Die(name, model.status());
    absl::StatusOr<std::unique_ptr<mcmc::BatchedSampler>> sampler =
        mcmc::BatchedSampler::Create(**model, mcmc::Algorithm::kNuts, mcmc::SamplerConfig{});
    if (!sampler.ok()) Die(name, sampler.status());
    absl::StatusOr<const Program*> lowered = (*sampler)->ExecutableProgram(/*lowered=*/true);
    if (!lowered.ok()) Die(name, lowered.status());
    absl::StatusOr<std::string> code =
        EmitFusedBlocks(**lowered, absl::StrCat("FusedBlocks_", name));
    if (!code.ok()) Die(name, code.status());
    absl::StrAppend(&source, *code, "\n");
  }
  std::ofstream out(argv[1], std::ios::binary);
  out << source;
  out.close();
  return out ? 0 : 1;
}
