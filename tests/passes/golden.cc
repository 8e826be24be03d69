// Golden-file comparison for pass tests.
#include "tests/passes/golden.h"

#include "tests/testing/golden.h"

namespace autobatch::testing {

::testing::AssertionResult MatchesGolden(const std::string& actual, const std::string& name) {
  return MatchesGoldenFile(actual, "tests/passes/golden", name);
}

}  // namespace autobatch::testing
