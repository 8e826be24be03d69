// Demo: prints the IR of the Fibonacci sample and runs a small batch.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "frontend/context.h"
#include "ir/printer.h"
#include "samples/fibonacci/fibonacci.h"

int main() {
  autobatch::Context ctx;
  autobatch::BatchFunction fib = autobatch::samples::DefineFibonacci(ctx);
  absl::StatusOr<autobatch::Program> program = ctx.Program(fib);
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", std::string(program.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", autobatch::PrintProgram(*program).c_str());

  std::vector<int64_t> n = {0, 1, 2, 5, 10, 15, 7, 3};
  absl::StatusOr<autobatch::Tensor> input = autobatch::Tensor::FromVector(n);
  absl::StatusOr<autobatch::Tensor> out = fib(*input, {.dry_run = true});
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  std::vector<int64_t> values = out->ToVector<int64_t>();
  for (size_t i = 0; i < n.size(); ++i) {
    std::printf("fibonacci(%lld) = %lld\n", static_cast<long long>(n[i]),
                static_cast<long long>(values[i]));
  }
  return 0;
}
