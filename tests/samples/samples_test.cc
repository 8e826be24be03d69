// Runs every sample through the reference interpreter (dry_run) against plain
// C++ for many inputs, and checks that each sample's IR verifies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/context.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "vm/reference_interpreter.h"
#include "samples/collatz/collatz.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/gradients/log_densities.h"
#include "samples/mutual_recursion/even_odd.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

template <typename R>
std::vector<R> DryRun(const BatchFunction& f, const std::vector<int64_t>& n, CallOptions options = {}) {
  options.dry_run = true;
  absl::StatusOr<std::vector<Tensor>> out = f.Run({*Tensor::FromVector(n)}, options);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return (*out)[0].ToVector<R>();
}

void ExpectVerifies(Context& ctx, const BatchFunction& f) {
  absl::StatusOr<Program> p = ctx.Program(f);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(VerifyProgram(*p).ok()) << VerifyProgram(*p);
}

TEST(SamplesTest, Fibonacci) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  ExpectVerifies(ctx, fib);
  std::vector<int64_t> n;
  for (int64_t i = -2; i <= 20; ++i) n.push_back(i);
  for (int64_t i = 20; i >= 0; i -= 3) n.push_back(i);
  std::vector<int64_t> out = DryRun<int64_t>(fib, n);
  ASSERT_EQ(out.size(), n.size());
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(out[i], samples::FibonacciReference(n[i])) << "n = " << n[i];
  }
  EXPECT_EQ(samples::FibonacciReference(0), 1);
  EXPECT_EQ(samples::FibonacciReference(1), 1);
  EXPECT_EQ(samples::FibonacciReference(10), 89);
}

TEST(SamplesTest, EvenOdd) {
  Context ctx;
  samples::EvenOdd f = samples::DefineEvenOdd(ctx);
  ExpectVerifies(ctx, f.is_even);
  ExpectVerifies(ctx, f.is_odd);
  std::vector<int64_t> n;
  for (int64_t i = 0; i <= 300; i += 7) n.push_back(i);
  for (int64_t i = 0; i < 20; ++i) n.push_back(i);
  std::vector<bool> even = DryRun<bool>(f.is_even, n);
  std::vector<bool> odd = DryRun<bool>(f.is_odd, n);
  ASSERT_EQ(even.size(), n.size());
  ASSERT_EQ(odd.size(), n.size());
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(even[i], samples::IsEvenReference(n[i])) << n[i];
    EXPECT_EQ(odd[i], !samples::IsEvenReference(n[i])) << n[i];
  }
  // A negative n never reaches 0: the depth limit stops it cleanly.
  absl::StatusOr<std::vector<Tensor>> bad =
      f.is_even.Run({*Tensor::FromVector<int64_t>({4, -1})}, {.max_stack_depth = 500, .dry_run = true});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(bad.status().message(), HasSubstr("lane 1: recursion depth limit of 500"));
}

TEST(SamplesTest, Collatz) {
  Context ctx;
  BatchFunction collatz = samples::DefineCollatz(ctx);
  ExpectVerifies(ctx, collatz);
  std::vector<int64_t> n = {-5, 0, 1, 27, 871, 77031, 837799};
  for (int64_t i = 2; i <= 400; ++i) n.push_back(i);
  std::vector<int64_t> out = DryRun<int64_t>(collatz, n);
  ASSERT_EQ(out.size(), n.size());
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(out[i], samples::CollatzStepsReference(n[i])) << "n = " << n[i];
  }
  EXPECT_EQ(samples::CollatzStepsReference(27), 111);
  EXPECT_EQ(samples::CollatzStepsReference(1), 0);
}

// Each sample's IR goes through the whole compiler pipeline, and the
// compiled (typed, allocated) program computes what the untyped one does.
TEST(SamplesTest, SamplesCompileThroughThePipeline) {
  Context ctx;
  std::vector<BatchFunction> functions = {samples::DefineFibonacci(ctx),
                                          samples::DefineEvenOdd(ctx).is_even,
                                          samples::DefineCollatz(ctx)};
  const std::vector<TensorType> i64 = {Scalar(DType::kI64)};
  for (const BatchFunction& f : functions) {
    SCOPED_TRACE(f.name());
    absl::StatusOr<Program> untyped = ctx.Program(f);
    ASSERT_TRUE(untyped.ok()) << untyped.status();
    absl::StatusOr<Program> compiled = CompileProgram(*untyped, i64);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    absl::StatusOr<Program> lowered = LowerProgram(*untyped, i64);
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    Tensor n = *Tensor::FromVector<int64_t>({0, 1, 2, 3, 9, 12});
    absl::StatusOr<std::vector<Tensor>> a = RunReferenceBatch(*untyped, {n}, nullptr);
    absl::StatusOr<std::vector<Tensor>> b = RunReferenceBatch(*compiled, {n}, nullptr);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ((*a)[0], (*b)[0]);
  }
}

// The gradients sample: eight schools' compiler-written gradient against
// central differences of its log density, on the reference interpreter.
TEST(SamplesTest, Gradients) {
  Context ctx;
  BatchFunction log_density = samples::RegisterEightSchools(ctx);
  BatchFunction gradient = ctx.Gradient(log_density);
  std::vector<double> q;
  for (int i = 0; i < 10; ++i) q.push_back(0.3 * i - 1.0);
  const auto out = gradient.Run({*Tensor::FromVector(q, {10})}, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> grad = (*out)[1].ToVector<double>();
  for (int i = 0; i < 10; ++i) {
    std::vector<double> up = q, down = q;
    up[i] += 1e-6;
    down[i] -= 1e-6;
    const auto hi = log_density.Run({*Tensor::FromVector(up, {10})}, {.dry_run = true});
    const auto lo = log_density.Run({*Tensor::FromVector(down, {10})}, {.dry_run = true});
    ASSERT_TRUE(hi.ok() && lo.ok());
    const double fd = ((*hi)[0].ToVector<double>()[0] - (*lo)[0].ToVector<double>()[0]) / 2e-6;
    EXPECT_NEAR(grad[i], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "coordinate " << i;
  }
}

}  // namespace
}  // namespace autobatch
