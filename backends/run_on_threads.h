// RunOnThreads: one body run by several threads at once, then joined.
#ifndef AUTOBATCH_BACKENDS_RUN_ON_THREADS_H_
#define AUTOBATCH_BACKENDS_RUN_ON_THREADS_H_

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "support/memory.h"

namespace autobatch {

// std::thread::hardware_concurrency(), or 1 when it is unknown.
inline int HardwareThreads() {
  return static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u));
}

// Runs `body` on min(threads, HardwareThreads()) threads at once — the
// calling thread and new ones — and returns when every run has returned.
// The body shares out its own work (e.g. an atomic counter over items);
// threads <= 1 runs it once on the calling thread. Every thread charges the
// calling thread's memory budget (support/memory.h). If the system will not
// start a thread, no run starts and the result is ResourceExhausted saying
// so (ResourceErrorStatus); an exception a run throws is rethrown on the
// calling thread once every run has returned.
inline absl::Status RunOnThreads(int threads, const std::function<void()>& body) {
  threads = std::min(threads, HardwareThreads());
  if (threads <= 1) {
    body();
    return absl::OkStatus();
  }
  MemoryBudget* budget = CurrentMemoryBudget();
  // The threads wait at a gate until all of them exist, so that a failed
  // start leaves none of them running the body.
  std::mutex mutex;
  std::condition_variable gate;
  bool open = false, started = false;
  std::exception_ptr thrown;
  auto run = [&] {
    {
      std::unique_lock<std::mutex> lock(mutex);
      gate.wait(lock, [&] { return open; });
      if (!started) return;
    }
    MemoryScope scope(budget);
    try {
      body();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!thrown) thrown = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(threads - 1));
  std::exception_ptr start_failure;
  try {
    for (int t = 1; t < threads; ++t) workers.emplace_back(run);
  } catch (...) {  // std::system_error, or std::bad_alloc for the thread's state
    start_failure = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    started = start_failure == nullptr;
  }
  gate.notify_all();
  if (started) {
    try {
      body();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!thrown) thrown = std::current_exception();
    }
  }
  for (std::thread& w : workers) w.join();
  if (start_failure) return ResourceErrorStatus(start_failure, "the run");
  if (thrown) std::rethrow_exception(thrown);
  return absl::OkStatus();
}

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_RUN_ON_THREADS_H_
