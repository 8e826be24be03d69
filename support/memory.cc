// The memory budget of a run, its allocator, the default limit and the errors.
#include "support/memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace autobatch {
namespace {

thread_local MemoryBudget* current_budget = nullptr;

// Before each counted allocation: the budget it was charged to and its size.
struct Header {
  MemoryBudget* budget;
  std::size_t bytes;
};
static_assert(sizeof(Header) <= kMemoryAlignment);

// The first number in `path`, or -1 (no such file, "max", or not a number).
int64_t ReadNumber(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text)) return -1;
  int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) return -1;
  return value;
}

// The cgroup v2 path of this process ("0::/path" in /proc/self/cgroup), or "".
std::string CgroupV2Path() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

int64_t MinBound(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return std::min(a, b);
}

// Physical memory and the cgroup's limit, which do not change while we run.
MemoryBounds FixedBounds() {
  MemoryBounds bounds;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) bounds.physical = static_cast<int64_t>(pages) * page;
  int64_t cgroup = ReadNumber("/sys/fs/cgroup/memory.max");
  const std::string v2 = CgroupV2Path();
  if (!v2.empty() && v2 != "/") {
    cgroup = MinBound(cgroup, ReadNumber(absl::StrCat("/sys/fs/cgroup", v2, "/memory.max")));
  }
  int64_t v1 = ReadNumber("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  // cgroup v1 writes "no limit" as a huge page-rounded number.
  if (v1 >= (int64_t{1} << 60)) v1 = -1;
  bounds.cgroup = MinBound(cgroup, v1);
  return bounds;
}

}  // namespace

// ---------------------------------------------------------------------------
// MemoryBudget and MemoryScope.

MemoryBudget* MemoryBudget::Create(int64_t limit) { return new MemoryBudget(limit); }

void MemoryBudget::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

bool MemoryBudget::TryCharge(int64_t bytes) {
  int64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ - used) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (used + bytes > peak &&
         !peak_.compare_exchange_weak(peak, used + bytes, std::memory_order_relaxed)) {
  }
  return true;
}

void MemoryBudget::Charge(int64_t bytes) {
  if (!TryCharge(bytes)) throw MemoryLimitExceeded(bytes, used(), limit_);
}

MemoryBudget* CurrentMemoryBudget() { return current_budget; }

MemoryScope MemoryScope::ForRun(int64_t limit) {
  if (current_budget != nullptr) return MemoryScope(current_budget, /*owns=*/false);
  return MemoryScope(MemoryBudget::Create(limit > 0 ? limit : DefaultMemoryLimit()),
                     /*owns=*/true);
}

MemoryScope::MemoryScope(MemoryBudget* budget) : MemoryScope(budget, /*owns=*/false) {}

MemoryScope::MemoryScope(MemoryBudget* budget, bool owns)
    : budget_(budget), previous_(current_budget), owns_(owns) {
  current_budget = budget_;
}

MemoryScope::~MemoryScope() {
  current_budget = previous_;
  if (owns_) budget_->Unref();
}

// ---------------------------------------------------------------------------
// Counted allocation.

void* AllocateCounted(std::size_t bytes) {
  MemoryBudget* budget = current_budget;
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int64_t>::max()) - kMemoryAlignment) {
    throw std::bad_array_new_length();
  }
  // The header's bytes count too: a run of many small values (the
  // reference interpreter's, one lane each) holds mostly headers.
  const std::size_t charged = bytes + kMemoryAlignment;
  if (budget != nullptr) budget->Charge(static_cast<int64_t>(charged));
  void* block;
  try {
    block = ::operator new(charged, std::align_val_t{kMemoryAlignment});
  } catch (...) {
    if (budget != nullptr) budget->Release(static_cast<int64_t>(charged));
    throw;
  }
  if (budget != nullptr) budget->Ref();
  new (block) Header{budget, charged};
  return static_cast<std::byte*>(block) + kMemoryAlignment;
}

void FreeCounted(void* p) noexcept {
  if (p == nullptr) return;
  void* block = static_cast<std::byte*>(p) - kMemoryAlignment;
  const Header header = *static_cast<Header*>(block);
  ::operator delete(block, std::align_val_t{kMemoryAlignment});
  if (header.budget != nullptr) {
    header.budget->Release(static_cast<int64_t>(header.bytes));
    header.budget->Unref();
  }
}

// ---------------------------------------------------------------------------
// The default limit.

MemoryBounds ReadMemoryBounds() {
  static const MemoryBounds fixed = FixedBounds();
  MemoryBounds bounds = fixed;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    // What the address space holds already: the first field of statm, in pages.
    int64_t pages = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> pages;
    const int64_t in_use = pages * sysconf(_SC_PAGESIZE);
    const auto cur = static_cast<int64_t>(
        std::min<rlim_t>(limit.rlim_cur, static_cast<rlim_t>(std::numeric_limits<int64_t>::max())));
    bounds.address_space = std::max<int64_t>(cur - in_use, 0);
  }
  return bounds;
}

int64_t DefaultMemoryLimit(const MemoryBounds& bounds) {
  const int64_t smallest = MinBound(MinBound(bounds.physical, bounds.address_space), bounds.cgroup);
  if (smallest < 0) return int64_t{1} << 40;
  return std::max<int64_t>(smallest / 4 * 3, 1);
}

int64_t DefaultMemoryLimit() { return DefaultMemoryLimit(ReadMemoryBounds()); }

std::string DescribeDefaultMemoryLimit(const MemoryBounds& bounds) {
  std::vector<std::string> parts;
  if (bounds.physical >= 0) parts.push_back(absl::StrCat("physical memory (", FormatBytes(bounds.physical), ")"));
  if (bounds.address_space >= 0) {
    parts.push_back(absl::StrCat("what RLIMIT_AS (ulimit -v) leaves of the address space (",
                                 FormatBytes(bounds.address_space), ")"));
  }
  if (bounds.cgroup >= 0) {
    parts.push_back(absl::StrCat("the cgroup's memory.max (", FormatBytes(bounds.cgroup), ")"));
  }
  if (parts.empty()) return "1 TiB (no bound on this process's memory is known)";
  return absl::StrCat(FormatBytes(DefaultMemoryLimit(bounds)), ", 3/4 of the smallest of ",
                      absl::StrJoin(parts, ", "));
}

std::string FormatBytes(int64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

absl::StatusOr<int64_t> ParseBytes(std::string_view text) {
  const std::string_view original = text;
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", std::string(original),
        "' is not a byte count: write digits, optionally followed by K, M, G or T "
        "(powers of 1024), e.g. 512M or 4G"));
  };
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || value < 0) return bad();
  const std::string suffix = absl::AsciiStrToUpper(std::string(end, text.data() + text.size()));
  int shift = -1;
  if (suffix.empty() || suffix == "B") shift = 0;
  for (const auto& [unit, bits] : {std::pair{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}}) {
    const std::string u(1, unit);
    if (suffix == u || suffix == u + "B" || suffix == u + "IB") shift = bits;
  }
  if (shift < 0) return bad();
  if (value > (std::numeric_limits<int64_t>::max() >> shift)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", std::string(original), "' is more bytes than can be counted (at most 2^63 - 1)"));
  }
  return value << shift;
}

// ---------------------------------------------------------------------------
// Errors.

bool IsResourceError(const std::system_error& e) {
  return e.code() == std::errc::resource_unavailable_try_again ||
         e.code() == std::errc::not_enough_memory;
}

absl::Status ResourceErrorStatus(std::exception_ptr error, std::string_view what_view) {
  const std::string what(what_view);
  try {
    std::rethrow_exception(error);
  } catch (const MemoryLimitExceeded& e) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, " would hold more than its memory limit, max_memory_bytes = ", e.limit(), " (",
        FormatBytes(e.limit()), "), counting its values, stacks and scratch together: ",
        FormatBytes(e.in_use()), " were in use and ", FormatBytes(e.requested()),
        " more were asked for. Run fewer lanes or chains at once, or raise "
        "CallOptions::max_memory_bytes (the command line's --max-memory) if the memory is "
        "there; the default is 3/4 of the smallest of physical memory, RLIMIT_AS (ulimit -v) "
        "and the cgroup's memory.max"));
  } catch (const std::bad_alloc& e) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, " ran out of memory: the system refused an allocation (", e.what(),
        ") before the run reached its own memory limit. Lower max_memory_bytes (--max-memory) "
        "below what this process may use (ulimit -v, the cgroup's memory.max, other "
        "processes), or run fewer lanes or chains at once"));
  } catch (const std::length_error& e) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, " asked for more memory than can be addressed (", e.what(),
        "); run fewer lanes or chains at once, or smaller values"));
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::not_enough_memory) {
      return absl::ResourceExhaustedError(absl::StrCat(
          what, " ran out of memory (", e.what(),
          "); lower max_memory_bytes (--max-memory) below what this process may use, or run "
          "fewer lanes or chains at once"));
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        what, " could not start a thread (", e.what(),
        "): the system limits the threads or the address space (ulimit -u, ulimit -v). "
        "Use fewer threads: fewer shards (CallOptions::shards, --shards) or fewer backend "
        "threads ('threaded:N')"));
  }
}

}  // namespace autobatch
