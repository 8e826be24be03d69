// RunOnThreads: one body run by several threads at once, then joined.
#ifndef AUTOBATCH_BACKENDS_RUN_ON_THREADS_H_
#define AUTOBATCH_BACKENDS_RUN_ON_THREADS_H_

#include <algorithm>
#include <functional>
#include <thread>

#include <unsupported/Eigen/CXX11/ThreadPool>

namespace autobatch {

// std::thread::hardware_concurrency(), or 1 when it is unknown.
inline int HardwareThreads() {
  return static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u));
}

// Runs `body` on min(threads, HardwareThreads()) threads at once — the
// calling thread and the others as workers of a fresh Eigen::ThreadPool —
// and returns when every run has returned. The body shares out its own work
// (e.g. an atomic counter over items). threads <= 1 runs it once on the
// calling thread.
inline void RunOnThreads(int threads, const std::function<void()>& body) {
  threads = std::min(threads, HardwareThreads());
  if (threads <= 1) {
    body();
    return;
  }
  Eigen::ThreadPool pool(threads - 1);
  Eigen::Barrier done(static_cast<unsigned>(threads - 1));
  for (int t = 1; t < threads; ++t) {
    pool.Schedule([&body, &done] {
      body();
      done.Notify();
    });
  }
  body();
  done.Wait();
}

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_RUN_ON_THREADS_H_
