// Host stacks for executors that recurse on the host (the stackless VM).
#include "vm/host_stack.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace autobatch {
namespace {

struct Job {
  absl::FunctionRef<absl::Status()> body;
  absl::Status status;
};

void* RunJob(void* arg) {
  Job* job = static_cast<Job*>(arg);
  job->status = job->body();
  return nullptr;
}

}  // namespace

absl::Status RunWithHostStack(int64_t levels, absl::FunctionRef<absl::Status()> body) {
  AB_CHECK(levels >= 0 && levels <= kMaxHostRecursionLevels,
           "RunWithHostStack: levels out of range");
  const size_t bytes = static_cast<size_t>(
      std::max<int64_t>(levels * kHostStackBytesPerLevel + (int64_t{1} << 20), 1 << 22));
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    return absl::ResourceExhaustedError("could not set up a thread for the host recursion");
  }
  int error = pthread_attr_setstacksize(&attr, bytes);
  Job job{body, absl::OkStatus()};
  pthread_t thread;
  if (error == 0) error = pthread_create(&thread, &attr, RunJob, &job);
  pthread_attr_destroy(&attr);
  if (error != 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "could not start a thread with a ", bytes >> 20, " MiB stack for ", levels,
        " levels of host recursion (", std::strerror(error),
        "); lower max_stack_depth, or use the stack VM, whose stacks live on the heap"));
  }
  pthread_join(thread, nullptr);
  return job.status;
}

}  // namespace autobatch
