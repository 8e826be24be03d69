// Golden-file comparison shared by the test suites.
#ifndef AUTOBATCH_TESTS_TESTING_GOLDEN_H_
#define AUTOBATCH_TESTS_TESTING_GOLDEN_H_

#include <string>

#include "gtest/gtest.h"

namespace autobatch::testing {

// Compares `actual` with <source dir>/<folder>/<name>.txt. With the
// environment variable AUTOBATCH_UPDATE_GOLDENS=1 the file is (re)written
// instead and the comparison succeeds.
::testing::AssertionResult MatchesGoldenFile(const std::string& actual,
                                             const std::string& folder,
                                             const std::string& name);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_TESTING_GOLDEN_H_
