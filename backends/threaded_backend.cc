// ThreadedBackend: lane-range chunks of RunPrimitive on an Eigen::ThreadPool.
#include "backends/threaded_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>

#include <unsupported/Eigen/CXX11/ThreadPool>

#include "absl/strings/str_cat.h"
#include "backends/lane_copy.h"
#include "backends/run_on_threads.h"
#include "backends/kernel_registry.h"
#include "support/memory.h"
#include "support/status.h"

namespace autobatch {

// The split threshold: the least estimated work (LaneCost units) per chunk.
// Measured with bench/threaded_bench.cc on the 2-core development machine
// (quiet, 2026-11-24) after helpers began to linger between ops (Pool):
// the split overhead fell from 5.6-11.6 us to 0.1-1.4 us, the median
// break-even over the benched ops to 3066-3565 units per chunk, and the
// observed 1-vs-2-thread crossovers lie at 1024 (masked update), 1536 (exp),
// 8704 (matvec 8x8) and 24576 (add, memory-bound) units per chunk. Whole
// programs decide between those: on pea-nuts (batch 1024) 8192, 16384 and
// 32768 give the same times, but on NUTS (1024 chains, compact tiles of a
// few dozen lanes) 8192 made two threads 1.3-1.6x slower than 16384 (AR(1)
// 8.6-9.0 s against 5.5 s, eight schools 0.228 s against 0.174 s): the
// memory-bound ops it adds to the split pay more in cross-core traffic than
// they gain (docs/BENCHMARKS.md, "Threaded backend split threshold").
const double ThreadedBackend::kDefaultMinChunkCost = 16384;

namespace {

// Per-element cost factors of LaneCost relative to an f64 add (cost 3: two
// operands and one result), measured single-threaded with
// bench/threaded_bench.cc ("cost factors" table; three runs on the 2-core
// development machine, under load, gave exp 8.3 / 16.1 / 10.5, pow 36 / 79 /
// 52, random_normal 137 / 158 / 106, matvec 8x8 3.1 / 5.5 / 2.8 and 32x32
// 5.3 / 5.1 / 2.3; these are rounded middles).
constexpr double kTranscendentalFactor = 10;  // CostClass::kTranscendental
constexpr double kPowFactor = 50;
constexpr double kRandomFactor = 130;  // per variate: Philox, log, sqrt, sin/cos
constexpr double kMatVecFactor = 4;    // per rows * cols
// A user kernel's cost is unknown; assume its elements are as expensive as
// transcendental ones (a kernel cheaper than that is rare enough not to
// matter: splitting it too early costs a few microseconds per op).
constexpr double kUserKernelFactor = kTranscendentalFactor;

int ThreadCount(const ThreadedBackendOptions& options) {
  AB_CHECK(options.num_threads >= 0 && options.num_threads <= ThreadedBackend::kMaxThreads,
           "ThreadedBackend: thread count out of range");
  if (options.num_threads > 0) return options.num_threads;
  return std::min(HardwareThreads(), ThreadedBackend::kMaxThreads);
}

}  // namespace

// The chunks of one ParallelFor at a time, run by the calling thread and by
// helper tasks on an Eigen::ThreadPool. Each chunk is claimed once, by
// whichever thread gets to it first (the calling thread claims what no
// helper has), so a helper that is late or gone only costs speed. A helper
// that has run out of chunks keeps watching for the next op's chunks for
// `linger` before it returns to the pool: consecutive ops of a VM step then
// start on a running thread instead of waking a sleeping one, and the
// calling thread joins by watching a counter instead of sleeping on a
// barrier (each of those costs microseconds per op; docs/BENCHMARKS.md,
// "Threaded backend split threshold").
// Eigen's thread environment, except that a thread the system will not
// start is counted instead of thrown from inside the pool's constructor,
// and the threads that did start are counted until they return: a pool
// with a worker missing never reaches its termination condition (all its
// workers blocked), so its destructor would wait forever (Pool's
// constructor cancels it instead).
struct CheckedThreadEnvironment {
  struct Counts {
    std::atomic<bool> failed{false};  // a thread did not start
    std::atomic<int> running{0};      // started and not yet returned
  };
  struct Task {
    std::function<void()> f;
  };
  class EnvThread {
   public:
    EnvThread(std::function<void()> f, Counts* counts) {
      counts->running.fetch_add(1);
      try {
        thread_ = std::thread([f = std::move(f), counts] {
          f();
          counts->running.fetch_sub(1);
        });
      } catch (...) {  // std::system_error, or std::bad_alloc for the thread's state
        counts->running.fetch_sub(1);
        counts->failed.store(true);
      }
    }
    ~EnvThread() {
      if (thread_.joinable()) thread_.join();
    }
    void OnCancel() {}

   private:
    std::thread thread_;
  };
  EnvThread* CreateThread(std::function<void()> f) { return new EnvThread(std::move(f), counts); }
  Task CreateTask(std::function<void()> f) { return Task{std::move(f)}; }
  void ExecuteTask(const Task& t) { t.f(); }

  Counts* counts = nullptr;
};

struct ThreadedBackend::Pool {
  // Throws std::system_error (resource_unavailable_try_again) if a worker
  // did not start, once the others have returned.
  Pool(int workers, std::chrono::nanoseconds linger)
      : workers(workers), linger(linger), pool(workers, CheckedThreadEnvironment{&threads}) {
    if (!threads.failed.load()) return;
    // Cancelling wakes the waiting workers, which then return; one that was
    // about to wait when it was woken waits for the next task, so tasks
    // that do nothing follow until every worker has returned.
    pool.Cancel();
    while (threads.running.load() > 0) {
      pool.Schedule([] {});
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            absl::StrCat("starting ", workers, " threaded-backend workers"));
  }
  ~Pool() { stop.store(true, std::memory_order_relaxed); }  // helpers leave; ~pool joins

  // state: generation (32 bits) | chunks (16) | next unclaimed chunk (16).
  static uint64_t Pack(uint64_t generation, uint64_t chunks, uint64_t next) {
    return generation << 32 | chunks << 16 | next;
  }

  void Run(int num_chunks, void (*fn)(void*, int), void* ctx) {
    job_fn = fn;  // published to helpers by the release store of `state`
    job_ctx = ctx;
    remaining.store(num_chunks - 1, std::memory_order_relaxed);
    const uint64_t generation = (state.load(std::memory_order_relaxed) >> 32) + 1;
    state.store(Pack(generation, static_cast<uint64_t>(num_chunks), 1),
                std::memory_order_release);
    for (int h = helpers.load(std::memory_order_acquire); h < num_chunks - 1 && h < workers;
         ++h) {
      helpers.fetch_add(1, std::memory_order_relaxed);
      pool.Schedule([this] { Help(); });
    }
    fn(ctx, 0);
    while (RunClaimed()) {
    }
    for (int spins = 0; remaining.load(std::memory_order_acquire) != 0; ++spins) Relax(spins);
  }

  // Claims and runs one chunk of the current op; false if none is left.
  bool RunClaimed() {
    uint64_t s = state.load(std::memory_order_acquire);
    while ((s & 0xffff) < ((s >> 16) & 0xffff)) {
      if (state.compare_exchange_weak(s, s + 1, std::memory_order_acquire)) {
        job_fn(job_ctx, static_cast<int>(s & 0xffff));
        remaining.fetch_sub(1, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

  void Help() {
    auto last_work = std::chrono::steady_clock::now();
    for (int spins = 0; !stop.load(std::memory_order_relaxed); ++spins) {
      if (RunClaimed()) {
        spins = 0;
        last_work = std::chrono::steady_clock::now();
        continue;
      }
      if ((spins & 255) == 255 && std::chrono::steady_clock::now() - last_work > linger) break;
      Relax(spins);
    }
    helpers.fetch_sub(1, std::memory_order_release);
  }

  // A spin-wait step: a pause first, then giving the core away, so that
  // waiting on a machine with fewer cores than threads does not starve the
  // thread being waited for.
  static void Relax(int spins) {
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }

  const int workers;
  const std::chrono::nanoseconds linger;
  std::atomic<uint64_t> state{0};
  std::atomic<int> remaining{0};
  std::atomic<int> helpers{0};  // scheduled and not yet returned
  std::atomic<bool> stop{false};
  void (*job_fn)(void*, int) = nullptr;
  void* job_ctx = nullptr;
  CheckedThreadEnvironment::Counts threads;  // before `pool`, whose threads update it
  Eigen::ThreadPoolTempl<CheckedThreadEnvironment> pool;  // last: destroyed (joined) first
};

ThreadedBackend::ThreadedBackend(ThreadedBackendOptions options)
    : num_threads_(ThreadCount(options)),
      min_chunk_cost_(options.min_chunk_cost < 0 ? kDefaultMinChunkCost
                                                 : options.min_chunk_cost),
      name_(options.num_threads == 0 ? "threaded"
                                     : absl::StrCat("threaded:", options.num_threads)),
      slots_(static_cast<size_t>(num_threads_)) {
  if (num_threads_ > 1) {
    // More threads than cores: a lingering helper would take a core from
    // the thread it waits for.
    const int64_t linger_us = num_threads_ <= HardwareThreads()
                                  ? std::clamp<int64_t>(options.linger_microseconds, 0, 1'000'000)
                                  : 0;
    pool_ = std::make_unique<Pool>(num_threads_ - 1, std::chrono::microseconds(linger_us));
  }
}

ThreadedBackend::~ThreadedBackend() = default;

double ThreadedBackend::LaneCost(const PrimOp& op, std::span<const Tensor* const> inputs,
                                 std::span<Tensor* const> outputs) {
  double in = 0, out = 0;
  for (const Tensor* t : inputs) in += static_cast<double>(t->lane_elements());
  for (const Tensor* t : outputs) out += static_cast<double>(t->lane_elements());
  const double base = in + out;
  double cost = base;
  switch (Info(op.prim).cost) {
    case CostClass::kLinear:
      break;
    case CostClass::kTranscendental:
      cost = base + kTranscendentalFactor * out;
      break;
    case CostClass::kPow:
      cost = base + kPowFactor * out;
      break;
    case CostClass::kRandom:
      cost = base + kRandomFactor * out;
      break;
    case CostClass::kMatrix:
      if (op.attrs.matrix != nullptr) {
        cost = base + kMatVecFactor * static_cast<double>(op.attrs.matrix->rows) *
                          static_cast<double>(op.attrs.matrix->cols);
      }
      break;
    case CostClass::kUserKernel:
      cost = kUserKernelFactor * base;
      break;
  }
  return std::max(cost, 1.0);
}

int ThreadedBackend::NumChunks(int64_t lanes, double lane_cost) const {
  if (num_threads_ < 2 || lanes < 2) return 1;
  int64_t k = std::min<int64_t>(num_threads_, lanes);
  if (min_chunk_cost_ > 0) {
    const double fit = static_cast<double>(lanes) * lane_cost / min_chunk_cost_;
    if (fit < static_cast<double>(k)) k = static_cast<int64_t>(fit);
  }
  return static_cast<int>(std::max<int64_t>(k, 1));
}

void ThreadedBackend::ChunkRange(int64_t items, int num_chunks, int chunk,
                                 int64_t* begin, int64_t* end) {
  *begin = items * chunk / num_chunks;
  *end = items * (chunk + 1) / num_chunks;
}

template <typename Body>
void ThreadedBackend::ParallelFor(int num_chunks, Body& body) {
  AB_DCHECK(num_chunks >= 1 && num_chunks <= num_threads_);
  if (num_chunks == 1) {
    body(0);
    return;
  }
  pool_->Run(
      num_chunks, [](void* b, int chunk) { (*static_cast<Body*>(b))(chunk); }, &body);
}

Tensor ThreadedBackend::Allocate(const TensorType& type, int64_t batch) {
  return serial_.Allocate(type, batch);
}

LaneStack ThreadedBackend::AllocateStack(const TensorType& type, int64_t batch,
                                         int64_t initial_capacity) {
  return serial_.AllocateStack(type, batch, initial_capacity);
}

absl::Status ThreadedBackend::RunOp(const PrimOp& op,
                                    std::span<const Tensor* const> inputs,
                                    std::span<Tensor* const> outputs,
                                    const LaneSet& lanes, ExecMode mode,
                                    const KernelRegistry* kernels) {
  const int64_t batch = lanes.batch();
  bool aliased = false;
  for (const Tensor* in : inputs) {
    AB_CHECK(in != nullptr && (in->batch() == batch || in->uniform()),
             "RunOp: input batch mismatch");
  }
  // Uniform operands (one shared lane) run on one thread.
  if (HasUniformOperand(inputs, outputs)) {
    return serial_.RunOp(op, inputs, outputs, lanes, mode, kernels);
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    AB_CHECK(outputs[k] != nullptr && outputs[k]->batch() == batch,
             "RunOp: output batch mismatch");
    for (size_t j = 0; j < k; ++j) {
      AB_CHECK(outputs[j] != outputs[k], "RunOp: an output is listed twice");
    }
    for (const Tensor* in : inputs) aliased = aliased || in == outputs[k];
  }
  if (IsPlainCopy(op, inputs, outputs)) {
    MaskedUpdate(*inputs[0], lanes, outputs[0]);
    return absl::OkStatus();
  }
  const bool compact = mode == ExecMode::kCompact && !lanes.full();
  const int64_t items = compact ? lanes.size() : lanes.batch();
  int num_chunks = lanes.empty() ? 1 : NumChunks(items, LaneCost(op, inputs, outputs));
  if (num_chunks > 1 && op.prim == Primitive::kUserKernel) {
    const UserKernel* kernel = kernels == nullptr ? nullptr : kernels->Find(op.attrs.kernel);
    if (kernel == nullptr || !kernel->signature.bit_stable) num_chunks = 1;
  }
  // One chunk is exactly the eigen backend.
  if (num_chunks == 1) return serial_.RunOp(op, inputs, outputs, lanes, mode, kernels);

  job_ = Job{.op = &op,
             .inputs = inputs,
             .outputs = outputs,
             .lanes = &lanes,
             .kernels = kernels,
             .compact = compact,
             .direct = !compact && lanes.full() && !aliased,
             .items = items,
             .num_chunks = num_chunks,
             .memory = CurrentMemoryBudget()};
  auto body = [this](int chunk) { RunChunk(chunk); };
  ParallelFor(num_chunks, body);
  job_.op = nullptr;
  absl::Status first_error;
  for (int c = 0; c < num_chunks; ++c) {
    absl::Status status = std::exchange(slots_[static_cast<size_t>(c)].status, absl::OkStatus());
    if (first_error.ok()) first_error = std::move(status);
  }
  return first_error;
}

void ThreadedBackend::RunChunk(int chunk) {
  Slot& slot = slots_[static_cast<size_t>(chunk)];
  // A worker thread charges the caller's budget; what a chunk throws (its
  // scratch past the memory limit, a user kernel's exception) must not
  // leave the worker, so it becomes the chunk's status.
  MemoryScope memory(job_.memory);
  try {
    slot.status = CatchResourceErrors("an op's chunk on the threaded backend", [&] {
      RunChunkInScope(chunk, slot);
      return slot.status;
    });
  } catch (const std::exception& e) {
    slot.status = absl::InternalError(absl::StrCat(
        "an exception escaped an op on the threaded backend (a user kernel must report its "
        "errors as a Status, not throw): ", e.what()));
  } catch (...) {
    slot.status = absl::InternalError(
        "an exception escaped an op on the threaded backend (a user kernel must report its "
        "errors as a Status, not throw)");
  }
}

void ThreadedBackend::RunChunkInScope(int chunk, Slot& slot) {
  const Job& job = job_;
  int64_t begin, end;
  ChunkRange(job.items, job.num_chunks, chunk, &begin, &end);
  const int64_t n = end - begin;
  const size_t num_in = job.inputs.size(), num_out = job.outputs.size();
  // Slots only grow, so the views' shape vectors keep their capacity and
  // steady-state steps do not allocate.
  if (slot.scratch.size() < num_in + num_out) slot.scratch.resize(num_in + num_out);
  if (slot.in_views.size() < num_in) slot.in_views.resize(num_in);
  if (slot.out_views.size() < num_out) slot.out_views.resize(num_out);
  const std::span<const ConstLanesView> in_views(slot.in_views.data(), num_in);
  const std::span<const LanesView> out_views(slot.out_views.data(), num_out);

  if (job.compact) {
    const std::span<const int64_t> indices =
        job.lanes->indices().subspan(static_cast<size_t>(begin), static_cast<size_t>(n));
    for (size_t i = 0; i < num_in; ++i) {
      const Tensor& in = *job.inputs[i];
      std::byte* buffer = slot.scratch[i].Get(static_cast<size_t>(n * in.lane_bytes()));
      GatherLaneBytes(in.bytes(), buffer, in.lane_bytes(), indices);
      slot.in_views[i].type = in.type();
      slot.in_views[i].data = buffer;
    }
    for (size_t k = 0; k < num_out; ++k) {
      slot.out_views[k].type = job.outputs[k]->type();
      slot.out_views[k].data = slot.scratch[num_in + k].Get(
          static_cast<size_t>(n * job.outputs[k]->lane_bytes()));
    }
    slot.status = RunPrimitive(*job.op, in_views, out_views, n, job.kernels);
    if (!slot.status.ok()) return;
    for (size_t k = 0; k < num_out; ++k) {
      ScatterLaneBytes(slot.out_views[k].data, job.outputs[k]->bytes(),
                   job.outputs[k]->lane_bytes(), indices);
    }
    return;
  }

  for (size_t i = 0; i < num_in; ++i) {
    const Tensor& in = *job.inputs[i];
    slot.in_views[i].type = in.type();
    slot.in_views[i].data = in.bytes() + begin * in.lane_bytes();
  }
  for (size_t k = 0; k < num_out; ++k) {
    Tensor& out = *job.outputs[k];
    slot.out_views[k].type = out.type();
    slot.out_views[k].data =
        job.direct ? out.bytes() + begin * out.lane_bytes()
                   : slot.scratch[num_in + k].Get(static_cast<size_t>(n * out.lane_bytes()));
  }
  const bool full = job.lanes->full();
  slot.status = RunPrimitive(*job.op, in_views, out_views, n, job.kernels,
                             full ? nullptr : job.lanes->mask().data() + begin);
  if (!slot.status.ok() || job.direct) return;
  for (size_t k = 0; k < num_out; ++k) {
    Tensor& out = *job.outputs[k];
    const int64_t lane_bytes = out.lane_bytes();
    std::byte* dst = out.bytes() + begin * lane_bytes;
    if (full) {
      CopyBytes(dst, slot.out_views[k].data, n * lane_bytes);
    } else {
      MaskedCopyLaneBytes(slot.out_views[k].data, dst, lane_bytes,
                          job.lanes->mask().data() + begin, 0, n);
    }
  }
}

void ThreadedBackend::MaskedUpdate(const Tensor& src, const LaneSet& lanes, Tensor* dst) {
  // A sparse set costs its lanes on one thread (the eigen backend goes by
  // index) rather than a pass over the whole batch on several.
  const int num_chunks =
      &src == dst || lanes.sparse()
          ? 1
          : NumChunks(lanes.batch(), static_cast<double>(src.lane_elements()));
  if (num_chunks == 1 || lanes.empty()) return serial_.MaskedUpdate(src, lanes, dst);
  AB_CHECK(src.batch() == lanes.batch(), "MaskedUpdate: src batch mismatch");
  AB_CHECK(dst->batch() == lanes.batch(), "MaskedUpdate: dst batch mismatch");
  AB_CHECK(src.type() == dst->type(), "MaskedUpdate: types differ");
  const int64_t lane_bytes = src.lane_bytes();
  auto body = [&](int chunk) {
    int64_t begin, end;
    ChunkRange(lanes.batch(), num_chunks, chunk, &begin, &end);
    if (lanes.full()) {
      CopyBytes(dst->bytes() + begin * lane_bytes, src.bytes() + begin * lane_bytes,
                (end - begin) * lane_bytes);
    } else {
      MaskedCopyLaneBytes(src.bytes(), dst->bytes(), lane_bytes, lanes.mask().data(), begin,
                          end);
    }
  };
  ParallelFor(num_chunks, body);
}

void ThreadedBackend::Gather(const Tensor& src, const LaneSet& lanes, Tensor* dst) {
  const int num_chunks = NumChunks(lanes.size(), static_cast<double>(src.lane_elements()));
  if (num_chunks == 1) return serial_.Gather(src, lanes, dst);
  AB_CHECK(src.batch() == lanes.batch(), "Gather: src batch mismatch");
  AB_CHECK(src.type() == dst->type(), "Gather: types differ");
  AB_CHECK(dst->batch() >= lanes.size() && &src != dst, "Gather: bad destination");
  auto body = [&](int chunk) {
    int64_t begin, end;
    ChunkRange(lanes.size(), num_chunks, chunk, &begin, &end);
    GatherLaneBytes(src.bytes(), dst->lane_bytes_ptr(begin), src.lane_bytes(),
                lanes.indices().subspan(static_cast<size_t>(begin),
                                        static_cast<size_t>(end - begin)));
  };
  ParallelFor(num_chunks, body);
}

void ThreadedBackend::Scatter(const Tensor& src, const LaneSet& lanes, Tensor* dst) {
  const int num_chunks = NumChunks(lanes.size(), static_cast<double>(src.lane_elements()));
  if (num_chunks == 1) return serial_.Scatter(src, lanes, dst);
  AB_CHECK(dst->batch() == lanes.batch(), "Scatter: dst batch mismatch");
  AB_CHECK(src.type() == dst->type(), "Scatter: types differ");
  AB_CHECK(src.batch() >= lanes.size() && &src != dst, "Scatter: bad source");
  auto body = [&](int chunk) {
    int64_t begin, end;
    ChunkRange(lanes.size(), num_chunks, chunk, &begin, &end);
    ScatterLaneBytes(src.lane_bytes_ptr(begin), dst->bytes(), src.lane_bytes(),
                 lanes.indices().subspan(static_cast<size_t>(begin),
                                         static_cast<size_t>(end - begin)));
  };
  ParallelFor(num_chunks, body);
}

void ThreadedBackend::CopyLanes(const Tensor& src, std::span<const int64_t> src_lanes,
                                Tensor* dst, std::span<const int64_t> dst_lanes) {
  serial_.CopyLanes(src, src_lanes, dst, dst_lanes);
}

void ThreadedBackend::FillLanes(int64_t value, const LaneSet& lanes, Tensor* dst) {
  serial_.FillLanes(value, lanes, dst);
}

absl::Status ThreadedBackend::Push(const LaneSet& lanes, int64_t max_depth,
                                   LaneStack* stack) {
  return serial_.Push(lanes, max_depth, stack);
}

absl::Status ThreadedBackend::Pop(const LaneSet& lanes, LaneStack* stack) {
  return serial_.Pop(lanes, stack);
}

bool ThreadedBackend::Any(const Tensor& cond, const LaneSet& lanes) {
  return serial_.Any(cond, lanes);
}

std::optional<int64_t> ThreadedBackend::Min(const Tensor& values, const LaneSet& lanes) {
  return serial_.Min(values, lanes);
}

void ThreadedBackend::Split(const Tensor& cond, const LaneSet& lanes, LaneSet* if_true,
                            LaneSet* if_false) {
  serial_.Split(cond, lanes, if_true, if_false);
}

void ThreadedBackend::LanesEqual(const Tensor& values, int64_t value,
                                 const LaneSet& lanes, LaneSet* out) {
  serial_.LanesEqual(values, value, lanes, out);
}

}  // namespace autobatch
