// Demo: prints the IR of is_even / is_odd and runs a small batch.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "frontend/context.h"
#include "ir/printer.h"
#include "samples/mutual_recursion/even_odd.h"

int main() {
  autobatch::Context ctx;
  autobatch::samples::EvenOdd f = autobatch::samples::DefineEvenOdd(ctx);
  absl::StatusOr<autobatch::Program> program = ctx.Program(f.is_even);
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", std::string(program.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", autobatch::PrintProgram(*program).c_str());

  std::vector<int64_t> n = {0, 1, 2, 7, 10, 33, 100};
  absl::StatusOr<autobatch::Tensor> input = autobatch::Tensor::FromVector(n);
  absl::StatusOr<autobatch::Tensor> out = f.is_even(*input, {.dry_run = true});
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  std::vector<bool> values = out->ToVector<bool>();
  for (size_t i = 0; i < n.size(); ++i) {
    std::printf("is_even(%lld) = %s\n", static_cast<long long>(n[i]),
                values[i] ? "true" : "false");
  }
  return 0;
}
