// Helpers shared by the pass tests.
//
// Finding variables and blocks by name, and running the passes before the
// one under test.
#ifndef AUTOBATCH_TESTS_PASSES_TEST_UTIL_H_
#define AUTOBATCH_TESTS_PASSES_TEST_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "support/deadline.h"

namespace autobatch::testing {

// The variable `name` of function `function`; aborts the test binary if
// missing (a broken test, not a failing one).
VarId FindVar(const Program& program, const std::string& function, const std::string& name);
StorageClass StorageOf(const Program& program, const std::string& function,
                       const std::string& name);
// Index of the block labelled `label` in `function`, or -1.
int FindBlock(const Program& program, const std::string& function, const std::string& label);
const Function& FindFunction(const Program& program, const std::string& name);

// The program after infer_types (with i64 inputs unless given), after
// allocate_variables, after lower_calls; each aborts on error.
Program Typed(Program program, std::vector<TensorType> inputs);
Program Allocated(Program program, std::vector<TensorType> inputs);
Program Lowered(Program program, std::vector<TensorType> inputs);
// The program of IR text `text` (ir/parser.h); a parse error fails the
// test (EXPECT) and gives an empty program.
Program Parse(const std::string& text);
// The result of running `pass` (named for messages); aborts if it failed or
// does not verify.
Program Checked(absl::StatusOr<Program> program, const char* pass);
// The number of ops of the whole program for which `counted` holds.
int CountOps(const Program& program, const std::function<bool(const Op&)>& counted);

// A deadline that passed a second ago (PassContext::deadline): a pass
// given it stops at its first reading of the clock.
Deadline PassedDeadline();

// The text of every op and terminator of one block, one per line, as
// PrintOp / PrintTerminator show them, with storage classes.
std::vector<std::string> BlockText(const Program& program, const std::string& function,
                                   int block);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_PASSES_TEST_UTIL_H_
