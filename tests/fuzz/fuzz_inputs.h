// What the program fuzzer runs a program with, for the tests that run
// programs as it does (tests/fuzz/program_fuzz_target.cc,
// tests/codegen/compiled_corpus_test.cc): inputs synthesized from a seed,
// deterministic stand-ins for user kernels, and the comparison of two
// executors' outputs.
#ifndef AUTOBATCH_TESTS_FUZZ_FUZZ_INPUTS_H_
#define AUTOBATCH_TESTS_FUZZ_FUZZ_INPUTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"

namespace autobatch {

// A seed from a file's bytes: FNV-1a, so the same bytes give the same
// inputs in every build (std::hash promises nothing across builds, and
// reproducing a crash needs that).
uint64_t FuzzHash(std::string_view bytes);

// `batch` lanes of `type`, every element drawn from `seed`: small numbers
// (so the samples' recursions finish within the fuzzer's budgets) and the
// edge cases every primitive must survive (NaN, infinities, -0.0, integer
// extremes saturated into the dtype).
Tensor SynthesizeInput(const TensorType& type, int64_t batch, uint64_t seed);

// The entry's input types: each parameter's type if known, else its
// signature's, else i64 (what every untyped sample but peanuts takes).
std::vector<TensorType> EntryInputTypes(const Program& program);

// A deterministic per-lane stand-in for a user kernel with signature `sig`:
// a standard normal log density and gradient for a model kernel's shape
// (q f64[d] -> (logp f64, grad f64[d]), mcmc/batched/model_kernel.h), zeros
// otherwise.
absl::Status StandInKernel(const KernelSignature& sig, const KernelCall& call);

// "" when `a` and `b` are equal bit for bit, else where they first differ
// (output, lane, element, both values and their bytes), naming them.
std::string CompareOutputs(const char* a_name, const std::vector<Tensor>& a,
                           const char* b_name, const std::vector<Tensor>& b);

}  // namespace autobatch

#endif  // AUTOBATCH_TESTS_FUZZ_FUZZ_INPUTS_H_
