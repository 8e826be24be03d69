// Differential tests: every sample gives bit-identical per-lane results on the
// reference interpreter, the stackless VM and the stack VM, on every backend,
// at several batch sizes and with lanes permuted.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "frontend/context.h"
#include "gtest/gtest.h"
#include "samples/collatz/collatz.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/mutual_recursion/even_odd.h"
#include "samples/peanuts/peanuts.h"
#include "vm/run.h"

namespace autobatch {
namespace {

// Lane `perm[i]` of the result is lane i of `t`.
Tensor PermuteLanes(const Tensor& t, const std::vector<int64_t>& perm) {
  Tensor out(t.type(), t.batch());
  for (int64_t i = 0; i < t.batch(); ++i) out.CopyLaneFrom(t, i, perm[i]);
  return out;
}

struct Executor {
  std::string name;
  CallOptions options;
};

std::vector<Executor> AllExecutors() {
  std::vector<Executor> out;
  for (BackendKind kind : AllBackendKinds()) {
    std::string backend(BackendKindName(kind));
    out.push_back({"stack/" + backend, {.vm = Vm::kStack, .backend = backend}});
    out.push_back(
        {"stackless/" + backend, {.vm = Vm::kStackless, .backend = backend}});
  }
  return out;
}

// Runs `program` on every executor and checks every result, and the results
// with permuted inputs, against the reference interpreter bit for bit.
void ExpectAllExecutorsAgree(const Program& program,
                             const KernelRegistry& kernels,
                             const std::vector<Tensor>& inputs) {
  CallOptions dry{.dry_run = true};
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(program, inputs, &kernels, dry);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const int64_t batch = inputs.front().batch();
  std::vector<int64_t> perm(static_cast<size_t>(batch));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(batch));
  std::vector<Tensor> permuted_inputs;
  for (const Tensor& t : inputs) permuted_inputs.push_back(PermuteLanes(t, perm));

  for (const Executor& ex : AllExecutors()) {
    SCOPED_TRACE(ex.name + " batch " + std::to_string(batch));
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(program, inputs, &kernels, ex.options);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), expected->size());
    for (size_t k = 0; k < got->size(); ++k) {
      EXPECT_TRUE((*got)[k] == (*expected)[k]) << "output " << k;
    }
    absl::StatusOr<std::vector<Tensor>> got_permuted =
        RunProgram(program, permuted_inputs, &kernels, ex.options);
    ASSERT_TRUE(got_permuted.ok()) << got_permuted.status();
    for (size_t k = 0; k < got->size(); ++k) {
      EXPECT_TRUE((*got_permuted)[k] == PermuteLanes((*expected)[k], perm))
          << "permuted output " << k;
    }
  }
}

class DifferentialTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(DifferentialTest, Fibonacci) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> program = ctx.Program(fib);
  ASSERT_TRUE(program.ok()) << program.status();
  std::mt19937_64 rng(GetParam());
  std::vector<int64_t> n(static_cast<size_t>(GetParam()));
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(-2, 14)(rng);
  ExpectAllExecutorsAgree(*program, ctx.kernels(), {*Tensor::FromVector(n)});
}

TEST_P(DifferentialTest, EvenOdd) {
  Context ctx;
  samples::EvenOdd fns = samples::DefineEvenOdd(ctx);
  absl::StatusOr<Program> program = ctx.Program(fns.is_even);
  ASSERT_TRUE(program.ok()) << program.status();
  std::mt19937_64 rng(GetParam() + 1);
  std::vector<int64_t> n(static_cast<size_t>(GetParam()));
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(0, 40)(rng);
  ExpectAllExecutorsAgree(*program, ctx.kernels(), {*Tensor::FromVector(n)});
}

TEST_P(DifferentialTest, Collatz) {
  Context ctx;
  BatchFunction collatz = samples::DefineCollatz(ctx);
  absl::StatusOr<Program> program = ctx.Program(collatz);
  ASSERT_TRUE(program.ok()) << program.status();
  std::mt19937_64 rng(GetParam() + 2);
  std::vector<int64_t> n(static_cast<size_t>(GetParam()));
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(-3, 1000)(rng);
  ExpectAllExecutorsAgree(*program, ctx.kernels(), {*Tensor::FromVector(n)});
}

TEST_P(DifferentialTest, PeaNuts) {
  Context ctx;
  const samples::PeaNutsConfig config{.dimension = 8, .max_depth = 4};
  BatchFunction peanuts = samples::DefinePeaNuts(ctx, config);
  absl::StatusOr<Program> program = ctx.Program(peanuts);
  ASSERT_TRUE(program.ok()) << program.status();
  const int64_t batch = GetParam();
  std::mt19937_64 rng(GetParam() + 3);
  std::vector<double> x(static_cast<size_t>(batch * config.dimension));
  for (double& v : x) v = std::normal_distribution<double>()(rng);
  std::vector<int64_t> seed(static_cast<size_t>(batch)), traj(seed.size());
  for (size_t i = 0; i < seed.size(); ++i) {
    seed[i] = static_cast<int64_t>(rng());
    traj[i] = std::uniform_int_distribution<int64_t>(0, 3)(rng);
  }
  ExpectAllExecutorsAgree(
      *program, ctx.kernels(),
      {*Tensor::FromVector(x, {config.dimension}), *Tensor::FromVector(seed),
       *Tensor::FromVector(traj)});
}

INSTANTIATE_TEST_SUITE_P(BatchSizes, DifferentialTest,
                         ::testing::Values(1, 7, 64, 1000));

// The native C++ pea-nuts and the program take the same number of leaves:
// the program really recurses to the depths the native code does.
TEST(PeaNutsTest, LeafCountMatchesNative) {
  Context ctx;
  const samples::PeaNutsConfig config{.dimension = 4, .max_depth = 5};
  BatchFunction peanuts = samples::DefinePeaNuts(ctx, config);
  absl::StatusOr<Program> program = ctx.Program(peanuts);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<int64_t> seed = {1, 2, 3, 4, 5}, traj = {3, 0, 2, 5, 1};
  std::vector<double> x(seed.size() * 4, 0.5);
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> out = RunProgram(
      *program,
      {*Tensor::FromVector(x, {4}), *Tensor::FromVector(seed),
       *Tensor::FromVector(traj)},
      &ctx.kernels(), CallOptions{}, &profile);
  ASSERT_TRUE(out.ok()) << out.status();
  int64_t leaves = 0;
  for (size_t i = 0; i < seed.size(); ++i) {
    leaves += samples::PeaNutsLeaves(seed[i], traj[i], config.max_depth);
  }
  EXPECT_EQ(profile.builtins[static_cast<size_t>(Primitive::kMatVec)].active_lanes,
            leaves);
}

}  // namespace
}  // namespace autobatch
