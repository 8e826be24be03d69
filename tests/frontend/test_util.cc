// Helpers shared by the frontend tests.
#include "tests/frontend/test_util.h"

#include "tests/testing/golden.h"

namespace autobatch::testing {

::testing::AssertionResult MatchesGolden(const std::string& actual, const std::string& name) {
  return MatchesGoldenFile(actual, "tests/frontend/golden", name);
}

}  // namespace autobatch::testing
