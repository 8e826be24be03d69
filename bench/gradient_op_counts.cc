// Op counts of compiler-written gradients: eight schools' and a logistic
// regression's log densities (samples/gradients/) differentiated, counted
// right after the differentiate pass, after CompileProgram without and with
// the cleanup group (fold_constants, simplify_arithmetic, cse,
// propagate_copies, remove_dead_ops), and after the whole stack-VM pipeline
// (LowerProgram: lowering and copy coalescing too). Ops include each block's
// terminator. Deterministic: a count, not a timing.
//
//   build/bench/gradient_op_counts
#include <cstdio>
#include <string>
#include <vector>

#include "frontend/context.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "passes/pipeline.h"
#include "samples/gradients/log_densities.h"

namespace {

using autobatch::Program;

int64_t Ops(const Program& program) {
  int64_t ops = 0;
  for (const autobatch::Function& f : program.module.functions) {
    for (const autobatch::Block& b : f.blocks) ops += static_cast<int64_t>(b.ops.size()) + 1;
  }
  return ops;
}

int Report(const char* name, autobatch::Context& ctx, const autobatch::BatchFunction& f,
           int64_t dim) {
  const autobatch::BatchFunction g = ctx.Gradient(f);
  const std::vector<autobatch::TensorType> types = {autobatch::Vector(autobatch::DType::kF64, dim)};
  absl::StatusOr<const Program*> primal = ctx.LoweredProgram(f, types);
  absl::StatusOr<Program> untyped = ctx.Program(g);
  if (!primal.ok() || !untyped.ok()) return 1;
  absl::StatusOr<autobatch::Pipeline> until =
      autobatch::ParsePipeline(autobatch::TidyPipelineText() + ",infer_types,differentiate");
  absl::StatusOr<Program> differentiated =
      autobatch::RunPipeline(*untyped, *until, {.input_types = types});
  autobatch::PipelineOptions no_cleanup;
  no_cleanup.cleanup = false;
  absl::StatusOr<Program> compiled_raw = autobatch::CompileProgram(*untyped, types, no_cleanup);
  absl::StatusOr<Program> compiled = autobatch::CompileProgram(*untyped, types);
  absl::StatusOr<Program> lowered = autobatch::LowerProgram(*untyped, types);
  if (!until.ok() || !differentiated.ok() || !compiled_raw.ok() || !compiled.ok() ||
      !lowered.ok()) {
    std::fprintf(stderr, "%s: %s\n", name,
                 std::string((!differentiated.ok() ? differentiated.status()
                                                   : lowered.status()).message()).c_str());
    return 1;
  }
  std::printf("| %s | %lld | %lld | %lld | %lld | %lld |\n", name,
              static_cast<long long>(Ops(**primal)), static_cast<long long>(Ops(*differentiated)),
              static_cast<long long>(Ops(*compiled_raw)), static_cast<long long>(Ops(*compiled)),
              static_cast<long long>(Ops(*lowered)));
  return 0;
}

}  // namespace

int main() {
  std::printf(
      "| log density | primal, lowered | gradient after differentiate | compiled, cleanup off | "
      "compiled, cleanup on | gradient, lowered |\n");
  std::printf("|---|---|---|---|---|---|\n");
  int failed = 0;
  {
    autobatch::Context ctx;
    failed |= Report("eight schools", ctx, autobatch::samples::RegisterEightSchools(ctx), 10);
  }
  {
    const auto data = autobatch::mcmc::LogisticRegression::GenerateData(200, 5, 20240601);
    autobatch::Context ctx;
    failed |= Report("logistic regression (200 x 5)", ctx,
                     autobatch::samples::RegisterLogisticRegression(ctx, data.x, data.y, 200, 5,
                                                                    2.5),
                     6);
  }
  return failed;
}
