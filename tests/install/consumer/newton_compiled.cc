// newton_program.h's program compiled whole at build time
// (autobatch_compile_program in CMakeLists.txt, which defines NewtonProgram)
// and run by the stack VM: the same bits as the interpreter's run.
#include <cstdio>
#include <cstring>
#include <vector>

#include "frontend/context.h"
#include "newton_program.h"
#include "vm/fused_blocks.h"

const autobatch::FusedProgram& NewtonProgram();  // generated

using namespace autobatch;

int main() {
  Context ctx;
  BatchFunction newton_sqrt = DefineNewton(ctx);
  const std::vector<double> a = {2, 9, 16, 1e6, 0.25, 12345.678};
  std::vector<double> results[2];
  for (int compiled = 0; compiled < 2; ++compiled) {
    absl::StatusOr<Tensor> input = Tensor::FromVector(a);
    if (!input.ok()) return 1;
    CallOptions options{.vm = Vm::kStack};
    if (compiled == 1) options.fused_blocks = &NewtonProgram();
    absl::StatusOr<Tensor> out = newton_sqrt(*std::move(input), options);
    if (!out.ok()) {
      std::fprintf(stderr, "newton_sqrt%s: %s\n", compiled ? " (compiled)" : "",
                   std::string(out.status().message()).c_str());
      return 1;
    }
    results[compiled] = out->ToVector<double>();
  }
  if (std::memcmp(results[0].data(), results[1].data(), a.size() * sizeof(double)) != 0) {
    std::fprintf(stderr, "newton_sqrt compiled differs from the interpreter's run\n");
    return 1;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    std::printf("compiled: sqrt(%g) = %.12g\n", a[i], results[1][i]);
  }
  return 0;
}
