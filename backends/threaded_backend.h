// ThreadedBackend: the eigen backend's kernels with lanes partitioned over an
// Eigen::ThreadPool; bit-identical to EigenBackend for every thread count.
//
// How an op is split. RunOp cuts the lanes it computes into at most
// threads() CONTIGUOUS ranges ("chunks"): in dense mode ranges of the
// batch [0, batch), in compact mode ranges of the positions in
// lanes.indices(). Each chunk runs RunPrimitive (backends/kernels.h) on its
// own range, so a lane's whole computation (a reduction, a matvec row sum)
// stays in one call and its bits are those of EigenBackend; a chunk reads and
// writes only its own lanes of every tensor, so chunks never race, even when
// an output is also an input. Exceptions, run as ONE call on the calling
// thread exactly like EigenBackend:
// * user kernels whose KernelSignature is not bit_stable (their per-lane
//   results may depend on the lanes called together), and user kernels
//   missing from the registry (the error is EigenBackend's);
// matvec_batched (not bit_stable by definition) IS split into column blocks:
// its lanes stay within the documented tolerance, not bit-identical to eigen.
//
// When an op is split. Splitting costs handing chunks to a worker and
// joining it (0.1-1.4 us measured, more if the worker was asleep), so small
// ops run inline on the calling thread (via an internal
// EigenBackend). The estimated work of an op is (lanes computed) x
// LaneCost(op): elements touched, weighted by a factor per cost class
// (ir/primitives.def; matvec: rows * cols). It is split into k = min(num_threads, lanes,
// work / min_chunk_cost) chunks, and run inline if k < 2. The default
// min_chunk_cost was measured with bench/threaded_bench.cc (see the .cc).
//
// Threads. A backend with N threads owns an Eigen::ThreadPool of N - 1
// workers; the calling (VM) thread runs chunk 0 itself, then any chunk no
// worker has claimed yet, then waits (spinning) until the claimed ones are
// done. N = 1 creates no pool. A worker that has run a chunk keeps watching
// for the next op's chunks for linger_microseconds before it sleeps, so the
// ops of consecutive VM steps neither wake a sleeping thread nor sleep on a
// barrier (with more threads than cores it does not linger). Workers only
// ever run chunks of the op in progress; the Backend object itself is, like
// every Backend, used from one thread at a time.
//
// Requirements on user kernels: a bit_stable user kernel may be called
// concurrently from several threads, each call on its own disjoint range of
// lanes; its function must be safe to call that way (no unsynchronized
// shared mutable state).
//
// Errors. Every chunk runs to completion; RunOp returns the error of the
// LOWEST failing chunk (deterministic for a given thread count and lane set),
// and, as for every backend, never touches lanes outside the set.
//
// Memory. Each thread slot (chunk index) has its own scratch buffers and
// lane views, never shared between chunks; they only grow, so after a warm-up
// step RunOp does not allocate. (RunPrimitive's matvec keeps a thread_local
// buffer per thread, which each worker grows the first time IT runs a matvec
// chunk: with several workers, which worker gets which chunk is not fixed, so
// that warm-up may take more than one step.)
//
// Data movement (MaskedUpdate, Gather, Scatter) is split by the same rule
// with one cost unit per element moved; stacks, CopyLanes, FillLanes and the
// lane queries run on the calling thread (EigenBackend's code).
#ifndef AUTOBATCH_BACKENDS_THREADED_BACKEND_H_
#define AUTOBATCH_BACKENDS_THREADED_BACKEND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "backends/eigen_backend.h"
#include "backends/kernels.h"
#include "backends/scratch_buffer.h"

namespace autobatch {

struct ThreadedBackendOptions {
  static constexpr int64_t kDefaultLingerMicroseconds = 1000;
  // Total threads, the calling thread included; 0 = hardware concurrency
  // (std::thread::hardware_concurrency(), at least 1). Must be in
  // [0, kMaxThreads].
  int num_threads = 0;
  // The least estimated work (in LaneCost units) worth giving a chunk; 0
  // splits every op with at least 2 lanes (tests use it to exercise the
  // threaded paths on small batches). Must be >= 0.
  double min_chunk_cost = -1;  // < 0: the measured default, kDefaultMinChunkCost
  // How long a worker that has run a chunk keeps watching for the next op's
  // chunks (spinning) before it sleeps; 0 = never, at most 1 second.
  // Ignored (0) when there are more threads than cores.
  int64_t linger_microseconds = kDefaultLingerMicroseconds;
};

class ThreadedBackend : public Backend {
 public:
  static constexpr int kMaxThreads = 256;
  static const double kDefaultMinChunkCost;

  // Starts the workers: throws std::system_error (resource_unavailable_try_again)
  // if the system does not start one, after the others have stopped;
  // MakeBackend(name) returns that as ResourceExhausted.
  explicit ThreadedBackend(ThreadedBackendOptions options = {});
  ~ThreadedBackend() override;
  ThreadedBackend(const ThreadedBackend&) = delete;
  ThreadedBackend& operator=(const ThreadedBackend&) = delete;

  // "threaded" if the thread count was defaulted, else "threaded:N".
  std::string_view name() const override { return name_; }
  int threads() const override { return num_threads_; }
  double min_chunk_cost() const { return min_chunk_cost_; }

  // Estimated work of computing `op` for ONE lane, in units of one element of
  // a cheap elementwise op (add): the elements of its operands and results,
  // times a measured factor for transcendental, pow and random primitives;
  // rows * cols for matvec and matvec_batched. Always >= 1.
  static double LaneCost(const PrimOp& op, std::span<const Tensor* const> inputs,
                         std::span<Tensor* const> outputs);
  // The number of chunks an op of `lanes` lanes costing `lane_cost` each is
  // split into (1 = run inline).
  int NumChunks(int64_t lanes, double lane_cost) const;

  Tensor Allocate(const TensorType& type, int64_t batch) override;
  LaneStack AllocateStack(const TensorType& type, int64_t batch,
                          int64_t initial_capacity) override;

  absl::Status RunOp(const PrimOp& op, std::span<const Tensor* const> inputs,
                     std::span<Tensor* const> outputs, const LaneSet& lanes,
                     ExecMode mode, const KernelRegistry* kernels) override;

  void MaskedUpdate(const Tensor& src, const LaneSet& lanes, Tensor* dst) override;
  void Gather(const Tensor& src, const LaneSet& lanes, Tensor* dst) override;
  void Scatter(const Tensor& src, const LaneSet& lanes, Tensor* dst) override;
  void CopyLanes(const Tensor& src, std::span<const int64_t> src_lanes,
                 Tensor* dst, std::span<const int64_t> dst_lanes) override;
  void FillLanes(int64_t value, const LaneSet& lanes, Tensor* dst) override;

  absl::Status Push(const LaneSet& lanes, int64_t max_depth,
                    LaneStack* stack) override;
  absl::Status Pop(const LaneSet& lanes, LaneStack* stack) override;

  bool Any(const Tensor& cond, const LaneSet& lanes) override;
  std::optional<int64_t> Min(const Tensor& values, const LaneSet& lanes) override;
  void Split(const Tensor& cond, const LaneSet& lanes, LaneSet* if_true,
             LaneSet* if_false) override;
  void LanesEqual(const Tensor& values, int64_t value, const LaneSet& lanes,
                  LaneSet* out) override;

 private:
  // What one thread slot (chunk index) owns; padded so slots written by
  // different threads never share a cache line.
  struct alignas(64) Slot {
    std::vector<ScratchBuffer> scratch;  // inputs first, then outputs
    std::vector<ConstLanesView> in_views;
    std::vector<LanesView> out_views;
    absl::Status status;
  };
  // The op being run, read by every chunk.
  struct Job {
    const PrimOp* op = nullptr;
    std::span<const Tensor* const> inputs;
    std::span<Tensor* const> outputs;
    const LaneSet* lanes = nullptr;
    const KernelRegistry* kernels = nullptr;
    bool compact = false;  // else dense
    bool direct = false;   // dense only: write outputs in place
    int64_t items = 0;     // lanes (dense) or lane positions (compact) to split
    int num_chunks = 0;
    MemoryBudget* memory = nullptr;  // the calling thread's, charged by every chunk
  };

  // Calls body(c) once for each c in [0, num_chunks): c = 0 on the calling
  // thread, the others on whichever thread claims them first (a pool worker
  // or the calling thread); returns when all have finished.
  template <typename Body>
  void ParallelFor(int num_chunks, Body& body);
  void RunChunk(int chunk);
  void RunChunkInScope(int chunk, Slot& slot);
  // [begin, end) of chunk c of the current split of `items`.
  static void ChunkRange(int64_t items, int num_chunks, int chunk, int64_t* begin,
                         int64_t* end);

  int num_threads_;
  double min_chunk_cost_;
  std::string name_;
  EigenBackend serial_;
  struct Pool;                  // an Eigen::ThreadPool, defined in the .cc
  std::unique_ptr<Pool> pool_;  // null if num_threads_ == 1
  std::vector<Slot> slots_;  // num_threads_ of them
  Job job_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_THREADED_BACKEND_H_
