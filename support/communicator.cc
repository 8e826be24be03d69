// The single-process Communicator and the helpers every implementation
// shares.
#include "support/communicator.h"

#include <cstdlib>
#include <thread>
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch {

absl::StatusOr<std::vector<std::string>> SingleProcessCommunicator::Gather(std::string_view local,
                                                                           int root) {
  AB_RETURN_IF_ERROR(CheckRoot(root, 1));
  return std::vector<std::string>{std::string(local)};
}

absl::StatusOr<std::string> SingleProcessCommunicator::Broadcast(std::string_view bytes,
                                                                 int root) {
  AB_RETURN_IF_ERROR(CheckRoot(root, 1));
  return std::string(bytes);
}

absl::StatusOr<std::vector<int64_t>> SingleProcessCommunicator::SumAll(
    std::span<const int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

absl::Status SingleProcessCommunicator::Post(int dest, std::string_view /*bytes*/) {
  return absl::InvalidArgumentError(absl::StrCat(
      "communicator: Post to process ", dest, " in a single-process run; there is no other "
      "process to send to"));
}

void SingleProcessCommunicator::Abort(int exit_code) { std::_Exit(exit_code); }

Communicator& SingleProcess() {
  static SingleProcessCommunicator* const single = new SingleProcessCommunicator();
  return *single;
}

std::pair<int64_t, int64_t> RankRange(int64_t total, int rank, int size) {
  AB_CHECK(total >= 0 && size >= 1 && rank >= 0 && rank < size,
           "RankRange needs total >= 0 and 0 <= rank < size");
  const int64_t base = total / size;
  const int64_t extra = total % size;
  const int64_t first = rank * base + std::min<int64_t>(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

bool StartedByMpiLauncher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int ThreadsPerRank(const Communicator* comm) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (comm == nullptr) return threads;
  return std::max(1, threads / std::max(1, comm->ranks_on_node()));
}

absl::Status CheckRoot(int root, int size) {
  if (root >= 0 && root < size) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("communicator: root ", root, " is not a rank of this run (0 .. ", size - 1,
                   ")"));
}

}  // namespace autobatch
