// The stack VM's loop does not allocate per step: heap allocations of a run
// grow with its setup and its deepest recursion, not with the number of
// block executions.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "backends/backend.h"
#include "frontend/context.h"
#include "gtest/gtest.h"
#include "samples/fibonacci/fibonacci.h"
#include "vm/stack/stack_vm.h"

namespace {
std::atomic<int64_t> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::inplace_merge's temporary buffer uses them):
// under AddressSanitizer they would otherwise come from ASan's allocator and
// be freed here, a reported mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace autobatch {
namespace {

struct RunCost {
  int64_t allocations;
  int64_t steps;
};

RunCost CountRun(const Program& lowered, Backend& backend, int64_t n) {
  std::vector<int64_t> values(64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = n - static_cast<int64_t>(i % 4);
  std::vector<Tensor> inputs = {*Tensor::FromVector(values)};
  Profile profile;
  int64_t before = allocations.load();
  absl::StatusOr<std::vector<Tensor>> out =
      RunStackVm(lowered, std::move(inputs), nullptr, backend, {}, &profile);
  int64_t after = allocations.load();
  EXPECT_TRUE(out.ok()) << out.status();
  return {after - before, profile.steps};
}

TEST(StackVmAllocationTest, AllocationsDoNotGrowWithSteps) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<const Program*> lowered = ctx.LoweredProgram(fib, {Scalar(DType::kI64)});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::unique_ptr<Backend> backend = MakeBackend(BackendKind::kEigen);
  CountRun(**lowered, *backend, 12);  // warm the backend's scratch buffers
  RunCost small = CountRun(**lowered, *backend, 12);
  RunCost large = CountRun(**lowered, *backend, 18);
  ASSERT_GT(large.steps, 10 * small.steps);
  // Setup is the same; the deeper recursion may grow stacks a few more
  // times (geometrically). Per-step allocation would add >= large.steps.
  EXPECT_LT(large.allocations, small.allocations + 200)
      << "small: " << small.allocations << " allocations for " << small.steps
      << " steps; large: " << large.allocations << " for " << large.steps;
}

}  // namespace
}  // namespace autobatch
