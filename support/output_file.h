// Writing the command line's outputs so that none is ever torn or mixed: files
// replaced whole by rename, standard output checked at exit, and an output
// directory locked against a second run.
//
// Why: a write that fails half-way (a full disk, a closed pipe) used to leave
// a file cut mid-row that looked complete, or stdout cut mid-JSON, with exit
// status 0; two runs writing one directory interleaved their files.
#ifndef AUTOBATCH_SUPPORT_OUTPUT_FILE_H_
#define AUTOBATCH_SUPPORT_OUTPUT_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace autobatch {

// Replaces `path` with `contents`, whole or not at all. A regular file (or a
// new one) is written to `<path>.tmp.<pid>` in the same directory, fsynced and
// renamed over `path`, so a reader sees either the old file or the new one;
// on any error the temporary file is removed and `path` is untouched.
// A path that exists and is not a regular file or a directory (a device such
// as /dev/full or /dev/stdout, a pipe) cannot be renamed over: it is written
// in place, every write checked.
// FailedPrecondition naming `path` if it is a symbolic link (never followed:
// it would overwrite the link's target) or a directory, or if a system call
// fails: the message names `what` (e.g. "--summary-json"), the path and the
// errno's reason (e.g. "No space left on device").
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents,
                                 std::string_view what);

// FailedPrecondition if `path` is a symbolic link, saying that outputs are
// never written through one (`what` names the option). OK if it is anything
// else or does not exist. For the checks made before a long run.
absl::Status RefuseSymlink(const std::string& path, std::string_view what);

// Standard output, checked. The CLI writes all of its stdout through
// WriteStdout and calls CloseStdout once before exiting: it reports the first
// failed write (full disk, closed pipe, closed descriptor) with its reason.
// (SIGPIPE must be ignored for a closed pipe to be an error, not a signal.)
void WriteStdout(std::string_view text);
// Flushes std::cout (CLI11's help) and stdout and closes stdout.
// Unavailable "writing standard output failed: <strerror>" if any write,
// the flush or the close failed.
absl::Status CloseStdout();

// An exclusive flock(2) on `<dir>/.autobatch.lock`, held while the object
// lives. Two runs given one output directory would mix their files; the
// second fails at once instead of waiting. The lock file is left in place
// (removing it would let a third run lock a different inode).
//
// Shared directories (several processes of one run, e.g. MPI ranks): one
// process takes the lock and removes stale files before the others write;
// the others write without locking (the kernel's lock is per open file, so
// they would otherwise fail against their own coordinator).
class OutputDirectoryLock {
 public:
  // Creates `dir` if needed. FailedPrecondition naming the directory if
  // another process holds its lock ("another autobatch run is writing
  // there"), or the errno's reason if the lock file cannot be opened (a
  // symbolic link is refused).
  static absl::StatusOr<OutputDirectoryLock> Acquire(const std::string& dir);

  OutputDirectoryLock(OutputDirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OutputDirectoryLock& operator=(OutputDirectoryLock&& other) noexcept;
  OutputDirectoryLock(const OutputDirectoryLock&) = delete;
  OutputDirectoryLock& operator=(const OutputDirectoryLock&) = delete;
  ~OutputDirectoryLock();

 private:
  explicit OutputDirectoryLock(int fd) : fd_(fd) {}

  int fd_ = -1;
};

// The lock file's name inside an output directory.
inline constexpr char kOutputLockFileName[] = ".autobatch.lock";

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_OUTPUT_FILE_H_
