// Small hand-built IR programs for the pass tests.
#include "tests/passes/test_programs.h"

#include <utility>

namespace autobatch::testing {

FunctionBuilder::FunctionBuilder(Program& program, std::string name, std::string file,
                                 int line)
    : program_(program), file_(std::move(file)) {
  Function f;
  f.name = std::move(name);
  f.loc = Loc(line);
  id_ = program_.module.AddFunction(std::move(f));
}

VarId FunctionBuilder::Var(std::string name) {
  return program_.module.AddVariable(
      Variable{std::move(name), id_, std::nullopt, StorageClass::kFull});
}

VarId FunctionBuilder::Param(std::string name) {
  VarId v = Var(std::move(name));
  function().params.push_back(v);
  return v;
}

VarId FunctionBuilder::Result(std::string name) {
  VarId v = Var(std::move(name));
  function().results.push_back(v);
  return v;
}

BlockId FunctionBuilder::Block(std::string label) {
  autobatch::Block block;
  block.label = std::move(label);
  function().blocks.push_back(std::move(block));
  return BlockId(static_cast<int32_t>(function().blocks.size() - 1));
}

void FunctionBuilder::Prim(BlockId b, int line, Primitive prim, std::vector<VarId> inputs,
                           VarId output, Attributes attrs) {
  PrimOp op;
  op.prim = prim;
  op.inputs = std::move(inputs);
  op.outputs = {output};
  op.attrs = std::move(attrs);
  op.loc = Loc(line);
  function().blocks.at(b.value).ops.push_back(std::move(op));
}

void FunctionBuilder::Fill(BlockId b, int line, VarId like, int64_t value, VarId output) {
  Attributes attrs;
  attrs.literal = Literal::I64(value);
  Prim(b, line, Primitive::kFillLike, {like}, output, std::move(attrs));
}

void FunctionBuilder::Constant(BlockId b, int line, Literal literal, VarId output) {
  Attributes attrs;
  attrs.literal = std::move(literal);
  Prim(b, line, Primitive::kConstant, {}, output, std::move(attrs));
}

void FunctionBuilder::Call(BlockId b, int line, FunctionId callee, std::vector<VarId> args,
                           std::vector<VarId> results) {
  function().blocks.at(b.value).ops.push_back(
      CallOp{callee, std::move(args), std::move(results), Loc(line)});
}

void FunctionBuilder::Branch(BlockId b, int line, VarId cond, BlockId then_block,
                             BlockId else_block) {
  function().blocks.at(b.value).terminator = autobatch::Branch{cond, then_block, else_block};
  function().blocks.at(b.value).loc = Loc(line);
}

void FunctionBuilder::Goto(BlockId b, int line, BlockId target) {
  function().blocks.at(b.value).terminator = autobatch::Goto{target};
  function().blocks.at(b.value).loc = Loc(line);
}

void FunctionBuilder::Return(BlockId b, int line) {
  function().blocks.at(b.value).terminator = autobatch::Return{};
  function().blocks.at(b.value).loc = Loc(line);
}

namespace {

// is_even / is_odd: `base` is the value returned for n == 0. When
// `keep_n_alive`, the recursive branch also tests n >= 0 after the call.
void BuildParity(FunctionBuilder& fn, FunctionId other, bool base, bool keep_n_alive,
                 int line) {
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  BlockId entry = fn.Block("entry");
  BlockId done = fn.Block("base");
  BlockId rec = fn.Block("recurse");
  fn.Fill(entry, line + 1, n, 0, zero);
  fn.Prim(entry, line + 1, Primitive::kEq, {n, zero}, c);
  fn.Branch(entry, line + 1, c, done, rec);
  fn.Constant(done, line + 2, Literal::Bool(base), r);
  fn.Return(done, line + 2);
  VarId one = fn.Var("one");
  VarId m = fn.Var("m");
  fn.Fill(rec, line + 3, n, 1, one);
  fn.Prim(rec, line + 3, Primitive::kSub, {n, one}, m);
  if (!keep_n_alive) {
    fn.Call(rec, line + 3, other, {m}, {r});
  } else {
    VarId t = fn.Var("t");
    VarId k = fn.Var("k");
    VarId ok = fn.Var("ok");
    fn.Call(rec, line + 3, other, {m}, {t});
    fn.Fill(rec, line + 4, n, 0, k);
    fn.Prim(rec, line + 4, Primitive::kGe, {n, k}, ok);
    fn.Prim(rec, line + 4, Primitive::kAnd, {t, ok}, r);
  }
  fn.Return(rec, line + 5);
}

Program MakeParity(bool keep_n_alive, const std::string& file) {
  Program program;
  FunctionBuilder main_fn(program, "main", file, 1);
  FunctionBuilder is_even(program, "is_even", file, 10);
  FunctionBuilder is_odd(program, "is_odd", file, 20);
  program.entry = main_fn.id();
  VarId n = main_fn.Param("n");
  VarId r = main_fn.Result("r");
  BlockId b = main_fn.Block("entry");
  main_fn.Call(b, 2, is_even.id(), {n}, {r});
  main_fn.Return(b, 3);
  BuildParity(is_even, is_odd.id(), /*base=*/true, keep_n_alive, 10);
  BuildParity(is_odd, is_even.id(), /*base=*/false, /*keep_n_alive=*/false, 20);
  return program;
}

}  // namespace

Program MakeEvenOddProgram() { return MakeParity(/*keep_n_alive=*/false, "even_odd.cc"); }

Program MakeEvenOddNonTailProgram() {
  return MakeParity(/*keep_n_alive=*/true, "even_odd2.cc");
}

Program MakeCollatzProgram() {
  Program program;
  FunctionBuilder fn(program, "collatz", "collatz.cc", 1);
  program.entry = fn.id();
  VarId n = fn.Param("n");
  VarId steps = fn.Result("steps");
  VarId x = fn.Var("x");
  VarId one = fn.Var("one");
  VarId two = fn.Var("two");
  VarId three = fn.Var("three");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  VarId rem = fn.Var("rem");
  VarId even = fn.Var("even");
  VarId half = fn.Var("half");
  VarId tripled = fn.Var("tripled");
  VarId next = fn.Var("next");
  VarId steps1 = fn.Var("steps1");
  BlockId entry = fn.Block("entry");
  BlockId header = fn.Block("header");
  BlockId body = fn.Block("body");
  BlockId even_b = fn.Block("even");
  BlockId odd_b = fn.Block("odd");
  BlockId latch = fn.Block("latch");
  BlockId exit = fn.Block("exit");
  fn.Fill(entry, 2, n, 0, steps);
  fn.Prim(entry, 3, Primitive::kCopy, {n}, x);
  fn.Fill(entry, 3, n, 1, one);
  fn.Goto(entry, 4, header);
  fn.Prim(header, 4, Primitive::kGt, {x, one}, c);
  fn.Branch(header, 4, c, body, exit);
  fn.Fill(body, 5, x, 2, two);
  fn.Prim(body, 5, Primitive::kMod, {x, two}, rem);
  fn.Fill(body, 5, x, 0, zero);
  fn.Prim(body, 5, Primitive::kEq, {rem, zero}, even);
  fn.Branch(body, 5, even, even_b, odd_b);
  fn.Prim(even_b, 6, Primitive::kDiv, {x, two}, half);
  fn.Prim(even_b, 6, Primitive::kCopy, {half}, x);
  fn.Goto(even_b, 6, latch);
  fn.Fill(odd_b, 8, x, 3, three);
  fn.Prim(odd_b, 8, Primitive::kMul, {x, three}, tripled);
  fn.Prim(odd_b, 8, Primitive::kAdd, {tripled, one}, next);
  fn.Prim(odd_b, 8, Primitive::kCopy, {next}, x);
  fn.Goto(odd_b, 8, latch);
  fn.Prim(latch, 10, Primitive::kAdd, {steps, one}, steps1);
  fn.Prim(latch, 10, Primitive::kCopy, {steps1}, steps);
  fn.Goto(latch, 10, header);
  fn.Return(exit, 12);
  return program;
}

Program MakeSwapProgram() {
  Program program;
  FunctionBuilder main_fn(program, "main", "swap.cc", 1);
  FunctionBuilder fn(program, "swap", "swap.cc", 5);
  program.entry = main_fn.id();
  {
    VarId a = main_fn.Param("a");
    VarId b = main_fn.Param("b");
    VarId n = main_fn.Param("n");
    VarId r = main_fn.Result("r");
    VarId k = main_fn.Result("k");
    BlockId entry = main_fn.Block("entry");
    main_fn.Call(entry, 2, fn.id(), {a, b, n}, {r, k});
    main_fn.Return(entry, 3);
  }
  VarId a = fn.Param("a");
  VarId b = fn.Param("b");
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId k = fn.Result("k");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  VarId one = fn.Var("one");
  VarId n1 = fn.Var("n1");
  VarId k2 = fn.Var("k2");
  BlockId entry = fn.Block("entry");
  BlockId base = fn.Block("base");
  BlockId rec = fn.Block("recurse");
  BlockId done = fn.Block("done");
  fn.Fill(entry, 6, n, 0, zero);
  fn.Prim(entry, 6, Primitive::kLe, {n, zero}, c);
  fn.Branch(entry, 6, c, base, rec);
  fn.Prim(base, 7, Primitive::kSub, {a, b}, r);
  fn.Prim(base, 7, Primitive::kCopy, {n}, k);
  fn.Goto(base, 7, done);
  fn.Fill(rec, 8, n, 1, one);
  fn.Prim(rec, 8, Primitive::kSub, {n, one}, n1);
  fn.Call(rec, 8, fn.id(), {b, a, n1}, {r, k2});
  fn.Prim(rec, 9, Primitive::kAdd, {k2, n}, k);
  fn.Goto(rec, 9, done);
  fn.Return(done, 10);
  return program;
}

Program MakeAccumulateProgram() {
  Program program;
  FunctionBuilder fn(program, "accumulate", "accumulate.cc", 1);
  program.entry = fn.id();
  VarId x = fn.Param("x");
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  VarId one = fn.Var("one");
  VarId n1 = fn.Var("n1");
  VarId y = fn.Var("y");
  BlockId entry = fn.Block("entry");
  BlockId base = fn.Block("base");
  BlockId rec = fn.Block("recurse");
  fn.Fill(entry, 2, n, 0, zero);
  fn.Prim(entry, 2, Primitive::kLe, {n, zero}, c);
  fn.Branch(entry, 2, c, base, rec);
  fn.Prim(base, 3, Primitive::kCopy, {x}, r);
  fn.Return(base, 3);
  fn.Fill(rec, 4, n, 1, one);
  fn.Prim(rec, 4, Primitive::kSub, {n, one}, n1);
  fn.Call(rec, 4, fn.id(), {x, n1}, {y});
  fn.Prim(rec, 5, Primitive::kAdd, {x, y}, x);
  fn.Prim(rec, 6, Primitive::kCopy, {x}, r);
  fn.Return(rec, 6);
  return program;
}

namespace {

// The scale function of MakeScaleProgram, recursing through `callee`.
void BuildScale(FunctionBuilder& fn, FunctionId callee, int line) {
  VarId k = fn.Param("k");
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  VarId one = fn.Var("one");
  VarId n1 = fn.Var("n1");
  VarId y = fn.Var("y");
  BlockId entry = fn.Block("entry");
  BlockId base = fn.Block("base");
  BlockId rec = fn.Block("recurse");
  fn.Fill(entry, line + 1, n, 0, zero);
  fn.Prim(entry, line + 1, Primitive::kLe, {n, zero}, c);
  fn.Branch(entry, line + 1, c, base, rec);
  fn.Prim(base, line + 2, Primitive::kCopy, {k}, r);
  fn.Return(base, line + 2);
  fn.Fill(rec, line + 3, n, 1, one);
  fn.Prim(rec, line + 3, Primitive::kSub, {n, one}, n1);
  fn.Call(rec, line + 3, callee, {k, n1}, {y});
  fn.Prim(rec, line + 4, Primitive::kAdd, {y, k}, r);
  fn.Return(rec, line + 4);
}

}  // namespace

Program MakeScaleProgram() {
  Program program;
  FunctionBuilder fn(program, "scale", "scale.cc", 1);
  program.entry = fn.id();
  BuildScale(fn, fn.id(), 1);
  return program;
}

Program MakeScaleMutualProgram() {
  Program program;
  FunctionBuilder a(program, "scale_a", "scale2.cc", 1);
  FunctionBuilder b(program, "scale_b", "scale2.cc", 10);
  program.entry = a.id();
  BuildScale(a, b.id(), 1);
  VarId k = b.Param("k");
  VarId n = b.Param("n");
  VarId r = b.Result("r");
  BlockId entry = b.Block("entry");
  b.Call(entry, 11, a.id(), {k, n}, {r});
  b.Return(entry, 11);
  return program;
}

Program MakeHaltInCalleeProgram() {
  Program program;
  FunctionBuilder main_fn(program, "main", "halt.cc", 1);
  FunctionBuilder fn(program, "f", "halt.cc", 10);
  program.entry = main_fn.id();
  {
    VarId k = main_fn.Param("k"), n = main_fn.Param("n"), r = main_fn.Result("r");
    VarId y = main_fn.Var("y");
    BlockId entry = main_fn.Block("entry");
    main_fn.Prim(entry, 2, Primitive::kAdd, {k, n}, r);
    main_fn.Call(entry, 3, fn.id(), {k, n}, {y});
    main_fn.Prim(entry, 4, Primitive::kAdd, {y, k}, r);
    main_fn.Return(entry, 4);
  }
  VarId k = fn.Param("k"), n = fn.Param("n"), r = fn.Result("r");
  VarId zero = fn.Var("zero"), c = fn.Var("c"), five = fn.Var("five"), rem = fn.Var("rem"),
        halts = fn.Var("halts"), one = fn.Var("one"), n1 = fn.Var("n1"), y = fn.Var("y"),
        three = fn.Var("three"), k3 = fn.Var("k3"), m = fn.Var("m");
  BlockId entry = fn.Block("entry"), base = fn.Block("base"), rec = fn.Block("recurse"),
          stop = fn.Block("stop"), back = fn.Block("back");
  fn.Fill(entry, 11, n, 0, zero);
  fn.Prim(entry, 11, Primitive::kLe, {n, zero}, c);
  fn.Branch(entry, 11, c, base, rec);
  fn.Prim(base, 12, Primitive::kCopy, {k}, r);
  fn.Fill(base, 12, k, 5, five);
  fn.Prim(base, 12, Primitive::kMod, {k, five}, rem);
  fn.Fill(base, 12, k, 0, zero);
  fn.Prim(base, 12, Primitive::kEq, {rem, zero}, halts);
  fn.Branch(base, 12, halts, stop, back);
  fn.function().blocks[stop.value].terminator = Halt{};
  fn.Return(back, 13);
  fn.Fill(rec, 14, n, 1, one);
  fn.Prim(rec, 14, Primitive::kSub, {n, one}, n1);
  fn.Call(rec, 14, fn.id(), {k, n1}, {y});
  fn.Fill(rec, 15, k, 3, three);
  fn.Prim(rec, 15, Primitive::kMul, {k, three}, k3);
  fn.Fill(rec, 15, k, 101, m);
  fn.Prim(rec, 15, Primitive::kMod, {k3, m}, k);
  fn.Prim(rec, 16, Primitive::kAdd, {y, k}, r);
  fn.Return(rec, 16);
  return program;
}

Program MakeEdgeProgram() {
  Program program;
  FunctionBuilder fn(program, "edge", "edge.cc", 1);
  program.entry = fn.id();
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId zero = fn.Var("zero");
  VarId one = fn.Var("one");
  VarId c = fn.Var("c");
  VarId v = fn.Var("v");
  VarId n1 = fn.Var("n1");
  VarId s = fn.Var("s");
  VarId d = fn.Var("d");
  BlockId entry = fn.Block("entry");
  BlockId rec = fn.Block("rec");
  BlockId big = fn.Block("big");
  BlockId small = fn.Block("small");
  BlockId exit = fn.Block("exit");
  fn.Fill(entry, 2, n, 0, zero);
  fn.Fill(entry, 2, n, 1, one);
  fn.Prim(entry, 2, Primitive::kGt, {n, zero}, c);
  fn.Branch(entry, 2, c, rec, small);
  fn.Prim(rec, 3, Primitive::kAdd, {n, n}, v);
  fn.Prim(rec, 3, Primitive::kSub, {n, one}, n1);
  fn.Call(rec, 3, fn.id(), {n1}, {s});
  fn.Prim(rec, 4, Primitive::kGt, {s, v}, d);
  fn.Branch(rec, 4, d, big, small);
  fn.Prim(big, 5, Primitive::kAdd, {s, v}, r);
  fn.Goto(big, 5, exit);
  fn.Fill(small, 6, n, 5, r);
  fn.Goto(small, 6, exit);
  fn.Return(exit, 7);
  return program;
}

Program MakeLoopToEntryProgram() {
  Program program;
  FunctionBuilder fn(program, "loop", "loop0.cc", 1);
  program.entry = fn.id();
  VarId p = fn.Param("p");
  VarId n = fn.Param("n");
  VarId r = fn.Result("r");
  VarId zero = fn.Var("zero");
  VarId c = fn.Var("c");
  VarId one = fn.Var("one");
  VarId m = fn.Var("m");
  VarId s = fn.Var("s");
  VarId t = fn.Var("t");
  BlockId head = fn.Block("head");
  BlockId body = fn.Block("body");
  BlockId exit = fn.Block("exit");
  fn.Fill(head, 2, n, 2, p);
  fn.Fill(head, 2, n, 0, zero);
  fn.Prim(head, 2, Primitive::kGt, {n, zero}, c);
  fn.Branch(head, 2, c, body, exit);
  fn.Fill(body, 3, n, 1, one);
  fn.Prim(body, 3, Primitive::kSub, {n, one}, m);
  fn.Call(body, 4, fn.id(), {m, zero}, {s});
  fn.Prim(body, 5, Primitive::kAdd, {s, p}, t);
  fn.Prim(body, 6, Primitive::kCopy, {m}, n);
  fn.Goto(body, 6, head);
  fn.Prim(exit, 7, Primitive::kAdd, {p, n}, r);
  fn.Return(exit, 7);
  return program;
}

Program MakeGradientStubCallerProgram() {
  Program program;
  FunctionBuilder main_fn(program, "main", "grad.cc", 1);
  FunctionBuilder unused(program, "unused", "grad.cc", 5);
  FunctionBuilder grad(program, "grad_f", "grad.cc", 7);
  FunctionBuilder f(program, "f", "grad.cc", 10);
  program.entry = main_fn.id();
  {
    VarId x = main_fn.Param("x"), y = main_fn.Param("y");
    VarId v = main_fn.Result("v"), dy = main_fn.Result("dy");
    VarId t = main_fn.Var("t");
    BlockId entry = main_fn.Block("entry"), call = main_fn.Block("call");
    main_fn.Prim(entry, 2, Primitive::kCopy, {x}, t);
    main_fn.Goto(entry, 2, call);
    main_fn.Call(call, 3, grad.id(), {t, y}, {v, dy});
    main_fn.Return(call, 4);
  }
  VarId z = unused.Param("z");
  unused.function().results = {z};
  unused.Return(unused.Block("entry"), 6);
  grad.Param("a");
  grad.Param("b");
  grad.Result("value");
  grad.Result("db");
  grad.function().gradient_of = GradientOf{f.id(), {1}};
  VarId a = f.Param("a"), b = f.Param("b"), r = f.Result("r"), ab = f.Var("ab");
  BlockId entry = f.Block("entry");
  f.Prim(entry, 11, Primitive::kMul, {a, b}, ab);
  f.Prim(entry, 12, Primitive::kMul, {ab, a}, r);
  f.Return(entry, 13);
  return program;
}

}  // namespace autobatch::testing
