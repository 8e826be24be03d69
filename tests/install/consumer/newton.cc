// A per-example program of a user's: Newton's square root, a loop whose trip
// count depends on the example, run on a batch by the stack VM, then with
// JIT-compiled fused blocks (the JIT's headers come with the library).
#include <cmath>
#include <cstdio>
#include <vector>

#include "frontend/context.h"
#include "newton_program.h"

// autobatch::autobatch exports Eigen's alignment (64 bytes): without it this
// file, built without -march=native, would allocate Eigen storage with 16
// and the library (-march=native on an AVX-512 machine) free it with 64.
static_assert(EIGEN_MAX_ALIGN_BYTES == 64 && EIGEN_MAX_STATIC_ALIGN_BYTES == 64);

using namespace autobatch;

int main() {
  Context ctx;
  BatchFunction newton_sqrt = DefineNewton(ctx);
  const std::vector<double> a = {2, 9, 16, 1e6, 0.25, 12345.678};
  for (bool fused : {false, true}) {
    // A Tensor made here and freed by the library, and one made by the
    // library and freed here: both allocations must agree on alignment.
    absl::StatusOr<Tensor> input = Tensor::FromVector(a);
    if (!input.ok()) return 1;
    absl::StatusOr<Tensor> out =
        newton_sqrt(*std::move(input), {.vm = Vm::kStack, .jit_fused_blocks = fused});
    if (!out.ok()) {
      std::fprintf(stderr, "newton_sqrt%s: %s\n", fused ? " (fused)" : "",
                   std::string(out.status().message()).c_str());
      return 1;
    }
    const std::vector<double> x = out->ToVector<double>();
    for (size_t i = 0; i < a.size(); ++i) {
      std::printf("%ssqrt(%g) = %.12g\n", fused ? "fused: " : "", a[i], x[i]);
      if (std::abs(x[i] - std::sqrt(a[i])) > 1e-6 * std::sqrt(a[i])) {
        std::fprintf(stderr, "wrong: sqrt(%g) is %.17g\n", a[i], std::sqrt(a[i]));
        return 1;
      }
    }
  }
  return 0;
}
