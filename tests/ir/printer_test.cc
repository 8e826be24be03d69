// Tests of the IR text printer (ir/printer.h): goldens, structure, determinism.
#include "ir/printer.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/testing/fib_program.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Compares `actual` with tests/ir/golden/<name>; rewrites the golden instead
// when AUTOBATCH_UPDATE_GOLDENS=1.
void ExpectMatchesGolden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(AUTOBATCH_SOURCE_DIR "/tests/ir/golden/") + name;
  const char* update = std::getenv("AUTOBATCH_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    std::printf("updated golden %s\n", path.c_str());
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden " << path
                         << "; run with AUTOBATCH_UPDATE_GOLDENS=1 to create it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str())
      << "golden " << path << " differs; if the change is intended, rerun with "
      << "AUTOBATCH_UPDATE_GOLDENS=1 and review the diff";
}

int CountOccurrences(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

const Op& OpAt(const Program& p, int function, int block, int op) {
  return p.module.functions.at(function).blocks.at(block).ops.at(op);
}

TEST(PrinterTest, FibonacciGolden) {
  std::string text = PrintProgram(testing::MakeFibonacciProgram());
  ExpectMatchesGolden("fibonacci.txt", text);
  // The facts the golden must show, so a wrong golden cannot pass silently.
  EXPECT_THAT(text, ::testing::StartsWith("program stage=untyped entry=@main\n"));
  EXPECT_THAT(text, HasSubstr("func @main(%n: ?) -> (%r: ?) {\n"));
  EXPECT_THAT(text, HasSubstr("func @fibonacci(%n: ?) -> (%ans: ?) {\n"));
  EXPECT_THAT(text, HasSubstr("^0 entry:\n"));
  EXPECT_THAT(text, HasSubstr("  %one: ? = fill_like %n {literal = i64 1}\n"));
  EXPECT_THAT(text, HasSubstr("  %cond: ? = gt %n, %one\n"));
  EXPECT_THAT(text, HasSubstr("  branch %cond, ^1, ^2\n"));
  EXPECT_THAT(text, HasSubstr("  %n_1: ? = sub %n, %one\n"));
  EXPECT_THAT(text, HasSubstr("  %f1: ? = call @fibonacci(%n_1)\n"));
  EXPECT_THAT(text, HasSubstr("  %ans: ? = add %f1, %f2\n"));
  EXPECT_THAT(text, HasSubstr("  goto ^3\n"));
  EXPECT_EQ(CountOccurrences(text, "  return\n"), 2);
  EXPECT_EQ(CountOccurrences(text, "call @fibonacci("), 3);
  std::string fib = PrintFunction(testing::MakeFibonacciProgram().module, FunctionId(1));
  EXPECT_EQ(CountOccurrences(fib, "call @fibonacci("), 2);
  EXPECT_EQ(CountOccurrences(fib, "\n^"), 4);  // four blocks
  EXPECT_THAT(text, Not(HasSubstr("//")));      // no locations unless asked
  EXPECT_THAT(text, Not(HasSubstr(" full")));   // no storage before allocation
}

TEST(PrinterTest, SpecialConstantsGolden) {
  std::string text = PrintProgram(testing::MakeProgramWithSpecialConstants());
  ExpectMatchesGolden("special_constants.txt", text);
  EXPECT_THAT(text, HasSubstr("program stage=typed entry=@main\n"));
  EXPECT_THAT(text, HasSubstr("kernel \"scale\"(f64[3], f64) -> (f64[3]) batch_dependent\n"));
  EXPECT_THAT(text, HasSubstr("  signature (f64[3]) -> (f64[5], u64, i64[3], f64[2], f64[3])\n"));
  EXPECT_THAT(text, HasSubstr("%c_nan: f64 = constant {literal = f64 nan}\n"));
  EXPECT_THAT(text, HasSubstr("%c_inf: f64 = constant {literal = f64 inf}\n"));
  EXPECT_THAT(text, HasSubstr("%c_ninf: f64 = constant {literal = f64 -inf}\n"));
  EXPECT_THAT(text, HasSubstr("%c_negzero: f64 = constant {literal = f64 -0}\n"));
  EXPECT_THAT(text, HasSubstr("%c_tiny: f64 = constant {literal = f64 1e-310}\n"));
  EXPECT_THAT(text, HasSubstr("{literal = u64 18446744073709551615}"));
  EXPECT_THAT(text, HasSubstr("{literal = f64[3] [1.5, -2, 0.1]}"));
  EXPECT_THAT(text, HasSubstr("%ints: i64[3] = cast %vec {dtype = i64}\n"));
  EXPECT_THAT(text, HasSubstr("%part: f64[2] = slice %x {ints = [1, 2]}\n"));
  EXPECT_THAT(text, HasSubstr("= matvec %x {matrix = [[1, 2, 3], [4, 5, 6.5]]}\n"));
  EXPECT_THAT(text, HasSubstr("%scaled: f64[3] = kernel %vec, %c_tiny {kernel = \"scale\"}\n"));
}

TEST(PrinterTest, LoweredGoldenShowsStorageAndLoweredConstructs) {
  std::string text = PrintProgram(testing::MakeSmallLoweredProgram());
  ExpectMatchesGolden("lowered.txt", text);
  EXPECT_THAT(text, HasSubstr("func @main(%x: f64 register) -> (%r: f64 register) {\n"));
  EXPECT_THAT(text, HasSubstr("  %a: f64 full = copy %x\n"));
  EXPECT_THAT(text, HasSubstr("  push_goto @twice, ^1\n"));
  EXPECT_THAT(text, HasSubstr("  %dead: f64 null = copy %x\n"));
  EXPECT_THAT(text, HasSubstr("  pop %a, %b\n"));
  EXPECT_THAT(text, HasSubstr("  halt\n"));
  EXPECT_THAT(text, HasSubstr("  %two: f64 temp = fill_like %a {literal = f64 2}\n"));
  EXPECT_THAT(text, HasSubstr("  indirect_goto\n"));
}

TEST(PrinterTest, GradientStubGoldenHasAHeaderAndNoBody) {
  const Program program = testing::MakeGradientStubProgram();
  std::string text = PrintProgram(program);
  ExpectMatchesGolden("gradient_stub.txt", text);
  EXPECT_THAT(text, HasSubstr("\nfunc @grad_f(%a: ?, %b: ?) -> (%value: ?, %db: ?) = gradient "
                              "@f wrt 1\n  signature (f64, f64) -> (f64, f64)\n\nfunc @f("));
  EXPECT_THAT(text, HasSubstr("  %v: ?, %dy: ? = call @grad_f(%x, %y)\n"));
  EXPECT_EQ(CountOccurrences(text, "{\n"), 2);  // main and f only
  EXPECT_EQ(CountOccurrences(text, "}\n"), 2);
  // The location follows the header, as for any function.
  EXPECT_THAT(PrintFunction(program.module, FunctionId(1), {.locations = true}),
              ::testing::StartsWith("func @grad_f(%a: ?, %b: ?) -> (%value: ?, %db: ?) = "
                                    "gradient @f wrt 1  // grad.cc:5\n"));
  // Several wrt entries, none, and a stub with blocks (which the verifier
  // refuses) still print.
  Program edited = program;
  edited.module.functions[1].gradient_of->wrt = {0, 1};
  EXPECT_THAT(PrintFunction(edited.module, FunctionId(1)), HasSubstr("= gradient @f wrt 0, 1\n"));
  edited.module.functions[1].gradient_of->wrt = {};
  EXPECT_THAT(PrintFunction(edited.module, FunctionId(1)), HasSubstr("= gradient @f wrt\n"));
  edited.module.functions[1].blocks.resize(1);
  EXPECT_THAT(PrintFunction(edited.module, FunctionId(1)),
              HasSubstr("= gradient @f wrt {\n  signature (f64, f64) -> (f64, f64)\n^0:\n  "
                        "halt\n}\n"));
  edited.module.functions[1].gradient_of->function = FunctionId(9);
  EXPECT_THAT(PrintFunction(edited.module, FunctionId(1)), HasSubstr("= gradient @<bad:9> wrt"));
}

TEST(PrinterTest, StorageClassesFollowStageOrOption) {
  Program program = testing::MakeProgramWithSpecialConstants();
  EXPECT_THAT(PrintProgram(program), Not(HasSubstr(" full")));
  EXPECT_THAT(PrintProgram(program, {.storage_classes = true}),
              HasSubstr("%c_nan: f64 full = constant"));
  program.stage = Stage::kAllocated;
  EXPECT_THAT(PrintProgram(program), HasSubstr("%c_nan: f64 full = constant"));
  EXPECT_THAT(PrintFunction(program, program.entry), HasSubstr("(%x: f64[3] full)"));
  EXPECT_THAT(PrintFunction(program.module, program.entry), HasSubstr("(%x: f64[3])"));
}

TEST(PrinterTest, LocationsOnlyWhenAsked) {
  Program program = testing::MakeFibonacciProgram();
  std::string text = PrintProgram(program, {.locations = true});
  EXPECT_THAT(text, HasSubstr("func @fibonacci(%n: ?) -> (%ans: ?) {  // fib.cc:9\n"));
  EXPECT_THAT(text, HasSubstr("  %cond: ? = gt %n, %one  // fib.cc:10\n"));
  EXPECT_THAT(text, HasSubstr("  branch %cond, ^1, ^2  // fib.cc:10\n"));
  EXPECT_THAT(text, HasSubstr("  return  // fib.cc:15\n"));
  // Unknown locations print nothing.
  program.module.functions[1].blocks[0].loc = SourceLoc{};
  EXPECT_THAT(PrintProgram(program, {.locations = true}),
              HasSubstr("  branch %cond, ^1, ^2\n"));
}

TEST(PrinterTest, IsDeterministic) {
  for (const Program& program :
       {testing::MakeFibonacciProgram(), testing::MakeProgramWithSpecialConstants(),
        testing::MakeSmallLoweredProgram()}) {
    std::string first = PrintProgram(program, {.locations = true});
    EXPECT_EQ(first, PrintProgram(program, {.locations = true}));
    Program copy = program;
    EXPECT_EQ(first, PrintProgram(copy, {.locations = true}));
  }
  // Built twice from scratch: same text.
  EXPECT_EQ(PrintProgram(testing::MakeFibonacciProgram()),
            PrintProgram(testing::MakeFibonacciProgram()));
}

TEST(PrinterTest, PrintOpAndTerminatorMatchFunctionText) {
  Program program = testing::MakeFibonacciProgram();
  const Module& m = program.module;
  EXPECT_EQ(PrintOp(m, OpAt(program, 1, 1, 0)), "%n_1: ? = sub %n, %one");
  EXPECT_EQ(PrintOp(m, OpAt(program, 1, 1, 1)), "%f1: ? = call @fibonacci(%n_1)");
  EXPECT_EQ(PrintOp(m, OpAt(program, 1, 0, 0)), "%one: ? = fill_like %n {literal = i64 1}");
  EXPECT_EQ(PrintTerminator(m, m.functions[1].blocks[0].terminator), "branch %cond, ^1, ^2");
  EXPECT_EQ(PrintTerminator(m, Return{}), "return");
  EXPECT_EQ(PrintTerminator(m, PushGoto{FunctionId(1), BlockId(2)}),
            "push_goto @fibonacci, ^2");
  EXPECT_EQ(PrintTerminator(m, IndirectGoto{}), "indirect_goto");
  EXPECT_EQ(PrintTerminator(m, Halt{}), "halt");
  EXPECT_EQ(PrintTerminator(m, Goto{BlockId(3)}), "goto ^3");
  EXPECT_EQ(PrintOp(m, PopOp{{VarId(0), VarId(2)}, {}}), "pop %n, %one");
  EXPECT_EQ(PrintVar(m, VarId(4)), "%n_1");
  EXPECT_EQ(PrintType(std::nullopt), "?");
  EXPECT_EQ(PrintType(TensorType{DType::kI32, {2, 5}}), "i32[2,5]");
}

TEST(PrinterTest, InPlaceOutputsAreShown) {
  Program program = testing::MakeSmallLoweredProgram();
  auto& op = std::get<PrimOp>(program.module.functions[1].blocks[0].ops[1]);
  op.in_place = op.outputs;
  EXPECT_EQ(PrintOp(program.module, op, {.storage_classes = true}),
            "%b: f64 full = mul %a, %two in_place(%b)");
  EXPECT_THAT(PrintProgram(program), HasSubstr("= mul %a, %two in_place(%b)\n"));
}

TEST(PrinterTest, DoublesPrintShortestAndRoundTrip) {
  EXPECT_EQ(PrintDouble(0.1), "0.1");
  EXPECT_EQ(PrintDouble(1.0), "1");
  EXPECT_EQ(PrintDouble(-2.5), "-2.5");
  EXPECT_EQ(PrintDouble(0.0), "0");
  EXPECT_EQ(PrintDouble(-0.0), "-0");
  EXPECT_EQ(PrintDouble(1e300), "1e+300");
  EXPECT_EQ(PrintDouble(1e-310), "1e-310");
  EXPECT_EQ(PrintDouble(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(PrintDouble(-std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(PrintDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(PrintDouble(-std::numeric_limits<double>::infinity()), "-inf");
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 10000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    std::string text = PrintDouble(d);
    double back = std::strtod(text.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&d, &back, sizeof d), 0) << text;
  }
}

TEST(PrinterTest, LiteralsPrintEveryDtypeExactly) {
  EXPECT_EQ(PrintLiteral(Literal::Bool(true)), "bool true");
  EXPECT_EQ(PrintLiteral(Literal::Bool(false)), "bool false");
  EXPECT_EQ(PrintLiteral(Literal::I64(std::numeric_limits<int64_t>::min())),
            "i64 -9223372036854775808");
  EXPECT_EQ(PrintLiteral(Literal{Scalar(DType::kU64), {}, {-1}}), "u64 18446744073709551615");
  EXPECT_EQ(PrintLiteral(Literal{Vector(DType::kI32, 2), {}, {-3, 4}}), "i32[2] [-3, 4]");
  EXPECT_EQ(PrintLiteral(Literal{Vector(DType::kF32, 0), {}, {}}), "f32[0] []");
  EXPECT_EQ(PrintLiteral(Literal{TensorType{DType::kBool, {1, 2}}, {}, {1, 0}}),
            "bool[1,2] [true, false]");
}

// Matrices print in full, whatever their size, so the text reads back
// (ir/parser.h); only a matrix whose data does not match rows * cols (not
// valid IR) prints as a hash.
TEST(PrinterTest, LargeMatricesPrintInFull) {
  Program program = testing::MakeProgramWithSpecialConstants();
  auto& op = std::get<PrimOp>(program.module.functions[0].blocks[0].ops[10]);
  ASSERT_EQ(op.prim, Primitive::kMatVec);
  auto big = std::make_shared<DenseMatrix>(DenseMatrix{5, 5, std::vector<double>(25, 1.0)});
  big->data[24] = -0.0;
  op.attrs.matrix = big;
  EXPECT_THAT(PrintOp(program.module, op),
              ::testing::EndsWith("{matrix = [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], "
                                  "[1, 1, 1, 1, 1], [1, 1, 1, 1, -0]]}"));
  // No rows: the column count still shows.
  op.attrs.matrix = std::make_shared<DenseMatrix>(DenseMatrix{0, 3, {}});
  EXPECT_THAT(PrintOp(program.module, op), ::testing::EndsWith("{matrix = matrix<0x3>}"));
  op.attrs.matrix = std::make_shared<DenseMatrix>(DenseMatrix{0, 0, {}});
  EXPECT_THAT(PrintOp(program.module, op), ::testing::EndsWith("{matrix = []}"));
  // A matrix whose data does not match rows * cols says so.
  op.attrs.matrix = std::make_shared<DenseMatrix>(DenseMatrix{2, 2, {1, 2, 3}});
  EXPECT_THAT(PrintOp(program.module, op), HasSubstr("matrix<2x2 #"));
  EXPECT_THAT(PrintOp(program.module, op), HasSubstr(", 3 values>"));
}

TEST(PrinterTest, NamesAreDisambiguatedDeterministically) {
  Program program = testing::MakeFibonacciProgram();
  Module& m = program.module;
  // Same name in another function: no suffix (main's %n vs fibonacci's %n).
  EXPECT_EQ(PrintVar(m, VarId(9)), "%n");
  EXPECT_EQ(PrintVar(m, VarId(0)), "%n");
  // Collisions, empty and unusual names.
  VarId dup = m.AddVariable(Variable{"one", FunctionId(1), std::nullopt, StorageClass::kFull});
  VarId empty = m.AddVariable(Variable{"", FunctionId(1), std::nullopt, StorageClass::kFull});
  VarId odd = m.AddVariable(Variable{"a b\"c", FunctionId(1), std::nullopt, StorageClass::kFull});
  VarId hash = m.AddVariable(Variable{"one#11", FunctionId(1), std::nullopt, StorageClass::kFull});
  EXPECT_EQ(PrintVar(m, VarId(2)), "%one");
  EXPECT_EQ(PrintVar(m, dup), "%one#11");
  EXPECT_EQ(PrintVar(m, empty), "%#12");
  EXPECT_EQ(PrintVar(m, odd), "%\"a b\\\"c\"");
  EXPECT_EQ(PrintVar(m, hash), "%\"one#11\"");  // cannot be confused with %one#11
  // Duplicate function names are disambiguated the same way.
  m.functions.push_back(m.functions[1]);
  EXPECT_EQ(PrintTerminator(m, PushGoto{FunctionId(2), BlockId(0)}),
            "push_goto @fibonacci#2, ^0");
  EXPECT_THAT(PrintProgram(program), HasSubstr("func @fibonacci#2(%n: ?) -> (%ans: ?) {\n"));
}

TEST(PrinterTest, InvalidIndicesPrintWithoutCrashing) {
  Program program = testing::MakeFibonacciProgram();
  Function& fib = program.module.functions[1];
  fib.blocks[0].terminator = Branch{VarId(99), BlockId(7), BlockId(-1)};
  fib.blocks[1].ops.push_back(CallOp{FunctionId(5), {VarId(-3)}, {VarId(1234)}, {}});
  fib.blocks[2].terminator = PushGoto{FunctionId(-1), BlockId(4)};
  program.entry = FunctionId(8);
  std::string text = PrintProgram(program);
  EXPECT_THAT(text, HasSubstr("program stage=untyped entry=@<bad:8>\n"));
  EXPECT_THAT(text, HasSubstr("  branch %<bad:99>, ^<bad:7>, ^<bad:-1>\n"));
  EXPECT_THAT(text, HasSubstr("  %<bad:1234> = call @<bad:5>(%<bad:-3>)\n"));
  EXPECT_THAT(text, HasSubstr("  push_goto @<bad:-1>, ^<bad:4>\n"));
  EXPECT_THAT(PrintFunction(program.module, FunctionId(42)), HasSubstr("func @<bad:42>"));
  PrimOp bad_prim;
  bad_prim.prim = static_cast<Primitive>(10000);
  EXPECT_THAT(PrintOp(program.module, bad_prim), HasSubstr("<bad primitive 10000>"));
}

}  // namespace
}  // namespace autobatch
