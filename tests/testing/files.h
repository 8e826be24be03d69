// Files in tests: reading one whole, and a fresh scratch directory.
#ifndef AUTOBATCH_TESTS_TESTING_FILES_H_
#define AUTOBATCH_TESTS_TESTING_FILES_H_

#include <string>

namespace autobatch::testing {

// The contents of `path`; empty if it cannot be read.
std::string ReadFile(const std::string& path);

// ::testing::TempDir() + name, emptied (removed and created again).
std::string FreshTempDir(const std::string& name);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_TESTING_FILES_H_
