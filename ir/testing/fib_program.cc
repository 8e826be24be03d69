// Hand-built IR programs shared by tests.
#include "ir/testing/fib_program.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

namespace autobatch::testing {
namespace {

// Appends ops to one function of a program under construction.
class FunctionEditor {
 public:
  FunctionEditor(Program& program, FunctionId function, std::string file)
      : module_(program.module), function_(function), file_(std::move(file)) {}

  VarId Var(std::string name, std::optional<TensorType> type = std::nullopt,
            StorageClass storage = StorageClass::kFull) {
    return module_.AddVariable(Variable{std::move(name), function_, std::move(type), storage});
  }

  Function& function() { return module_.function(function_); }

  BlockId AddBlock(std::string label) {
    Block block;
    block.label = std::move(label);
    function().blocks.push_back(std::move(block));
    return BlockId(static_cast<int32_t>(function().blocks.size() - 1));
  }

  void Prim(BlockId block, int line, Primitive prim, std::vector<VarId> inputs, VarId output,
            Attributes attrs = {}) {
    PrimOp op;
    op.prim = prim;
    op.inputs = std::move(inputs);
    op.outputs = {output};
    op.attrs = std::move(attrs);
    op.loc = Loc(line);
    Ops(block).push_back(std::move(op));
  }

  void Call(BlockId block, int line, FunctionId callee, std::vector<VarId> args,
            std::vector<VarId> results) {
    Ops(block).push_back(CallOp{callee, std::move(args), std::move(results), Loc(line)});
  }

  void Pop(BlockId block, int line, std::vector<VarId> vars) {
    Ops(block).push_back(PopOp{std::move(vars), Loc(line)});
  }

  void Terminate(BlockId block, int line, Terminator terminator) {
    function().blocks.at(block.value).terminator = std::move(terminator);
    function().blocks.at(block.value).loc = Loc(line);
  }

  SourceLoc Loc(int line) const { return SourceLoc{file_, line}; }

 private:
  std::vector<Op>& Ops(BlockId block) { return function().blocks.at(block.value).ops; }

  Module& module_;
  FunctionId function_;
  std::string file_;
};

Function NewFunction(std::string name, SourceLoc loc) {
  Function f;
  f.name = std::move(name);
  f.loc = std::move(loc);
  return f;
}

Attributes LiteralAttr(Literal literal) {
  Attributes attrs;
  attrs.literal = std::move(literal);
  return attrs;
}

}  // namespace

Program MakeFibonacciProgram() {
  Program program;
  program.stage = Stage::kUntyped;
  FunctionId main_id = program.module.AddFunction(NewFunction("main", {"fib.cc", 3}));
  FunctionId fib_id =
      program.module.AddFunction(NewFunction("fibonacci", {"fib.cc", 9}));
  program.entry = main_id;

  FunctionEditor fib(program, fib_id, "fib.cc");
  VarId n = fib.Var("n");
  VarId ans = fib.Var("ans");
  VarId one = fib.Var("one");
  VarId cond = fib.Var("cond");
  VarId n_1 = fib.Var("n_1");
  VarId f1 = fib.Var("f1");
  VarId two = fib.Var("two");
  VarId n_2 = fib.Var("n_2");
  VarId f2 = fib.Var("f2");
  fib.function().params = {n};
  fib.function().results = {ans};
  BlockId entry = fib.AddBlock("entry");
  BlockId recurse = fib.AddBlock("recurse");
  BlockId base = fib.AddBlock("base");
  BlockId exit = fib.AddBlock("exit");
  fib.Prim(entry, 10, Primitive::kFillLike, {n}, one, LiteralAttr(Literal::I64(1)));
  fib.Prim(entry, 10, Primitive::kGt, {n, one}, cond);
  fib.Terminate(entry, 10, Branch{cond, recurse, base});
  fib.Prim(recurse, 11, Primitive::kSub, {n, one}, n_1);
  fib.Call(recurse, 11, fib_id, {n_1}, {f1});
  fib.Prim(recurse, 11, Primitive::kFillLike, {n}, two, LiteralAttr(Literal::I64(2)));
  fib.Prim(recurse, 11, Primitive::kSub, {n, two}, n_2);
  fib.Call(recurse, 11, fib_id, {n_2}, {f2});
  fib.Prim(recurse, 11, Primitive::kAdd, {f1, f2}, ans);
  fib.Terminate(recurse, 11, Goto{exit});
  fib.Prim(base, 13, Primitive::kFillLike, {n}, ans, LiteralAttr(Literal::I64(1)));
  fib.Terminate(base, 13, Goto{exit});
  fib.Terminate(exit, 15, Return{});

  FunctionEditor main_fn(program, main_id, "fib.cc");
  VarId main_n = main_fn.Var("n");
  VarId r = main_fn.Var("r");
  main_fn.function().params = {main_n};
  main_fn.function().results = {r};
  BlockId main_entry = main_fn.AddBlock("entry");
  main_fn.Call(main_entry, 4, fib_id, {main_n}, {r});
  main_fn.Terminate(main_entry, 5, Return{});
  return program;
}

Program MakeProgramWithSpecialConstants() {
  Program program;
  program.stage = Stage::kTyped;
  const TensorType f64 = Scalar(DType::kF64);
  Function main_function = NewFunction("main", {"special.cc", 1});
  main_function.signature = Signature{
      {Vector(DType::kF64, 3)},
      {Vector(DType::kF64, 5), Scalar(DType::kU64), Vector(DType::kI64, 3),
       Vector(DType::kF64, 2), Vector(DType::kF64, 3)}};
  FunctionId main_id = program.module.AddFunction(std::move(main_function));
  program.entry = main_id;
  program.module.kernels["scale"] = KernelSignature{
      {Vector(DType::kF64, 3), f64}, {Vector(DType::kF64, 3)}, /*bit_stable=*/false};

  FunctionEditor b(program, main_id, "special.cc");
  VarId x = b.Var("x", Vector(DType::kF64, 3));
  VarId c_nan = b.Var("c_nan", f64);
  VarId c_inf = b.Var("c_inf", f64);
  VarId c_ninf = b.Var("c_ninf", f64);
  VarId c_negzero = b.Var("c_negzero", f64);
  VarId c_tiny = b.Var("c_tiny", f64);
  VarId specials = b.Var("specials", Vector(DType::kF64, 5));
  VarId big = b.Var("big", Scalar(DType::kU64));
  VarId vec = b.Var("vec", Vector(DType::kF64, 3));
  VarId ints = b.Var("ints", Vector(DType::kI64, 3));
  VarId part = b.Var("part", Vector(DType::kF64, 2));
  VarId mv = b.Var("mv", Vector(DType::kF64, 2));
  VarId sum = b.Var("sum", Vector(DType::kF64, 2));
  VarId scaled = b.Var("scaled", Vector(DType::kF64, 3));
  b.function().params = {x};
  b.function().results = {specials, big, ints, sum, scaled};

  BlockId entry = b.AddBlock("entry");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  b.Prim(entry, 2, Primitive::kConstant, {}, c_nan,
         LiteralAttr(Literal::F64(std::numeric_limits<double>::quiet_NaN())));
  b.Prim(entry, 3, Primitive::kConstant, {}, c_inf, LiteralAttr(Literal::F64(kInf)));
  b.Prim(entry, 4, Primitive::kConstant, {}, c_ninf, LiteralAttr(Literal::F64(-kInf)));
  b.Prim(entry, 5, Primitive::kConstant, {}, c_negzero, LiteralAttr(Literal::F64(-0.0)));
  b.Prim(entry, 6, Primitive::kConstant, {}, c_tiny, LiteralAttr(Literal::F64(1e-310)));
  b.Prim(entry, 7, Primitive::kConcat, {c_nan, c_inf, c_ninf, c_negzero, c_tiny}, specials);
  b.Prim(entry, 8, Primitive::kConstant, {}, big,
         LiteralAttr(Literal{Scalar(DType::kU64), {},
                             {static_cast<int64_t>(std::numeric_limits<uint64_t>::max())}}));
  b.Prim(entry, 9, Primitive::kConstant, {}, vec,
         LiteralAttr(Literal{Vector(DType::kF64, 3), {1.5, -2.0, 0.1}, {}}));
  Attributes cast;
  cast.dtype = DType::kI64;
  b.Prim(entry, 10, Primitive::kCast, {vec}, ints, cast);
  Attributes slice;
  slice.ints = {1, 2};
  b.Prim(entry, 11, Primitive::kSlice, {x}, part, slice);
  Attributes matvec;
  matvec.matrix = std::make_shared<const DenseMatrix>(
      DenseMatrix{/*rows=*/2, /*cols=*/3, /*data=*/{1, 2, 3, 4, 5, 6.5}});
  b.Prim(entry, 12, Primitive::kMatVec, {x}, mv, matvec);
  b.Prim(entry, 13, Primitive::kAdd, {part, mv}, sum);
  Attributes kernel;
  kernel.kernel = "scale";
  b.Prim(entry, 14, Primitive::kUserKernel, {vec, c_tiny}, scaled, kernel);
  b.Terminate(entry, 15, Return{});
  return program;
}

Program MakeSmallLoweredProgram() {
  Program program;
  program.stage = Stage::kLowered;
  const TensorType f64 = Scalar(DType::kF64);
  FunctionId main_id =
      program.module.AddFunction(NewFunction("main", {"lowered.cc", 1}));
  FunctionId twice_id =
      program.module.AddFunction(NewFunction("twice", {"lowered.cc", 10}));
  program.entry = main_id;

  FunctionEditor main_fn(program, main_id, "lowered.cc");
  VarId x = main_fn.Var("x", f64, StorageClass::kRegister);
  VarId r = main_fn.Var("r", f64, StorageClass::kRegister);
  VarId dead = main_fn.Var("dead", f64, StorageClass::kNull);
  main_fn.function().params = {x};
  main_fn.function().results = {r};

  FunctionEditor twice(program, twice_id, "lowered.cc");
  VarId a = twice.Var("a", f64, StorageClass::kFull);
  VarId b = twice.Var("b", f64, StorageClass::kFull);
  VarId two = twice.Var("two", f64, StorageClass::kTemporary);
  twice.function().params = {a};
  twice.function().results = {b};

  BlockId entry = main_fn.AddBlock("entry");
  BlockId resume = main_fn.AddBlock("resume");
  main_fn.Prim(entry, 2, Primitive::kCopy, {x}, a);
  main_fn.Terminate(entry, 2, PushGoto{twice_id, resume});
  main_fn.Prim(resume, 3, Primitive::kCopy, {b}, r);
  main_fn.Prim(resume, 4, Primitive::kCopy, {x}, dead);
  main_fn.Pop(resume, 5, {a, b});
  main_fn.Terminate(resume, 6, Halt{});

  BlockId twice_entry = twice.AddBlock("entry");
  twice.Prim(twice_entry, 11, Primitive::kFillLike, {a}, two, LiteralAttr(Literal::F64(2)));
  twice.Prim(twice_entry, 11, Primitive::kMul, {a, two}, b);
  twice.Terminate(twice_entry, 12, IndirectGoto{});
  return program;
}

Program MakeGradientStubProgram() {
  Program program;
  const TensorType f64 = Scalar(DType::kF64);
  const FunctionId main_id = program.module.AddFunction(NewFunction("main", {"grad.cc", 1}));
  const FunctionId grad_id = program.module.AddFunction(NewFunction("grad_f", {"grad.cc", 5}));
  const FunctionId f_id = program.module.AddFunction(NewFunction("f", {"grad.cc", 10}));
  program.entry = main_id;

  FunctionEditor main_fn(program, main_id, "grad.cc");
  VarId x = main_fn.Var("x");
  VarId y = main_fn.Var("y");
  VarId v = main_fn.Var("v");
  VarId dy = main_fn.Var("dy");
  main_fn.function().params = {x, y};
  main_fn.function().results = {v, dy};
  BlockId entry = main_fn.AddBlock("entry");
  main_fn.Call(entry, 2, grad_id, {x, y}, {v, dy});
  main_fn.Terminate(entry, 3, Return{});

  FunctionEditor grad(program, grad_id, "grad.cc");
  VarId ga = grad.Var("a");
  VarId gb = grad.Var("b");
  VarId value = grad.Var("value");
  VarId db = grad.Var("db");
  grad.function().params = {ga, gb};
  grad.function().results = {value, db};
  grad.function().signature = Signature{{f64, f64}, {f64, f64}};
  grad.function().gradient_of = GradientOf{f_id, {1}};

  FunctionEditor f(program, f_id, "grad.cc");
  VarId a = f.Var("a");
  VarId b = f.Var("b");
  VarId ab = f.Var("ab");
  VarId r = f.Var("r");
  f.function().params = {a, b};
  f.function().results = {r};
  BlockId f_entry = f.AddBlock("entry");
  f.Prim(f_entry, 11, Primitive::kMul, {a, b}, ab);
  f.Prim(f_entry, 12, Primitive::kMul, {ab, a}, r);
  f.Terminate(f_entry, 13, Return{});
  return program;
}

}  // namespace autobatch::testing
