// Golden-file comparison shared by the test suites.
#include "tests/testing/golden.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace autobatch::testing {

::testing::AssertionResult MatchesGoldenFile(const std::string& actual,
                                             const std::string& folder,
                                             const std::string& name) {
  const std::string path =
      std::string(AUTOBATCH_SOURCE_DIR "/") + folder + "/" + name + ".txt";
  const char* update = std::getenv("AUTOBATCH_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary);
    out << actual;
    if (!out) return ::testing::AssertionFailure() << "cannot write " << path;
    return ::testing::AssertionSuccess();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return ::testing::AssertionFailure()
           << "missing golden " << path
           << " (run with AUTOBATCH_UPDATE_GOLDENS=1 to create it); actual:\n"
           << actual;
  }
  std::stringstream expected;
  expected << in.rdbuf();
  if (expected.str() == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "differs from golden " << path
         << " (if the change is intended, rerun with AUTOBATCH_UPDATE_GOLDENS=1 and "
            "review the diff)\n--- expected ---\n"
         << expected.str() << "--- actual ---\n"
         << actual;
}

}  // namespace autobatch::testing
