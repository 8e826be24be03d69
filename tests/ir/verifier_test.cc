// Tests of the IR verifier: valid programs at every stage, and one failing
// program per invariant, each checking the message and its location.
#include "ir/verifier.h"

#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/overloaded.h"
#include "ir/testing/fib_program.h"
#include "ir/testing/tape_programs.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

SourceLoc L(int line) { return {"fib.cc", line}; }

PrimOp Prim(Primitive prim, std::vector<VarId> in, VarId out, int line,
            Attributes attrs = {}) {
  PrimOp op;
  op.prim = prim;
  op.inputs = std::move(in);
  op.outputs = {out};
  op.attrs = std::move(attrs);
  op.loc = L(line);
  return op;
}

PrimOp Const(int64_t value, VarId out, int line) {
  Attributes attrs;
  attrs.literal = Literal::I64(value);
  return Prim(Primitive::kConstant, {}, out, line, std::move(attrs));
}

CallOp Call(FunctionId callee, std::vector<VarId> args,
            std::vector<VarId> results, int line) {
  return CallOp{callee, std::move(args), std::move(results), L(line)};
}

const TensorType kI64 = Scalar(DType::kI64);
const TensorType kBool = Scalar(DType::kBool);

// fib(n) = n > 1 ? fib(n - 1) + fib(n - 2) : 1, by hand.
struct Fib {
  Program program;
  FunctionId fib;
  VarId n, one, c, n1, r1, two, n2, r2, ans;

  Function& fn() { return program.module.function(fib); }
  Block& block(int b) { return fn().blocks.at(b); }
  Variable& var(VarId v) { return program.module.var(v); }
};

// Adds variables of `f` to `m` with the given types and storage classes.
VarId AddVar(Module& m, FunctionId f, std::string name, const TensorType& type,
             StorageClass storage, Stage stage) {
  Variable v;
  v.name = std::move(name);
  v.function = f;
  if (stage >= Stage::kTyped) v.type = type;
  if (stage >= Stage::kAllocated) v.storage = storage;
  return m.AddVariable(std::move(v));
}

// The unlowered program at `stage` (kUntyped, kTyped or kAllocated):
//   ^0 entry:   one = 1; c = n > one; branch c ^1 ^2
//   ^1 recurse: n1 = n - one; r1 = fib(n1); two = 2; n2 = n - two;
//               r2 = fib(n2); ans = r1 + r2; goto ^3
//   ^2 base:    ans = 1; goto ^3
//   ^3 exit:    return
Fib MakeFib(Stage stage) {
  Fib f;
  Module& m = f.program.module;
  Function fn;
  fn.name = "fib";
  fn.loc = L(1);
  f.fib = m.AddFunction(std::move(fn));
  using SC = StorageClass;
  f.n = AddVar(m, f.fib, "n", kI64, SC::kFull, stage);
  f.one = AddVar(m, f.fib, "one", kI64, SC::kRegister, stage);
  f.c = AddVar(m, f.fib, "c", kBool, SC::kTemporary, stage);
  f.n1 = AddVar(m, f.fib, "n1", kI64, SC::kTemporary, stage);
  f.r1 = AddVar(m, f.fib, "r1", kI64, SC::kFull, stage);
  f.two = AddVar(m, f.fib, "two", kI64, SC::kTemporary, stage);
  f.n2 = AddVar(m, f.fib, "n2", kI64, SC::kTemporary, stage);
  f.r2 = AddVar(m, f.fib, "r2", kI64, SC::kTemporary, stage);
  f.ans = AddVar(m, f.fib, "ans", kI64, SC::kRegister, stage);

  Function& fib = m.function(f.fib);
  fib.params = {f.n};
  fib.results = {f.ans};
  fib.blocks.resize(4);
  fib.blocks[0].label = "entry";
  fib.blocks[0].ops = {Const(1, f.one, 2), Prim(Primitive::kGt, {f.n, f.one}, f.c, 2)};
  fib.blocks[0].terminator = Branch{f.c, BlockId(1), BlockId(2)};
  fib.blocks[0].loc = L(2);
  fib.blocks[1].label = "recurse";
  fib.blocks[1].ops = {Prim(Primitive::kSub, {f.n, f.one}, f.n1, 3),
                       Call(f.fib, {f.n1}, {f.r1}, 3),
                       Const(2, f.two, 3),
                       Prim(Primitive::kSub, {f.n, f.two}, f.n2, 3),
                       Call(f.fib, {f.n2}, {f.r2}, 3),
                       Prim(Primitive::kAdd, {f.r1, f.r2}, f.ans, 3)};
  fib.blocks[1].terminator = Goto{BlockId(3)};
  fib.blocks[2].label = "base";
  fib.blocks[2].ops = {Const(1, f.ans, 4)};
  fib.blocks[2].terminator = Goto{BlockId(3)};
  fib.blocks[3].label = "exit";
  fib.blocks[3].terminator = Return{};
  fib.blocks[3].loc = L(5);
  f.program.entry = f.fib;
  f.program.stage = stage;
  return f;
}

// The same function lowered for the stack VM: the caller writes the callee's
// parameter n (pushing a frame), PushGotos, and reads its result ans.
//   ^0 entry:  one = 1; c = n > one; branch c ^1 ^3
//   ^1 call1:  n1 = n - one; n = copy n1; pushgoto fib, ^2
//   ^2 call2:  r1 = copy ans; pop ans; two = 2; n2 = n - two; n = copy n2;
//              pushgoto fib, ^4
//   ^4 join:   r2 = copy ans; pop ans; ans = r1 + r2; pop r1, n; indirect
//   ^3 base:   ans = 1; pop n; indirect
Fib MakeLoweredFib() {
  Fib f = MakeFib(Stage::kLowered);
  f.var(f.ans).storage = StorageClass::kFull;
  Function& fib = f.fn();
  fib.blocks.resize(5);
  fib.blocks[0].terminator = Branch{f.c, BlockId(1), BlockId(3)};
  fib.blocks[1].label = "call1";
  fib.blocks[1].ops = {Prim(Primitive::kSub, {f.n, f.one}, f.n1, 3),
                       Prim(Primitive::kCopy, {f.n1}, f.n, 3)};
  fib.blocks[1].terminator = PushGoto{f.fib, BlockId(2)};
  fib.blocks[2].label = "call2";
  fib.blocks[2].ops = {Prim(Primitive::kCopy, {f.ans}, f.r1, 3),
                       PopOp{{f.ans}, L(3)},
                       Const(2, f.two, 3),
                       Prim(Primitive::kSub, {f.n, f.two}, f.n2, 3),
                       Prim(Primitive::kCopy, {f.n2}, f.n, 3)};
  fib.blocks[2].terminator = PushGoto{f.fib, BlockId(4)};
  fib.blocks[3].label = "base";
  fib.blocks[3].ops = {Const(1, f.ans, 4), PopOp{{f.n}, L(4)}};
  fib.blocks[3].terminator = IndirectGoto{};
  fib.blocks[4].label = "join";
  fib.blocks[4].ops = {Prim(Primitive::kCopy, {f.ans}, f.r2, 3),
                       PopOp{{f.ans}, L(3)},
                       Prim(Primitive::kAdd, {f.r1, f.r2}, f.ans, 3),
                       PopOp{{f.r1, f.n}, L(3)}};
  fib.blocks[4].terminator = IndirectGoto{};
  return f;
}

// Adds a one-block function `name`(params...) -> results, whose block holds
// `ops` and returns (or, if lowered, IndirectGotos).
FunctionId AddFunction(Program& p, std::string name) {
  Function fn;
  fn.name = std::move(name);
  fn.blocks.resize(1);
  fn.blocks[0].terminator = p.stage == Stage::kLowered
                                ? Terminator(IndirectGoto{})
                                : Terminator(Return{});
  return p.module.AddFunction(std::move(fn));
}

std::string AllErrors(const std::vector<VerifierError>& errors) {
  std::string out;
  for (const VerifierError& e : errors) out += e.ToString() + "\n";
  return out;
}

void ExpectValid(const Program& p) {
  std::vector<VerifierError> errors = CollectVerifierErrors(p);
  EXPECT_TRUE(errors.empty()) << AllErrors(errors);
  EXPECT_TRUE(VerifyProgram(p).ok());
}

struct Loc {
  FunctionId f;
  BlockId b;
  int op = -1;
};
const Loc kProgram{FunctionId(), BlockId(), -1};
Loc InFunction(FunctionId f) { return {f, BlockId(), -1}; }
Loc AtOp(FunctionId f, int b, int op) { return {f, BlockId(b), op}; }
Loc AtTerminator(FunctionId f, int b) { return {f, BlockId(b), -1}; }

// Checks that `error` is at `loc` and mentions every substring.
void ExpectErrorAt(const VerifierError& error, Loc loc,
                   std::initializer_list<std::string_view> substrings) {
  EXPECT_EQ(error.function, loc.f) << error.ToString();
  EXPECT_EQ(error.block, loc.b) << error.ToString();
  EXPECT_EQ(error.op_index, loc.op) << error.ToString();
  for (std::string_view s : substrings) {
    EXPECT_THAT(error.message, HasSubstr(std::string(s))) << error.ToString();
  }
}

// The program has exactly one error, at `loc`, mentioning every substring;
// VerifyProgram reports the same line.
void ExpectOneError(const Program& p, Loc loc,
                    std::initializer_list<std::string_view> substrings) {
  std::vector<VerifierError> errors = CollectVerifierErrors(p);
  ASSERT_EQ(errors.size(), 1u) << AllErrors(errors);
  ExpectErrorAt(errors[0], loc, substrings);
  absl::Status status = VerifyProgram(p);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()), errors[0].ToString());
}

// --- valid programs ---------------------------------------------------------------

TEST(VerifierTest, UntypedFibonacciIsValid) { ExpectValid(MakeFib(Stage::kUntyped).program); }

TEST(VerifierTest, TypedFibonacciIsValid) { ExpectValid(MakeFib(Stage::kTyped).program); }

TEST(VerifierTest, AllocatedFibonacciIsValid) {
  ExpectValid(MakeFib(Stage::kAllocated).program);
}

TEST(VerifierTest, LoweredFibonacciIsValid) { ExpectValid(MakeLoweredFib().program); }

TEST(VerifierTest, TypedFibonacciWithSignatureIsValid) {
  Fib f = MakeFib(Stage::kTyped);
  f.fn().signature = Signature{{kI64}, {kI64}};
  ExpectValid(f.program);
}

// The programs other tests share (ir/testing/fib_program.h).
TEST(VerifierTest, SharedTestProgramsAreValid) {
  Program fib = testing::MakeFibonacciProgram();
  ExpectValid(fib);
  // Typed by hand: every variable i64 but the branch condition.
  fib.stage = Stage::kTyped;
  for (Variable& v : fib.module.variables) v.type = v.name == "cond" ? kBool : kI64;
  ExpectValid(fib);
  fib.module.variables.back().type = Scalar(DType::kF64);  // main's r
  EXPECT_FALSE(VerifyProgram(fib).ok());

  ExpectValid(testing::MakeProgramWithSpecialConstants());
  ExpectValid(testing::MakeSmallLoweredProgram());
}

// --- ToString and VerifyProgram ------------------------------------------------------

TEST(VerifierTest, ErrorToString) {
  VerifierError e;
  e.message = "boom";
  EXPECT_EQ(e.ToString(), "program: boom");
  e.function = FunctionId(0);
  e.function_name = "fib";
  EXPECT_EQ(e.ToString(), "function 'fib': boom");
  e.block = BlockId(2);
  e.block_label = "base";
  e.op_index = 3;
  EXPECT_EQ(e.ToString(), "function 'fib', block ^2 (base), op 3: boom");
  e.op_index = -1;
  e.block_label = "";
  EXPECT_EQ(e.ToString(), "function 'fib', block ^2, terminator: boom");
}

TEST(VerifierTest, ReportsEveryViolationOnePerLine) {
  Fib f = MakeFib(Stage::kUntyped);
  f.block(2).terminator = Goto{BlockId(9)};
  f.block(1).ops[5] = Prim(Primitive::kAdd, {f.r1}, f.ans, 3);
  f.program.entry = FunctionId(4);
  std::vector<VerifierError> errors = CollectVerifierErrors(f.program);
  ASSERT_EQ(errors.size(), 3u) << AllErrors(errors);
  ExpectErrorAt(errors[0], kProgram, {"entry function #4 does not exist"});
  ExpectErrorAt(errors[1], AtOp(f.fib, 1, 5), {"add takes 2 inputs, got 1"});
  ExpectErrorAt(errors[2], AtTerminator(f.fib, 2), {"goto target ^9 does not exist"});
  absl::Status status = VerifyProgram(f.program);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            errors[0].ToString() + "\n" + errors[1].ToString() + "\n" +
                errors[2].ToString());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'fib', block ^1 (recurse), op 5: add takes 2 "
                        "inputs, got 1 (at fib.cc:3)"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'fib', block ^2 (base), terminator: goto "
                        "target ^9 does not exist (function 'fib' has 4 blocks)"));
}

// f(x, y) = x * y, and g, its gradient stub with respect to `wrt`:
//   func @f(%x: f64, %y: f64) -> (%r: f64) { ^0: %r = mul %x, %y; return }
//   func @g(%gx: f64, %gy: f64) -> (%v: f64, %d0: f64, ...) = gradient @f wrt ...
struct Grad {
  Program program;
  FunctionId f, g;
  VarId x, y, r, gx, gy, v;
  std::vector<VarId> d;  // one per wrt entry

  Function& stub() { return program.module.function(g); }
  Function& primal() { return program.module.function(f); }
  Variable& var(VarId id) { return program.module.var(id); }
};

Grad MakeGrad(Stage stage, std::vector<int32_t> wrt = {0}) {
  const TensorType f64 = Scalar(DType::kF64);
  Grad gr;
  Module& m = gr.program.module;
  Function f;
  f.name = "f";
  f.loc = L(10);
  gr.f = m.AddFunction(std::move(f));
  Function g;
  g.name = "g";
  g.loc = L(20);
  gr.g = m.AddFunction(std::move(g));
  using SC = StorageClass;
  gr.x = AddVar(m, gr.f, "x", f64, SC::kFull, stage);
  gr.y = AddVar(m, gr.f, "y", f64, SC::kFull, stage);
  gr.r = AddVar(m, gr.f, "r", f64, SC::kFull, stage);
  gr.gx = AddVar(m, gr.g, "gx", f64, SC::kFull, stage);
  gr.gy = AddVar(m, gr.g, "gy", f64, SC::kFull, stage);
  gr.v = AddVar(m, gr.g, "v", f64, SC::kFull, stage);
  for (size_t k = 0; k < wrt.size(); ++k) {
    gr.d.push_back(AddVar(m, gr.g, absl::StrCat("d", k), f64, SC::kFull, stage));
  }
  Function& primal = gr.primal();
  primal.params = {gr.x, gr.y};
  primal.results = {gr.r};
  primal.blocks.resize(1);
  primal.blocks[0].ops = {Prim(Primitive::kMul, {gr.x, gr.y}, gr.r, 11)};
  primal.blocks[0].terminator = Return{};
  Function& stub = gr.stub();
  stub.params = {gr.gx, gr.gy};
  stub.results = {gr.v};
  stub.results.insert(stub.results.end(), gr.d.begin(), gr.d.end());
  stub.gradient_of = GradientOf{gr.f, std::move(wrt)};
  gr.program.entry = gr.g;
  gr.program.stage = stage;
  return gr;
}

// --- program and variables (P1-P3, V1-V3, T1) ------------------------------------------

TEST(VerifierTest, P1EntryMustExist) {
  Fib f = MakeFib(Stage::kTyped);
  f.program.entry = FunctionId();
  ExpectOneError(f.program, kProgram,
                 {"entry function #-1 does not exist", "the module has 1 functions"});
  EXPECT_THAT(CollectVerifierErrors(f.program)[0].ToString(), HasSubstr("program: "));
}

TEST(VerifierTest, P2FunctionNamesAreUnique) {
  Fib f = MakeFib(Stage::kUntyped);
  AddFunction(f.program, "fib");
  ExpectOneError(f.program, kProgram,
                 {"functions #0 and #1 are both named 'fib'", "rename"});
}

TEST(VerifierTest, P3KernelSignatureShapesAreValid) {
  Fib f = MakeFib(Stage::kUntyped);
  f.program.module.kernels["grad"] = {{TensorType{DType::kF64, {-1}}}, {kI64}, true};
  ExpectOneError(f.program, kProgram, {"kernel 'grad' input 0 has shape [-1]"});
}

TEST(VerifierTest, V1VariableFunctionExists) {
  Fib f = MakeFib(Stage::kUntyped);
  f.program.module.AddVariable(Variable{"stray", FunctionId(7), {}, {}});
  ExpectOneError(f.program, kProgram,
                 {"variable 'stray' (#9) names function #7, which does not exist"});
}

TEST(VerifierTest, V2VariableNamesAreUniqueInAFunction) {
  Fib f = MakeFib(Stage::kUntyped);
  f.var(f.two).name = "one";
  ExpectOneError(f.program, InFunction(f.fib),
                 {"variables #1 and #5 are both named 'one'"});
  // The same name in two functions is fine.
  Fib g = MakeFib(Stage::kUntyped);
  FunctionId other = AddFunction(g.program, "other");
  g.program.module.AddVariable(Variable{"one", other, {}, {}});
  ExpectValid(g.program);
}

TEST(VerifierTest, V3TypesHaveValidShapes) {
  Fib f = MakeFib(Stage::kTyped);
  f.var(f.r2).type = TensorType{DType::kI64, {3, -2}};
  ExpectOneError(f.program, InFunction(f.fib),
                 {"variable 'r2' (#7) has shape [3,-2]", "dimensions must be >= 0"});
  f.var(f.r2).type = TensorType{DType::kI64, {int64_t{1} << 40, int64_t{1} << 40}};
  ExpectOneError(f.program, InFunction(f.fib), {"variable 'r2' (#7) has shape"});
}

TEST(VerifierTest, T1TypedProgramsTypeEveryVariable) {
  Fib f = MakeFib(Stage::kTyped);
  f.var(f.r2).type.reset();
  ExpectOneError(f.program, InFunction(f.fib),
                 {"variable 'r2' (#7) has no type in a typed program", "infer_types"});
  // Untyped programs may leave types out.
  f.program.stage = Stage::kUntyped;
  ExpectValid(f.program);
}

// --- functions (F1-F4, T5) -----------------------------------------------------------

TEST(VerifierTest, F1FunctionsHaveBlocks) {
  Fib f = MakeFib(Stage::kUntyped);
  FunctionId empty = AddFunction(f.program, "empty");
  f.program.module.function(empty).blocks.clear();
  ExpectOneError(f.program, InFunction(empty), {"has no blocks", "entry block ^0"});
  EXPECT_EQ(CollectVerifierErrors(f.program)[0].ToString(),
            "function 'empty': has no blocks; every function needs an entry block ^0");
}

TEST(VerifierTest, F2ParametersExist) {
  Fib f = MakeFib(Stage::kUntyped);
  f.fn().params = {VarId(99)};
  ExpectOneError(f.program, InFunction(f.fib),
                 {"parameter 0 #99 does not exist", "the module has 9 variables",
                  "(at fib.cc:1)"});
}

TEST(VerifierTest, F2ResultsBelongToTheFunction) {
  Fib f = MakeFib(Stage::kUntyped);
  FunctionId other = AddFunction(f.program, "other");
  VarId x = f.program.module.AddVariable(Variable{"x", other, {}, {}});
  f.fn().results = {x};
  ExpectOneError(f.program, InFunction(f.fib),
                 {"result 0 'x' (#9) belongs to function 'other', not 'fib'"});
}

TEST(VerifierTest, F3ParametersAreDistinct) {
  Fib f = MakeFib(Stage::kUntyped);
  FunctionId pair = AddFunction(f.program, "pair");
  VarId a = f.program.module.AddVariable(Variable{"a", pair, {}, {}});
  f.program.module.function(pair).params = {a, a};
  ExpectOneError(f.program, InFunction(pair),
                 {"parameters 0 and 1 are the same variable 'a' (#9)"});
}

TEST(VerifierTest, F4SignatureArity) {
  Fib f = MakeFib(Stage::kUntyped);
  f.fn().signature = Signature{{kI64, kI64}, {kI64}};
  ExpectOneError(f.program, InFunction(f.fib),
                 {"the signature declares 2 parameters and 1 results, but the "
                  "function has 1 and 1"});
}

TEST(VerifierTest, T5SignatureTypes) {
  Fib f = MakeFib(Stage::kTyped);
  f.fn().signature = Signature{{Scalar(DType::kF64)}, {kI64}};
  ExpectOneError(f.program, InFunction(f.fib),
                 {"parameter 0 'n' (#0) has type i64, but the signature declares f64"});
  // Not checked before types are inferred.
  f.program.stage = Stage::kUntyped;
  ExpectValid(f.program);
}

// --- references (R1-R4) --------------------------------------------------------------

TEST(VerifierTest, R1OpVariablesExist) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(1).ops[5] = Prim(Primitive::kAdd, {f.r1, VarId(42)}, f.ans, 17);
  ExpectOneError(f.program, AtOp(f.fib, 1, 5),
                 {"input 1 #42 does not exist", "(at fib.cc:17)"});
}

TEST(VerifierTest, R1BranchConditionExists) {
  Fib f = MakeFib(Stage::kAllocated);
  f.block(0).terminator = Branch{VarId(-3), BlockId(1), BlockId(2)};
  ExpectOneError(f.program, AtTerminator(f.fib, 0),
                 {"branch condition #-3 does not exist", "(at fib.cc:2)"});
}

TEST(VerifierTest, R2OpVariablesBelongToTheFunction) {
  Fib f = MakeFib(Stage::kUntyped);
  FunctionId other = AddFunction(f.program, "other");
  VarId x = f.program.module.AddVariable(Variable{"x", other, {}, {}});
  f.block(2).ops[0] = Prim(Primitive::kCopy, {x}, f.ans, 4);
  ExpectOneError(f.program, AtOp(f.fib, 2, 0),
                 {"input 0 'x' (#9) belongs to function 'other', not 'fib'",
                  "(at fib.cc:4)", "pass values through parameters and results"});
}

// Lowered: main(x) -> y calls fib by writing fib's n and reading fib's ans.
Fib MakeLoweredMain(FunctionId* main, VarId* x, VarId* y) {
  Fib f = MakeLoweredFib();
  Program& p = f.program;
  *main = AddFunction(p, "main");
  *x = AddVar(p.module, *main, "x", kI64, StorageClass::kRegister, p.stage);
  *y = AddVar(p.module, *main, "y", kI64, StorageClass::kRegister, p.stage);
  Function& fn = p.module.function(*main);
  fn.params = {*x};
  fn.results = {*y};
  fn.blocks.resize(2);
  fn.blocks[0].ops = {Prim(Primitive::kCopy, {*x}, f.n, 20)};
  fn.blocks[0].terminator = PushGoto{f.fib, BlockId(1)};
  fn.blocks[1].ops = {Prim(Primitive::kCopy, {f.ans}, *y, 21),
                      PopOp{{f.ans}, L(21)}};
  fn.blocks[1].terminator = Halt{};
  p.entry = *main;
  return f;
}

TEST(VerifierTest, R2LoweredCallersUseCalleeParamsAndResults) {
  FunctionId main;
  VarId x, y;
  Fib f = MakeLoweredMain(&main, &x, &y);
  ExpectValid(f.program);
  // But not the callee's other variables.
  f.program.module.function(main).blocks[1].ops[0] =
      Prim(Primitive::kCopy, {f.r1}, y, 21);
  ExpectOneError(f.program, AtOp(main, 1, 0),
                 {"input 0 'r1' (#4) belongs to function 'fib', not 'main'",
                  "may also use the parameters and results of the functions it "
                  "PushGotos to"});
}

TEST(VerifierTest, R3BranchTargetsExist) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(0).terminator = Branch{f.c, BlockId(1), BlockId(4)};
  ExpectOneError(f.program, AtTerminator(f.fib, 0),
                 {"else target ^4 does not exist (function 'fib' has 4 blocks)"});
}

TEST(VerifierTest, R3PushGotoReturnBlockExists) {
  Fib f = MakeLoweredFib();
  f.block(1).terminator = PushGoto{f.fib, BlockId(5)};
  ExpectOneError(f.program, AtTerminator(f.fib, 1),
                 {"return_to block ^5 does not exist (function 'fib' has 5 blocks)"});
}

TEST(VerifierTest, R4CalleesExist) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(1).ops[1] = Call(FunctionId(7), {f.n1}, {f.r1}, 12);
  ExpectOneError(f.program, AtOp(f.fib, 1, 1),
                 {"callee #7 does not exist (the module has 1 functions)",
                  "(at fib.cc:12)"});
  Fib g = MakeLoweredFib();
  g.block(2).terminator = PushGoto{FunctionId(3), BlockId(4)};
  ExpectOneError(g.program, AtTerminator(g.fib, 2), {"PushGoto callee #3 does not exist"});
}

// --- ops (O1-O4) ---------------------------------------------------------------------

TEST(VerifierTest, O1PrimitiveArity) {
  Fib f = MakeFib(Stage::kUntyped);
  f.block(1).ops[3] = Prim(Primitive::kSub, {f.n, f.two, f.one}, f.n2, 9);
  ExpectOneError(f.program, AtOp(f.fib, 1, 3),
                 {"sub takes 2 inputs, got 3", "(at fib.cc:9)"});
}

TEST(VerifierTest, O1BuiltinsHaveOneOutput) {
  Fib f = MakeFib(Stage::kTyped);
  PrimOp op = Const(1, f.ans, 4);
  op.outputs.push_back(f.r2);
  f.block(2).ops[0] = op;
  ExpectOneError(f.program, AtOp(f.fib, 2, 0), {"constant takes 1 output, got 2"});
}

TEST(VerifierTest, O1VariadicNeedsAnInput) {
  Fib f = MakeFib(Stage::kUntyped);
  f.block(2).ops[0] = Prim(Primitive::kConcat, {}, f.ans, 4);
  ExpectOneError(f.program, AtOp(f.fib, 2, 0),
                 {"concat takes one or more inputs, got none"});
}

TEST(VerifierTest, O2UserKernelsAreDeclared) {
  Fib f = MakeFib(Stage::kUntyped);
  Attributes attrs;
  attrs.kernel = "mystery";
  f.block(2).ops[0] = Prim(Primitive::kUserKernel, {f.n}, f.ans, 4, attrs);
  ExpectOneError(f.program, AtOp(f.fib, 2, 0),
                 {"kernel 'mystery' is not declared in Module::kernels",
                  "(at fib.cc:4)"});
  // Declared: valid, also once typed.
  f.program.module.kernels["mystery"] = {{kI64}, {kI64}, true};
  ExpectValid(f.program);
  Fib g = MakeFib(Stage::kTyped);
  g.program.module.kernels["mystery"] = {{kI64}, {kI64}, true};
  g.block(2).ops[0] = Prim(Primitive::kUserKernel, {g.n}, g.ans, 4, attrs);
  ExpectValid(g.program);
  // Its arity must match the signature.
  f.block(2).ops[0] = Prim(Primitive::kUserKernel, {f.n, f.one}, f.ans, 4, attrs);
  ExpectOneError(f.program, AtOp(f.fib, 2, 0), {"kernel 'mystery' takes 1 input, got 2"});
  // And it needs a name.
  f.block(2).ops[0] = Prim(Primitive::kUserKernel, {f.n}, f.ans, 4);
  ExpectOneError(f.program, AtOp(f.fib, 2, 0), {"user-kernel op without a kernel name"});
}

TEST(VerifierTest, O3OutputsAreDistinct) {
  Fib f = MakeFib(Stage::kUntyped);
  f.program.module.kernels["split"] = {{kI64}, {kI64, kI64}, true};
  Attributes attrs;
  attrs.kernel = "split";
  PrimOp op = Prim(Primitive::kUserKernel, {f.n}, f.ans, 4, attrs);
  op.outputs.push_back(f.ans);
  f.block(2).ops[0] = op;
  ExpectOneError(f.program, AtOp(f.fib, 2, 0),
                 {"outputs 0 and 1 are the same variable 'ans' (#8)"});
}

TEST(VerifierTest, O4CallArity) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(1).ops[1] = Call(f.fib, {f.n1, f.n}, {f.r1}, 3);
  ExpectOneError(f.program, AtOp(f.fib, 1, 1),
                 {"call to 'fib' passes 2 arguments and receives 1 results, but "
                  "'fib' has 1 parameters and 1 results"});
}

// --- gradient stubs (G1-G6) ---------------------------------------------------------

TEST(VerifierTest, GradientStubsAreValidUntypedAndTyped) {
  ExpectValid(MakeGrad(Stage::kUntyped).program);
  ExpectValid(MakeGrad(Stage::kTyped).program);
  ExpectValid(MakeGrad(Stage::kTyped, {0, 1}).program);
  // A stub called like any function.
  Grad gr = MakeGrad(Stage::kTyped, {1});
  Module& m = gr.program.module;
  Function main;
  main.name = "main";
  const FunctionId main_id = m.AddFunction(std::move(main));
  const TensorType f64 = Scalar(DType::kF64);
  const VarId a = AddVar(m, main_id, "a", f64, StorageClass::kFull, Stage::kTyped);
  const VarId b = AddVar(m, main_id, "b", f64, StorageClass::kFull, Stage::kTyped);
  const VarId db = AddVar(m, main_id, "db", f64, StorageClass::kFull, Stage::kTyped);
  Function& fn = m.function(main_id);
  fn.params = {a};
  fn.results = {db};
  fn.blocks.resize(1);
  fn.blocks[0].ops = {Call(gr.g, {a, a}, {b, db}, 30)};
  fn.blocks[0].terminator = Return{};
  gr.program.entry = main_id;
  ExpectValid(gr.program);
}

TEST(VerifierTest, F1StubsHaveNoBlocksButOtherFunctionsDo) {
  Grad gr = MakeGrad(Stage::kUntyped);
  gr.primal().blocks.clear();
  ExpectOneError(gr.program, InFunction(gr.f), {"has no blocks"});
}

TEST(VerifierTest, G1StubsOnlyBeforeAllocation) {
  for (Stage stage : {Stage::kAllocated, Stage::kLowered}) {
    Grad gr = MakeGrad(Stage::kTyped);
    gr.program.stage = stage;
    if (stage == Stage::kLowered) {
      gr.primal().blocks[0].terminator = IndirectGoto{};
    }
    ExpectOneError(gr.program, InFunction(gr.g),
                   {"is a gradient stub of 'f' in a", "(at fib.cc:20)",
                    "run the differentiate pass",
                    "(CompileProgram and LowerProgram do)"});
    EXPECT_THAT(CollectVerifierErrors(gr.program)[0].ToString(),
                HasSubstr(absl::StrCat("in a ", std::string(StageName(stage)), " program")));
  }
}

TEST(VerifierTest, G2StubsHaveNoBlocks) {
  Grad gr = MakeGrad(Stage::kUntyped);
  gr.stub().blocks.resize(1);
  gr.stub().blocks[0].terminator = Return{};
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"is a gradient stub of 'f' but has 1 blocks",
                  "a stub has no body until the differentiate pass writes one"});
}

TEST(VerifierTest, G3PrimalExists) {
  Grad gr = MakeGrad(Stage::kUntyped);
  gr.stub().gradient_of->function = FunctionId(7);
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"is a gradient stub of #7, which does not exist (the module has 2 "
                  "functions)"});
  gr.stub().gradient_of->function = FunctionId();
  ExpectOneError(gr.program, InFunction(gr.g), {"gradient stub of #-1, which does not exist"});
}

TEST(VerifierTest, G3PrimalIsNotTheStubItself) {
  Grad gr = MakeGrad(Stage::kUntyped);
  gr.stub().gradient_of->function = gr.g;
  ExpectOneError(gr.program, InFunction(gr.g), {"is a gradient stub of itself"});
}

TEST(VerifierTest, G3PrimalIsNotAStub) {
  Grad gr = MakeGrad(Stage::kUntyped);
  Module& m = gr.program.module;
  Function h;
  h.name = "h";
  h.gradient_of = GradientOf{gr.g, {0}};
  const FunctionId hid = m.AddFunction(std::move(h));
  const TensorType f64 = Scalar(DType::kF64);
  Function& fn = m.function(hid);
  fn.params = {AddVar(m, hid, "a", f64, StorageClass::kFull, Stage::kUntyped),
               AddVar(m, hid, "b", f64, StorageClass::kFull, Stage::kUntyped)};
  fn.results = {AddVar(m, hid, "c", f64, StorageClass::kFull, Stage::kUntyped),
                AddVar(m, hid, "e", f64, StorageClass::kFull, Stage::kUntyped)};
  ExpectOneError(gr.program, InFunction(hid),
                 {"is a gradient stub of 'g', which is itself a gradient stub (of 'f')",
                  "only a function with a body can be differentiated"});
}

TEST(VerifierTest, G4WrtIsNotEmpty) {
  Grad gr = MakeGrad(Stage::kUntyped, {});
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"is a gradient stub of 'f' with respect to no parameter",
                  "list at least one parameter index in wrt"});
}

TEST(VerifierTest, G4WrtIndicesAreParametersOfThePrimal) {
  Grad gr = MakeGrad(Stage::kUntyped, {0, 2});
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"wrt[1] = 2 is not a parameter of 'f' (it has 2 parameters)"});
  gr.stub().gradient_of->wrt = {-1, 0};
  ExpectOneError(gr.program, InFunction(gr.g), {"wrt[0] = -1 is not a parameter of 'f'"});
}

TEST(VerifierTest, G4WrtIsAscendingAndDistinct) {
  Grad gr = MakeGrad(Stage::kUntyped, {1, 0});
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"wrt[1] = 0 follows wrt[0] = 1", "ascending order, each once"});
  gr.stub().gradient_of->wrt = {1, 1};
  ExpectOneError(gr.program, InFunction(gr.g), {"wrt[1] = 1 follows wrt[0] = 1"});
}

TEST(VerifierTest, G5StubHasThePrimalsParameters) {
  Grad gr = MakeGrad(Stage::kUntyped);
  gr.stub().params.pop_back();
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"is a gradient stub of 'f' but has 1 parameters, and 'f' has 2",
                  "a gradient takes the primal's parameters"});
}

TEST(VerifierTest, G5StubReturnsTheValueAndOneGradientPerWrt) {
  Grad gr = MakeGrad(Stage::kUntyped, {0, 1});
  gr.stub().results.pop_back();
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"with respect to 2 parameters but has 2 results",
                  "the value, then one gradient per wrt entry (3 results)"});
}

TEST(VerifierTest, G5PrimalHasOneResult) {
  Grad gr = MakeGrad(Stage::kUntyped);
  gr.primal().results.push_back(gr.x);
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"is a gradient stub of 'f', which has 2 results",
                  "only a function with one result (an f64 scalar)"});
}

TEST(VerifierTest, G6StubParameterTypesAreThePrimals) {
  Grad gr = MakeGrad(Stage::kTyped);
  gr.var(gr.gy).type = Scalar(DType::kF32);
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"parameter 1 'gy' (#4) has type f32, but parameter 1 'y' (#1) of 'f'",
                  "has type f64", "(at fib.cc:20)"});
}

TEST(VerifierTest, G6PrimalReturnsAnF64Scalar) {
  Grad gr = MakeGrad(Stage::kTyped);
  gr.var(gr.x).type = Scalar(DType::kI64);
  gr.var(gr.y).type = Scalar(DType::kI64);
  gr.var(gr.r).type = Scalar(DType::kI64);
  gr.var(gr.gx).type = Scalar(DType::kI64);
  gr.var(gr.gy).type = Scalar(DType::kI64);
  std::vector<VerifierError> errors = CollectVerifierErrors(gr.program);
  ASSERT_EQ(errors.size(), 2u) << AllErrors(errors);
  ExpectErrorAt(errors[0], InFunction(gr.g),
                {"whose result 'r' (#2) has type i64",
                 "only a function returning an f64 scalar can be differentiated"});
  ExpectErrorAt(errors[1], InFunction(gr.g),
                {"with respect to parameter 0 'x' (#0), which has type i64",
                 "gradients exist only with respect to f64 parameters"});
  // A vector result is refused too.
  Grad vec = MakeGrad(Stage::kTyped);
  const TensorType f64x2{DType::kF64, {2}};
  for (VarId v : {vec.x, vec.y, vec.r, vec.gx, vec.gy, vec.v, vec.d[0]}) vec.var(v).type = f64x2;
  ExpectOneError(vec.program, InFunction(vec.g), {"whose result 'r' (#2) has type f64[2]"});
}

TEST(VerifierTest, G6StubValueHasThePrimalsResultType) {
  Grad gr = MakeGrad(Stage::kTyped);
  gr.var(gr.v).type = Scalar(DType::kF32);
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"result 0 'v' (#5) has type f32, but the value of 'f' has type f64"});
}

TEST(VerifierTest, G6GradientsHaveTheirParametersType) {
  Grad gr = MakeGrad(Stage::kTyped, {0, 1});
  const TensorType f64x3{DType::kF64, {3}};
  gr.var(gr.y).type = f64x3;
  gr.var(gr.gy).type = f64x3;
  gr.primal().blocks[0].ops = {Prim(Primitive::kReduceSum, {gr.y}, gr.r, 11)};
  ExpectOneError(gr.program, InFunction(gr.g),
                 {"result 2 'd1' (#7) has type f64, but it is the gradient with respect "
                  "to parameter 1 'y' (#1) of 'f', of type f64[3]"});
  gr.var(gr.d[1]).type = f64x3;
  ExpectValid(gr.program);
}

TEST(VerifierTest, StubErrorsAreAllReported) {
  Grad gr = MakeGrad(Stage::kLowered, {3, 3});
  gr.primal().blocks[0].terminator = IndirectGoto{};
  gr.stub().params.pop_back();
  gr.stub().results.pop_back();
  std::vector<VerifierError> errors = CollectVerifierErrors(gr.program);
  ASSERT_EQ(errors.size(), 5u) << AllErrors(errors);
  ExpectErrorAt(errors[0], InFunction(gr.g), {"in a lowered program"});
  ExpectErrorAt(errors[1], InFunction(gr.g), {"wrt[0] = 3 is not a parameter"});
  ExpectErrorAt(errors[2], InFunction(gr.g), {"wrt[1] = 3 is not a parameter"});
  ExpectErrorAt(errors[3], InFunction(gr.g), {"has 1 parameters, and 'f' has 2"});
  ExpectErrorAt(errors[4], InFunction(gr.g), {"with respect to 2 parameters but has 2 results"});
}

// --- stages (S1) -----------------------------------------------------------------------

TEST(VerifierTest, S1PopOnlyWhenLowered) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(2).ops.push_back(PopOp{{f.n}, L(4)});
  ExpectOneError(f.program, AtOp(f.fib, 2, 1),
                 {"PopOp in an unlowered (typed) program", "(at fib.cc:4)"});
}

TEST(VerifierTest, S1PushGotoOnlyWhenLowered) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(2).terminator = PushGoto{f.fib, BlockId(3)};
  ExpectOneError(f.program, AtTerminator(f.fib, 2),
                 {"PushGoto in an unlowered (typed) program", "lower_calls"});
}

TEST(VerifierTest, S1IndirectGotoOnlyWhenLowered) {
  Fib f = MakeFib(Stage::kUntyped);
  f.block(3).terminator = IndirectGoto{};
  ExpectOneError(f.program, AtTerminator(f.fib, 3),
                 {"IndirectGoto in an unlowered (untyped) program", "(at fib.cc:5)"});
}

TEST(VerifierTest, S1NoCallOpOnceLowered) {
  Fib f = MakeLoweredFib();
  f.block(3).ops.push_back(Call(f.fib, {f.n}, {f.ans}, 4));
  ExpectOneError(f.program, AtOp(f.fib, 3, 2),
                 {"CallOp to 'fib' in a lowered program", "PushGoto"});
}

TEST(VerifierTest, S1NoReturnOnceLowered) {
  Fib f = MakeLoweredFib();
  f.block(3).terminator = Return{};
  ExpectOneError(f.program, AtTerminator(f.fib, 3),
                 {"Return in a lowered program", "IndirectGoto"});
}

// --- types (T2-T4) -----------------------------------------------------------------------

TEST(VerifierTest, T2PrimOpsPassTheirTypeRule) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(1).ops[5] = Prim(Primitive::kEq, {f.r1, f.c}, f.c, 15);
  ExpectOneError(f.program, AtOp(f.fib, 1, 5),
                 {"eq (at fib.cc:15)", "operand 1 has type bool",
                  "operand 0 has type i64", "one dtype"});
  // Types are not checked before infer_types.
  f.program.stage = Stage::kUntyped;
  ExpectValid(f.program);
}

TEST(VerifierTest, T2OutputsHaveTheInferredType) {
  Fib f = MakeFib(Stage::kTyped);
  Attributes attrs;
  attrs.literal = Literal::F64(2);
  f.block(1).ops[2] = Prim(Primitive::kConstant, {}, f.two, 14, attrs);
  ExpectOneError(f.program, AtOp(f.fib, 1, 2),
                 {"output 0 'two' (#5) has type i64, but constant gives f64",
                  "(at fib.cc:14)"});
}

TEST(VerifierTest, T3BranchConditionIsABoolScalar) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(0).terminator = Branch{f.n, BlockId(1), BlockId(2)};
  ExpectOneError(f.program, AtTerminator(f.fib, 0),
                 {"branch condition 'n' (#0) has type i64", "bool scalar",
                  "(at fib.cc:2)"});
}

TEST(VerifierTest, T4CallArgumentTypes) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(1).ops[1] = Call(f.fib, {f.c}, {f.r1}, 3);
  ExpectOneError(f.program, AtOp(f.fib, 1, 1),
                 {"argument 0 'c' (#2) has type bool, but parameter 0 'n' (#0) of "
                  "'fib' has type i64"});
}

TEST(VerifierTest, T4CallResultTypes) {
  Fib f = MakeFib(Stage::kTyped);
  f.block(1).ops[4] = Call(f.fib, {f.n2}, {f.c}, 3);
  ExpectOneError(f.program, AtOp(f.fib, 1, 4),
                 {"result 0 'c' (#2) has type bool, but result 0 'ans' (#8) of "
                  "'fib' has type i64"});
}

// --- storage classes (A1-A6) ---------------------------------------------------------------

TEST(VerifierTest, A1ParametersAreNotTemporary) {
  Fib f = MakeFib(Stage::kAllocated);
  FunctionId ignore = AddFunction(f.program, "ignore");
  Module& m = f.program.module;
  VarId x = AddVar(m, ignore, "x", kI64, StorageClass::kTemporary, Stage::kAllocated);
  VarId y = AddVar(m, ignore, "y", kI64, StorageClass::kRegister, Stage::kAllocated);
  m.function(ignore).params = {x};
  m.function(ignore).results = {y};
  m.function(ignore).blocks[0].ops = {Const(0, y, 30)};
  ExpectOneError(f.program, InFunction(ignore),
                 {"parameter 0 'x' (#9) is temp", "make it register or full"});
}

TEST(VerifierTest, A1ResultsAreNotTemporary) {
  Fib f = MakeFib(Stage::kAllocated);
  f.var(f.ans).storage = StorageClass::kTemporary;
  ExpectOneError(f.program, InFunction(f.fib),
                 {"result 0 'ans' (#8) is temp", "read by the caller"});
}

TEST(VerifierTest, A2ResultsAreNotNull) {
  Fib f = MakeFib(Stage::kAllocated);
  f.var(f.ans).storage = StorageClass::kNull;
  ExpectOneError(f.program, InFunction(f.fib), {"result 0 'ans' (#8) is null"});
  // Storage classes mean nothing before allocation.
  f.program.stage = Stage::kTyped;
  ExpectValid(f.program);
}

TEST(VerifierTest, A3NullVariablesAreNeverRead) {
  Fib f = MakeFib(Stage::kAllocated);
  f.var(f.r2).storage = StorageClass::kNull;
  ExpectOneError(f.program, AtOp(f.fib, 1, 5),
                 {"input 1 'r2' (#7) is read, but its storage class is null",
                  "(at fib.cc:3)"});
  // Writing a null variable is fine: drop the add, keep the call.
  f.block(1).ops[5] = Prim(Primitive::kCopy, {f.r1}, f.ans, 3);
  ExpectValid(f.program);
}

TEST(VerifierTest, A3NullBranchCondition) {
  Fib f = MakeFib(Stage::kAllocated);
  f.var(f.c).storage = StorageClass::kNull;
  ExpectOneError(f.program, AtTerminator(f.fib, 0),
                 {"branch condition 'c' (#2) is read, but its storage class is null"});
}

TEST(VerifierTest, A4TemporariesAreReadOnlyInTheirBlock) {
  Fib f = MakeFib(Stage::kAllocated);
  f.var(f.one).storage = StorageClass::kTemporary;  // written ^0, read ^0, ^1
  ExpectOneError(f.program, AtOp(f.fib, 1, 0),
                 {"input 1 'one' (#1) is a temp read before any write to it in "
                  "this block"});
}

TEST(VerifierTest, A4TemporariesAreReadAfterTheirWrite) {
  Fib f = MakeFib(Stage::kAllocated);
  std::swap(f.block(1).ops[2], f.block(1).ops[3]);  // n2 = n - two; two = 2
  ExpectOneError(f.program, AtOp(f.fib, 1, 2),
                 {"input 1 'two' (#5) is a temp read before any write"});
}

TEST(VerifierTest, A4TemporaryBranchCondition) {
  Fib f = MakeFib(Stage::kAllocated);
  f.block(0).ops.pop_back();  // c is no longer written in ^0
  ExpectOneError(f.program, AtTerminator(f.fib, 0),
                 {"branch condition 'c' (#2) is a temp read before any write"});
}

TEST(VerifierTest, A5PopOnlyFullVariables) {
  Fib f = MakeLoweredFib();
  f.block(3).ops.push_back(PopOp{{f.one}, L(4)});
  ExpectOneError(f.program, AtOp(f.fib, 3, 2),
                 {"PopOp pops 'one' (#1), whose storage class is register",
                  "only full variables"});
}

TEST(VerifierTest, A6RegisterNotLiveAcrossARecursiveCall) {
  Fib f = MakeFib(Stage::kAllocated);
  f.var(f.n).storage = StorageClass::kRegister;  // n is read after fib(n1)
  ExpectOneError(f.program, AtOp(f.fib, 1, 1),
                 {"register variable 'n' (#0) is live across the call to 'fib', "
                  "which may re-enter 'fib' and overwrite it",
                  "make it full"});
}

TEST(VerifierTest, A6TemporaryNotLiveAcrossARecursiveCall) {
  Fib f = MakeFib(Stage::kAllocated);
  f.var(f.r1).storage = StorageClass::kTemporary;  // r1 is read after fib(n2)
  ExpectOneError(f.program, AtOp(f.fib, 1, 4),
                 {"temp variable 'r1' (#4) is live across the call to 'fib'"});
}

TEST(VerifierTest, A6RegisterNotLiveAcrossARecursivePushGoto) {
  Fib f = MakeLoweredFib();
  f.var(f.r1).storage = StorageClass::kRegister;
  f.block(4).ops[3] = PopOp{{f.n}, L(3)};
  ExpectOneError(f.program, AtTerminator(f.fib, 2),
                 {"register variable 'r1' (#4) is live across the call to 'fib'"});
}

TEST(VerifierTest, A6CalleeResultsAreNotLiveAcrossTheirCall) {
  // ans is read right after each PushGoto, but the call itself writes it.
  Fib f = MakeLoweredFib();
  f.var(f.ans).storage = StorageClass::kRegister;
  for (int b : {2, 4}) f.block(b).ops.erase(f.block(b).ops.begin() + 1);
  ExpectValid(f.program);
}

// main(x) -> y: r = leaf(x); y = r + x; return. x is live across the call.
TEST(VerifierTest, A6RegisterMayCrossACallThatCannotReenter) {
  Program p;
  p.stage = Stage::kAllocated;
  FunctionId main = AddFunction(p, "main");
  FunctionId leaf = AddFunction(p, "leaf");
  Module& m = p.module;
  using SC = StorageClass;
  VarId x = AddVar(m, main, "x", kI64, SC::kRegister, p.stage);
  VarId r = AddVar(m, main, "r", kI64, SC::kTemporary, p.stage);
  VarId y = AddVar(m, main, "y", kI64, SC::kRegister, p.stage);
  VarId a = AddVar(m, leaf, "a", kI64, SC::kRegister, p.stage);
  VarId b = AddVar(m, leaf, "b", kI64, SC::kRegister, p.stage);
  m.function(main).params = {x};
  m.function(main).results = {y};
  m.function(main).blocks[0].ops = {Call(leaf, {x}, {r}, 40),
                                    Prim(Primitive::kAdd, {r, x}, y, 41)};
  m.function(leaf).params = {a};
  m.function(leaf).results = {b};
  m.function(leaf).blocks[0].ops = {Prim(Primitive::kNeg, {a}, b, 42)};
  p.entry = main;
  ExpectValid(p);

  // Once leaf may call main again, x is clobbered.
  m.function(leaf).blocks[0].ops.push_back(Call(main, {a}, {b}, 43));
  ExpectOneError(p, AtOp(main, 0, 0),
                 {"register variable 'x' (#0) is live across the call to 'leaf', "
                  "which may re-enter 'main'",
                  "(at fib.cc:40)"});
}

// f(k, n) -> y: r = f(k, n); y = r + k. The call passes k to itself, so no
// call writes k: a Register may cross it. Passing anything else writes k.
TEST(VerifierTest, A6RegisterParamPassedToItselfMayCrossTheCall) {
  Program p;
  p.stage = Stage::kAllocated;
  FunctionId f = AddFunction(p, "f");
  Module& m = p.module;
  using SC = StorageClass;
  VarId k = AddVar(m, f, "k", kI64, SC::kRegister, p.stage);
  VarId n = AddVar(m, f, "n", kI64, SC::kRegister, p.stage);
  VarId r = AddVar(m, f, "r", kI64, SC::kTemporary, p.stage);
  VarId y = AddVar(m, f, "y", kI64, SC::kRegister, p.stage);
  m.function(f).params = {k, n};
  m.function(f).results = {y};
  m.function(f).blocks[0].ops = {Call(f, {k, n}, {r}, 50),
                                 Prim(Primitive::kAdd, {r, k}, y, 51)};
  p.entry = f;
  ExpectValid(p);

  m.function(f).blocks[0].ops[0] = Call(f, {n, n}, {r}, 50);
  ExpectOneError(p, AtOp(f, 0, 0),
                 {"register variable 'k' (#0) is live across the call to 'f', "
                  "which may re-enter 'f'"});
}

// --- robustness ----------------------------------------------------------------------------

TEST(VerifierTest, BrokenIndicesEverywhereAreReportedWithoutCrashing) {
  Fib f = MakeLoweredFib();
  Function& fn = f.fn();
  fn.params = {VarId(1000)};
  fn.results = {VarId(-5)};
  fn.blocks[0].ops.push_back(PopOp{{VarId(77)}, L(1)});
  fn.blocks[1].terminator = PushGoto{FunctionId(9), BlockId(-1)};
  PrimOp copy = Prim(Primitive::kCopy, {VarId(500)}, VarId(501), 1);
  fn.blocks[2].ops.push_back(copy);
  fn.blocks[4].terminator = Branch{VarId(300), BlockId(8), BlockId(-2)};
  f.program.module.variables[3].function = FunctionId(12);
  f.program.entry = FunctionId(3);
  std::vector<VerifierError> errors = CollectVerifierErrors(f.program);
  EXPECT_GE(errors.size(), 10u) << AllErrors(errors);
  EXPECT_FALSE(VerifyProgram(f.program).ok());
}

// Every index field of `p`, with the size of the table it indexes.
std::vector<std::pair<int32_t*, size_t>> IndexFields(Program& p) {
  std::vector<std::pair<int32_t*, size_t>> fields;
  Module& m = p.module;
  const size_t num_vars = m.variables.size();
  const size_t num_functions = m.functions.size();
  auto vars = [&](std::vector<VarId>& ids) {
    for (VarId& v : ids) fields.emplace_back(&v.value, num_vars);
  };
  fields.emplace_back(&p.entry.value, num_functions);
  for (Variable& v : m.variables) fields.emplace_back(&v.function.value, num_functions);
  for (Function& fn : m.functions) {
    const size_t num_blocks = fn.blocks.size();
    vars(fn.params);
    vars(fn.results);
    if (fn.gradient_of) fields.emplace_back(&fn.gradient_of->function.value, num_functions);
    for (Block& block : fn.blocks) {
      for (Op& op : block.ops) {
        std::visit(Overloaded{
                       [&](PrimOp& o) {
                         vars(o.inputs);
                         vars(o.outputs);
                       },
                       [&](CallOp& o) {
                         fields.emplace_back(&o.callee.value, num_functions);
                         vars(o.args);
                         vars(o.results);
                       },
                       [&](PopOp& o) { vars(o.vars); },
                       [&](TapePushOp& o) {
                         fields.emplace_back(&o.tape.value, num_vars);
                         fields.emplace_back(&o.value.value, num_vars);
                       },
                       [&](TapePopOp& o) {
                         fields.emplace_back(&o.tape.value, num_vars);
                         fields.emplace_back(&o.result.value, num_vars);
                       },
                   },
                   op);
      }
      std::visit(Overloaded{
                     [&](Branch& t) {
                       fields.emplace_back(&t.cond.value, num_vars);
                       fields.emplace_back(&t.then_block.value, num_blocks);
                       fields.emplace_back(&t.else_block.value, num_blocks);
                     },
                     [&](Goto& t) { fields.emplace_back(&t.target.value, num_blocks); },
                     [](Return&) {},
                     [&](PushGoto& t) {
                       fields.emplace_back(&t.callee.value, num_functions);
                       fields.emplace_back(&t.return_to.value, num_blocks);
                     },
                     [](IndirectGoto&) {},
                     [](Halt&) {},
                 },
                 block.terminator);
    }
  }
  return fields;
}

// Out-of-range indices anywhere, at every stage: always reported, never a
// crash (run under ASan/UBSan to check the latter fully).
TEST(VerifierTest, RandomOutOfRangeIndicesAreAlwaysReported) {
  std::mt19937 rng(20240601);
  for (int trial = 0; trial < 3000; ++trial) {
    FunctionId main;
    VarId x, y;
    Program p;
    switch (trial % 7) {
      case 0: p = MakeFib(Stage::kUntyped).program; break;
      case 1: p = MakeFib(Stage::kTyped).program; break;
      case 2: p = MakeFib(Stage::kAllocated).program; break;
      case 3: p = MakeLoweredMain(&main, &x, &y).program; break;
      case 4: p = MakeGrad(Stage::kUntyped).program; break;
      case 5: p = MakeGrad(Stage::kTyped, {0, 1}).program; break;
      case 6: p = testing::RecursiveTapeProgram(); break;
    }
    std::vector<std::pair<int32_t*, size_t>> fields = IndexFields(p);
    const int corruptions = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < corruptions; ++i) {
      auto [field, size] = fields[rng() % fields.size()];
      const int32_t bad[] = {-1, -7, static_cast<int32_t>(size),
                             static_cast<int32_t>(size) + 3,
                             std::numeric_limits<int32_t>::max()};
      *field = bad[rng() % 5];
    }
    std::vector<VerifierError> errors = CollectVerifierErrors(p);
    ASSERT_FALSE(errors.empty()) << "trial " << trial;
    for (const VerifierError& e : errors) {
      ASSERT_FALSE(e.ToString().empty());
    }
  }
}

}  // namespace
}  // namespace autobatch
