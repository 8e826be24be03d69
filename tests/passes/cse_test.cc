// Tests for cse (passes/cse.h).
#include "passes/cse.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "tests/passes/same_bits.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"
#include "vm/reference_interpreter.h"

namespace autobatch {
namespace {

using testing::Parse;

Program Cse(const Program& program) {
  return testing::Checked(EliminateCommonSubexpressions(program), "cse");
}

TEST(CseTest, TextCasesKeepTheBits) { testing::ExpectTextCasesKeepTheBits("cse"); }

// An impure kernel runs as often after the pass as before; pure ones are
// merged.
TEST(CseTest, ImpureKernelsRunAsOftenAsBefore) {
  const Program program = Parse(R"(program stage=typed entry=@main

kernel "model"(f64) -> (f64, f64) pure
kernel "record"(f64) -> (f64)

func @main(%x: f64) -> (%r: f64) {
  vars #0: %x, %r, %lp1, %g1, %lp2, %g2, %a1, %a2, %s
^0 entry:
  %lp1: f64, %g1: f64 = kernel %x {kernel = "model"}
  %lp2: f64, %g2: f64 = kernel %x {kernel = "model"}
  %a1: f64 = kernel %x {kernel = "record"}
  %a2: f64 = kernel %x {kernel = "record"}
  %s: f64 = add %a1, %a2
  %r: f64 = add %s, %g2
  return
}
)");
  const Program out = Cse(program);
  EXPECT_EQ(testing::BlockText(out, "main", 0),
            (std::vector<std::string>{
                "%lp1: f64 full, %g1: f64 full = kernel %x {kernel = \"model\"}",
                "%lp2: f64 full = copy %lp1", "%g2: f64 full = copy %g1",
                "%a1: f64 full = kernel %x {kernel = \"record\"}",
                "%a2: f64 full = kernel %x {kernel = \"record\"}", "%s: f64 full = add %a1, %a2",
                "%r: f64 full = add %s, %g2", "return"}));
  for (const Program* p : {&program, &out}) {
    int64_t recorded = 0;
    const KernelRegistry kernels = testing::TextCaseKernels(&recorded);
    absl::StatusOr<ReferenceInterpreter> run = ReferenceInterpreter::Create(*p, &kernels);
    ASSERT_TRUE(run.ok()) << run.status();
    for (std::vector<Tensor>& lane : testing::SpecialInputs(*p, 10)) {
      ASSERT_TRUE(run->Run(lane).ok());
    }
    EXPECT_EQ(recorded, 20);
  }
}

// A loop that writes an input of an expression at its end: the expression
// computed at the loop's head is not available there on the back edge.
TEST(CseTest, AWriteInALoopEndsAvailabilityAtItsHead) {
  const Program program = Parse(R"(program stage=typed entry=@main

func @main(%x: f64) -> (%r: f64) {
  vars #0: %x, %r, %e0, %e1, %e2, %i, %one, %three, %more
^0 entry:
  %e0: f64 = exp %x
  %i: i64 = constant {literal = i64 0}
  %one: i64 = constant {literal = i64 1}
  %three: i64 = constant {literal = i64 3}
  %r: f64 = copy %x
  goto ^1
^1 loop:
  %e1: f64 = exp %x
  %r: f64 = add %r, %e1
  %x: f64 = log %r
  %e2: f64 = exp %x
  %i: i64 = add %i, %one
  %more: bool = lt %i, %three
  branch %more, ^1, ^2
^2 exit:
  %r: f64 = add %r, %e2
  return
}
)");
  const Program out = Cse(program);
  EXPECT_EQ(out, program);  // e1 differs from e0 after the first iteration
  EXPECT_TRUE(testing::SameBits(program, out));
}

// Without the write, the value computed before the loop is available in it
// on every path.
TEST(CseTest, ALoopInvariantExpressionIsReused) {
  const Program program = Parse(R"(program stage=typed entry=@main

func @main(%x: f64) -> (%r: f64) {
  vars #0: %x, %r, %e0, %e1, %i, %one, %three, %more
^0 entry:
  %e0: f64 = exp %x
  %i: i64 = constant {literal = i64 0}
  %one: i64 = constant {literal = i64 1}
  %three: i64 = constant {literal = i64 3}
  %r: f64 = copy %x
  goto ^1
^1 loop:
  %e1: f64 = exp %x
  %r: f64 = add %r, %e1
  %i: i64 = add %i, %one
  %more: bool = lt %i, %three
  branch %more, ^1, ^2
^2 exit:
  return
}
)");
  const Program out = Cse(program);
  EXPECT_EQ(testing::BlockText(out, "main", 1)[0], "%e1: f64 full = copy %e0");
  EXPECT_TRUE(testing::SameBits(program, out));
}

TEST(CseTest, RefusesAnUntypedProgram) {
  absl::StatusOr<Program> out = EliminateCommonSubexpressions(testing::MakeCollatzProgram());
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              ::testing::StartsWith("cse needs a program at stage typed"));
}

}  // namespace
}  // namespace autobatch
