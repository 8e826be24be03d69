// WriteFileAtomically and OutputDirectoryLock: files replaced whole or not at
// all, symbolic links refused, write errors reported with their reason, and a
// directory held by one lock at a time.
#include "support/output_file.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/files.h"

namespace autobatch {
namespace {

using testing::ReadFile;
using testing::FreshTempDir;

using ::testing::HasSubstr;

// The names in `dir`, sorted.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WriteFileAtomicallyTest, WritesAndReplacesLeavingNoTemporaryFile) {
  const std::string dir = FreshTempDir("output_file_replace");
  const std::string path = dir + "/out.json";
  ASSERT_TRUE(WriteFileAtomically(path, "first, longer contents\n", "--x").ok());
  EXPECT_EQ(ReadFile(path), "first, longer contents\n");
  ASSERT_TRUE(WriteFileAtomically(path, "second\n", "--x").ok());
  EXPECT_EQ(ReadFile(path), "second\n");
  EXPECT_EQ(Names(dir), std::vector<std::string>{"out.json"});
}

// A link is never followed: its target would be overwritten (it used to be).
TEST(WriteFileAtomicallyTest, RefusesASymbolicLinkAndLeavesItsTargetUnchanged) {
  const std::string dir = FreshTempDir("output_file_symlink");
  { std::ofstream(dir + "/precious") << "keep me"; }
  std::filesystem::create_symlink(dir + "/precious", dir + "/link");
  const absl::Status s = WriteFileAtomically(dir + "/link", "overwritten", "--summary-json");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("--summary-json: '" + dir + "/link' is a symbolic link"));
  EXPECT_EQ(ReadFile(dir + "/precious"), "keep me");
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link"));
  EXPECT_FALSE(RefuseSymlink(dir + "/link", "--x").ok());
  EXPECT_TRUE(RefuseSymlink(dir + "/precious", "--x").ok());
  EXPECT_TRUE(RefuseSymlink(dir + "/absent", "--x").ok());
}

// A device is written in place, every write checked: a full disk is an
// error with its reason (it used to be lost in an unchecked stream).
TEST(WriteFileAtomicallyTest, AFullDeviceIsAnErrorWithItsReason) {
  const absl::Status s = WriteFileAtomically("/dev/full", std::string(100000, 'x'), "--out");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("--out: cannot write '/dev/full'"));
  EXPECT_THAT(s.message(), HasSubstr("No space left on device"));
}

TEST(WriteFileAtomicallyTest, AMissingDirectoryLeavesNothing) {
  const absl::Status s = WriteFileAtomically("/nonexistent-dir/out.csv", "x", "Stan CSV file");
  EXPECT_THAT(s.message(), HasSubstr("cannot write '/nonexistent-dir/out.csv'"));
  EXPECT_THAT(s.message(), HasSubstr("No such file or directory"));
  const std::string dir = FreshTempDir("output_file_is_dir");
  std::filesystem::create_directories(dir + "/sub");
  EXPECT_THAT(WriteFileAtomically(dir + "/sub", "x", "--o").message(),
              HasSubstr("is a directory"));
}

// flock locks are per open file: a second Acquire fails even in the same
// process, at once, naming the directory; after the first is released the
// directory can be taken again.
TEST(OutputDirectoryLockTest, ASecondHolderFailsAtOnce) {
  const std::string dir = FreshTempDir("output_file_lock");
  {
    absl::StatusOr<OutputDirectoryLock> first = OutputDirectoryLock::Acquire(dir);
    ASSERT_TRUE(first.ok()) << first.status();
    absl::StatusOr<OutputDirectoryLock> second = OutputDirectoryLock::Acquire(dir);
    ASSERT_FALSE(second.ok());
    EXPECT_THAT(second.status().message(),
                HasSubstr("'" + dir + "' is in use: another autobatch run holds its lock"));
    // Moving the lock keeps it held.
    OutputDirectoryLock moved = std::move(*first);
    EXPECT_FALSE(OutputDirectoryLock::Acquire(dir).ok());
  }
  EXPECT_TRUE(OutputDirectoryLock::Acquire(dir).ok());
  // A lock file that is a symbolic link is not followed.
  const std::string other = FreshTempDir("output_file_lock_link");
  std::filesystem::create_symlink(dir + "/" + kOutputLockFileName,
                                  other + "/" + kOutputLockFileName);
  EXPECT_FALSE(OutputDirectoryLock::Acquire(other).ok());
  EXPECT_THAT(Names(dir), ::testing::Contains(kOutputLockFileName));
}

}  // namespace
}  // namespace autobatch
