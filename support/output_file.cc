// Whole-or-nothing output files, checked stdout and the output-directory lock.
#include "support/output_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace autobatch {
namespace {

// The status of a failed system call: FailedPrecondition (as every check of
// an output path) with the errno's reason, naming the output, the path and
// what to do.
absl::Status ErrnoError(int error, std::string_view what, const std::string& path,
                        const std::string& step) {
  const char* advice = error == ENOSPC || error == EDQUOT || error == EFBIG
                           ? "; free some space or give a path on another disk"
                           : "; check that its directory exists and is writable";
  return absl::FailedPreconditionError(
      absl::StrCat(std::string(what), ": cannot write '", path, "' (", step,
                   "): ", std::strerror(error), advice));
}

// Writes all of `contents` to `fd`, retrying short writes and EINTR.
// Returns 0 or the errno of the failing write.
int WriteAll(int fd, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t n = write(fd, contents.data(), contents.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// A device or pipe: written in place (it cannot be renamed over), checked.
absl::Status WriteInPlace(const std::string& path, std::string_view contents,
                          std::string_view what) {
  const int fd = open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, what, path, "opening it");
  int error = WriteAll(fd, contents);
  if (close(fd) != 0 && error == 0) error = errno;
  if (error != 0) return ErrnoError(error, what, path, "writing it in place");
  return absl::OkStatus();
}

// The first failed write to stdout's errno (0: none) and whether anything
// was written (a closed descriptor with nothing to write is no error).
int stdout_errno = 0;
bool stdout_written = false;

}  // namespace

absl::Status RefuseSymlink(const std::string& path, std::string_view what) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        std::string(what), ": '", path,
        "' is a symbolic link; outputs are never written through one (its target would be "
        "overwritten): remove the link or give the target's path"));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents,
                                 std::string_view what) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return RefuseSymlink(path, what);
    if (S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          std::string(what), ": '", path, "' is a directory; give the path of a file to write"));
    }
    if (!S_ISREG(st.st_mode)) return WriteInPlace(path, contents, what);
  } else if (errno != ENOENT) {
    return ErrnoError(errno, what, path, "examining it");
  }
  // Same directory, so rename(2) replaces `path` atomically; the pid keeps
  // concurrent writers of one path (different processes) apart.
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return ErrnoError(errno, what, path, absl::StrCat("creating '", temp, "'"));
  int error = WriteAll(fd, contents);
  std::string step = absl::StrCat("writing '", temp, "'");
  // Without fsync a crash after the rename can leave an empty file in place
  // of both the old and the new contents.
  if (error == 0 && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    step = absl::StrCat("renaming '", temp, "' over it");
  }
  if (error != 0) {
    unlink(temp.c_str());
    return ErrnoError(error, what, path, step);
  }
  return absl::OkStatus();
}

void WriteStdout(std::string_view text) {
  if (text.empty()) return;
  stdout_written = true;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() && stdout_errno == 0) {
    stdout_errno = errno != 0 ? errno : EIO;
  }
}

absl::Status CloseStdout() {
  // std::cout (CLI11's help) is synced with stdio, so its text is in stdout's
  // buffer. errno is cleared so that a reason comes from these calls only.
  errno = 0;
  std::cout.flush();
  int error = stdout_errno;
  if (std::fflush(stdout) != 0 && error == 0) error = errno != 0 ? errno : EIO;
  if ((!std::cout || std::ferror(stdout)) && error == 0) error = errno != 0 ? errno : EIO;
  // close(2) reports what a network or quota file system delays until then;
  // a descriptor closed by the caller (`>&-`) is an error only if we wrote.
  errno = 0;
  if (std::fclose(stdout) != 0 && error == 0 && (errno != EBADF || stdout_written)) {
    error = errno != 0 ? errno : EIO;
  }
  if (error != 0) {
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("writing standard output failed: ", std::strerror(error),
                                     "; the output is incomplete"));
  }
  return absl::OkStatus();
}

absl::StatusOr<OutputDirectoryLock> OutputDirectoryLock::Acquire(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", kOutputLockFileName);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    return ErrnoError(errno, "--output-dir", path, "opening the directory's lock file");
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--output-dir: '", dir, "' is in use: another autobatch run holds its lock ('", path,
          "'); wait for that run to finish or give another output directory"));
    }
    return ErrnoError(error, "--output-dir", path, "locking it");
  }
  return OutputDirectoryLock(fd);
}

OutputDirectoryLock& OutputDirectoryLock::operator=(OutputDirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

OutputDirectoryLock::~OutputDirectoryLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace autobatch
