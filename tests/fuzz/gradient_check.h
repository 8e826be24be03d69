// The fuzzer's gradient check: a program whose entry takes f64 scalars and
// returns one f64 scalar is also differentiated (a gradient stub of its
// entry becomes the entry; passes/differentiate.h) and run on every
// executor, which must agree bit for bit; where the entry is straight-line
// code without step functions (floor, mod, cast), each gradient is checked against central differences in a way that
// raises no false alarm at kinks or in ill-conditioned code: a mismatch
// counts only when the differences at two step sizes agree with each other
// and not with the gradient.
#ifndef AUTOBATCH_TESTS_FUZZ_GRADIENT_CHECK_H_
#define AUTOBATCH_TESTS_FUZZ_GRADIENT_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "vm/options.h"

namespace autobatch {

struct GradientCheck {
  bool checked = false;        // the program qualified and was differentiated
  absl::Status status;         // the reference interpreter's, on the gradient
  bool compared = false;       // executors' gradients compared bit for bit
  bool finite_differences = false;  // checked against central differences
  std::string finding;         // a broken promise, else empty
};

// `options` as the fuzzer ran `program` (dry_run and vm are set here).
GradientCheck CheckGradients(const Program& program, const std::vector<Tensor>& inputs,
                             const KernelRegistry& kernels, CallOptions options);

}  // namespace autobatch

#endif  // AUTOBATCH_TESTS_FUZZ_GRADIENT_CHECK_H_
