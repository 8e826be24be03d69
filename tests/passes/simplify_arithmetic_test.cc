// Tests for simplify_arithmetic (passes/simplify_arithmetic.h).
#include "passes/simplify_arithmetic.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ir/parser.h"
#include "tests/passes/same_bits.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using testing::Parse;

Program Simplify(const Program& program) {
  return testing::Checked(SimplifyArithmetic(program), "simplify_arithmetic");
}

int CountCopies(const Program& program) {
  return testing::CountOps(program, [](const Op& op) {
    const PrimOp* p = std::get_if<PrimOp>(&op);
    return p != nullptr && p->prim == Primitive::kCopy;
  });
}

TEST(SimplifyArithmeticTest, TextCasesKeepTheBits) {
  testing::ExpectTextCasesKeepTheBits("simplify_arithmetic");
}

// Every identity of the header on every numeric dtype, with x = -input (a
// computed value: any value, its NaN canonical), against every special
// input; and the near misses that are not identities for floats.
TEST(SimplifyArithmeticTest, EveryIdentityHoldsOnEveryDtype) {
  constexpr char kTemplate[] = R"(program stage=typed entry=@main

func @main(%x: T) -> (%r1: T, %r2: T, %r3: T, %r4: T, %r5: T, %r6: T, %r7: T, %r8: T, %r9: T, %r10: T, %r11: T, %n1: T, %n2: T, %n3: T) {
  vars #0: %x, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %n1, %n2, %n3
  vars #15: %a, %one, %z, %nz, %b, %c
^0 entry:
  %a: T = neg %x
  %one: T = fill_like %x {literal = f64 1}
  %z: T = fill_like %x {literal = f64 0}
  %nz: T = fill_like %x {literal = f64 -0}
  %r1: T = mul %a, %one
  %r2: T = mul %one, %a
  %r3: T = div %a, %one
  %r4: T = sub %a, %z
  %r5: T = add %a, %nz
  %r6: T = add %nz, %a
  %b: T = neg %a
  %r7: T = neg %b
  %c: T = abs %a
  %r8: T = abs %c
  %r9: T = min %a, %a
  %r10: T = max %a, %a
  %r11: T = cast %a {dtype = T}
  %n1: T = add %a, %z
  %n2: T = sub %a, %nz
  %n3: T = mul %a, %z
  return
}
)";
  for (const char* dtype : {"f64", "f32", "i64", "i32"}) {
    SCOPED_TRACE(dtype);
    const Program program = Parse(absl::StrReplaceAll(kTemplate, {{"T", dtype}}));
    const Program out = Simplify(program);
    const bool is_float = dtype[0] == 'f';
    // Integers have one zero: x + 0 and x - 0 are identities too.
    EXPECT_EQ(CountCopies(out), is_float ? 11 : 13);
    EXPECT_TRUE(testing::SameBits(program, out));
  }
}

// The check behind these tests fails on each near miss the header rules
// out, so passing it means something.
TEST(SimplifyArithmeticTest, TheCheckCatchesIdentitiesThatAreNotExact) {
  const std::string header = R"(program stage=typed entry=@main

func @main(%x: f64) -> (%r: f64) {
  vars #0: %x, %r, %a, %k
^0 entry:
  %a: f64 = neg %x
)";
  const std::string wrong_rewrites[][2] = {
      // x + (+0) -> x: -0 + +0 = +0.
      {"  %k: f64 = constant {literal = f64 0}\n  %r: f64 = add %a, %k\n",
       "  %k: f64 = constant {literal = f64 0}\n  %r: f64 = copy %a\n"},
      // x * 0 -> 0: inf * 0 = NaN.
      {"  %k: f64 = constant {literal = f64 0}\n  %r: f64 = mul %a, %k\n",
       "  %k: f64 = constant {literal = f64 0}\n  %r: f64 = copy %k\n"},
      // x * 1 -> x for a parameter: a NaN payload would survive.
      {"  %k: f64 = constant {literal = f64 1}\n  %r: f64 = mul %x, %k\n",
       "  %k: f64 = constant {literal = f64 1}\n  %r: f64 = copy %x\n"},
  };
  for (const auto& [right, wrong] : wrong_rewrites) {
    SCOPED_TRACE(right);
    const Program program = Parse(header + right + "  return\n}\n");
    EXPECT_FALSE(testing::SameBits(program, Parse(header + wrong + "  return\n}\n")));
    // ... and the pass leaves each alone.
    EXPECT_EQ(Simplify(program), program);
  }
}

TEST(SimplifyArithmeticTest, AScalarTimesOnesBroadcasts) {
  const Program program = Parse(R"(program stage=typed entry=@main

func @main(%x: f64) -> (%r: f64[3]) {
  vars #0: %x, %r, %a, %ones
^0 entry:
  %a: f64 = exp %x
  %ones: f64[3] = constant {literal = f64[3] [1, 1, 1]}
  %r: f64[3] = mul %ones, %a
  return
}
)");
  const Program out = Simplify(program);
  EXPECT_EQ(testing::BlockText(out, "main", 0)[2], "%r: f64[3] full = broadcast %a {ints = [3]}");
  EXPECT_TRUE(testing::SameBits(program, out));
}

TEST(SimplifyArithmeticTest, RefusesAnUntypedProgram) {
  absl::StatusOr<Program> simplified = SimplifyArithmetic(testing::MakeCollatzProgram());
  ASSERT_FALSE(simplified.ok());
  EXPECT_THAT(std::string(simplified.status().message()),
              ::testing::StartsWith("simplify_arithmetic needs a program at stage typed"));
}

}  // namespace
}  // namespace autobatch
