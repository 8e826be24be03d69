// The memory limit of a run: a budget its values, stacks and scratch are
// charged to before they are allocated, the allocator that charges it, the
// default limit, and the errors a run gives instead of std::bad_alloc.
//
// A run (RunProgram, a VM entry point, Sample) installs a MemoryBudget for
// its thread with a MemoryScope; threads that work for it (shards, the
// threaded backend's helpers) install the same budget. Every Tensor and
// scratch buffer allocates through AllocateCounted, which charges the
// calling thread's budget first and throws MemoryLimitExceeded (a
// std::bad_alloc) when the bytes would not fit, so a run stops before the
// system runs out: under Linux's overcommit the failure would otherwise be
// the OOM killer, not an exception. Entry points turn the exception into
// ResourceExhausted with CatchResourceErrors. Per-lane bookkeeping that
// grows with the batch and the depth (lane sets, stack depths, program
// counters, tapes' depths) is charged too (CountedVector). What is not: the
// rest of the bookkeeping, a sampler's draws (Sample reserves their
// estimate instead), the program's code and the threads' stacks; the
// default limit leaves a quarter of the memory for them.
#ifndef AUTOBATCH_SUPPORT_MEMORY_H_
#define AUTOBATCH_SUPPORT_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace autobatch {

// The bytes a run may hold at once, shared by the threads of the run and
// kept alive by every allocation still charged to it (reference counted:
// a run's outputs outlive it).
class MemoryBudget {
 public:
  // A budget of `limit` bytes (> 0), with one reference, the caller's.
  static MemoryBudget* Create(int64_t limit);
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Drops a reference; the last one deletes the budget.
  void Unref();

  // Adds `bytes` to what is in use if the sum stays within the limit and
  // returns true; else changes nothing and returns false.
  bool TryCharge(int64_t bytes);
  // TryCharge, or throws MemoryLimitExceeded.
  void Charge(int64_t bytes);
  void Release(int64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

  int64_t limit() const { return limit_; }
  int64_t used() const { return used_.load(std::memory_order_relaxed); }
  // The most that was in use at once.
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  explicit MemoryBudget(int64_t limit) : limit_(limit) {}
  const int64_t limit_;
  std::atomic<int64_t> used_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> refs_{1};
};

// Allocating `requested` more bytes would have taken a budget past its limit.
class MemoryLimitExceeded : public std::bad_alloc {
 public:
  MemoryLimitExceeded(int64_t requested, int64_t in_use, int64_t limit)
      : requested_(requested), in_use_(in_use), limit_(limit) {}
  const char* what() const noexcept override { return "autobatch memory limit exceeded"; }
  int64_t requested() const { return requested_; }
  int64_t in_use() const { return in_use_; }
  int64_t limit() const { return limit_; }

 private:
  int64_t requested_, in_use_, limit_;
};

// The budget the calling thread's allocations are charged to, or nullptr.
MemoryBudget* CurrentMemoryBudget();

// Installs a budget for the calling thread until destroyed (then the one
// before it is back).
class MemoryScope {
 public:
  // A run's scope: a new budget of `limit` bytes (0: DefaultMemoryLimit()),
  // unless the thread already has one, which it keeps — a call made inside
  // another run (Sample's VM calls) counts against that run's limit.
  static MemoryScope ForRun(int64_t limit);
  // `budget` (a run's, from another thread: shards, helper threads; it must
  // outlive the scope), or no budget when nullptr.
  explicit MemoryScope(MemoryBudget* budget);
  MemoryScope(const MemoryScope&) = delete;
  MemoryScope& operator=(const MemoryScope&) = delete;
  ~MemoryScope();

  MemoryBudget* budget() const { return budget_; }

 private:
  MemoryScope(MemoryBudget* budget, bool owns);
  MemoryBudget* budget_;
  MemoryBudget* previous_;
  bool owns_;
};

// Memory that AllocateCounted returns is aligned to this many bytes (a
// cache line; at least Eigen's widest vector loads).
inline constexpr std::size_t kMemoryAlignment = 64;

// `bytes` bytes, kMemoryAlignment-aligned, charged (with kMemoryAlignment
// bytes of header) to the calling thread's budget first (MemoryLimitExceeded if they do not fit; nothing is charged
// when the thread has no budget). FreeCounted releases them to the budget
// they were charged to, from any thread, also after the run.
void* AllocateCounted(std::size_t bytes);
void FreeCounted(void* p) noexcept;

// A standard allocator over AllocateCounted (stateless: all compare equal).
template <typename T>
struct CountedAllocator {
  using value_type = T;
  static_assert(alignof(T) <= kMemoryAlignment);
  CountedAllocator() = default;
  template <typename U>
  CountedAllocator(const CountedAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(AllocateCounted(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { FreeCounted(p); }
  friend bool operator==(const CountedAllocator&, const CountedAllocator&) { return true; }
};

// A vector whose storage is charged to the run's budget: for per-lane
// bookkeeping that grows with the batch and the depth (stack depths,
// program counters, lane sets).
template <typename T>
using CountedVector = std::vector<T, CountedAllocator<T>>;

// What bounds the memory of this process, in bytes (-1: no such bound).
struct MemoryBounds {
  int64_t physical = -1;       // the machine's physical memory
  int64_t address_space = -1;  // what RLIMIT_AS (ulimit -v) leaves of the address space
  int64_t cgroup = -1;         // the cgroup's memory.max (or v1 memory.limit_in_bytes)
};
// The bounds as the system reports them now.
MemoryBounds ReadMemoryBounds();
// The default memory limit of a run: 3/4 of the smallest bound (the rest
// is for what is not charged: code, thread stacks, bookkeeping), or 1 TiB
// if none is known.
int64_t DefaultMemoryLimit(const MemoryBounds& bounds);
int64_t DefaultMemoryLimit();
// The bounds and the default, for messages and `--help`: "3/4 of the
// smallest of physical memory (23.4 GiB), ...".
std::string DescribeDefaultMemoryLimit(const MemoryBounds& bounds);

// `bytes` in the unit that reads best ("512 B", "3.5 MiB", "4.0 GiB").
std::string FormatBytes(int64_t bytes);
// A byte count as written on a command line: digits, optionally followed by
// K, M, G or T (powers of 1024; "KiB", "MB", "GiB"... also accepted).
absl::StatusOr<int64_t> ParseBytes(std::string_view text);

// ResourceExhausted for an exception a run's allocation or thread creation
// threw: a memory limit passed (MemoryLimitExceeded), memory the system
// refused (std::bad_alloc, std::length_error), or a thread it would not
// start (std::system_error); each says what to change. `what` names the
// run ("the call", "Sample"). Other exceptions are rethrown.
absl::Status ResourceErrorStatus(std::exception_ptr error, std::string_view what);

// Whether a std::system_error says a resource ran out (EAGAIN, ENOMEM: a
// thread or memory the system would not give).
bool IsResourceError(const std::system_error& e);

// Runs `f` (returning absl::Status or absl::StatusOr<T>) and returns its
// result, or ResourceErrorStatus of the resource exception it threw; any
// other exception passes through.
template <typename F>
auto CatchResourceErrors(std::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return ResourceErrorStatus(std::current_exception(), what);
  } catch (const std::length_error&) {
    return ResourceErrorStatus(std::current_exception(), what);
  } catch (const std::system_error& e) {
    if (!IsResourceError(e)) throw;
    return ResourceErrorStatus(std::current_exception(), what);
  }
}

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_MEMORY_H_
