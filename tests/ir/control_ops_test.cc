// Tests of the control-op table (ir/control_ops.def): its rows, the stage
// rules the verifier applies, and the spellings the printer and JSON use.
#include "ir/control_ops.h"

#include <set>
#include <string>
#include <string_view>
#include <variant>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/json.h"
#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

constexpr Stage kStages[] = {Stage::kUntyped, Stage::kTyped, Stage::kAllocated, Stage::kLowered};

TEST(ControlOpTableTest, EveryRowIsComplete) {
  std::set<std::string_view> spellings;
  ASSERT_EQ(AllControlOps().size(), 10u);
  for (size_t i = 0; i < AllControlOps().size(); ++i) {
    const ControlOpInfo& info = AllControlOps()[i];
    EXPECT_EQ(&Info(static_cast<ControlOp>(i)), &info);
    EXPECT_FALSE(info.type_name.empty());
    EXPECT_FALSE(info.operands.empty()) << info.type_name;
    EXPECT_FALSE(info.doc.empty()) << info.type_name;
    EXPECT_TRUE(spellings.insert(info.spelling).second) << "duplicate " << info.spelling;
    EXPECT_EQ(ControlOpFromSpelling(info.spelling, info.form), static_cast<ControlOp>(i));
    // The text form starts with the spelling (after "results = " for a call).
    EXPECT_THAT(std::string(info.operands), HasSubstr(std::string(info.spelling)));
    // A stage rule says what to do when it is broken.
    EXPECT_EQ(info.misplaced.empty(), info.stages == ControlStages::kAnyStage)
        << info.type_name;
  }
  EXPECT_EQ(ControlOpFromSpelling("call", ControlForm::kTerminator), std::nullopt);
  EXPECT_EQ(ControlOpFromSpelling("jump", ControlForm::kTerminator), std::nullopt);
  EXPECT_EQ(ControlOpFromSpelling("prim", ControlForm::kOp), std::nullopt);
}

// KindOf maps each struct to its row; the terminators' rows follow the
// Terminator variant's order.
TEST(ControlOpTableTest, KindOfNamesTheRowOfEachStruct) {
  EXPECT_EQ(Info(KindOf(CallOp{})).type_name, "CallOp");
  EXPECT_EQ(Info(KindOf(PopOp{})).type_name, "PopOp");
  EXPECT_EQ(Info(KindOf(TapePushOp{})).type_name, "TapePushOp");
  EXPECT_EQ(Info(KindOf(TapePopOp{})).type_name, "TapePopOp");
  for (ControlOp op : {KindOf(CallOp{}), KindOf(PopOp{}), KindOf(TapePushOp{}),
                       KindOf(TapePopOp{})}) {
    EXPECT_EQ(Info(op).form, ControlForm::kOp);
  }
  static_assert(std::variant_size_v<Op> == 5);
  const Terminator terminators[] = {Branch{}, Goto{}, Return{}, PushGoto{}, IndirectGoto{},
                                    Halt{}};
  const std::string_view names[] = {"Branch", "Goto", "Return", "PushGoto", "IndirectGoto",
                                    "Halt"};
  static_assert(std::variant_size_v<Terminator> == 6);
  for (size_t i = 0; i < std::size(terminators); ++i) {
    const ControlOp kind = KindOf(terminators[i]);
    EXPECT_EQ(Info(kind).type_name, names[i]);
    EXPECT_EQ(Info(kind).form, ControlForm::kTerminator);
    EXPECT_EQ(static_cast<size_t>(kind), 4 + i);
  }
}

// Calls and returns before lowering; PushGoto, IndirectGoto and pops after
// (ir/ir.h, "Stages"); tape ops everywhere.
TEST(ControlOpTableTest, StageRules) {
  for (Stage stage : kStages) {
    const bool lowered = stage == Stage::kLowered;
    EXPECT_EQ(AllowedAt(ControlOp::kCallOp, stage), !lowered);
    EXPECT_EQ(AllowedAt(ControlOp::kReturn, stage), !lowered);
    EXPECT_EQ(AllowedAt(ControlOp::kPopOp, stage), lowered);
    EXPECT_EQ(AllowedAt(ControlOp::kPushGoto, stage), lowered);
    EXPECT_EQ(AllowedAt(ControlOp::kIndirectGoto, stage), lowered);
    EXPECT_TRUE(AllowedAt(ControlOp::kBranch, stage));
    EXPECT_TRUE(AllowedAt(ControlOp::kGoto, stage));
    EXPECT_TRUE(AllowedAt(ControlOp::kHalt, stage));
    EXPECT_TRUE(AllowedAt(ControlOp::kTapePushOp, stage));
    EXPECT_TRUE(AllowedAt(ControlOp::kTapePopOp, stage));
  }
}

// The verifier's S1 error is built from the row: name, stage, what to do.
TEST(ControlOpTableTest, TheVerifierReportsAMisplacedOpFromTheTable) {
  Program program = testing::MakeFibonacciProgram();
  ASSERT_TRUE(VerifyProgram(program).ok()) << VerifyProgram(program);
  program.module.functions[0].blocks[0].terminator = IndirectGoto{};
  const absl::Status status = VerifyProgram(program);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("IndirectGoto in an unlowered (untyped) program"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("; " + std::string(Info(ControlOp::kIndirectGoto).misplaced)));
}

// The text form and the JSON "kind" use the table's spellings.
TEST(ControlOpTableTest, PrinterAndJsonUseTheSpellings) {
  const Program program = testing::MakeFibonacciProgram();
  const std::string text = PrintProgram(program);
  const std::string json = DumpProgramJson(program);
  for (ControlOp kind : {ControlOp::kCallOp, ControlOp::kBranch, ControlOp::kGoto,
                         ControlOp::kReturn}) {
    const std::string spelling(Info(kind).spelling);
    EXPECT_THAT(text, HasSubstr(spelling)) << spelling;
    EXPECT_THAT(json, HasSubstr("\"kind\": \"" + spelling + "\"")) << spelling;
  }
}

}  // namespace
}  // namespace autobatch
