// Open MPI behind Communicator: collectives over MPI_COMM_WORLD with errors
// returned as Status.
#include "support/mpi/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch {
namespace {

// Bytes per rank in one MPI call (counts are ints): bigger messages go in
// rounds of at most this much from each rank.
constexpr int64_t kPieceBytes = int64_t{1} << 30;

absl::Status MpiStatus(int code, std::string_view what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  return absl::InternalError(absl::StrCat("MPI: ", std::string(what), " failed: ",
                                          length > 0 ? std::string(text, length)
                                                     : absl::StrCat("error ", code)));
}

// The tag of Post's messages: apart from anything else sent on
// MPI_COMM_WORLD (collectives have their own matching context anyway).
constexpr int kPostTag = 0x5041;  // "PA"

}  // namespace

// Posted sends not yet known complete: MPI needs each buffer to stay put
// until its request completes.
struct MpiCommunicator::PendingPosts {
  std::vector<MPI_Request> requests;
  std::vector<std::unique_ptr<std::string>> buffers;

  // Drops the sends that completed (MPI_Testsome), keeping the order.
  absl::Status Reap() {
    if (requests.empty()) return absl::OkStatus();
    std::vector<int> done(requests.size());
    int count = 0;
    AB_RETURN_IF_ERROR(MpiStatus(MPI_Testsome(static_cast<int>(requests.size()), requests.data(),
                                              &count, done.data(), MPI_STATUSES_IGNORE),
                                 "MPI_Testsome"));
    if (count == MPI_UNDEFINED || count == 0) return absl::OkStatus();
    size_t kept = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      requests[kept] = requests[i];
      buffers[kept] = std::move(buffers[i]);
      ++kept;
    }
    requests.resize(kept);
    buffers.resize(kept);
    return absl::OkStatus();
  }
};

MpiCommunicator::MpiCommunicator(int rank, int size, int ranks_on_node, bool finalize)
    : rank_(rank),
      size_(size),
      ranks_on_node_(ranks_on_node),
      finalize_(finalize),
      pending_(std::make_unique<PendingPosts>()) {}

absl::StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Create(int* argc,
                                                                         char*** argv) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    return absl::FailedPreconditionError("MPI: already finalized in this process");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    AB_RETURN_IF_ERROR(MpiStatus(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided),
                                 "MPI_Init_thread"));
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_FUNNELED) {
    return absl::FailedPreconditionError(
        "MPI: this MPI library does not provide MPI_THREAD_FUNNELED, which a run with threads "
        "needs (only its main thread calls MPI)");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  AB_RETURN_IF_ERROR(MpiStatus(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank"));
  AB_RETURN_IF_ERROR(MpiStatus(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size"));
  // The ranks sharing this node's memory (and cores).
  MPI_Comm node;
  int ranks_on_node = 1;
  AB_RETURN_IF_ERROR(MpiStatus(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
      "MPI_Comm_split_type"));
  MPI_Comm_size(node, &ranks_on_node);
  MPI_Comm_free(&node);
  return std::unique_ptr<MpiCommunicator>(
      new MpiCommunicator(rank, size, ranks_on_node, /*finalize=*/initialized == 0));
}

MpiCommunicator::~MpiCommunicator() {
  // Sends nobody will receive (a run that failed before FinishPosts) must
  // not hold up MPI_Finalize.
  for (MPI_Request& request : pending_->requests) {
    MPI_Cancel(&request);
    MPI_Request_free(&request);
  }
  if (finalize_) MPI_Finalize();
}

std::string MpiCommunicator::Describe() const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  std::string library = "MPI";
  if (MPI_Get_library_version(version, &length) == MPI_SUCCESS && length > 0) {
    library = std::string(version, length);
    // "Open MPI v4.1.4, package: ..., ident: ..." -> "Open MPI v4.1.4".
    library = library.substr(0, std::min(library.find(','), library.find('\n')));
  }
  return absl::StrCat(library, ", ", size_, size_ == 1 ? " rank" : " ranks");
}

absl::Status MpiCommunicator::Barrier() {
  return MpiStatus(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

absl::Status MpiCommunicator::AgreeOnStatus(const absl::Status& local) {
  // The lowest failing rank, or size_ when none failed.
  const int mine = local.ok() ? size_ : rank_;
  int failing = size_;
  AB_RETURN_IF_ERROR(MpiStatus(
      MPI_Allreduce(&mine, &failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce"));
  if (failing == size_) return absl::OkStatus();
  const std::string mine_text =
      rank_ == failing ? absl::StrCat(static_cast<int>(local.code()), ":", local.message())
                       : std::string();
  AB_ASSIGN_OR_RETURN(const std::string text, Broadcast(mine_text, failing));
  const size_t colon = text.find(':');
  int code = static_cast<int>(absl::StatusCode::kUnknown);
  if (colon != std::string::npos) code = std::atoi(text.substr(0, colon).c_str());
  const std::string message = colon == std::string::npos ? text : text.substr(colon + 1);
  return absl::Status(static_cast<absl::StatusCode>(code),
                      size_ > 1 ? absl::StrCat("rank ", failing, ": ", message) : message);
}

absl::StatusOr<std::vector<std::string>> MpiCommunicator::Gather(std::string_view local,
                                                                 int root) {
  AB_RETURN_IF_ERROR(CheckRoot(root, size_));
  // Every rank learns every size, so all agree on the number of rounds.
  const int64_t mine = static_cast<int64_t>(local.size());
  std::vector<int64_t> sizes(static_cast<size_t>(size_));
  AB_RETURN_IF_ERROR(MpiStatus(MPI_Allgather(&mine, 1, MPI_INT64_T, sizes.data(), 1,
                                             MPI_INT64_T, MPI_COMM_WORLD),
                               "MPI_Allgather"));
  const int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  // A round takes up to `piece` bytes from each rank, so root's buffer for
  // one round stays within MPI's int counts and displacements.
  const int64_t piece =
      std::max<int64_t>(1, std::min<int64_t>(kPieceBytes, std::numeric_limits<int>::max() / size_));
  std::vector<std::string> gathered;
  if (rank_ == root) {
    gathered.resize(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      gathered[static_cast<size_t>(r)].resize(static_cast<size_t>(sizes[static_cast<size_t>(r)]));
    }
  }
  std::vector<int> counts(static_cast<size_t>(size_)), displacements(static_cast<size_t>(size_));
  std::string round_buffer;
  for (int64_t offset = 0; offset < largest; offset += piece) {
    int total = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      counts[r] = static_cast<int>(std::clamp<int64_t>(sizes[r] - offset, 0, piece));
      displacements[r] = total;
      total += counts[r];
    }
    const int my_count = counts[static_cast<size_t>(rank_)];
    if (rank_ == root) round_buffer.resize(static_cast<size_t>(total));
    AB_RETURN_IF_ERROR(MpiStatus(
        MPI_Gatherv(local.data() + std::min(offset, mine), my_count, MPI_BYTE,
                    round_buffer.data(), counts.data(), displacements.data(), MPI_BYTE, root,
                    MPI_COMM_WORLD),
        "MPI_Gatherv"));
    if (rank_ != root) continue;
    for (size_t r = 0; r < counts.size(); ++r) {
      if (counts[r] == 0) continue;
      std::memcpy(gathered[r].data() + offset, round_buffer.data() + displacements[r],
                  static_cast<size_t>(counts[r]));
    }
  }
  return gathered;
}

absl::StatusOr<std::string> MpiCommunicator::Broadcast(std::string_view bytes, int root) {
  AB_RETURN_IF_ERROR(CheckRoot(root, size_));
  int64_t size = static_cast<int64_t>(bytes.size());
  AB_RETURN_IF_ERROR(
      MpiStatus(MPI_Bcast(&size, 1, MPI_INT64_T, root, MPI_COMM_WORLD), "MPI_Bcast"));
  std::string out = rank_ == root ? std::string(bytes) : std::string(static_cast<size_t>(size), '\0');
  for (int64_t offset = 0; offset < size; offset += kPieceBytes) {
    const int count = static_cast<int>(std::min(size - offset, kPieceBytes));
    AB_RETURN_IF_ERROR(MpiStatus(
        MPI_Bcast(out.data() + offset, count, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast"));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> MpiCommunicator::SumAll(std::span<const int64_t> values) {
  // Every rank must pass as many values: check first, so a mismatch is an
  // error rather than a read past someone's buffer.
  const int64_t lengths[2] = {static_cast<int64_t>(values.size()),
                              -static_cast<int64_t>(values.size())};
  int64_t extremes[2] = {0, 0};
  AB_RETURN_IF_ERROR(MpiStatus(
      MPI_Allreduce(lengths, extremes, 2, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce"));
  if (extremes[0] != -extremes[1]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "communicator: SumAll called with ", extremes[0], " to ", -extremes[1],
        " values on different ranks; every rank must pass as many"));
  }
  std::vector<int64_t> sums(values.size());
  if (values.empty()) return sums;
  AB_RETURN_IF_ERROR(MpiStatus(MPI_Allreduce(values.data(), sums.data(),
                                             static_cast<int>(values.size()), MPI_INT64_T,
                                             MPI_SUM, MPI_COMM_WORLD),
                               "MPI_Allreduce"));
  return sums;
}

absl::Status MpiCommunicator::Post(int dest, std::string_view bytes) {
  if (dest < 0 || dest >= size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("communicator: Post to process ", dest, " of ", size_));
  }
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "communicator: Post of ", bytes.size(), " bytes; a posted message is a progress "
        "report, under 2 GiB (send bulk data with Gather)"));
  }
  AB_RETURN_IF_ERROR(pending_->Reap());
  auto buffer = std::make_unique<std::string>(bytes);
  MPI_Request request;
  AB_RETURN_IF_ERROR(MpiStatus(MPI_Isend(buffer->data(), static_cast<int>(buffer->size()),
                                         MPI_BYTE, dest, kPostTag, MPI_COMM_WORLD, &request),
                               "MPI_Isend"));
  pending_->requests.push_back(request);
  pending_->buffers.push_back(std::move(buffer));
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Communicator::Posted>> MpiCommunicator::TryReceive() {
  int arrived = 0;
  MPI_Status status;
  AB_RETURN_IF_ERROR(MpiStatus(
      MPI_Iprobe(MPI_ANY_SOURCE, kPostTag, MPI_COMM_WORLD, &arrived, &status), "MPI_Iprobe"));
  if (arrived == 0) return std::nullopt;
  int count = 0;
  AB_RETURN_IF_ERROR(MpiStatus(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count"));
  Posted posted{.source = status.MPI_SOURCE, .bytes = std::string(static_cast<size_t>(count), '\0')};
  AB_RETURN_IF_ERROR(MpiStatus(MPI_Recv(posted.bytes.data(), count, MPI_BYTE, status.MPI_SOURCE,
                                        kPostTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                               "MPI_Recv"));
  return posted;
}

absl::Status MpiCommunicator::FinishPosts() {
  std::vector<MPI_Request>& requests = pending_->requests;
  if (!requests.empty()) {
    AB_RETURN_IF_ERROR(MpiStatus(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                                             MPI_STATUSES_IGNORE),
                                 "MPI_Waitall"));
  }
  requests.clear();
  pending_->buffers.clear();
  return absl::OkStatus();
}

void MpiCommunicator::Abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace autobatch
