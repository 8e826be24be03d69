// Host stacks for executors that recurse on the host (the stackless VM).
#include "vm/host_stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "absl/strings/str_cat.h"
#include "support/memory.h"
#include "support/status.h"

namespace autobatch {
namespace {

struct Job {
  absl::FunctionRef<absl::Status()> body;
  MemoryBudget* budget;  // the caller's, charged by the body's allocations too
  absl::Status status;
  std::exception_ptr thrown;  // rethrown on the caller's thread
};

void* RunJob(void* arg) {
  Job* job = static_cast<Job*>(arg);
  MemoryScope scope(job->budget);
  try {
    job->status = job->body();
  } catch (...) {
    job->thrown = std::current_exception();
  }
  return nullptr;
}

}  // namespace

absl::Status RunWithHostStack(int64_t levels, absl::FunctionRef<absl::Status()> body) {
  AB_CHECK(levels >= 0 && levels <= kMaxHostRecursionLevels,
           "RunWithHostStack: levels out of range");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(
                            levels * kHostStackBytesPerLevel + (int64_t{1} << 20), 1 << 22)) +
                        page - 1) / page * page;
  // Our own mapping: reserved, not committed (MAP_NORESERVE), without huge
  // pages (the kernel would zero 2 MiB for the first touch of each), and a
  // guard page below it so an overflow faults instead of corrupting memory.
  void* region = mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (region == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "could not reserve a ", bytes >> 20, " MiB host stack for ", levels,
        " levels of host recursion; lower max_stack_depth, or use the stack VM, whose "
        "stacks live on the heap"));
  }
  (void)madvise(region, bytes + page, MADV_NOHUGEPAGE);
  (void)mprotect(region, page, PROT_NONE);
  pthread_attr_t attr;
  int error = pthread_attr_init(&attr);
  if (error == 0) error = pthread_attr_setstack(&attr, static_cast<char*>(region) + page, bytes);
  Job job{body, CurrentMemoryBudget(), absl::OkStatus(), nullptr};
  pthread_t thread;
  if (error == 0) error = pthread_create(&thread, &attr, RunJob, &job);
  pthread_attr_destroy(&attr);
  if (error == 0) pthread_join(thread, nullptr);
  munmap(region, bytes + page);
  if (error != 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "could not start a thread with a ", bytes >> 20, " MiB stack for ", levels,
        " levels of host recursion (", std::strerror(error),
        "); lower max_stack_depth, or use the stack VM, whose stacks live on the heap"));
  }
  if (job.thrown) std::rethrow_exception(job.thrown);
  return job.status;
}

}  // namespace autobatch
