// Writes the program fuzzer's seed corpus: every sample program's JSON at the untyped, allocated and lowered stages.
//
//   autobatch_make_fuzz_corpus <output directory>
//
// Writes sample_<name>.{untyped,allocated,lowered}.json for the samples the
// `autobatch` tool knows (tools/sample_programs.h; peanuts with a small
// configuration so the seed stays small) and the batched MCMC chain programs
// (NUTS, HMC, RWMH on a 2-dimensional iid Gaussian). The untyped form gets an
// explicit entry signature so the fuzzer knows the input types. Run by
// tools/make_fuzz_corpus.sh.
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/context.h"
#include "ir/json.h"
#include "passes/pipeline.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/batched/draw_recorder.h"
#include "mcmc/batched/model_kernel.h"
#include "mcmc/model/targets/iid_gaussian.h"
#include "samples/peanuts/peanuts.h"
#include "samples/models/models.h"
#include "tools/sample_programs.h"

namespace autobatch {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text << "\n";
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Writes the three stages of `untyped`, whose entry takes `types`.
absl::Status WriteSeeds(const std::string& dir, const std::string& name, Program untyped,
                        const std::vector<TensorType>& types) {
  AB_ASSIGN_OR_RETURN(Program allocated, CompileProgram(untyped, types));
  AB_ASSIGN_OR_RETURN(Program lowered, LowerProgram(untyped, types));
  Signature signature{types, {}};
  for (VarId r : allocated.entry_function().results) {
    signature.results.push_back(*allocated.module.var(r).type);
  }
  untyped.module.function(untyped.entry).signature = signature;
  const std::string prefix = absl::StrCat(dir, "/sample_", name);
  AB_RETURN_IF_ERROR(WriteFile(prefix + ".untyped.json", DumpProgramJson(untyped, -1)));
  AB_RETURN_IF_ERROR(WriteFile(prefix + ".allocated.json", DumpProgramJson(allocated, -1)));
  AB_RETURN_IF_ERROR(WriteFile(prefix + ".lowered.json", DumpProgramJson(lowered, -1)));
  return absl::OkStatus();
}

absl::Status WriteToolSamples(const std::string& dir) {
  for (const std::string& name : SampleProgramNames()) {
    if (name == "peanuts") continue;  // its default matrix is 100 x 100: below
    Context ctx;
    AB_ASSIGN_OR_RETURN(NamedProgram named, LoadSampleProgram(name, ctx));
    AB_RETURN_IF_ERROR(WriteSeeds(dir, name, named.program, named.default_types));
  }
  Context ctx;
  samples::PeaNutsConfig config;
  config.dimension = 3;
  config.max_depth = 2;
  AB_ASSIGN_OR_RETURN(Program peanuts, ctx.Program(samples::DefinePeaNuts(ctx, config)));
  return WriteSeeds(dir, "peanuts", peanuts,
                    {Vector(DType::kF64, config.dimension), Scalar(DType::kI64),
                     Scalar(DType::kI64)});
}

absl::Status WriteMcmcSamples(const std::string& dir) {
  constexpr int64_t kDimension = 2;
  AB_ASSIGN_OR_RETURN(std::unique_ptr<mcmc::IidGaussian> model,
                      mcmc::IidGaussian::Create({.dimension = kDimension}));
  mcmc::SamplerConfig config;
  config.max_depth = 3;
  config.num_leapfrog_steps = 3;
  const TensorType vec = Vector(DType::kF64, kDimension);
  const std::vector<TensorType> types = {
      vec,                  // q
      Scalar(DType::kF64),  // logp
      vec,                  // grad
      Scalar(DType::kU64),  // key
      Scalar(DType::kU64),  // counter
      Scalar(DType::kF64),  // step_size
      vec,                  // inv_metric
      Scalar(DType::kI64),  // slot
      Scalar(DType::kI64),  // num_draws
  };
  for (mcmc::Algorithm algorithm :
       {mcmc::Algorithm::kNuts, mcmc::Algorithm::kHmc, mcmc::Algorithm::kRwmh}) {
    Context ctx;
    mcmc::DrawRecorder recorder(kDimension);
    Kernel log_density = mcmc::RegisterModelKernel(ctx, *model);
    Kernel record_draw = recorder.Register(ctx);
    BatchFunction chain = mcmc::DefineChainProgram(ctx, algorithm, log_density, record_draw,
                                                   kDimension, config);
    AB_ASSIGN_OR_RETURN(Program program, ctx.Program(chain));
    AB_RETURN_IF_ERROR(WriteSeeds(
        dir, absl::StrCat("mcmc_", std::string(mcmc::AlgorithmName(algorithm))), program,
        types));
  }
  return absl::OkStatus();
}

// A model written as a program: its value-and-gradient program, whose data
// are uniform inputs read by the log density (another function).
absl::Status WriteModelSamples(const std::string& dir) {
  std::unique_ptr<mcmc::ProgramModel> model = samples::EightSchoolsModel();
  AB_ASSIGN_OR_RETURN(Program program, model->GradientProgram());
  return WriteSeeds(dir, "model_eight_schools", program,
                    {Vector(DType::kF64, model->dimension()), Vector(DType::kF64, 8),
                     Vector(DType::kF64, 8)});
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  for (const auto& write : {WriteToolSamples, WriteMcmcSamples, WriteModelSamples}) {
    absl::Status status = write(dir);
    if (!status.ok()) {
      std::fprintf(stderr, "make_fuzz_corpus: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
