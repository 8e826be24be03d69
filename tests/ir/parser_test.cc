// Tests of the IR text parser (ir/parser.h): round trips and errors.
#include "ir/parser.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "tools/sample_programs.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::filesystem::path> FilesIn(const std::string& folder, const std::string& ext) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(AUTOBATCH_SOURCE_DIR "/") + folder)) {
    if (entry.path().extension() == ext) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// text -> IR -> text gives the same text, and the parsed program verifies.
void ExpectTextRoundTrips(const std::string& text, const std::string& what,
                          const PrintOptions& options = {}) {
  absl::StatusOr<Program> parsed = ParseProgram(text);
  ASSERT_TRUE(parsed.ok()) << what << ": " << parsed.status() << "\n" << text;
  EXPECT_EQ(PrintProgram(*parsed, options), text) << what;
}

// IR -> text -> IR gives an equal program (equal JSON forms), and the text
// round-trips too; a program that verified still does.
void ExpectProgramRoundTrips(const Program& program, const std::string& what) {
  for (bool locations : {false, true}) {
    const PrintOptions options{.locations = locations};
    const std::string text = PrintProgram(program, options);
    absl::StatusOr<Program> parsed = ParseProgram(text);
    ASSERT_TRUE(parsed.ok()) << what << ": " << parsed.status() << "\n" << text;
    EXPECT_EQ(PrintProgram(*parsed, options), text) << what;
    if (locations) {
      EXPECT_EQ(DumpProgramJson(*parsed), DumpProgramJson(program)) << what << "\n" << text;
    }
    if (VerifyProgram(program).ok()) {
      EXPECT_TRUE(VerifyProgram(*parsed).ok()) << what << ": " << VerifyProgram(*parsed);
    }
  }
}

TEST(ParserTest, SampleProgramsRoundTripAtEveryStage) {
  for (const std::string& name : SampleProgramNames()) {
    Context ctx;
    absl::StatusOr<NamedProgram> sample = LoadSampleProgram(name, ctx);
    ASSERT_TRUE(sample.ok()) << sample.status();
    ExpectProgramRoundTrips(sample->program, name + " untyped");
    absl::StatusOr<Program> typed = CompileProgram(sample->program, sample->default_types);
    ASSERT_TRUE(typed.ok()) << typed.status();
    ExpectProgramRoundTrips(*typed, name + " allocated");
    absl::StatusOr<Program> lowered = LowerProgram(sample->program, sample->default_types);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    ExpectProgramRoundTrips(*lowered, name + " lowered");
  }
}

TEST(ParserTest, HandBuiltProgramsRoundTrip) {
  ExpectProgramRoundTrips(testing::MakeFibonacciProgram(), "fibonacci");
  ExpectProgramRoundTrips(testing::MakeProgramWithSpecialConstants(), "special constants");
  ExpectProgramRoundTrips(testing::MakeSmallLoweredProgram(), "small lowered");
  ExpectProgramRoundTrips(testing::MakeGradientStubProgram(), "gradient stub");
}

// A stub's header, signature and vars lines, wherever the stub is; and the
// forms the verifier refuses (no wrt, a body) read back as printed.
TEST(ParserTest, GradientStubsRoundTrip) {
  Program program = testing::MakeGradientStubProgram();
  Function& stub = program.module.functions[1];
  stub.gradient_of->wrt = {0, 1};
  stub.results.push_back(program.module.AddVariable(Variable{"da", FunctionId(1), std::nullopt, StorageClass::kFull}));
  ExpectProgramRoundTrips(program, "two wrt entries");
  // Variables out of the default order: every function gets vars lines.
  std::swap(program.module.variables[4].name, program.module.variables[5].name);
  ExpectProgramRoundTrips(program, "vars lines");
  EXPECT_THAT(PrintProgram(program), HasSubstr("= gradient @f wrt 0, 1\n  signature"));
  EXPECT_THAT(PrintProgram(program), HasSubstr("\n  vars #4: %b, %a, %value, %db\n  vars #12: %da\n\n"));
  // The stub last, then alone.
  const std::string last =
      "program stage=typed entry=@g\n\n"
      "func @f(%x: f64) -> (%y: f64) {\n^0:\n  %y: f64 = mul %x, %x\n  return\n}\n\n"
      "func @g(%x: f64) -> (%v: f64, %dx: f64) = gradient @f wrt 0\n";
  ExpectTextRoundTrips(last, "stub last");
  absl::StatusOr<Program> parsed = ParseProgram(last);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->module.functions[1].gradient_of, (GradientOf{FunctionId(0), {0}}));
  EXPECT_TRUE(parsed->module.functions[1].blocks.empty());
  EXPECT_TRUE(VerifyProgram(*parsed).ok()) << VerifyProgram(*parsed);
  stub.gradient_of->wrt.clear();
  ExpectProgramRoundTrips(program, "no wrt");
  stub.blocks.resize(1);
  ExpectProgramRoundTrips(program, "a stub with a body");
}

TEST(ParserTest, FuzzCorpusProgramsRoundTrip) {
  int loaded = 0;
  for (const auto& path : FilesIn("tests/fuzz/corpus", ".json")) {
    absl::StatusOr<Program> program = LoadProgramJson(ReadFile(path));
    if (!program.ok()) continue;
    ++loaded;
    ExpectProgramRoundTrips(*program, path.filename().string());
  }
  EXPECT_GE(loaded, 20);
}

TEST(ParserTest, PassGoldensRoundTrip) {
  int count = 0;
  // Pass tests (tests/passes/text_test.cc): a `// RUN:` line, the input,
  // a separator line, the expected output.
  const std::string separator = "// ----- expected output -----\n";
  for (const auto& path : FilesIn("tests/passes/text", ".ir")) {
    const std::string text = ReadFile(path);
    const size_t input_start = text.find('\n') + 1;
    const size_t split = text.find(separator);
    ASSERT_NE(split, std::string::npos) << path;
    ExpectTextRoundTrips(text.substr(input_start, split - input_start),
                         path.filename().string() + " input");
    ExpectTextRoundTrips(text.substr(split + separator.size()),
                         path.filename().string() + " expected output");
    ++count;
  }
  for (const auto& path : FilesIn("tests/ir/golden", ".txt")) {
    ExpectTextRoundTrips(ReadFile(path), path.filename().string());
    ++count;
  }
  EXPECT_GE(count, 10);
}

// Every stored bit of every double survives, NaN aside (its sign and payload
// are not kept, in the text as in JSON).
TEST(ParserTest, DoublesRoundTripExactly) {
  Program program = testing::MakeProgramWithSpecialConstants();
  auto& op = std::get<PrimOp>(program.module.functions[0].blocks[0].ops[7]);
  ASSERT_EQ(op.prim, Primitive::kConstant);
  std::mt19937_64 rng(7);
  std::vector<double> values = {0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
                                1.7976931348623157e308, 0.1, 1.0 / 3.0};
  for (int i = 0; i < 2000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isnan(d)) values.push_back(d);
  }
  op.attrs.literal = Literal{Vector(DType::kF64, static_cast<int64_t>(values.size())), values, {}};
  auto& mv = std::get<PrimOp>(program.module.functions[0].blocks[0].ops[10]);
  ASSERT_EQ(mv.prim, Primitive::kMatVec);
  mv.attrs.matrix = std::make_shared<DenseMatrix>(
      DenseMatrix{2, static_cast<int64_t>(values.size() / 2),
                  std::vector<double>(values.begin(), values.begin() + values.size() / 2 * 2)});
  absl::StatusOr<Program> parsed = ParseProgram(PrintProgram(program));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& back = std::get<PrimOp>(parsed->module.functions[0].blocks[0].ops[7]);
  ASSERT_EQ(back.attrs.literal->floats.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(back.attrs.literal->floats[i]),
              std::bit_cast<uint64_t>(values[i]))
        << values[i];
  }
  const auto& back_mv = std::get<PrimOp>(parsed->module.functions[0].blocks[0].ops[10]);
  EXPECT_EQ(*back_mv.attrs.matrix, *mv.attrs.matrix);
}

// Names the printer quotes or suffixes, variables no op names, storage
// classes before allocation, empty and odd matrices, file names with
// control bytes: all come back.
TEST(ParserTest, UnusualProgramsRoundTrip) {
  Program program = testing::MakeFibonacciProgram();
  Module& m = program.module;
  m.AddVariable(Variable{"a b\"c\\", FunctionId(1), Scalar(DType::kF64), StorageClass::kFull});
  m.AddVariable(Variable{"", FunctionId(0), std::nullopt, StorageClass::kRegister});
  m.AddVariable(Variable{"unused", FunctionId(1), Vector(DType::kI32, 3), StorageClass::kNull});
  m.functions[1].blocks[0].label = "a label";
  m.functions[0].loc = SourceLoc{"dir/we\"ird\nname.cc", 7};
  m.functions[1].loc = SourceLoc{"C:\\x:y.cc", 9};
  m.kernels["k \x01"] = KernelSignature{{Scalar(DType::kF64)}, {}, false};
  m.kernels["pure"] = KernelSignature{{}, {Scalar(DType::kF64)}, true, /*pure=*/true};
  m.kernels["pure, batch-dependent"] =
      KernelSignature{{}, {Scalar(DType::kF64)}, false, /*pure=*/true};
  ExpectProgramRoundTrips(program, "unusual names");

  Program special = testing::MakeProgramWithSpecialConstants();
  auto& mv = std::get<PrimOp>(special.module.functions[0].blocks[0].ops[10]);
  for (auto matrix : {DenseMatrix{0, 0, {}}, DenseMatrix{0, 4, {}}, DenseMatrix{3, 0, {}}}) {
    mv.attrs.matrix = std::make_shared<DenseMatrix>(matrix);
    ExpectProgramRoundTrips(special, "matrix");
  }
}

// A lowered caller names its callee's params plainly; its own variable of
// the same name is qualified only where the plain name would mean the
// callee's.
TEST(ParserTest, CrossFunctionNamesAreQualifiedOnlyWhenAmbiguous) {
  Program lowered = testing::MakeSmallLoweredProgram();
  std::string text = PrintProgram(lowered);
  EXPECT_THAT(text, HasSubstr("  %a: f64 full = copy %x\n"));
  // main gets its own %a: the callee's now needs its function's name.
  lowered.module.AddVariable(
      Variable{"a", FunctionId(0), Scalar(DType::kF64), StorageClass::kRegister});
  auto& resume = lowered.module.functions[0].blocks[1];
  resume.ops.insert(resume.ops.begin(),
                    MakeCopy(VarId(static_cast<int32_t>(lowered.module.variables.size() - 1)),
                             VarId(0), {}));
  text = PrintProgram(lowered);
  EXPECT_THAT(text, HasSubstr("  %a@twice: f64 full = copy %x\n"));
  EXPECT_THAT(text, HasSubstr("  %a: f64 register = copy %x\n"));
  ExpectProgramRoundTrips(lowered, "qualified");
}

// --- errors ------------------------------------------------------------------

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<Program> p = ParseProgram(text);
  if (p.ok()) return "(parsed)";
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

constexpr char kHeader[] = "program stage=untyped entry=@main\n";

std::string Main(const std::string& body, const std::string& params = "%x: f64",
                 const std::string& results = "%y: ?") {
  return absl::StrCat(kHeader, "func @main(", params, ") -> (", results, ") {\n^0:\n", body,
                      "}\n");
}

TEST(ParserTest, ErrorsSayWhereWhatWasExpectedAndWhatWasFound) {
  EXPECT_EQ(ErrorOf(""), "1:1: expected a header such as 'program stage=untyped entry=@main', "
                         "found the end of the text");
  EXPECT_EQ(ErrorOf("func @main"),
            "1:1: expected a header such as 'program stage=untyped entry=@main', found "
            "\"func\"");
  EXPECT_EQ(ErrorOf("program stage=raw entry=@main"),
            "1:15: expected a stage (untyped, typed, allocated or lowered), found \"raw\"");
  EXPECT_EQ(ErrorOf(Main("  %y: f64 = frobnicate %x\n  return\n")),
            "4:13: expected an op (a primitive of ir/primitives.def, 'kernel', 'call', 'pop', "
            "'tape_push' or 'tape_pop') or a terminator (branch, goto, return, push_goto, indirect_goto, halt), found "
            "\"frobnicate\"");
  EXPECT_EQ(ErrorOf(Main("  %y: f63 = copy %x\n  return\n")),
            "4:7: expected a type such as f64 or i64[3] (dtypes: f64, f32, i64, i32, bool, u64), "
            "found \"f63\"");
  EXPECT_EQ(ErrorOf(Main("  %y: f64 = add %x\n  return\n")),
            "4:13: primitive add takes 2 inputs, got 1");
  EXPECT_EQ(ErrorOf(Main("  %y: f64 = copy %x %x\n  return\n")),
            "4:21: expected the end of the line, found \"%x\"");
  EXPECT_EQ(ErrorOf(Main("  %y: f64 = copy %x\n")),
            "5:1: expected a terminator before '}', found \"}\"");
  EXPECT_EQ(ErrorOf(Main("  goto ^4\n")), "4:8: ^4 is not a block of @main (it has 1 blocks)");
  EXPECT_EQ(ErrorOf(Main("  %y: i64 = copy %x\n  return\n")),
            "4:7: %y has type ? at 2:29 but i64 here; a variable has one type");
  EXPECT_EQ(ErrorOf(Main("  %y: ? = call @nowhere(%x)\n  return\n")),
            "4:16: unknown function @nowhere: no 'func' defines it");
  EXPECT_EQ(ErrorOf(Main("  %y: f64 = constant {literal = f64[2] [1]}\n  return\n")),
            "4:33: a literal of type f64[2] needs 2 values, got 1");
  EXPECT_EQ(ErrorOf(Main("  %y: f64 = constant {literal = f64 1e999}\n  return\n")),
            "4:37: number \"1e999\" is out of double's range (write inf or -inf)");
  EXPECT_EQ(ErrorOf(Main("  %y: i64 = constant {literal = i64 99999999999999999999}\n  return\n")),
            "4:37: an integer \"99999999999999999999\" does not fit in 64 bits");
  EXPECT_EQ(ErrorOf(Main("  %y: f64[2] = matvec %x {matrix = [[1, 2], [3]]}\n  return\n")),
            "4:45: matrix row 1 has 1 entries but row 0 has 2; every row needs the same count");
  EXPECT_EQ(ErrorOf(Main("  %y: f64[2] = matvec %x {matrix = [[[1]]]}\n  return\n")),
            "4:38: expected a number (or nan, inf, -inf), found \"[1]]]}\"");
  EXPECT_EQ(ErrorOf(Main("  %\"y: f64 = copy %x\n  return\n")),
            "4:4: unterminated quoted name: add the closing '\"'");
  EXPECT_EQ(ErrorOf(Main("  return\n", "%x: f64", "%y#5: ?")),
            "2:25: %y#5 is variable #1: the number after '#' must be its index");
  EXPECT_EQ(ErrorOf(absl::StrCat(kHeader, "func @main() -> () {\n^0:\n  return\n")),
            "5:1: expected '}' closing function @main, found the end of the text (is it "
            "truncated?)");
  EXPECT_EQ(ErrorOf(absl::StrCat(kHeader, "func @main() -> () {\n^1:\n  return\n}\n")),
            "3:2: expected block ^0 (blocks are numbered in order from ^0), found ^1");
  EXPECT_EQ(ErrorOf(absl::StrCat(kHeader, "func @f() -> () {\n^0:\n  return\n}\n")),
            "1:29: unknown function @main: no 'func' defines it");
  EXPECT_EQ(ErrorOf(absl::StrCat(kHeader, "func @main() -> () {\n^0:\n  return\n}\n",
                                 "func @main() -> () {\n^0:\n  return\n}\n")),
            "6:6: function @main is defined twice (functions need unique names)");
  EXPECT_EQ(ErrorOf(absl::StrCat(kHeader, "func @main() -> () {\n  vars #0: %a\n  vars #0: %b\n",
                                 "^0:\n  return\n}\n")),
            "4:12: %b would be variable #0, which %a already is");
  EXPECT_EQ(ErrorOf(absl::StrCat(kHeader, "func @main() -> () {\n  vars #0: %a\n^0:\n",
                                 "  %b: ? = copy %a\n  return\n}\n")),
            "5:3: %b is not on the vars lines of @main (nor a param or result of a function it "
            "push_gotos to): list it there, or name its function as in %x@f");
  EXPECT_EQ(ErrorOf(Main("  %y: f64 = constant {literal = f64 1, literal = f64 2}\n  return\n")),
            "4:40: attribute literal is given twice");
  EXPECT_EQ(ErrorOf(absl::StrCat(kHeader, "kernel \"k\"() -> () impure\n",
                                 "func @main() -> () {\n^0:\n  return\n}\n")),
            "2:20: expected 'batch_dependent', 'pure', 'vjp \"kernel\"' or the end of the line, found \"impure\"");
}

TEST(ParserTest, GradientStubErrors) {
  const std::string f = "func @f(%a: f64, %b: f64) -> (%r: f64) {\n^0:\n  return\n}\n";
  auto stub = [&](const std::string& header_tail, const std::string& after = "") {
    return absl::StrCat("program stage=untyped entry=@main\n", f,
                        "func @main(%a: f64, %b: f64) -> (%v: f64, %d: f64)", header_tail, "\n",
                        after);
  };
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt 1")), "(parsed)");
  EXPECT_EQ(ErrorOf(stub(" = grad @f wrt 1")), "6:54: expected 'gradient' after '=', found \"grad\"");
  EXPECT_EQ(ErrorOf(stub(" = gradient f wrt 1")),
            "6:63: expected a function such as @main, found \"f\"");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f 1")),
            "6:66: expected 'wrt' and the parameter indices, found \"1\"");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt 1,")),
            "6:72: expected a parameter index, found the end of the line");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt 1 x")), "6:72: expected the end of the line, found \"x\"");
  EXPECT_EQ(ErrorOf(stub(" = gradient @g wrt 1")), "6:63: unknown function @g: no 'func' defines it");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt 0, 2")),
            "6:73: wrt index 2 is not a parameter of @f (it has 2 params)");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt -1")),
            "6:70: wrt index -1 is not a parameter of @f (it has 2 params)");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt 1", "^0:\n  return\n")),
            "7:1: expected 'signature', 'vars', 'func' or 'kernel' (@main is a gradient stub, "
            "which has no body), found \"^0:\"");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt 1", "  signature (f64, f64) -> (f64, f64)\n"
                                                  "  signature (f64, f64) -> (f64, f64)\n")),
            "8:13: expected 'vars' or the next 'func', found \"(f64,\"");
  EXPECT_EQ(ErrorOf(stub(" = gradient @f wrt 1 {")),
            "7:1: expected '}' closing function @main, found the end of the text (is it "
            "truncated?)");
  EXPECT_EQ(ErrorOf(stub(" gradient @f wrt 1")),
            "6:52: expected '{' or '= gradient', found \"gradient\"");
}

// Whatever the text, the parser returns: truncations of a real program at
// every byte, random bytes, long runs of brackets and huge numbers.
TEST(ParserTest, NeverCrashesOnMangledText) {
  Context ctx;
  absl::StatusOr<NamedProgram> sample = LoadSampleProgram("peanuts", ctx);
  ASSERT_TRUE(sample.ok());
  absl::StatusOr<Program> lowered = LowerProgram(sample->program, sample->default_types);
  ASSERT_TRUE(lowered.ok());
  const std::string text = PrintProgram(*lowered, {.locations = true});
  const size_t step = text.size() / 400 + 1;
  for (size_t cut = 0; cut < text.size(); cut += step) (void)ParseProgram(text.substr(0, cut));
  for (size_t cut = 0; cut < 2000 && cut < text.size(); ++cut) {
    (void)ParseProgram(text.substr(0, cut));
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 100; ++i) {
    std::string mangled = text;
    for (int k = 0; k < 5; ++k) {
      mangled[rng() % mangled.size()] = static_cast<char>(rng() % 256);
    }
    absl::StatusOr<Program> p = ParseProgram(mangled);
    if (p.ok()) (void)CollectVerifierErrors(*p);
  }
  EXPECT_THAT(ErrorOf(Main("  %y: f64[2] = matvec %x {matrix = " + std::string(100000, '[') +
                           "}\n  return\n")),
              HasSubstr("expected a number"));
  EXPECT_THAT(ErrorOf(absl::StrCat(kHeader, "func @main() -> () {\n  vars #99999999999: %a\n")),
              HasSubstr("out of range"));
  EXPECT_THAT(ErrorOf(Main("  %y: f64[99999999999,99999999999] = copy %x\n  return\n")),
              HasSubstr("has too many elements"));
  EXPECT_THAT(ErrorOf(std::string(1000000, '\n') + "garbage"), HasSubstr("1000001:1:"));
}

}  // namespace
}  // namespace autobatch
