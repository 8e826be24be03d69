// Tests of uniform variables in the IR: where they may be computed
// (ir/uniform.h), the verifier's U rules with their messages, and the text
// and JSON forms' round trips.
#include "ir/uniform.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace autobatch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Program Parse(const std::string& text) {
  absl::StatusOr<Program> p = ParseProgram(text);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : Program();
}

// A uniform input X, a value computed from it once (s), and a loop.
constexpr char kValid[] = R"(program stage=typed entry=@main

func @main(%X: f64[3] uniform, %y: f64) -> (%r: f64) {
^0 entry:
  %s: f64 uniform = reduce_sum %X
  %acc: f64 = mul %s, %y
  goto ^1
^1 head:
  %c: bool = lt %acc, %y
  branch %c, ^2, ^3
^2 body:
  %acc: f64 = add %acc, %s
  goto ^1
^3 exit:
  %r: f64 = copy %acc
  return
}
)";

TEST(UniformTest, BlocksRunOncePerLaneExcludeLoopsAndBranches) {
  Program p = Parse(kValid);
  // ^1 and ^2 are the loop; ^0 and ^3 every lane runs once.
  EXPECT_THAT(BlocksRunOncePerLane(p.entry_function()), ElementsAre(true, false, false, true));
  Program branchy = Parse(R"(program stage=untyped entry=@f

func @f(%x: ?) -> (%r: ?) {
^0 entry:
  %c: ? = gt %x, %x
  branch %c, ^1, ^2
^1 then:
  %r: ? = copy %x
  goto ^3
^2 else:
  %r: ? = neg %x
  goto ^3
^3 join:
  return
}
)");
  EXPECT_THAT(BlocksRunOncePerLane(branchy.entry_function()),
              ElementsAre(true, false, false, true));
}

TEST(UniformTest, ValidProgramVerifies) {
  Program p = Parse(kValid);
  EXPECT_TRUE(VerifyProgram(p).ok()) << VerifyProgram(p);
  EXPECT_TRUE(p.module.var(p.entry_function().params[0]).uniform);
  EXPECT_FALSE(p.module.var(p.entry_function().params[1]).uniform);
}

TEST(UniformTest, TextAndJsonRoundTrip) {
  Program p = Parse(kValid);
  const std::string text = PrintProgram(p);
  EXPECT_THAT(text, HasSubstr("%X: f64[3] uniform"));
  EXPECT_THAT(text, HasSubstr("%s: f64 uniform = reduce_sum %X"));
  EXPECT_EQ(Parse(text), p);
  const nlohmann::json json = ProgramToJson(p);
  EXPECT_EQ(json["variables"][0]["uniform"], true);
  EXPECT_FALSE(json["variables"][1].contains("uniform"));
  absl::StatusOr<Program> back = ProgramFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, p);
  nlohmann::json bad = json;
  bad["variables"][0]["uniform"] = "yes";
  EXPECT_FALSE(ProgramFromJson(bad).ok());
}

std::string Errors(const std::string& text) {
  return std::string(VerifyProgram(Parse(text)).message());
}

TEST(UniformTest, WriteInALoopIsU3) {
  EXPECT_THAT(Errors(R"(program stage=typed entry=@main

func @main(%X: f64[3] uniform, %y: f64) -> (%r: f64) {
^0 entry:
  goto ^1
^1 head:
  %s: f64 uniform = reduce_sum %X
  %c: bool = lt %s, %y
  branch %c, ^1, ^2
^2 exit:
  %r: f64 = copy %s
  return
}
)"),
              HasSubstr("function 'main', block ^1 (head), op 0: writes uniform variable "
                        "'s' (#2) in a block that a lane may run several times or not at all"));
}

TEST(UniformTest, VaryingInputIsU3) {
  EXPECT_THAT(Errors(R"(program stage=typed entry=@main

func @main(%X: f64 uniform, %y: f64) -> (%r: f64) {
^0 entry:
  %s: f64 uniform = add %X, %y
  %r: f64 = copy %s
  return
}
)"),
              HasSubstr("writes uniform variable 's' (#2) from input 1 'y' (#1), which is "
                        "varying"));
}

TEST(UniformTest, WritingAnInputIsU2AndTwoWritesAreU3) {
  const std::string errors = Errors(R"(program stage=typed entry=@main

func @main(%X: f64 uniform, %y: f64) -> (%r: f64) {
^0 entry:
  %X: f64 uniform = neg %X
  %s: f64 uniform = neg %X
  %s: f64 uniform = abs %X
  %r: f64 = add %s, %y
  return
}
)");
  EXPECT_THAT(errors, HasSubstr("writes uniform input 'X' (#0)"));
  EXPECT_THAT(errors, HasSubstr("uniform variable 's' (#2) is written by 2 ops"));
}

TEST(UniformTest, CallsResultsAndBranchesAreU4) {
  const std::string errors = Errors(R"(program stage=typed entry=@main

func @main(%X: bool uniform) -> (%r: bool) {
^0 entry:
  %t: bool = call @g(%X)
  %r: bool uniform = copy %X
  branch %X, ^1, ^1
^1 exit:
  return
}

func @g(%a: bool) -> (%b: bool) {
^0 entry:
  %b: bool = not %a
  return
}
)");
  EXPECT_THAT(errors, HasSubstr("argument 0 'X' (#0) (a uniform input) is passed to a call"));
  EXPECT_THAT(errors, HasSubstr("result 0 'r' (#2) is uniform, but the program's outputs are "
                                "per lane (U4)"));
  EXPECT_THAT(errors, HasSubstr("branches on uniform variable 'X' (#0)"));
}

TEST(UniformTest, UniformOutsideTheEntryIsU1) {
  EXPECT_THAT(Errors(R"(program stage=typed entry=@main

func @main(%y: f64) -> (%r: f64) {
^0 entry:
  %r: f64 = call @g(%y)
  return
}

func @g(%a: f64 uniform) -> (%b: f64) {
^0 entry:
  %b: f64 = neg %a
  return
}
)"),
              HasSubstr("is uniform but belongs to 'g', not the entry 'main' (U1)"));
}

}  // namespace
}  // namespace autobatch
