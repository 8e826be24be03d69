// The memory budget of a run (support/memory.h): charging, the counting
// allocator, scopes across threads, the default limit, byte counts and the
// errors that replace std::bad_alloc.
#include "support/memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "backends/run_on_threads.h"
#include "backends/scratch_buffer.h"
#include "backends/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

using Bytes = std::vector<std::byte, CountedAllocator<std::byte>>;

TEST(MemoryBudgetTest, ChargesUpToItsLimitAndRemembersThePeak) {
  MemoryBudget* budget = MemoryBudget::Create(100);
  EXPECT_TRUE(budget->TryCharge(60));
  EXPECT_TRUE(budget->TryCharge(40));
  EXPECT_FALSE(budget->TryCharge(1));
  EXPECT_EQ(budget->used(), 100);
  budget->Release(70);
  EXPECT_EQ(budget->used(), 30);
  EXPECT_EQ(budget->peak(), 100);
  EXPECT_THROW(budget->Charge(71), MemoryLimitExceeded);
  EXPECT_EQ(budget->used(), 30);
  budget->Release(30);
  budget->Unref();
}

TEST(MemoryBudgetTest, CountedAllocationsChargeTheThreadsBudget) {
  MemoryScope scope = MemoryScope::ForRun(int64_t{1} << 20);
  MemoryBudget* budget = scope.budget();
  ASSERT_NE(budget, nullptr);
  {
    // Each allocation is charged with its header.
    Tensor t(TensorType{DType::kF64, {100}}, 10);
    EXPECT_EQ(budget->used(), 8000 + 64);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.bytes()) % kMemoryAlignment, 0u);
    ScratchBuffer scratch;
    scratch.Get(1000);
    EXPECT_EQ(budget->used(), 9000 + 128);
  }
  EXPECT_EQ(budget->used(), 0);
  EXPECT_EQ(budget->peak(), 9000 + 128);
}

TEST(MemoryBudgetTest, AnAllocationPastTheLimitThrowsBeforeAllocating) {
  MemoryScope scope = MemoryScope::ForRun(1000);
  Bytes fits(536);  // 600 with its header
  Bytes more;
  try {
    more.resize(436);
    FAIL() << "expected MemoryLimitExceeded";
  } catch (const MemoryLimitExceeded& e) {
    EXPECT_EQ(e.requested(), 500);
    EXPECT_EQ(e.in_use(), 600);
    EXPECT_EQ(e.limit(), 1000);
  }
  EXPECT_EQ(scope.budget()->used(), 600);
  // A scratch buffer that cannot grow stays usable at its old size.
  ScratchBuffer scratch;
  EXPECT_THROW(scratch.Get(1000), MemoryLimitExceeded);
  EXPECT_NE(scratch.Get(100), nullptr);
}

TEST(MemoryBudgetTest, WithoutAScopeNothingIsCharged) {
  ASSERT_EQ(CurrentMemoryBudget(), nullptr);
  Bytes big(int64_t{1} << 20);
  EXPECT_EQ(big.size(), size_t{1} << 20);
}

// A run's outputs outlive its scope: they are released to its budget,
// which lives until the last of them is freed (ASan would see a use after
// free otherwise).
TEST(MemoryBudgetTest, AllocationsOutliveTheirRun) {
  std::vector<Bytes> outputs;
  {
    MemoryScope scope = MemoryScope::ForRun(int64_t{1} << 20);
    outputs.emplace_back(1000);
    outputs.emplace_back(2000);
  }
  EXPECT_EQ(CurrentMemoryBudget(), nullptr);
  outputs.clear();
}

TEST(MemoryBudgetTest, ARunInsideARunChargesTheOuterBudget) {
  MemoryScope outer = MemoryScope::ForRun(5000);
  {
    MemoryScope inner = MemoryScope::ForRun(int64_t{1} << 30);
    EXPECT_EQ(inner.budget(), outer.budget());
    EXPECT_THROW(Bytes(6000), MemoryLimitExceeded);
  }
  EXPECT_EQ(CurrentMemoryBudget(), outer.budget());
}

TEST(MemoryBudgetTest, RunOnThreadsChargesTheCallersBudgetOnEveryThread) {
  MemoryScope scope = MemoryScope::ForRun(int64_t{1} << 20);
  std::atomic<int> charged{0};
  ASSERT_TRUE(RunOnThreads(2, [&] {
                if (CurrentMemoryBudget() == scope.budget()) ++charged;
              }).ok());
  EXPECT_EQ(charged.load(), std::min(2, HardwareThreads()));
}

TEST(MemoryBudgetTest, RunOnThreadsRethrowsWhatABodyThrew) {
  if (HardwareThreads() < 2) GTEST_SKIP() << "one hardware thread: no worker runs the body";
  std::atomic<int> runs{0};
  EXPECT_THROW(static_cast<void>(RunOnThreads(2,
                                              [&] {
                                                // The second run (a worker, or the caller) throws.
                                                if (runs++ == 1) throw std::bad_alloc();
                                              })),
               std::bad_alloc);
  EXPECT_EQ(runs.load(), 2);
}

TEST(DefaultMemoryLimitTest, IsThreeQuartersOfTheSmallestBound) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(DefaultMemoryLimit({.physical = 16 * kGiB, .address_space = 8 * kGiB, .cgroup = -1}),
            6 * kGiB);
  EXPECT_EQ(DefaultMemoryLimit({.physical = 16 * kGiB, .address_space = -1, .cgroup = 4 * kGiB}),
            3 * kGiB);
  EXPECT_EQ(DefaultMemoryLimit({}), int64_t{1} << 40);
  const std::string text = DescribeDefaultMemoryLimit(
      {.physical = 16 * kGiB, .address_space = 8 * kGiB, .cgroup = -1});
  EXPECT_THAT(text, HasSubstr("6.0 GiB, 3/4 of the smallest of physical memory (16.0 GiB)"));
  EXPECT_THAT(text, HasSubstr("RLIMIT_AS (ulimit -v) leaves of the address space (8.0 GiB)"));
}

// ulimit -v bounds the default: what the limit leaves of the address space,
// not the limit itself (the process's own mappings count against it).
TEST(DefaultMemoryLimitTest, FollowsRlimitAs) {
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  if (old.rlim_cur != RLIM_INFINITY) GTEST_SKIP() << "RLIMIT_AS is already set";
  const MemoryBounds before = ReadMemoryBounds();
  // A gigabyte above what the process maps (also a sanitizer's shadow
  // memory), so nothing here fails for want of address space.
  rlimit raised = old;
  constexpr int64_t kHeadroom = int64_t{1} << 30;
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  raised.rlim_cur = static_cast<rlim_t>(pages * sysconf(_SC_PAGESIZE) + kHeadroom);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &raised), 0);
  const MemoryBounds bounds = ReadMemoryBounds();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
  EXPECT_EQ(before.address_space, -1);
  EXPECT_GT(bounds.address_space, kHeadroom / 2);
  EXPECT_LE(bounds.address_space, kHeadroom);
  EXPECT_LE(DefaultMemoryLimit(bounds), bounds.address_space / 4 * 3);
}

TEST(BytesTest, ParsesUnitsAndRefusesTheRest) {
  EXPECT_EQ(*ParseBytes("4096"), 4096);
  EXPECT_EQ(*ParseBytes("512M"), int64_t{512} << 20);
  EXPECT_EQ(*ParseBytes("4G"), int64_t{4} << 30);
  EXPECT_EQ(*ParseBytes("4GiB"), int64_t{4} << 30);
  EXPECT_EQ(*ParseBytes("2kb"), 2048);
  EXPECT_EQ(*ParseBytes("1T"), int64_t{1} << 40);
  for (const char* bad : {"", "G", "-1", "4X", "1.5G", " 4G", "5iB", "5BB", "4GG"}) {
    absl::StatusOr<int64_t> parsed = ParseBytes(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_THAT(parsed.status().message(), HasSubstr("is not a byte count"));
    }
  }
  EXPECT_THAT(ParseBytes("9999999999999T").status().message(),
              HasSubstr("more bytes than can be counted"));
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(int64_t{3} << 19), "1.5 MiB");
}

TEST(ResourceErrorsTest, EachExceptionBecomesResourceExhaustedSayingWhatToDo) {
  auto status_of = [](auto thrower) {
    return CatchResourceErrors("the test", [&]() -> absl::Status {
      thrower();
      return absl::OkStatus();
    });
  };
  const absl::Status limit = status_of([] { throw MemoryLimitExceeded(3000, 2000, 4096); });
  EXPECT_EQ(limit.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(limit.message(), HasSubstr("the test would hold more than its memory limit, "
                                         "max_memory_bytes = 4096 (4.0 KiB)"));
  EXPECT_THAT(limit.message(), HasSubstr("raise CallOptions::max_memory_bytes"));
  const absl::Status system = status_of([] { throw std::bad_alloc(); });
  EXPECT_EQ(system.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(system.message(), HasSubstr("the test ran out of memory"));
  const absl::Status length = status_of([] { throw std::length_error("vector::reserve"); });
  EXPECT_THAT(length.message(), HasSubstr("more memory than can be addressed"));
  const absl::Status thread = status_of([] {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "thread");
  });
  EXPECT_EQ(thread.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(thread.message(), HasSubstr("the test could not start a thread"));
  // Anything else is not ours to turn into a status.
  EXPECT_THROW(status_of([] { throw std::logic_error("a bug"); }), std::logic_error);
  EXPECT_THROW(status_of([] {
                 throw std::system_error(std::make_error_code(std::errc::permission_denied), "x");
               }),
               std::system_error);
}

}  // namespace
}  // namespace autobatch
