// MpiCommunicator: Open MPI behind the Communicator interface
// (support/communicator.h). Built only when CMake finds MPI
// (AUTOBATCH_MPI, library autobatch_mpi); every call is a collective over
// MPI_COMM_WORLD made from the thread that created it.
#ifndef AUTOBATCH_SUPPORT_MPI_MPI_COMMUNICATOR_H_
#define AUTOBATCH_SUPPORT_MPI_MPI_COMMUNICATOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "support/communicator.h"

namespace autobatch {

class MpiCommunicator final : public Communicator {
 public:
  // Initializes MPI with MPI_THREAD_FUNNELED (only the main thread makes MPI
  // calls; the run's other threads never do) unless it is initialized
  // already, and returns MPI_COMM_WORLD with errors returned, not fatal.
  // FailedPrecondition if MPI provides less than FUNNELED or was finalized;
  // Internal with MPI's message if initialization fails. At most one may
  // exist at a time; the one that initialized MPI finalizes it when
  // destroyed.
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> Create(int* argc, char*** argv);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int ranks_on_node() const override { return ranks_on_node_; }
  std::string Describe() const override;
  absl::Status Barrier() override;
  absl::Status AgreeOnStatus(const absl::Status& local) override;
  absl::StatusOr<std::vector<std::string>> Gather(std::string_view local, int root) override;
  absl::StatusOr<std::string> Broadcast(std::string_view bytes, int root) override;
  absl::StatusOr<std::vector<int64_t>> SumAll(std::span<const int64_t> values) override;
  // MPI_Isend / MPI_Iprobe + MPI_Recv / MPI_Waitall, on a tag of their own.
  absl::Status Post(int dest, std::string_view bytes) override;
  absl::StatusOr<std::optional<Posted>> TryReceive() override;
  absl::Status FinishPosts() override;
  [[noreturn]] void Abort(int exit_code) override;

 private:
  struct PendingPosts;  // the sends in flight and their buffers
  MpiCommunicator(int rank, int size, int ranks_on_node, bool finalize);
  int rank_;
  int size_;
  int ranks_on_node_;
  bool finalize_;
  std::unique_ptr<PendingPosts> pending_;
};


}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_MPI_MPI_COMMUNICATOR_H_
