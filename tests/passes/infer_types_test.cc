// Tests for infer_types (passes/infer_types.h).
#include "passes/infer_types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/testing/call_trees.h"
#include "ir/testing/fib_program.h"
#include "ir/verifier.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using testing::FindVar;
using testing::FunctionBuilder;

const TensorType kI64 = Scalar(DType::kI64);
const TensorType kF64 = Scalar(DType::kF64);
const TensorType kBool = Scalar(DType::kBool);

TensorType TypeOf(const Program& p, const std::string& f, const std::string& v) {
  return *p.module.var(FindVar(p, f, v)).type;
}

std::string Message(const absl::StatusOr<Program>& result) {
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST(InferTypesTest, FibonacciFromTheBaseCase) {
  absl::StatusOr<Program> typed = InferTypes(testing::MakeFibonacciProgram(), {{kI64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  // The whole text: tests/passes/text/infer_types_fib.ir (text_test.cc).
  EXPECT_EQ(typed->stage, Stage::kTyped);
  EXPECT_TRUE(VerifyProgram(*typed).ok()) << VerifyProgram(*typed);
  // The recursive result gets its type from the base case (fill_like n).
  EXPECT_EQ(TypeOf(*typed, "fibonacci", "ans"), kI64);
  EXPECT_EQ(TypeOf(*typed, "fibonacci", "f1"), kI64);
  EXPECT_EQ(TypeOf(*typed, "fibonacci", "cond"), kBool);
  EXPECT_EQ(TypeOf(*typed, "main", "r"), kI64);
  for (const Variable& v : typed->module.variables) EXPECT_TRUE(v.type.has_value()) << v.name;
}

TEST(InferTypesTest, TypesFollowTheInputs) {
  absl::StatusOr<Program> typed = InferTypes(testing::MakeFibonacciProgram(), {{kF64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(TypeOf(*typed, "fibonacci", "ans"), kF64);
  EXPECT_EQ(TypeOf(*typed, "fibonacci", "cond"), kBool);
}

TEST(InferTypesTest, MutualRecursionWithTheBaseCaseInBothFunctions) {
  absl::StatusOr<Program> typed = InferTypes(testing::MakeEvenOddProgram(), {{kI64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  // The whole text: tests/passes/text/infer_types_even_odd.ir (text_test.cc).
  EXPECT_EQ(TypeOf(*typed, "is_even", "r"), kBool);
  EXPECT_EQ(TypeOf(*typed, "is_odd", "r"), kBool);
  EXPECT_EQ(TypeOf(*typed, "is_odd", "n"), kI64);
}

// even(n) = n == 0 ? 1.5 : odd(n - 1); odd(n) = even(n - 1): only `even`
// has a base case, and it is the callee of odd, which is typed first in
// module order. The fixed point still types odd's result from even's.
TEST(InferTypesTest, MutualRecursionWithOneBaseCase) {
  Program p;
  FunctionBuilder odd(p, "odd", "one_base.cc", 1);
  FunctionBuilder even(p, "even", "one_base.cc", 10);
  p.entry = odd.id();
  {
    VarId n = odd.Param("n");
    VarId r = odd.Result("r");
    VarId one = odd.Var("one");
    VarId m = odd.Var("m");
    BlockId b = odd.Block("entry");
    odd.Fill(b, 2, n, 1, one);
    odd.Prim(b, 2, Primitive::kSub, {n, one}, m);
    odd.Call(b, 2, even.id(), {m}, {r});
    odd.Return(b, 3);
  }
  VarId n = even.Param("n");
  VarId r = even.Result("r");
  VarId zero = even.Var("zero");
  VarId c = even.Var("c");
  VarId one = even.Var("one");
  VarId m = even.Var("m");
  BlockId entry = even.Block("entry");
  BlockId rec = even.Block("rec");
  BlockId base = even.Block("base");
  even.Fill(entry, 11, n, 0, zero);
  even.Prim(entry, 11, Primitive::kEq, {n, zero}, c);
  even.Branch(entry, 11, c, base, rec);
  even.Fill(rec, 12, n, 1, one);
  even.Prim(rec, 12, Primitive::kSub, {n, one}, m);
  even.Call(rec, 12, odd.id(), {m}, {r});
  even.Return(rec, 12);
  even.Constant(base, 13, Literal::F64(1.5), r);
  even.Return(base, 13);
  absl::StatusOr<Program> typed = InferTypes(p, {{kI64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(TypeOf(*typed, "odd", "r"), kF64);
  EXPECT_EQ(TypeOf(*typed, "even", "r"), kF64);
}

// A deadline that has passed stops the sweeps at their first reading of
// the clock (after 1,024 ops swept; kPassOpWork).
TEST(InferTypesTest, StopsOnceItsDeadlinePasses) {
  const Program chain = testing::CallChain(3000);
  absl::StatusOr<Program> stopped = InferTypes(chain, {{kI64}}, testing::PassedDeadline());
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(stopped.status().message(),
            "pass infer_types was stopped by the compile's time budget");
  EXPECT_EQ(*InferTypes(chain, {{kI64}}, Deadline::In(1e6)), *InferTypes(chain, {{kI64}}));
}

TEST(InferTypesTest, LoopVariablesAndCollatz) {
  absl::StatusOr<Program> typed = InferTypes(testing::MakeCollatzProgram(), {{kI64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  // The whole text: tests/passes/text/infer_types_collatz.ir (text_test.cc).
  EXPECT_EQ(TypeOf(*typed, "collatz", "x"), kI64);
  EXPECT_EQ(TypeOf(*typed, "collatz", "even"), kBool);
}

TEST(InferTypesTest, DropsUnreachableFunctionsAndUnusedVariables) {
  Program p = testing::MakeFibonacciProgram();
  FunctionBuilder unused(p, "unused", "fib.cc", 40);
  unused.Param("x");
  unused.Result("y");
  unused.Return(unused.Block("entry"), 41);
  const FunctionId fib = *p.module.FindFunction("fibonacci");
  p.module.AddVariable(Variable{"never_mentioned", fib, std::nullopt, StorageClass::kFull});
  absl::StatusOr<Program> typed = InferTypes(p, {{kI64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_FALSE(typed->module.FindFunction("unused").has_value());
  EXPECT_EQ(typed->module.functions.size(), 2u);
  for (const Variable& v : typed->module.variables) EXPECT_NE(v.name, "never_mentioned");
  EXPECT_EQ(typed->module.variables.size(), 11u);
  EXPECT_EQ(typed->entry_function().name, "main");
}

TEST(InferTypesTest, SignatureIsCheckedAndCanTypeARecursionWithoutBaseCase) {
  // f(n) -> r = f(n): no base case, but a signature gives the result type.
  Program p;
  FunctionBuilder f(p, "f", "sig.cc", 1);
  p.entry = f.id();
  VarId n = f.Param("n");
  VarId r = f.Result("r");
  BlockId b = f.Block("entry");
  f.Call(b, 2, f.id(), {n}, {r});
  f.Return(b, 3);
  p.module.functions[0].signature = Signature{{kI64}, {kF64}};
  absl::StatusOr<Program> typed = InferTypes(p, {{kI64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(TypeOf(*typed, "f", "r"), kF64);

  // A signature that disagrees with the inputs.
  std::string message = Message(InferTypes(p, {{kF64}}));
  EXPECT_EQ(message,
            "type mismatch in function 'f': parameter 'n' is f64 (program input 0) but "
            "i64 (declared by the signature of 'f' at sig.cc:1); make the declared types "
            "and the values agree (or cast the value)");
}

TEST(InferTypesTest, ErrorTwoTypesOnTwoPaths) {
  // g(n) -> r: if n > 0 { r = 1.5 } else { r = n }.
  Program p;
  FunctionBuilder g(p, "g", "paths.cc", 1);
  p.entry = g.id();
  VarId n = g.Param("n");
  VarId r = g.Result("r");
  VarId zero = g.Var("zero");
  VarId c = g.Var("c");
  BlockId entry = g.Block("entry");
  BlockId a = g.Block("then");
  BlockId b = g.Block("else");
  g.Fill(entry, 2, n, 0, zero);
  g.Prim(entry, 2, Primitive::kGt, {n, zero}, c);
  g.Branch(entry, 2, c, a, b);
  g.Constant(a, 3, Literal::F64(1.5), r);
  g.Return(a, 3);
  g.Prim(b, 5, Primitive::kCopy, {n}, r);
  g.Return(b, 5);
  EXPECT_EQ(Message(InferTypes(p, {{kI64}})),
            "type mismatch in function 'g': result 'r' is f64 (assigned by constant at "
            "paths.cc:3) but i64 (assigned by copy at paths.cc:5); a variable has one type "
            "on every path; cast one of the values (cast primitive) or use two variables");
}

TEST(InferTypesTest, ErrorBranchOnNonBool) {
  Program p;
  FunctionBuilder g(p, "g", "branch.cc", 1);
  p.entry = g.id();
  VarId n = g.Param("n");
  VarId r = g.Result("r");
  BlockId entry = g.Block("entry");
  BlockId done = g.Block("done");
  g.Branch(entry, 7, n, done, done);
  g.Prim(done, 8, Primitive::kCopy, {n}, r);
  g.Return(done, 8);
  EXPECT_EQ(Message(InferTypes(p, {{kI64}})),
            "type error in function 'g', block ^0 (entry): the branch at branch.cc:7 tests "
            "'n', which is i64, but a condition must be a bool scalar; compare it (e.g. ne "
            "with 0)");
}

TEST(InferTypesTest, ErrorRecursionWithoutBaseCase) {
  // f(n) -> r: r = f(n - 1) + 1 on every path.
  Program p;
  FunctionBuilder main_fn(p, "main", "nobase.cc", 1);
  FunctionBuilder f(p, "f", "nobase.cc", 5);
  p.entry = main_fn.id();
  {
    VarId n = main_fn.Param("n");
    VarId r = main_fn.Result("r");
    BlockId b = main_fn.Block("entry");
    main_fn.Call(b, 2, f.id(), {n}, {r});
    main_fn.Return(b, 3);
  }
  VarId n = f.Param("n");
  VarId r = f.Result("r");
  VarId one = f.Var("one");
  VarId m = f.Var("m");
  VarId s = f.Var("s");
  BlockId b = f.Block("entry");
  f.Fill(b, 6, n, 1, one);
  f.Prim(b, 6, Primitive::kSub, {n, one}, m);
  f.Call(b, 7, f.id(), {m}, {s});
  f.Prim(b, 8, Primitive::kAdd, {s, one}, r);
  f.Return(b, 9);
  EXPECT_EQ(Message(InferTypes(p, {{kI64}})),
            "cannot infer the type of result 'r' of function 'f': every path that assigns "
            "it depends on a recursive call (the call to 'f' from 'f' at nobase.cc:7; "
            "dependency cycle: 'r' (f) <- 's' (f) <- 'r'), so no base case gives it a "
            "type; add a path that returns without recursing, or declare the function's "
            "signature");
}

TEST(InferTypesTest, ErrorCalledWithTwoArgumentTypes) {
  // main(x: i64) -> (r, q): r = id(x); y = cast(x) to f64; q = id(y).
  Program p;
  FunctionBuilder main_fn(p, "main", "poly.cc", 1);
  FunctionBuilder id(p, "id", "poly.cc", 10);
  p.entry = main_fn.id();
  VarId x = main_fn.Param("x");
  VarId r = main_fn.Result("r");
  VarId q = main_fn.Result("q");
  VarId y = main_fn.Var("y");
  BlockId b = main_fn.Block("entry");
  main_fn.Call(b, 2, id.id(), {x}, {r});
  Attributes cast;
  cast.dtype = DType::kF64;
  main_fn.Prim(b, 3, Primitive::kCast, {x}, y, cast);
  main_fn.Call(b, 4, id.id(), {y}, {q});
  main_fn.Return(b, 5);
  VarId a = id.Param("a");
  VarId out = id.Result("out");
  BlockId ib = id.Block("entry");
  id.Prim(ib, 11, Primitive::kCopy, {a}, out);
  id.Return(ib, 11);
  EXPECT_EQ(Message(InferTypes(p, {{kI64}})),
            "type mismatch in function 'id': parameter 'a' is i64 (argument 0 'x' of the "
            "call from 'main' at poly.cc:2) but f64 (argument 0 'y' of the call from 'main' "
            "at poly.cc:4); a function is typed once, so every call must pass the same "
            "types; cast the argument (cast primitive) or call a separate function");
}

TEST(InferTypesTest, ErrorPrimitiveRuleNamesFunctionAndOperands) {
  Program p;
  FunctionBuilder g(p, "g", "rule.cc", 1);
  p.entry = g.id();
  VarId n = g.Param("n");
  VarId x = g.Param("x");
  VarId r = g.Result("r");
  BlockId b = g.Block("entry");
  g.Prim(b, 4, Primitive::kAdd, {n, x}, r);
  g.Return(b, 5);
  std::string message = Message(InferTypes(p, {{kI64, kF64}}));
  EXPECT_THAT(message, HasSubstr("type error in function 'g', block ^0 (entry): add"));
  EXPECT_THAT(message, HasSubstr("rule.cc:4"));
  EXPECT_THAT(message, HasSubstr("(operands 'n': i64, 'x': f64)"));
}

TEST(InferTypesTest, ErrorLoopVariableWithoutInitialValue) {
  // h(n) -> r: loop { t = x + n; x = t; if ... } -- x never initialized.
  Program p;
  FunctionBuilder h(p, "h", "loop.cc", 1);
  p.entry = h.id();
  VarId n = h.Param("n");
  VarId r = h.Result("r");
  VarId x = h.Var("x");
  VarId t = h.Var("t");
  VarId c = h.Var("c");
  BlockId entry = h.Block("entry");
  BlockId body = h.Block("body");
  BlockId exit = h.Block("exit");
  h.Goto(entry, 2, body);
  h.Prim(body, 3, Primitive::kAdd, {x, n}, t);
  h.Prim(body, 4, Primitive::kCopy, {t}, x);
  h.Prim(body, 5, Primitive::kGt, {x, n}, c);
  h.Branch(body, 5, c, exit, body);
  h.Prim(exit, 6, Primitive::kCopy, {x}, r);
  h.Return(exit, 6);
  EXPECT_EQ(Message(InferTypes(p, {{kI64}})),
            "cannot infer the type of variable 'x' in function 'h': it is only ever "
            "computed from itself ('x' (h) <- 't' (h) <- 'x', at loop.cc:4); give it an initial value on the way in (e.g. before the loop)");
}

TEST(InferTypesTest, ErrorNeverAssigned) {
  Program p;
  FunctionBuilder g(p, "g", "never.cc", 1);
  p.entry = g.id();
  VarId n = g.Param("n");
  VarId r = g.Result("r");
  VarId ghost = g.Var("ghost");
  BlockId b = g.Block("entry");
  g.Prim(b, 3, Primitive::kAdd, {n, ghost}, r);
  g.Return(b, 4);
  EXPECT_EQ(Message(InferTypes(p, {{kI64}})),
            "cannot infer the type of variable 'ghost' in function 'g': it is read (at "
            "never.cc:3) but never assigned anywhere, so the type of 'r' in function 'g' "
            "cannot be inferred either; assign it before reading it");
}

TEST(InferTypesTest, ErrorWrongNumberOfInputTypes) {
  EXPECT_EQ(Message(InferTypes(testing::MakeFibonacciProgram(), {{kI64, kI64}})),
            "the entry function 'main' takes 1 input(s) but 2 input type(s) were given; "
            "pass one TensorType per parameter");
}

// --- gradient stubs ----------------------------------------------------------

// The stub's params type the primal's; the primal's body types its result,
// which types the stub's value; the primal's param b types the gradient db.
TEST(InferTypesTest, TypesFlowBothWaysBetweenAStubAndItsPrimal) {
  absl::StatusOr<Program> typed =
      InferTypes(testing::MakeGradientStubCallerProgram(), {{kF64, kF64}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_TRUE(VerifyProgram(*typed).ok()) << VerifyProgram(*typed);
  for (const char* v : {"a", "b", "ab", "r"}) EXPECT_EQ(TypeOf(*typed, "f", v), kF64) << v;
  for (const char* v : {"a", "b", "value", "db"}) EXPECT_EQ(TypeOf(*typed, "grad_f", v), kF64) << v;
  EXPECT_EQ(TypeOf(*typed, "main", "dy"), kF64);
  // The stub stays a stub, its primal renumbered past the pruned `unused`.
  EXPECT_EQ(typed->module.functions.size(), 3u);
  const Function& stub = testing::FindFunction(*typed, "grad_f");
  ASSERT_TRUE(stub.gradient_of.has_value());
  EXPECT_EQ(typed->module.function(stub.gradient_of->function).name, "f");
  EXPECT_TRUE(stub.blocks.empty());
}

// Vector params: each gradient has its param's type.
TEST(InferTypesTest, GradientsHaveTheirParametersTypes) {
  const TensorType f64x3 = Vector(DType::kF64, 3);
  Program p = testing::MakeGradientStubCallerProgram();
  // f(a, b) = reduce_sum(a * b).
  Function& f = p.module.function(*p.module.FindFunction("f"));
  std::get<PrimOp>(f.blocks[0].ops[1]).prim = Primitive::kReduceSum;
  std::get<PrimOp>(f.blocks[0].ops[1]).inputs.pop_back();
  absl::StatusOr<Program> typed = InferTypes(p, {{f64x3, f64x3}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_TRUE(VerifyProgram(*typed).ok()) << VerifyProgram(*typed);
  EXPECT_EQ(TypeOf(*typed, "grad_f", "value"), kF64);
  EXPECT_EQ(TypeOf(*typed, "grad_f", "db"), f64x3);
  EXPECT_EQ(TypeOf(*typed, "main", "dy"), f64x3);
}

TEST(InferTypesTest, ErrorGradientOfANonF64Function) {
  EXPECT_EQ(Message(InferTypes(testing::MakeGradientStubCallerProgram(), {{kI64, kI64}})),
            "cannot differentiate function 'f' (for its gradient 'grad_f', registered at "
            "grad.cc:7): its result 'r' is i64, but only a function returning an f64 scalar "
            "has a gradient; cast the result to f64 (cast primitive) or reduce it to a scalar");
  const TensorType f64x2 = Vector(DType::kF64, 2);
  EXPECT_THAT(Message(InferTypes(testing::MakeGradientStubCallerProgram(), {{f64x2, kF64}})),
              HasSubstr("its result 'r' is f64[2], but only a function returning an f64 scalar"));
}

TEST(InferTypesTest, ErrorGradientWithRespectToANonF64Parameter) {
  // f(a, b) = a * a, b an i64 the result does not use.
  Program p = testing::MakeGradientStubCallerProgram();
  Function& f = p.module.function(*p.module.FindFunction("f"));
  std::get<PrimOp>(f.blocks[0].ops[0]).inputs[1] = f.params[0];
  EXPECT_EQ(Message(InferTypes(p, {{kF64, kI64}})),
            "cannot differentiate function 'f' (for its gradient 'grad_f', registered at "
            "grad.cc:7): parameter 1 'b' is i64, but gradients exist only with respect to "
            "f64 parameters; pass an f64 (and cast it inside 'f') or leave it out of wrt");
}

TEST(InferTypesTest, ErrorStubAndPrimalCalledWithDifferentTypes) {
  // main also calls f(y, x) directly, with x: i64 and y: f64.
  Program p = testing::MakeGradientStubCallerProgram();
  const FunctionId main_id = *p.module.FindFunction("main");
  Function& main = p.module.function(main_id);
  const VarId w = p.module.AddVariable(Variable{"w", main_id, {}, StorageClass::kFull});
  main.blocks[1].ops.push_back(CallOp{*p.module.FindFunction("f"),
                                      {main.params[1], main.params[0]}, {w}, {"grad.cc", 3}});
  EXPECT_EQ(Message(InferTypes(p, {{kI64, kF64}})),
            "type mismatch in function 'grad_f': parameter 'a' is i64 (argument 0 't' of the "
            "call from 'main' at grad.cc:3) but f64 (parameter 0 'a' of 'f', of which 'grad_f' "
            "is the gradient); a gradient takes its primal's parameter types, returns the "
            "primal's value first and each gradient with its parameter's type; call both with "
            "the same types (or cast)");
}

TEST(InferTypesTest, RejectsLoweredPrograms) {
  Program p = testing::MakeSmallLoweredProgram();
  EXPECT_THAT(Message(InferTypes(p, {{kF64}})), HasSubstr("got stage lowered"));
}

}  // namespace
}  // namespace autobatch
