// Tests of the JSON form of the IR (ir/json.h): exact round trips and errors.
#include "ir/json.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/overloaded.h"
#include "ir/printer.h"
#include "ir/testing/fib_program.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using Pointer = Json::json_pointer;

// A program at stage allocated: the fibonacci program with types and storage.
Program MakeAllocatedFibonacci() {
  Program program = testing::MakeFibonacciProgram();
  program.stage = Stage::kAllocated;
  for (Variable& v : program.module.variables) {
    v.type = v.name == "cond" ? Scalar(DType::kBool) : Scalar(DType::kI64);
    v.storage = StorageClass::kRegister;
  }
  program.module.variables[2].storage = StorageClass::kTemporary;  // one
  program.module.variables[0].storage = StorageClass::kFull;       // n
  program.module.variables[4].storage = StorageClass::kNull;       // n_1
  for (Function& f : program.module.functions) {
    f.signature = Signature{{Scalar(DType::kI64)}, {Scalar(DType::kI64)}};
  }
  return program;
}

// Odd corners: in-place outputs, empty labels, unknown locations, a location
// with a file but no line, an empty function, every terminator.
Program MakeCornerCaseProgram() {
  Program program = testing::MakeSmallLoweredProgram();
  Module& m = program.module;
  auto& mul = std::get<PrimOp>(m.functions[1].blocks[0].ops[1]);
  mul.in_place = mul.outputs;
  mul.loc = SourceLoc{"no_line.cc", 0};
  m.functions[0].blocks[1].label = "";
  m.functions[0].loc = SourceLoc{};
  Function empty;
  empty.name = "empty \"quoted\" \xc3\xa9";
  m.functions.push_back(empty);
  Block extra;
  extra.terminator = Goto{BlockId(0)};
  m.functions[1].blocks.push_back(extra);
  extra.terminator = Branch{VarId(0), BlockId(0), BlockId(1)};
  m.functions[1].blocks.push_back(extra);
  extra.terminator = Return{};
  m.functions[1].blocks.push_back(extra);
  m.kernels["k"] = KernelSignature{{}, {}, /*bit_stable=*/true};
  return program;
}

std::vector<Program> AllFixtures() {
  Program typed = testing::MakeFibonacciProgram();
  typed.stage = Stage::kTyped;
  for (Variable& v : typed.module.variables) v.type = Scalar(DType::kI64);
  return {testing::MakeFibonacciProgram(), testing::MakeProgramWithSpecialConstants(),
          typed,
          MakeAllocatedFibonacci(),
          testing::MakeSmallLoweredProgram(),
          MakeCornerCaseProgram(),
          testing::MakeGradientStubProgram()};
}

// Every index of `program` is inside its table (what loading guarantees).
void ExpectIndicesInRange(const Program& program) {
  const Module& m = program.module;
  auto var_ok = [&](VarId v) { return v.value >= 0 && size_t(v.value) < m.variables.size(); };
  auto fn_ok = [&](FunctionId f) {
    return f.value >= 0 && size_t(f.value) < m.functions.size();
  };
  EXPECT_TRUE(fn_ok(program.entry));
  for (const Variable& v : m.variables) EXPECT_TRUE(fn_ok(v.function));
  for (const Function& f : m.functions) {
    auto block_ok = [&](BlockId b) { return b.value >= 0 && size_t(b.value) < f.blocks.size(); };
    if (f.gradient_of) {
      ASSERT_TRUE(fn_ok(f.gradient_of->function));
      for (int32_t i : f.gradient_of->wrt) {
        EXPECT_TRUE(i >= 0 && size_t(i) < m.function(f.gradient_of->function).params.size());
      }
    }
    for (VarId v : f.params) EXPECT_TRUE(var_ok(v));
    for (VarId v : f.results) EXPECT_TRUE(var_ok(v));
    for (const Block& block : f.blocks) {
      for (const Op& op : block.ops) {
        for (VarId v : OpReads(op)) EXPECT_TRUE(var_ok(v));
        for (VarId v : OpWrites(op)) EXPECT_TRUE(var_ok(v));
        if (const auto* prim = std::get_if<PrimOp>(&op)) {
          for (VarId v : prim->in_place) EXPECT_TRUE(var_ok(v));
          int index = static_cast<int>(prim->prim);
          EXPECT_TRUE(index >= 0 && index <= static_cast<int>(Primitive::kUserKernel));
        }
        if (const auto* call = std::get_if<CallOp>(&op)) {
          EXPECT_TRUE(fn_ok(call->callee));
        }
      }
      std::visit(Overloaded{
                     [&](const Branch& b) {
                       EXPECT_TRUE(var_ok(b.cond));
                       EXPECT_TRUE(block_ok(b.then_block));
                       EXPECT_TRUE(block_ok(b.else_block));
                     },
                     [&](const Goto& g) { EXPECT_TRUE(block_ok(g.target)); },
                     [&](const Return&) {},
                     [&](const PushGoto& p) {
                       EXPECT_TRUE(fn_ok(p.callee));
                       EXPECT_TRUE(block_ok(p.return_to));
                     },
                     [&](const IndirectGoto&) {},
                     [&](const Halt&) {},
                 },
                 block.terminator);
    }
  }
}

TEST(JsonTest, RoundTripIsExactAtEveryStage) {
  for (const Program& program : AllFixtures()) {
    SCOPED_TRACE(PrintProgram(program));
    std::string text = DumpProgramJson(program);
    absl::StatusOr<Program> loaded = LoadProgramJson(text);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(DumpProgramJson(*loaded), text);
    EXPECT_EQ(PrintProgram(*loaded, {.locations = true}),
              PrintProgram(program, {.locations = true}));
    EXPECT_TRUE(*loaded == program);
    // The json-value path agrees with the text path.
    absl::StatusOr<Program> from_value = ProgramFromJson(ProgramToJson(program));
    ASSERT_TRUE(from_value.ok()) << from_value.status();
    EXPECT_TRUE(*from_value == program);
    EXPECT_EQ(Json::parse(text), ProgramToJson(program));
    // One-line form loads too.
    absl::StatusOr<Program> compact = LoadProgramJson(DumpProgramJson(program, -1));
    ASSERT_TRUE(compact.ok()) << compact.status();
    EXPECT_TRUE(*compact == program);
  }
}

TEST(JsonTest, RoundTripDetectsDifferences) {
  // Guards the round-trip test itself: operator== and the dump do see a
  // change in a deep field.
  Program a = testing::MakeProgramWithSpecialConstants();
  Program b = a;
  auto& matvec = std::get<PrimOp>(b.module.functions[0].blocks[0].ops[10]);
  auto changed = std::make_shared<DenseMatrix>(*matvec.attrs.matrix);
  changed->data[0] = -changed->data[0];
  matvec.attrs.matrix = changed;
  EXPECT_FALSE(a == b);
  EXPECT_NE(DumpProgramJson(a), DumpProgramJson(b));
}

TEST(JsonTest, HeaderAndFieldOrder) {
  std::string text = DumpProgramJson(testing::MakeFibonacciProgram());
  EXPECT_THAT(text, ::testing::StartsWith(
                        "{\n  \"format\": \"autobatch-ir\",\n  \"version\": 1,\n"
                        "  \"stage\": \"untyped\",\n  \"entry\": 0,\n  \"variables\": ["));
  EXPECT_LT(text.find("\"variables\""), text.find("\"functions\""));
  EXPECT_LT(text.find("\"functions\""), text.find("\"kernels\""));
  // Untyped, unallocated: neither types nor storage classes are written.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\"type\"")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\"storage\"")));
  EXPECT_THAT(DumpProgramJson(MakeAllocatedFibonacci()), HasSubstr("\"storage\": \"temp\""));
}

TEST(JsonTest, GradientStubNamesItsPrimal) {
  const Program program = testing::MakeGradientStubProgram();
  const std::string text = DumpProgramJson(program, -1);
  EXPECT_THAT(text, HasSubstr("\"signature\":{\"params\":[\"f64\",\"f64\"],\"results\":"
                              "[\"f64\",\"f64\"]},\"gradient_of\":{\"function\":\"f\","
                              "\"wrt\":[1]},\"loc\":{\"file\":\"grad.cc\",\"line\":5},"
                              "\"blocks\":[]}"));
  absl::StatusOr<Program> loaded = LoadProgramJson(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->module.functions[1].gradient_of, (GradientOf{FunctionId(2), {1}}));
  // Other functions have no gradient_of field.
  EXPECT_EQ(ProgramToJson(program)["functions"][0].count("gradient_of"), 0u);
  EXPECT_EQ(ProgramToJson(program)["functions"][2].count("gradient_of"), 0u);
}

TEST(JsonTest, SpecialValuesAreWrittenExactly) {
  Program program = testing::MakeProgramWithSpecialConstants();
  Json j = ProgramToJson(program);
  auto values = [&](int op) {
    return j[Pointer("/functions/0/blocks/0/ops/" + std::to_string(op) + "/attrs/literal/values")];
  };
  EXPECT_EQ(values(0), Json::array({"nan"}));
  EXPECT_EQ(values(1), Json::array({"inf"}));
  EXPECT_EQ(values(2), Json::array({"-inf"}));
  ASSERT_TRUE(values(3)[0].is_number_float());
  EXPECT_TRUE(std::signbit(values(3)[0].get<double>()));
  EXPECT_EQ(values(4)[0].get<double>(), 1e-310);
  EXPECT_TRUE(values(6)[0].is_number_unsigned());
  EXPECT_EQ(values(6)[0].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(j[Pointer("/functions/0/blocks/0/ops/6/attrs/literal/dtype")], "u64");
  EXPECT_EQ(values(7), Json::parse("[1.5, -2.0, 0.1]"));
  EXPECT_EQ(j[Pointer("/functions/0/blocks/0/ops/8/attrs/dtype")], "i64");
  EXPECT_EQ(j[Pointer("/functions/0/blocks/0/ops/9/attrs/ints")], Json::parse("[1, 2]"));
  EXPECT_EQ(j[Pointer("/functions/0/blocks/0/ops/10/attrs/matrix")],
            Json::parse(R"({"rows": 2, "cols": 3, "data": [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]})"));
  EXPECT_EQ(j[Pointer("/functions/0/blocks/0/ops/12/attrs/kernel")], "scale");
  EXPECT_EQ(j[Pointer("/kernels/0")],
            Json::parse(R"({"name": "scale", "inputs": ["f64[3]", "f64"],
                            "outputs": ["f64[3]"], "bit_stable": false, "pure": false})"));
  EXPECT_EQ(j[Pointer("/functions/0/loc")], Json::parse(R"({"file": "special.cc", "line": 1})"));

  std::string text = DumpProgramJson(program);
  EXPECT_THAT(text, HasSubstr("\"nan\""));
  EXPECT_THAT(text, HasSubstr("-0.0"));
  EXPECT_THAT(text, HasSubstr("18446744073709551615"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("null")));

  absl::StatusOr<Program> loaded = LoadProgramJson(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto literal = [&](int op) {
    return *std::get<PrimOp>(loaded->module.functions[0].blocks[0].ops[op]).attrs.literal;
  };
  EXPECT_TRUE(std::isnan(literal(0).floats[0]));
  EXPECT_EQ(literal(1).floats[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(literal(2).floats[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(literal(3).floats[0], 0.0);
  EXPECT_TRUE(std::signbit(literal(3).floats[0]));
  EXPECT_EQ(literal(4).floats[0], 1e-310);
  EXPECT_EQ(literal(6).ints[0], -1);  // u64 max, bit-cast
}

TEST(JsonTest, RandomDoublesRoundTripBitForBit) {
  Program program = testing::MakeProgramWithSpecialConstants();
  auto& op = std::get<PrimOp>(program.module.functions[0].blocks[0].ops[7]);
  std::mt19937_64 rng(2024);
  Literal& literal = *op.attrs.literal;
  literal.floats.clear();
  for (int i = 0; i < 5000; ++i) {
    uint64_t bits = rng();
    if (i % 5 == 0) bits >>= rng() % 64;  // subnormals and small exponents
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isnan(d)) literal.floats.push_back(d);
  }
  literal.type.shape = {static_cast<int64_t>(literal.floats.size())};
  absl::StatusOr<Program> loaded = LoadProgramJson(DumpProgramJson(program));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const auto& back =
      std::get<PrimOp>(loaded->module.functions[0].blocks[0].ops[7]).attrs.literal->floats;
  ASSERT_EQ(back.size(), literal.floats.size());
  for (size_t i = 0; i < back.size(); ++i) {
    ASSERT_EQ(std::memcmp(&back[i], &literal.floats[i], sizeof(double)), 0)
        << literal.floats[i] << " came back as " << back[i];
  }
}

TEST(JsonTest, ReadsLenientFormsOfOptionalValues) {
  Json j = ProgramToJson(testing::MakeProgramWithSpecialConstants());
  j["an_unknown_field"] = Json::array({1, 2});                   // ignored
  j[Pointer("/functions/0/blocks/0/ops/0/a_future_attr")] = 3;   // ignored
  j[Pointer("/variables/0/type")] = nullptr;                     // null = absent
  j[Pointer("/functions/0/blocks/0/ops/7/attrs/literal/values/0")] = 2;  // int as float
  absl::StatusOr<Program> loaded = ProgramFromJson(j);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->module.variables[0].type.has_value());
  EXPECT_EQ(std::get<PrimOp>(loaded->module.functions[0].blocks[0].ops[7]).attrs.literal->floats[0],
            2.0);
  // Bool literals may be written as true/false.
  Json b = ProgramToJson(testing::MakeFibonacciProgram());
  b[Pointer("/functions/1/blocks/0/ops/0/attrs/literal")] =
      Json::parse(R"({"dtype": "bool", "shape": [2], "values": [true, 0]})");
  loaded = ProgramFromJson(b);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(std::get<PrimOp>(loaded->module.functions[1].blocks[0].ops[0]).attrs.literal->ints,
            (std::vector<int64_t>{1, 0}));
  // No "kernels" at all means none.
  b.erase("kernels");
  EXPECT_TRUE(ProgramFromJson(b).ok());
}

TEST(JsonTest, AKernelIsImpureUnlessDeclaredPure) {
  Json j = ProgramToJson(testing::MakeProgramWithSpecialConstants());
  j[Pointer("/kernels/0")].erase("pure");
  absl::StatusOr<Program> loaded = ProgramFromJson(j);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->module.kernels.at("scale").pure);
  j[Pointer("/kernels/0/pure")] = true;
  loaded = ProgramFromJson(j);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->module.kernels.at("scale").pure);
  EXPECT_EQ(ProgramToJson(*loaded)[Pointer("/kernels/0/pure")], true);
}

// ------------------------------------------------------------------ errors --

// Loads the fixture's JSON after `edit`; the load must fail with a message
// naming `path` and containing `cause`.
void ExpectLoadError(const Program& program, const std::function<void(Json&)>& edit,
                     const std::string& path, const std::string& cause) {
  Json j = ProgramToJson(program);
  edit(j);
  absl::StatusOr<Program> loaded = ProgramFromJson(j);
  ASSERT_FALSE(loaded.ok()) << "expected an error at " << path;
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("at " + path + ": "));
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(cause));
}

void Set(Json& j, const std::string& pointer, Json value) { j[Pointer(pointer)] = std::move(value); }

const Program& Fib() {
  static const Program* program = new Program(testing::MakeFibonacciProgram());
  return *program;
}
const Program& Special() {
  static const Program* program = new Program(testing::MakeProgramWithSpecialConstants());
  return *program;
}
const Program& Lowered() {
  static const Program* program = new Program(testing::MakeSmallLoweredProgram());
  return *program;
}

TEST(JsonErrorTest, MalformedTextGivesBytePosition) {
  absl::StatusOr<Program> loaded = LoadProgramJson("{\"format\": \"autobatch-ir\", ]");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("malformed"));
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("at byte 28"));
  EXPECT_FALSE(LoadProgramJson("").ok());
  EXPECT_FALSE(LoadProgramJson("[1, 2").ok());
  EXPECT_THAT(std::string(LoadProgramJson("{\"a\": 1e999}").status().message()),
              HasSubstr("malformed"));
}

TEST(JsonErrorTest, TopLevelMustBeAnObject) {
  absl::StatusOr<Program> loaded = LoadProgramJson("[1, 2, 3]");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()),
              HasSubstr("at /: expected an object, got array"));
}

TEST(JsonErrorTest, MissingField) {
  ExpectLoadError(Fib(), [](Json& j) { j[Pointer("/functions/1/blocks/0")].erase("terminator"); },
                  "/functions/1/blocks/0/terminator", "required field is missing");
  ExpectLoadError(Fib(), [](Json& j) { j.erase("stage"); }, "/stage",
                  "required field is missing");
  ExpectLoadError(Special(),
                  [](Json& j) { j[Pointer("/functions/0/blocks/0/ops/7/attrs/literal")].erase("shape"); },
                  "/functions/0/blocks/0/ops/7/attrs/literal/shape", "required field is missing");
}

TEST(JsonErrorTest, IllTypedField) {
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/entry", "zero"); }, "/entry",
                  "expected an integer, got string");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/entry", 0.5); }, "/entry",
                  "expected an integer, got number");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/params", 0); },
                  "/functions/1/params", "expected an array, got number");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/variables/3/name", Json::array()); },
                  "/variables/3/name", "expected a string, got array");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/2", "block"); },
                  "/functions/1/blocks/2", "expected an object, got string");
  ExpectLoadError(Special(), [](Json& j) { Set(j, "/kernels/0/bit_stable", 0); },
                  "/kernels/0/bit_stable", "expected true or false, got number");
  ExpectLoadError(Special(), [](Json& j) { Set(j, "/kernels/0/pure", "yes"); },
                  "/kernels/0/pure", "expected true or false, got string");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/7/attrs/literal/values/1", "two"); },
                  "/functions/0/blocks/0/ops/7/attrs/literal/values/1",
                  "expected a number, \"nan\", \"inf\" or \"-inf\", got \"two\"");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/6/attrs/literal/values/0", -1); },
                  "/functions/0/blocks/0/ops/6/attrs/literal/values/0",
                  "expected an integer in [0, 2^64)");
  ExpectLoadError(Fib(),
                  [](Json& j) {
                    Set(j, "/functions/1/blocks/0/ops/0/attrs/literal/values/0",
                        std::numeric_limits<uint64_t>::max());
                  },
                  "/functions/1/blocks/0/ops/0/attrs/literal/values/0", "is out of range");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/loc/line", int64_t{1} << 40); },
                  "/functions/1/loc/line", "does not fit in 32 bits");
}

TEST(JsonErrorTest, UnknownFormat) {
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/format", "tfp-ir"); }, "/format",
                  "unknown format \"tfp-ir\"; expected \"autobatch-ir\"");
}

TEST(JsonErrorTest, UnsupportedVersion) {
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/version", 2); }, "/version",
                  "unsupported version 2; this build reads version 1");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/version", 0); }, "/version",
                  "unsupported version 0");
}

TEST(JsonErrorTest, UnknownNames) {
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/0/ops/1/prim", "frobnicate"); },
                  "/functions/1/blocks/0/ops/1/prim", "unknown primitive \"frobnicate\"");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/stage", "optimized"); }, "/stage",
                  "unknown stage \"optimized\"");
  ExpectLoadError(Lowered(), [](Json& j) { Set(j, "/variables/0/storage", "heap"); },
                  "/variables/0/storage", "unknown storage class \"heap\"");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/1/ops/1/kind", "invoke"); },
                  "/functions/1/blocks/1/ops/1/kind", "unknown op kind \"invoke\"");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/3/terminator/kind", "jump"); },
                  "/functions/1/blocks/3/terminator/kind", "unknown terminator kind \"jump\"");
}

// The lists of expected kinds are written from the control-op table
// (ir/control_ops.def); their text is pinned here.
TEST(JsonErrorTest, UnknownKindsListTheExpectedOnes) {
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/1/ops/1/kind", "invoke"); },
                  "/functions/1/blocks/1/ops/1/kind",
                  "unknown op kind \"invoke\"; expected \"prim\", \"call\", \"pop\", \"tape_push\" or \"tape_pop\"");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/3/terminator/kind", "jump"); },
                  "/functions/1/blocks/3/terminator/kind",
                  "unknown terminator kind \"jump\"; expected branch, goto, return, push_goto, "
                  "indirect_goto or halt");
}

TEST(JsonErrorTest, UnknownDType) {
  ExpectLoadError(Special(), [](Json& j) { Set(j, "/variables/0/type", "q64[3]"); },
                  "/variables/0/type", "unknown dtype \"q64\" in type \"q64[3]\"");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/0/attrs/literal/dtype", "f16"); },
                  "/functions/0/blocks/0/ops/0/attrs/literal/dtype", "unknown dtype \"f16\"");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/8/attrs/dtype", "int"); },
                  "/functions/0/blocks/0/ops/8/attrs/dtype", "unknown dtype \"int\"");
  ExpectLoadError(Special(), [](Json& j) { Set(j, "/kernels/0/inputs/1", "complex"); },
                  "/kernels/0/inputs/1", "unknown dtype \"complex\"");
  ExpectLoadError(Special(), [](Json& j) { Set(j, "/functions/0/signature/params/0", "f64[3"); },
                  "/functions/0/signature/params/0", "malformed type \"f64[3\"");
  ExpectLoadError(Special(), [](Json& j) { Set(j, "/variables/0/type", "f64[-1]"); },
                  "/variables/0/type", "malformed type");
  ExpectLoadError(
      Special(),
      [](Json& j) { Set(j, "/variables/0/type", "f64[4294967296,4294967296,4294967296]"); },
      "/variables/0/type", "too many elements");
}

// A huge name or type is quoted in part, so the message stays short.
TEST(JsonErrorTest, LongNamesAreCutInMessages) {
  const std::string huge_type = "f64[" + std::string(100000, '1') + "]";
  Json json = Json::parse(DumpProgramJson(Special()));
  Set(json, "/variables/0/type", huge_type);
  absl::StatusOr<Program> loaded = LoadProgramJson(json.dump());
  ASSERT_FALSE(loaded.ok());
  EXPECT_LT(loaded.status().message().size(), 400u) << loaded.status().message();
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("\" (cut; 100005 bytes)"));
  json = Json::parse(DumpProgramJson(Fib()));
  Set(json, "/functions/1/blocks/0/ops/1/prim", std::string(100000, 'p') + "\n");
  loaded = LoadProgramJson(json.dump());
  ASSERT_FALSE(loaded.ok());
  EXPECT_LT(loaded.status().message().size(), 400u);
}

TEST(JsonErrorTest, WrongArity) {
  ExpectLoadError(Fib(),
                  [](Json& j) { j[Pointer("/functions/1/blocks/0/ops/1/inputs")].push_back(0); },
                  "/functions/1/blocks/0/ops/1/inputs", "primitive \"gt\" takes 2 inputs, got 3");
  ExpectLoadError(Fib(),
                  [](Json& j) { j[Pointer("/functions/1/blocks/0/ops/1/outputs")].push_back(1); },
                  "/functions/1/blocks/0/ops/1/outputs",
                  "primitive \"gt\" has exactly one output, got 2");
  ExpectLoadError(Fib(),
                  [](Json& j) { Set(j, "/functions/1/blocks/0/ops/1/outputs", Json::array()); },
                  "/functions/1/blocks/0/ops/1/outputs",
                  "primitive \"gt\" has exactly one output, got 0");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/5/inputs", Json::array()); },
                  "/functions/0/blocks/0/ops/5/inputs",
                  "primitive \"concat\" takes one or more inputs, got 0");
  // User kernels have no fixed arity: their signature is checked later.
  Json j = ProgramToJson(Special());
  j[Pointer("/functions/0/blocks/0/ops/12/inputs")].push_back(0);
  EXPECT_TRUE(ProgramFromJson(j).ok());
}

TEST(JsonErrorTest, DanglingIndices) {
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/0/terminator/then", 9); },
                  "/functions/1/blocks/0/terminator/then",
                  "block index 9 is out of range: function \"fibonacci\" has 4 blocks");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/1/terminator/target", -1); },
                  "/functions/1/blocks/1/terminator/target", "block index -1 is out of range");
  ExpectLoadError(Lowered(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/terminator/return_to", 2); },
                  "/functions/0/blocks/0/terminator/return_to", "block index 2 is out of range");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/0/ops/1/inputs/0", 1000); },
                  "/functions/1/blocks/0/ops/1/inputs/0",
                  "variable index 1000 is out of range: the program has 11 variables");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/0/terminator/cond", 11); },
                  "/functions/1/blocks/0/terminator/cond", "variable index 11 is out of range");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/0/results/0", -1); },
                  "/functions/0/results/0", "variable index -1 is out of range");
  ExpectLoadError(Lowered(), [](Json& j) { Set(j, "/functions/0/blocks/1/ops/2/vars/1", 6); },
                  "/functions/0/blocks/1/ops/2/vars/1", "variable index 6 is out of range");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions/1/blocks/1/ops/1/callee", 2); },
                  "/functions/1/blocks/1/ops/1/callee",
                  "function index 2 is out of range: the program has 2 functions");
  ExpectLoadError(Lowered(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/terminator/callee", 7); },
                  "/functions/0/blocks/0/terminator/callee", "function index 7 is out of range");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/entry", 2); }, "/entry",
                  "function index 2 is out of range");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/variables/4/function", 5); },
                  "/variables/4/function", "function index 5 is out of range");
  ExpectLoadError(Fib(), [](Json& j) { Set(j, "/functions", Json::array()); }, "/entry",
                  "the program has 0 functions");
  Program in_place = MakeCornerCaseProgram();
  ExpectLoadError(in_place, [](Json& j) { Set(j, "/functions/1/blocks/0/ops/1/in_place/0", 99); },
                  "/functions/1/blocks/0/ops/1/in_place/0", "variable index 99 is out of range");
}

TEST(JsonErrorTest, MalformedGradientOf) {
  const Program program = testing::MakeGradientStubProgram();
  const std::string grad = "/functions/1/gradient_of";
  ExpectLoadError(program, [&](Json& j) { Set(j, grad + "/function", "g"); },
                  grad + "/function",
                  "unknown function \"g\"; name the function this one is the gradient of");
  ExpectLoadError(program, [&](Json& j) { Set(j, grad + "/function", 2); }, grad + "/function",
                  "expected a string, got number");
  ExpectLoadError(program, [&](Json& j) { Set(j, "/functions/0/name", "f"); }, grad + "/function",
                  "2 functions are named \"f\"; function names must be unique");
  ExpectLoadError(program, [&](Json& j) { Set(j, grad + "/wrt/0", 2); }, grad + "/wrt/0",
                  "parameter index 2 is out of range: function \"f\" has 2 params");
  ExpectLoadError(program, [&](Json& j) { Set(j, grad + "/wrt/0", -1); }, grad + "/wrt/0",
                  "parameter index -1 is out of range");
  ExpectLoadError(program, [&](Json& j) { Set(j, grad + "/wrt/0", "b"); }, grad + "/wrt/0",
                  "expected an integer, got string");
  ExpectLoadError(program, [&](Json& j) { Set(j, grad + "/wrt", 1); }, grad + "/wrt",
                  "expected an array, got number");
  ExpectLoadError(program, [&](Json& j) { Set(j, grad, Json::array()); }, grad,
                  "expected an object, got array");
  ExpectLoadError(program, [&](Json& j) { j[Pointer(grad)].erase("wrt"); }, grad + "/wrt",
                  "required field is missing");
}

TEST(JsonErrorTest, InconsistentAttributes) {
  ExpectLoadError(Special(),
                  [](Json& j) {
                    j[Pointer("/functions/0/blocks/0/ops/7/attrs/literal/values")].push_back(1.0);
                  },
                  "/functions/0/blocks/0/ops/7/attrs/literal/values",
                  "a literal of type f64[3] needs 3 values, got 4");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/7/attrs/literal/shape/0", -3); },
                  "/functions/0/blocks/0/ops/7/attrs/literal/shape",
                  "expected dimensions >= 0");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/10/attrs/matrix/rows", 3); },
                  "/functions/0/blocks/0/ops/10/attrs/matrix/data",
                  "a 3x3 matrix needs rows * cols values, got 6");
  ExpectLoadError(Special(),
                  [](Json& j) { Set(j, "/functions/0/blocks/0/ops/10/attrs/matrix/cols", -2); },
                  "/functions/0/blocks/0/ops/10/attrs/matrix/cols", "expected a size >= 0");
  ExpectLoadError(Special(),
                  [](Json& j) { j["kernels"].push_back(j[Pointer("/kernels/0")]); },
                  "/kernels/1/name", "duplicate kernel \"scale\"");
}

// ------------------------------------------------------------------ fuzzing --

TEST(JsonFuzzTest, TruncatedTextIsAnErrorNeverACrash) {
  for (const Program& program : AllFixtures()) {
    std::string text = DumpProgramJson(program);
    for (size_t size = 0; size < text.size(); size += 7) {
      absl::StatusOr<Program> loaded = LoadProgramJson(std::string_view(text).substr(0, size));
      ASSERT_FALSE(loaded.ok()) << "truncated at " << size;
      EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("malformed"));
    }
  }
}

// Calls visit(pointer, key, parent) for every member of every object.
void ForEachMember(const Json& j, const std::string& pointer,
                   const std::function<void(const std::string&, const std::string&)>& visit) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      visit(pointer, key);
      ForEachMember(value, pointer + "/" + key, visit);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      ForEachMember(j[i], pointer + "/" + std::to_string(i), visit);
    }
  }
}

bool IsOptionalField(const std::string& parent, const std::string& key) {
  static const std::set<std::string> kOptional = {
      "kernels", "type",     "storage",  "signature",  "loc",
      "label",   "attrs",    "in_place", "bit_stable", "gradient_of",
      "pure"};
  bool is_attribute = parent.size() >= 6 && parent.substr(parent.size() - 6) == "/attrs";
  return kOptional.count(key) > 0 || is_attribute;
}

TEST(JsonFuzzTest, DeletingAFieldIsAnErrorUnlessItIsOptional) {
  int required = 0, optional = 0;
  for (const Program& program : AllFixtures()) {
    const Json original = ProgramToJson(program);
    ForEachMember(original, "", [&](const std::string& parent, const std::string& key) {
      Json edited = original;
      edited[Pointer(parent)].erase(key);
      absl::StatusOr<Program> loaded = ProgramFromJson(edited);
      std::string path = parent + "/" + key;
      if (IsOptionalField(parent, key)) {
        ++optional;
        ASSERT_TRUE(loaded.ok()) << path << ": " << loaded.status();
        ExpectIndicesInRange(*loaded);
      } else {
        ++required;
        ASSERT_FALSE(loaded.ok()) << "deleting " << path << " was accepted";
        EXPECT_THAT(std::string(loaded.status().message()),
                    HasSubstr("at " + path + ": required field is missing"));
      }
    });
  }
  EXPECT_GT(required, 500);
  EXPECT_GT(optional, 50);
}

TEST(JsonFuzzTest, ReplacingAValueNeverCrashesOrLeavesABadIndex) {
  const std::vector<Json> replacements = {
      Json(-1), Json(0), Json(1), Json(3), Json(1 << 20), Json(2.5), Json("x"), Json("nan"),
      Json(nullptr), Json(true), Json::array(), Json::object(),
      Json(std::numeric_limits<uint64_t>::max())};
  int accepted = 0, rejected = 0;
  for (const Program& program : AllFixtures()) {
    const Json original = ProgramToJson(program);
    const Json flat = original.flatten();  // every leaf, by pointer
    for (const auto& [pointer, value] : flat.items()) {
      for (const Json& replacement : replacements) {
        Json edited = original;
        edited[Pointer(pointer)] = replacement;
        absl::StatusOr<Program> loaded = ProgramFromJson(edited);
        if (!loaded.ok()) {
          ++rejected;
          EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument)
              << pointer << ": " << loaded.status();
          continue;
        }
        ++accepted;
        ExpectIndicesInRange(*loaded);
        // A loaded program can be printed and saved again.
        EXPECT_FALSE(PrintProgram(*loaded).empty());
        absl::StatusOr<Program> again = LoadProgramJson(DumpProgramJson(*loaded));
        ASSERT_TRUE(again.ok()) << pointer << ": " << again.status();
      }
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace autobatch
