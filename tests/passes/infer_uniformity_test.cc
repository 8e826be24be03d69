// Tests of infer_uniformity: which values become uniform, which stay varying.
#include "passes/infer_uniformity.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace autobatch {
namespace {

TEST(InferUniformityTest, MarksOnceComputedValuesOfUniformInputs) {
  absl::StatusOr<Program> p = ParseProgram(R"(program stage=typed entry=@main

func @main(%X: f64[3] uniform, %y: f64) -> (%r: f64) {
^0 entry:
  %s: f64 = reduce_sum %X
  %s2: f64 = mul %s, %s
  %mixed: f64 = mul %s2, %y
  %c: bool = lt %s, %s2
  %k: f64 = constant {literal = f64 2}
  branch %c, ^1, ^2
^1 then:
  %t: f64 = neg %s
  %r: f64 = add %t, %mixed
  goto ^3
^2 else:
  %r: f64 = copy %mixed
  goto ^3
^3 join:
  %late: f64 = abs %s2
  %r: f64 = add %r, %late
  return
}
)");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<Program> out = InferUniformity(*p);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(VerifyProgram(*out).ok()) << VerifyProgram(*out) << PrintProgram(*out);
  auto uniform = [&](const std::string& name) {
    for (const Variable& v : out->module.variables) {
      if (v.name == name) return v.uniform;
    }
    ADD_FAILURE() << "no variable " << name;
    return false;
  };
  EXPECT_TRUE(uniform("s"));      // from X, in the entry block
  EXPECT_TRUE(uniform("s2"));     // from s: a chain
  EXPECT_TRUE(uniform("late"));   // after the join: every lane runs it once
  EXPECT_FALSE(uniform("mixed"));  // reads varying y
  EXPECT_FALSE(uniform("c"));      // a branch condition
  EXPECT_FALSE(uniform("k"));      // no inputs
  EXPECT_FALSE(uniform("t"));      // in a per-lane branch
  EXPECT_FALSE(uniform("r"));      // the entry's result
  // Without uniform inputs nothing changes.
  Program varying = *p;
  varying.module.variables[0].uniform = false;
  EXPECT_EQ(*InferUniformity(varying), varying);
}

}  // namespace
}  // namespace autobatch
