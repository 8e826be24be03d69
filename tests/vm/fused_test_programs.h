// The programs whose fused blocks the tests compile in (emit_fused_test_blocks
// writes them at build time; fused_blocks_test runs them): each built the
// same way in both, so the generated code matches the program the test runs.
#ifndef AUTOBATCH_TESTS_VM_FUSED_TEST_PROGRAMS_H_
#define AUTOBATCH_TESTS_VM_FUSED_TEST_PROGRAMS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/tensor.h"
#include "frontend/context.h"
#include "ir/ir.h"
#include "vm/fused_blocks.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/model/targets/registry.h"

namespace autobatch::testing {

struct FusedTestProgram {
  std::string name;                  // the generated function is FusedBlocks_<name>
  std::unique_ptr<Context> context;  // owns the user kernels the program calls
  Program lowered;
  // Inputs for `batch` lanes: random, with NaN, infinities, signed zeros and
  // integer extremes among them where the program takes such values.
  std::function<std::vector<Tensor>(int64_t batch, uint64_t seed)> inputs;
};

// "all_ops" (every primitive of tests/backends/op_cases.h but the user
// kernel, each on its own inputs, in one block), "fibonacci", "even_odd",
// "collatz", "peanuts", "compact_state" (see its definition), "tape_loop"
// and "tape_recursive" (ir/testing/tape_programs.h).
std::vector<FusedTestProgram> FusedTestPrograms();

// Batched NUTS on eight schools (the program nuts_bench runs), with the
// model it was built from.
struct FusedTestSampler {
  std::unique_ptr<mcmc::Target> model;
  std::unique_ptr<mcmc::BatchedSampler> sampler;
  const Program* lowered = nullptr;  // the sampler's stack-VM program
};
FusedTestSampler EightSchoolsNuts();
// The same model with `algorithm`'s sampler (NUTS as above; HMC and RWMH
// with their defaults and step size 0.3).
FusedTestSampler EightSchoolsSampler(mcmc::Algorithm algorithm);

// Chains 0..n-1 of `sampler`'s model (step size 0.3, identity metric).
std::vector<mcmc::BatchedChain> StartingChains(const FusedTestSampler& sampler, size_t n,
                                               uint64_t seed);

// Defined by the code emit_fused_test_blocks generates into the test that
// compiles it in (fused blocks, or with --whole-program compiled programs):
// that code for the test program or sampler `name` ("fibonacci", ...,
// "nuts_eight_schools", and compiled: "hmc_eight_schools",
// "rwmh_eight_schools"), or null.
const FusedProgram* GeneratedCode(std::string_view name);

// Whether two runs' outputs are equal bit for bit.
bool BitIdentical(const std::vector<Tensor>& a, const std::vector<Tensor>& b);

// Non-fatal failures for every chain whose draws or stats differ in a bit.
void ExpectSameDraws(const mcmc::BatchedRunResult& got, const mcmc::BatchedRunResult& expected);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_VM_FUSED_TEST_PROGRAMS_H_
