// Tapes through the passes (ir/ir.h, "Tapes"): infer_types types them from
// their pushes, allocate_variables gives them (and only them) class tape,
// inline_calls gives each inlined copy fresh tapes, lower_calls pops no tape,
// and no pass of either pipeline drops, adds or reorders a tape op. The
// text-in, text-out cases are tests/passes/text/*_tape.ir.
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/testing/tape_programs.h"
#include "ir/verifier.h"
#include "passes/allocate_variables.h"
#include "passes/infer_types.h"
#include "passes/inline_calls.h"
#include "passes/pipeline.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const TensorType kI64 = Scalar(DType::kI64);
const TensorType kF64 = Scalar(DType::kF64);

Program Parse(std::string_view text) {
  absl::StatusOr<Program> program = ParseProgram(text);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : Program{};
}

// Per function, the sequence of tape ops in block order, as text
// ("push t" / "pop t"), tapes by name.
std::map<std::string, std::vector<std::string>> TapeOps(const Program& program) {
  std::map<std::string, std::vector<std::string>> out;
  for (const Function& fn : program.module.functions) {
    std::vector<std::string>& ops = out[fn.name];
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) {
        if (const auto* push = std::get_if<TapePushOp>(&op)) {
          ops.push_back("push " + program.module.var(push->tape).name);
        } else if (const auto* pop = std::get_if<TapePopOp>(&op)) {
          ops.push_back("pop " + program.module.var(pop->tape).name);
        }
      }
    }
  }
  return out;
}

TEST(TapePassesTest, InferTypesTypesATapeFromItsPushes) {
  absl::StatusOr<Program> typed = InferTypes(testing::TapeLoopProgram(), {{kI64, kF64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(*typed->module.var(testing::FindVar(*typed, "main", "t")).type, kF64);
  EXPECT_EQ(*typed->module.var(testing::FindVar(*typed, "main", "flags")).type, kI64);
  EXPECT_EQ(*typed->module.var(testing::FindVar(*typed, "main", "k")).type, kI64);
  EXPECT_EQ(*typed->module.var(testing::FindVar(*typed, "main", "unused")).type, kF64);
}

TEST(TapePassesTest, InferTypesRefusesPushesOfTwoTypes) {
  const absl::StatusOr<Program> typed = InferTypes(Parse(R"(program stage=untyped entry=@main

func @main(%n: ?, %x: ?) -> (%y: ?) {
^0 entry:
  tape_push %t, %x
  tape_push %t, %n
  %a: ? = tape_pop %t
  %y: ? = tape_pop %t
  return
}
)"),
                                                   {{kI64, kF64}});
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(std::string(typed.status().message()),
              AllOf(HasSubstr("type mismatch in function 'main': tape 't' is"),
                    HasSubstr("pushed at"),
                    HasSubstr("every value pushed on a tape has the tape's one type")));
}

TEST(TapePassesTest, InferTypesExplainsATapeNeverPushed) {
  const absl::StatusOr<Program> typed = InferTypes(Parse(R"(program stage=untyped entry=@main

func @main(%x: ?) -> (%y: ?) {
^0 entry:
  %y: ? = tape_pop %t  // never.cc:7
  return
}
)"),
                                                   {{kF64}});
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(std::string(typed.status().message()),
              AllOf(HasSubstr("tape 't' in function 'main': it is popped (at never.cc:7) but "
                              "nothing is ever pushed on it"),
                    HasSubstr("the type of 'y' in function 'main' cannot be inferred")));
}

TEST(TapePassesTest, AllocateVariablesGivesTapesAndOnlyTapesClassTape) {
  const Program allocated = *AllocateVariables(*InferTypes(testing::RecursiveTapeProgram(),
                                                           {{kI64, kF64}}));
  int tapes = 0;
  for (const Variable& v : allocated.module.variables) {
    const bool is_tape = v.name == "saved" || v.name == "twin" || v.name == "vals";
    EXPECT_EQ(v.storage == StorageClass::kTape, is_tape) << v.name;
    tapes += is_tape;
  }
  EXPECT_EQ(tapes, 3);
  // Liveness sees no tape: n, live across the recursive call, is Full as
  // without tapes; x, pushed before the call and not read after it, is not;
  // shape, popped before the call and read after it, is.
  EXPECT_EQ(testing::StorageOf(allocated, "rec", "n"), StorageClass::kFull);
  EXPECT_NE(testing::StorageOf(allocated, "rec", "x"), StorageClass::kFull);
  EXPECT_EQ(testing::StorageOf(allocated, "rec", "shape"), StorageClass::kFull);
  EXPECT_TRUE(VerifyProgram(allocated).ok()) << VerifyProgram(allocated);
}

TEST(TapePassesTest, InlinedCopiesGetTapesOfTheirOwn) {
  // accum is called twice in rec: each inlined copy pushes and pops a tape
  // of its own, in rec.
  const Program inlined = *InlineCalls(*InferTypes(testing::RecursiveTapeProgram(),
                                                   {{kI64, kF64}}));
  EXPECT_TRUE(VerifyProgram(inlined).ok()) << VerifyProgram(inlined);
  const std::map<std::string, std::vector<std::string>> ops = TapeOps(inlined);
  ASSERT_FALSE(ops.contains("accum"));
  EXPECT_THAT(ops.at("rec"),
              ::testing::ElementsAre("push saved", "push twin", "pop twin", "pop saved",
                                     "push accum.vals",
                                     "pop accum.vals", "push accum.vals#2", "pop accum.vals#2"));
}

TEST(TapePassesTest, NoPassOfEitherPipelineDropsAddsOrReordersATapeOp) {
  for (const Program& untyped : {testing::TapeLoopProgram(), testing::RecursiveTapeProgram()}) {
    const std::map<std::string, std::vector<std::string>> before = TapeOps(untyped);
    const Program allocated = *CompileProgram(untyped, {kI64, kF64});
    EXPECT_EQ(TapeOps(allocated), before);
    PipelineOptions no_inlining;
    no_inlining.inline_calls = false;
    const Program lowered = *LowerProgram(untyped, {kI64, kF64}, no_inlining);
    EXPECT_EQ(TapeOps(lowered), before);
    // lower_calls pops frames, never a tape.
    for (const Function& fn : lowered.module.functions) {
      for (const Block& block : fn.blocks) {
        for (const Op& op : block.ops) {
          if (const auto* pop = std::get_if<PopOp>(&op)) {
            for (VarId v : pop->vars) {
              EXPECT_NE(lowered.module.var(v).storage, StorageClass::kTape);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace autobatch
