// Checks the Backend promise that, after a warm-up step, running ops and
// moving lanes does not touch the heap (so VMs need no per-step allocation).
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "backends/backend.h"
#include "gtest/gtest.h"
#include "tests/backends/backends_under_test.h"
#include "tests/backends/test_util.h"

namespace {

// Atomic: the threaded backend's workers allocate too (or must not).
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* Allocate(std::size_t n, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
  }
  if (n == 0) n = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(n)
                : std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return Allocate(n, alignof(std::max_align_t)); }
void* operator new[](std::size_t n) { return Allocate(n, alignof(std::max_align_t)); }
void* operator new(std::size_t n, std::align_val_t a) {
  return Allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return Allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace autobatch {
namespace {

using ::autobatch::testing::MakeOp;

class NoAllocationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NoAllocationTest, SteadyStateStepsDoNotAllocate) {
  std::unique_ptr<Backend> backend = *testing::MakeBackendUnderTest(GetParam());
  const int64_t batch = 256;
  Tensor x = backend->Allocate(Vector(DType::kF64, 3), batch);
  Tensor y = backend->Allocate(Vector(DType::kF64, 3), batch);
  Tensor sum = backend->Allocate(Vector(DType::kF64, 3), batch);
  Tensor norm = backend->Allocate(Scalar(DType::kF64), batch);
  Tensor cond = backend->Allocate(Scalar(DType::kBool), batch);
  Tensor pc = backend->Allocate(Scalar(DType::kI64), batch);
  Tensor packed = backend->Allocate(Vector(DType::kF64, 3), batch);
  LaneStack stack = backend->AllocateStack(Vector(DType::kF64, 3), batch, 4);
  const PrimOp add = MakeOp(Primitive::kAdd, 2);
  const PrimOp exp = MakeOp(Primitive::kExp, 1);
  const PrimOp squared_norm = MakeOp(Primitive::kSquaredNorm, 1);
  const PrimOp positive = MakeOp(Primitive::kGt, 2);
  KernelRegistry kernels;
  ASSERT_TRUE(kernels
                  .Register("halve", {{Vector(DType::kF64, 3)}, {Vector(DType::kF64, 3)}, true},
                            [](const KernelCall& call) {
                              const double* in = reinterpret_cast<const double*>(call.inputs[0].data);
                              double* out = reinterpret_cast<double*>(call.outputs[0].data);
                              for (int64_t i = 0; i < 3 * call.num_lanes; ++i) out[i] = in[i] / 2;
                              return absl::OkStatus();
                            })
                  .ok());
  Attributes halve_attrs;
  halve_attrs.kernel = "halve";
  const PrimOp halve = MakeOp(Primitive::kUserKernel, 1, halve_attrs);
  std::vector<uint8_t> mask(batch);
  for (int64_t l = 0; l < batch; ++l) mask[l] = l % 3 != 0;
  const LaneSet lanes = LaneSet::FromMask(mask);
  LaneSet if_true(batch), if_false(batch), at(batch);
  auto step = [&]() {
    for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
      const Tensor* add_in[] = {&x, &y};
      Tensor* add_out[] = {&sum};
      ASSERT_TRUE(backend->RunOp(add, add_in, add_out, lanes, mode, nullptr).ok());
      const Tensor* exp_in[] = {&sum};
      Tensor* exp_out[] = {&x};
      ASSERT_TRUE(backend->RunOp(exp, exp_in, exp_out, lanes, mode, nullptr).ok());
      const Tensor* norm_in[] = {&x};
      Tensor* norm_out[] = {&norm};
      ASSERT_TRUE(backend->RunOp(squared_norm, norm_in, norm_out, lanes, mode, nullptr).ok());
      const Tensor* gt_in[] = {&norm, &norm};
      Tensor* gt_out[] = {&cond};
      ASSERT_TRUE(backend->RunOp(positive, gt_in, gt_out, lanes, mode, nullptr).ok());
      const Tensor* halve_in[] = {&sum};
      Tensor* halve_out[] = {&y};
      ASSERT_TRUE(backend->RunOp(halve, halve_in, halve_out, lanes, mode, &kernels).ok());
    }
    backend->Split(cond, lanes, &if_true, &if_false);
    backend->LanesEqual(pc, 0, lanes, &at);
    (void)backend->Any(cond, lanes);
    (void)backend->Min(pc, lanes);
    backend->MaskedUpdate(sum, lanes, &y);
    backend->Gather(sum, lanes, &packed);
    backend->Scatter(packed, lanes, &sum);
    backend->FillLanes(3, lanes, &pc);
    ASSERT_TRUE(backend->Push(lanes, 10, &stack).ok());
    ASSERT_TRUE(backend->Pop(lanes, &stack).ok());
  };
  step();  // warm-up: scratch buffers reach their working size
  counting = true;
  allocations = 0;
  for (int i = 0; i < 5; ++i) step();
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, NoAllocationTest,
                         ::testing::ValuesIn(testing::BackendsUnderTest()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::BackendParamName(info.param);
                         });

}  // namespace
}  // namespace autobatch
