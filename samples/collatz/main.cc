// Demo: prints the IR of the Collatz step count and runs a small batch.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "frontend/context.h"
#include "ir/printer.h"
#include "samples/collatz/collatz.h"

int main() {
  autobatch::Context ctx;
  autobatch::BatchFunction collatz = autobatch::samples::DefineCollatz(ctx);
  absl::StatusOr<autobatch::Program> program = ctx.Program(collatz);
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", std::string(program.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", autobatch::PrintProgram(*program).c_str());

  std::vector<int64_t> n = {1, 2, 3, 6, 7, 27, 97, 871};
  absl::StatusOr<autobatch::Tensor> input = autobatch::Tensor::FromVector(n);
  absl::StatusOr<autobatch::Tensor> out = collatz(*input, {.dry_run = true});
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  std::vector<int64_t> values = out->ToVector<int64_t>();
  for (size_t i = 0; i < n.size(); ++i) {
    std::printf("collatz_steps(%lld) = %lld\n", static_cast<long long>(n[i]),
                static_cast<long long>(values[i]));
  }
  return 0;
}
