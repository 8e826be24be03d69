// Tests for fold_constants (passes/fold_constants.h).
#include "passes/fold_constants.h"

#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/type_rules.h"
#include "passes/constants.h"
#include "tests/passes/same_bits.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

Program Fold(const Program& program) {
  return testing::Checked(FoldConstants(program), "fold_constants");
}

TEST(FoldConstantsTest, TextCasesKeepTheBits) {
  testing::ExpectTextCasesKeepTheBits("fold_constants");
}

// `r = prim(constant a, constant b)` (one operand for unary primitives),
// typed; nullopt if the primitive does not take these operands.
std::optional<Program> OpOnConstants(Primitive prim, const std::vector<Literal>& operands) {
  Program program;
  testing::FunctionBuilder fn(program, "main", "fold.cc", 1);
  program.entry = fn.id();
  const VarId dummy = fn.Param("dummy");
  program.module.var(dummy).type = Scalar(DType::kI64);
  const BlockId entry = fn.Block("entry");
  std::vector<VarId> inputs;
  std::vector<TensorType> types;
  for (size_t i = 0; i < operands.size(); ++i) {
    const VarId c = fn.Var("c" + std::to_string(i));
    program.module.var(c).type = operands[i].type;
    fn.Constant(entry, 2, operands[i], c);
    inputs.push_back(c);
    types.push_back(operands[i].type);
  }
  PrimOp op;
  op.prim = prim;
  op.inputs = inputs;
  op.outputs = {VarId(0)};
  absl::StatusOr<std::vector<TensorType>> out = InferPrimitiveType(op, types, {});
  if (!out.ok()) return std::nullopt;
  const VarId r = fn.Result("r");
  program.module.var(r).type = (*out)[0];
  fn.Prim(entry, 3, prim, inputs, r);
  fn.Return(entry, 4);
  program.stage = Stage::kTyped;
  return program;
}

int CountPrims(const Program& program, Primitive prim) {
  return testing::CountOps(program, [prim](const Op& op) {
    const PrimOp* p = std::get_if<PrimOp>(&op);
    return p != nullptr && p->prim == prim;
  });
}

TEST(FoldConstantsTest, FoldsEveryElementwisePrimitiveToTheExecutorsBits) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Literal> floats, ints;
  for (double v : {0.0, -0.0, 1.0, -1.5, 0.7, 2.0, 710.0, -745.5, 1e-310, inf, -inf, nan}) {
    floats.push_back(Literal::F64(v));
  }
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-3}, int64_t{7},
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    ints.push_back(Literal::I64(v));
  }
  int folded = 0;
  for (const PrimitiveInfo& info : AllPrimitives()) {
    const Primitive prim = *PrimitiveFromName(info.name);
    if (info.num_inputs != 1 && info.num_inputs != 2) continue;
    for (const std::vector<Literal>* values : {&floats, &ints}) {
      for (const Literal& a : *values) {
        for (const Literal& b : *values) {
          std::vector<Literal> operands = {a};
          if (info.num_inputs == 2) operands.push_back(b);
          std::optional<Program> program = OpOnConstants(prim, operands);
          if (!program) continue;  // e.g. exp of an integer
          SCOPED_TRACE(PrintProgram(*program));
          const Program out = Fold(*program);
          const bool random = info.cost == CostClass::kRandom;
          EXPECT_EQ(CountPrims(out, prim), random || prim == Primitive::kFillLike ? 1 : 0);
          ASSERT_TRUE(testing::SameBits(*program, out, nullptr, /*lanes=*/1));
          folded += CountPrims(out, prim) == 0 ? 1 : 0;
          if (info.num_inputs == 1) break;
        }
      }
    }
  }
  EXPECT_GT(folded, 1000);
}

TEST(FoldConstantsTest, FoldsVectorsUpToTheSizeCap) {
  for (int64_t n : {int64_t{1}, kMaxConstantElements, kMaxConstantElements + 1}) {
    std::vector<double> values(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = 0.25 * static_cast<double>(i);
    Literal v{Vector(DType::kF64, n), values, {}};
    std::optional<Program> program = OpOnConstants(Primitive::kExp, {v});
    ASSERT_TRUE(program.has_value());
    const Program out = Fold(*program);
    EXPECT_EQ(CountPrims(out, Primitive::kExp), n <= kMaxConstantElements ? 0 : 1) << n;
    EXPECT_TRUE(testing::SameBits(*program, out, nullptr, /*lanes=*/1));
  }
}

TEST(FoldConstantsTest, KeepsKernelsRandomDrawsAndUnknownInputs) {
  absl::StatusOr<Program> program = ParseProgram(R"(program stage=typed entry=@main

kernel "model"(f64) -> (f64, f64) pure

func @main(%x: f64) -> (%r: f64) {
  vars #0: %x, %r, %c, %lp, %g, %key, %u, %y
^0 entry:
  %c: f64 = constant {literal = f64 2}
  %lp: f64, %g: f64 = kernel %c {kernel = "model"}
  %key: u64 = constant {literal = u64 3}
  %u: f64 = random_normal %key, %key
  %y: f64 = add %c, %x
  %r: f64 = add %y, %u
  return
}
)");
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(Fold(*program), *program);
}

TEST(FoldConstantsTest, RefusesAnUntypedProgram) {
  absl::StatusOr<Program> folded = FoldConstants(testing::MakeCollatzProgram());
  ASSERT_FALSE(folded.ok());
  EXPECT_EQ(folded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(folded.status().message()),
              ::testing::StartsWith("fold_constants needs a program at stage typed, got stage "
                                    "untyped: it runs after infer_types"));
}

}  // namespace
}  // namespace autobatch
