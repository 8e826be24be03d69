// Golden-file comparison for pass tests (AUTOBATCH_UPDATE_GOLDENS=1 rewrites).
#ifndef AUTOBATCH_TESTS_PASSES_GOLDEN_H_
#define AUTOBATCH_TESTS_PASSES_GOLDEN_H_

#include <string>

#include <gtest/gtest.h>

namespace autobatch::testing {

// Compares `actual` with tests/passes/golden/<name>.txt. With the
// environment variable AUTOBATCH_UPDATE_GOLDENS=1 the file is (re)written
// instead and the comparison succeeds.
::testing::AssertionResult MatchesGolden(const std::string& actual, const std::string& name);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_PASSES_GOLDEN_H_
