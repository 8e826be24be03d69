// Tests for fuse_glm (passes/fuse_glm.h).
#include "passes/fuse_glm.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ir/parser.h"
#include "tests/passes/same_bits.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::Parse;

Program Fuse(const Program& program) { return testing::Checked(FuseGlm(program), "fuse_glm"); }

int Count(const Program& program, Primitive prim) {
  return testing::CountOps(program, [prim](const Op& op) {
    const PrimOp* p = std::get_if<PrimOp>(&op);
    return p != nullptr && p->prim == prim;
  });
}

// The log density's shape after differentiate: the value in the forward
// sweep, other ops, then the gradient; FIRST and SECOND order the two.
constexpr char kPair[] = R"(program stage=typed entry=@main

func @main(%X: f64[6,3], %y: i64[6], %al: f64, %be: f64[3]) -> (%lp: f64, %g: f64[4], %s: f64) {
  vars #0: %X, %y, %al, %be, %lp, %g, %s
  vars #7: %a, %t
^0 entry:
  FIRST
  %t: f64 = mul %al, %al
  SECOND
  %s: f64 = add %a, %t
  %lp: f64 = neg %a
  return
}
)";

constexpr char kValue[] = "%a: f64 = bernoulli_logit_glm %X, %y, %al, %be";
constexpr char kGrad[] = "%g: f64[4] = bernoulli_logit_glm_grad %X, %y, %al, %be";

TEST(FuseGlmTest, TheValueAndItsGradientBecomeOneOp) {
  for (bool value_first : {true, false}) {
    SCOPED_TRACE(value_first ? "value first" : "gradient first");
    const Program program =
        Parse(absl::StrReplaceAll(kPair, {{"FIRST", value_first ? kValue : kGrad},
                                          {"SECOND", value_first ? kGrad : kValue}}));
    const Program out = Fuse(program);
    EXPECT_EQ(Count(out, Primitive::kBernoulliLogitGlmValueGrad), 1);
    EXPECT_EQ(Count(out, Primitive::kBernoulliLogitGlm), 0);
    EXPECT_EQ(Count(out, Primitive::kBernoulliLogitGlmGrad), 0);
    // The fused op stands where the first of the two stood.
    const std::vector<std::string> text = testing::BlockText(out, "main", 0);
    ASSERT_FALSE(text.empty());
    EXPECT_THAT(text[0], ::testing::HasSubstr("bernoulli_logit_glm_value_grad %X, %y, %al, %be"));
    EXPECT_TRUE(testing::SameBits(program, out, nullptr, 64));
  }
}

// An input written between the two ops, or different inputs: nothing fuses.
TEST(FuseGlmTest, AWrittenOrDifferentInputKeepsTheOpsApart) {
  const std::string written = absl::StrReplaceAll(
      kPair, {{"FIRST", absl::StrCat(kValue, "\n  %al: f64 = neg %al")}, {"SECOND", kGrad}});
  const Program program = Parse(written);
  EXPECT_EQ(Fuse(program), program);
  const Program other = Parse(absl::StrReplaceAll(
      kPair,
      {{"FIRST", kValue}, {"SECOND", "%g: f64[4] = bernoulli_logit_glm_grad %X, %y, %t, %be"}}));
  EXPECT_EQ(Fuse(other), other);
}

// The forward sweep's block jumps to the reverse sweep's, its only way in:
// the pair fuses across the two; a second way into the later block keeps
// them apart.
TEST(FuseGlmTest, AStraightLineRunOfBlocksFuses) {
  constexpr char kTwoBlocks[] = R"(program stage=typed entry=@main

func @main(%X: f64[6,3], %y: i64[6], %al: f64, %be: f64[3], %c: bool) -> (%lp: f64, %g: f64[4]) {
  vars #0: %X, %y, %al, %be, %c, %lp, %g
  vars #7: %a
^0 entry:
  %a: f64 = bernoulli_logit_glm %X, %y, %al, %be
  %lp: f64 = neg %a
  ENTRY_END
^1 reverse:
  %g: f64[4] = bernoulli_logit_glm_grad %X, %y, %al, %be
  returnOTHER
}
)";
  const Program program =
      Parse(absl::StrReplaceAll(kTwoBlocks, {{"ENTRY_END", "goto ^1"}, {"OTHER", ""}}));
  const Program out = Fuse(program);
  EXPECT_EQ(Count(out, Primitive::kBernoulliLogitGlmValueGrad), 1);
  EXPECT_EQ(Count(out, Primitive::kBernoulliLogitGlmGrad), 0);
  EXPECT_TRUE(testing::SameBits(program, out, nullptr, 64));
  const Program joined = Parse(absl::StrReplaceAll(
      kTwoBlocks, {{"ENTRY_END", "branch %c, ^1, ^2"}, {"OTHER", "\n^2 other:\n  goto ^1"}}));
  EXPECT_EQ(Fuse(joined), joined);
}

}  // namespace
}  // namespace autobatch
