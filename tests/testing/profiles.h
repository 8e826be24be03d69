// Comparing the profiles (vm/profile.h) of two runs of one program: a
// compiled program's against the stack VM's (tests/vm/compiled_program_test.cc,
// tests/codegen/compiled_corpus_test.cc).
#ifndef AUTOBATCH_TESTS_TESTING_PROFILES_H_
#define AUTOBATCH_TESTS_TESTING_PROFILES_H_

#include <string>

#include "vm/profile.h"

namespace autobatch::testing {

// "" when `expected` and `got` agree on every counter a compiled run shares
// with an interpreted one (all but the dense/compact split, tiles and
// times): batch, steps, each lane's block count, each block's executions,
// active lanes, lane slots and ops, each primitive's and user kernel's
// executions and active lanes. Else one line per counter that differs.
std::string CounterDifference(const Profile& expected, const Profile& got);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_TESTING_PROFILES_H_
