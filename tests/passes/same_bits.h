// The check behind the cleanup passes' tests (cse, fold_constants,
// simplify_arithmetic): a rewritten program gives every lane the same bits
// as the original, on inputs full of the values IEEE arithmetic treats
// specially (signed zeros, infinities, NaNs with payloads and signs,
// subnormals, integer extremes, bool bytes other than 0 and 1).
#ifndef AUTOBATCH_TESTS_PASSES_SAME_BITS_H_
#define AUTOBATCH_TESTS_PASSES_SAME_BITS_H_

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"

namespace autobatch::testing {

// `lanes` lanes of inputs for `program`'s entry parameters (typed): each
// element drawn from a list of special values of its dtype, differently per
// lane, parameter and element (deterministic).
std::vector<std::vector<Tensor>> SpecialInputs(const Program& program, int lanes);

// Runs `before` and `after` on the reference interpreter (vm/), lane by
// lane, on SpecialInputs(before, lanes); succeeds if every lane's outputs
// have equal types and bits (or both runs fail with the same message).
::testing::AssertionResult SameBits(const Program& before, const Program& after,
                                    const KernelRegistry* kernels = nullptr, int lanes = 512);

// The kernels the text cases of tests/passes/text declare: "model" (lp =
// x * x, g = x + x), "record" (returns x and counts the lanes it saw in
// *recorded) and "sum_lanes" (returns x; declared batch_dependent).
KernelRegistry TextCaseKernels(int64_t* recorded);

// For every tests/passes/text/<pass>*.ir: parses its input, runs `pass`
// and checks SameBits between the input and the output.
void ExpectTextCasesKeepTheBits(const std::string& pass);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_PASSES_SAME_BITS_H_
