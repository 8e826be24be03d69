// Tests for compact_variables (passes/compact_variables.h).
#include "passes/compact_variables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

std::vector<std::string> Names(const Program& program) {
  std::vector<std::string> names;
  for (const Variable& v : program.module.variables) names.push_back(v.name);
  return names;
}

TEST(CompactVariablesTest, DropsUnusedVariablesAndRenumbersGeneratedNames) {
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId unused = fn.Var("t0");
  VarId t7 = fn.Var("t7");
  VarId t1 = fn.Var("t1");
  VarId x = fn.Param("x");
  VarId l4 = fn.Var("l4");
  VarId named = fn.Var("t1_user");
  VarId r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kNeg, {x}, t7);
  fn.Prim(entry, 3, Primitive::kAbs, {t7}, t1);
  fn.Prim(entry, 4, Primitive::kCopy, {t1}, l4);
  fn.Prim(entry, 5, Primitive::kCopy, {l4}, named);
  fn.Prim(entry, 6, Primitive::kCopy, {named}, r);
  fn.Return(entry, 7);
  (void)unused;
  const Program compact = testing::Checked(CompactVariables(program), "compact_variables");
  EXPECT_EQ(Names(compact), (std::vector<std::string>{"x", "t0", "t1", "l0", "t1_user", "r"}));
  EXPECT_EQ(testing::BlockText(compact, "f", 0),
            (std::vector<std::string>{"%t0: ? full = neg %x", "%t1: ? full = abs %t0", "%l0: ? full = copy %t1",
                                      "%t1_user: ? full = copy %l0", "%r: ? full = copy %t1_user",
                                      "return"}));
  EXPECT_EQ(testing::Checked(CompactVariables(compact), "compact_variables"), compact);
}

TEST(CompactVariablesTest, GeneratedNamesSkipTheFunctionsOtherNames) {
  // A parameter the user called t0 keeps its name; the temporary becomes t1.
  Program program;
  testing::FunctionBuilder fn(program, "f", "f.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("t0");
  VarId t = fn.Var("t5");
  VarId r = fn.Result("r");
  BlockId entry = fn.Block("entry");
  fn.Prim(entry, 2, Primitive::kNeg, {x}, t);
  fn.Prim(entry, 3, Primitive::kCopy, {t}, r);
  fn.Return(entry, 4);
  const Program compact = testing::Checked(CompactVariables(program), "compact_variables");
  EXPECT_EQ(Names(compact), (std::vector<std::string>{"t0", "t1", "r"}));
}

}  // namespace
}  // namespace autobatch
