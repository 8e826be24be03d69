// Communicator: the processes of one run (MPI ranks under `mpirun`) as the
// library sees them — which one this is, how many there are, and the few
// collective operations a run sharded over processes needs. Lanes and chains
// never depend on each other, so what crosses processes is small: inputs
// out, outputs and draws back, a status at each phase's end, progress
// counts now and then (DESIGN.md, "Beyond one machine").
//
// Every member but rank(), size() and the point-to-point Post, TryReceive
// and FinishPosts is COLLECTIVE: every process of the communicator calls it,
// in the same order. Every member is called from the process's main thread
// (MPI is initialized with MPI_THREAD_FUNNELED). A process that stops calling them
// (an error it returned early on, an exception) would leave the others
// waiting, so a sharded run agrees on its status (AgreeOnStatus) at every
// point where one process may have failed, and ends every process together.
//
// The single-process implementation is here; Open MPI's is
// support/mpi/mpi_communicator.h, built when CMake finds MPI
// (AUTOBATCH_MPI), so a build without MPI compiles and runs as one process.
#ifndef AUTOBATCH_SUPPORT_COMMUNICATOR_H_
#define AUTOBATCH_SUPPORT_COMMUNICATOR_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace autobatch {

class Communicator {
 public:
  virtual ~Communicator() = default;

  // This process's rank, 0 .. size() - 1, and the number of processes.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // How many processes of this communicator run on this process's machine
  // (node): its hardware threads are shared among them (DefaultThreads).
  virtual int ranks_on_node() const = 0;
  // What this is, for messages and summaries: "single process", "MPI
  // (Open MPI 4.1.4), 3 ranks".
  virtual std::string Describe() const = 0;

  // Returns once every process has called it.
  virtual absl::Status Barrier() = 0;

  // Every process passes its own status and gets back the same one: OK if
  // every process passed OK, otherwise the status of the lowest failing
  // rank, its message prefixed "rank R: " when size() > 1. Call it where a
  // process may have failed, before the next collective step.
  virtual absl::Status AgreeOnStatus(const absl::Status& local) = 0;

  // Gathers every process's `local` bytes on `root`, in rank order (one
  // string per rank); the other processes get an empty vector. Any size,
  // including more than 2 GiB per rank (sent in pieces).
  virtual absl::StatusOr<std::vector<std::string>> Gather(std::string_view local, int root) = 0;

  // `root`'s `bytes` on every process (the others' `bytes` are ignored).
  virtual absl::StatusOr<std::string> Broadcast(std::string_view bytes, int root) = 0;

  // Elementwise sums of every process's `values` (the same length on every
  // process), on every process: progress counts.
  virtual absl::StatusOr<std::vector<int64_t>> SumAll(std::span<const int64_t> values) = 0;

  // Point to point, not collective (progress reports to rank 0): Post
  // sends a copy of `bytes` to process `dest` and returns without waiting
  // for it to be received; messages from one process arrive in the order
  // posted. TryReceive returns a posted message that has arrived for this
  // process, from any process, or nullopt at once when none has.
  // FinishPosts waits until every message this process posted has been
  // received: call it before the next collective step, on a process whose
  // receiver is sure to take them all (or it waits forever).
  struct Posted {
    int source = 0;
    std::string bytes;
  };
  virtual absl::Status Post(int dest, std::string_view bytes) = 0;
  virtual absl::StatusOr<std::optional<Posted>> TryReceive() = 0;
  virtual absl::Status FinishPosts() = 0;

  // Ends every process of the run with `exit_code` (MPI_Abort: Open MPI
  // prints its own banner after whatever this process printed). For a
  // failure only one process sees, where agreeing is not possible.
  [[noreturn]] virtual void Abort(int exit_code) = 0;
};

// One process: rank 0 of 1. Collective calls return at once (Gather gives
// {local}, SumAll its input); Abort calls std::_Exit.
class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int ranks_on_node() const override { return 1; }
  std::string Describe() const override { return "single process"; }
  absl::Status Barrier() override { return absl::OkStatus(); }
  absl::Status AgreeOnStatus(const absl::Status& local) override { return local; }
  absl::StatusOr<std::vector<std::string>> Gather(std::string_view local, int root) override;
  absl::StatusOr<std::string> Broadcast(std::string_view bytes, int root) override;
  absl::StatusOr<std::vector<int64_t>> SumAll(std::span<const int64_t> values) override;
  // There is no other process: Post fails (InvalidArgument), TryReceive
  // finds nothing, FinishPosts has nothing to wait for.
  absl::Status Post(int dest, std::string_view bytes) override;
  absl::StatusOr<std::optional<Posted>> TryReceive() override { return std::nullopt; }
  absl::Status FinishPosts() override { return absl::OkStatus(); }
  [[noreturn]] void Abort(int exit_code) override;
};

// The process-wide single-process communicator (stateless).
Communicator& SingleProcess();

// The items [first, last) of `total` (chains, lanes) that rank `rank` of
// `size` runs: contiguous ranges in rank order, as even as possible, the
// first total % size ranks taking one more. Ranks past `total` get an empty
// range (first == last == total). Requires total >= 0, 0 <= rank < size.
std::pair<int64_t, int64_t> RankRange(int64_t total, int rank, int size);

// Whether an MPI launcher (mpirun, mpiexec, or a PMIx/PMI scheduler) started
// this process, from its environment (OMPI_COMM_WORLD_SIZE, PMIX_RANK,
// PMI_RANK): the command line initializes MPI only then, so a plain run
// never pays for it, and a build without MPI can say why it runs alone.
bool StartedByMpiLauncher();

// The hardware threads this process may use: HardwareThreads() divided
// among the ranks on its node (at least 1). `comm` null: one process.
int ThreadsPerRank(const Communicator* comm);

// InvalidArgument unless 0 <= root < size (a collective's `root`).
absl::Status CheckRoot(int root, int size);

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_COMMUNICATOR_H_
