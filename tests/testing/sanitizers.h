// Whether the programs under test run under a sanitizer. In the ASan build
// the test code itself is not instrumented (CMakeLists.txt), so it cannot
// ask __SANITIZE_ADDRESS__: every sanitizer build defines
// AUTOBATCH_SANITIZED_BUILD for the test code (CMakeLists.txt).
#ifndef AUTOBATCH_TESTS_TESTING_SANITIZERS_H_
#define AUTOBATCH_TESTS_TESTING_SANITIZERS_H_

namespace autobatch::testing {

#if defined(AUTOBATCH_SANITIZED_BUILD) || defined(__SANITIZE_ADDRESS__) || \
    defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_TESTING_SANITIZERS_H_
