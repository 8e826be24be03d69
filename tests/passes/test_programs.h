// Small hand-built IR programs for the pass tests (stage untyped, no types).
#ifndef AUTOBATCH_TESTS_PASSES_TEST_PROGRAMS_H_
#define AUTOBATCH_TESTS_PASSES_TEST_PROGRAMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace autobatch::testing {

// Appends variables, blocks and ops to one function of a program.
class FunctionBuilder {
 public:
  FunctionBuilder(Program& program, std::string name, std::string file, int line);

  FunctionId id() const { return id_; }
  Function& function() { return program_.module.function(id_); }

  VarId Var(std::string name);
  VarId Param(std::string name);   // Var + appended to params
  VarId Result(std::string name);  // Var + appended to results
  BlockId Block(std::string label);

  void Prim(BlockId b, int line, Primitive prim, std::vector<VarId> inputs, VarId output,
            Attributes attrs = {});
  // output = fill_like(like, i64 value): a constant of like's dtype.
  void Fill(BlockId b, int line, VarId like, int64_t value, VarId output);
  void Constant(BlockId b, int line, Literal literal, VarId output);
  void Call(BlockId b, int line, FunctionId callee, std::vector<VarId> args,
            std::vector<VarId> results);
  void Branch(BlockId b, int line, VarId cond, BlockId then_block, BlockId else_block);
  void Goto(BlockId b, int line, BlockId target);
  void Return(BlockId b, int line);

 private:
  SourceLoc Loc(int line) const { return SourceLoc{file_, line}; }

  Program& program_;
  FunctionId id_;
  std::string file_;
};

// main(n) -> r = is_even(n); is_even(n) = n == 0 ? true : is_odd(n - 1);
// is_odd(n) = n == 0 ? false : is_even(n - 1). Tail calls: no value is live
// across any call. Entry main; n: i64. File "even_odd.cc".
Program MakeEvenOddProgram();

// Like MakeEvenOddProgram, but is_even keeps n alive across its call:
//   is_even(n) = n == 0 ? true : (is_odd(n - 1) and n >= 0)
// is_odd stays a tail call. File "even_odd2.cc".
Program MakeEvenOddNonTailProgram();

// collatz(n) -> steps: the number of Collatz steps from n to 1, with a
// While loop and an If inside it, no calls. Entry collatz; n: i64.
// Blocks: ^0 entry, ^1 header, ^2 body, ^3 even, ^4 odd, ^5 latch, ^6 exit.
// File "collatz.cc".
Program MakeCollatzProgram();

// swap(a, b, n) -> (r, k): n <= 0 ? (a - b, n) : { (r, k2) = swap(b, a,
// n - 1); k = k2 + n }. The recursive call passes the callee's own params
// in swapped order, writes the callee's own result r directly, and keeps n
// alive across it. For n >= 0: r = +-(a - b), k = n (n + 1) / 2. Entry
// main(a, b, n) -> (r, k) = swap(a, b, n). All i64. File "swap.cc".
Program MakeSwapProgram();

// accumulate(x, n) -> r: n <= 0 ? x : { y = accumulate(x, n - 1);
// x = add(x, y); r = x }: one op reads and writes the Full variable x.
// Equals x * (n + 1). Entry accumulate; i64. File "accumulate.cc".
Program MakeAccumulateProgram();

// edge(n) -> r with a Full variable v that dies on one edge of a Branch
// whose target has another predecessor without v (an edge block is needed):
//   ^0 entry: zero, one; c = gt(n, zero); branch c ^1 ^3
//   ^1 rec:   v = add(n, n); n1 = sub(n, one); s = call edge(n1);
//             d = gt(s, v); branch d ^2 ^3
//   ^2 big:   r = add(s, v); goto ^4
//   ^3 small: r = fill_like(n, 5); goto ^4
//   ^4 exit:  return
// edge(n) = 5 for n <= 0, else s = edge(n - 1), s > 2n ? s + 2n : 5.
// Entry edge; i64. File "edge.cc".
Program MakeEdgeProgram();

// A self-recursive entry whose block 0 is also a loop header, with a Full
// param that is dead on entry (lower_calls needs a separate entry block to
// pop it, since the back edge carries no frame of it):
//   loop(p, n) -> r:
//     ^0 head: p = fill_like(n, 2); zero = fill_like(n, 0); c = gt(n, zero);
//              branch c ^1 ^2
//     ^1 body: one = fill_like(n, 1); m = sub(n, one); s = call loop(m, zero);
//              t = add(s, p); n = copy(m); goto ^0
//     ^2 exit: r = add(p, n); return
// loop(p, n) = 2 for n >= 0, 2 + n otherwise. i64. File "loop0.cc".
Program MakeLoopToEntryProgram();

// scale(k, n) -> r: n <= 0 ? k : scale(k, n - 1) + k, i.e. k (n + 1) for
// n >= 0. The recursive call passes k through unchanged and k is read after
// it, so k needs no stack (passes/analysis/call_graph.h, CallMayWrite). Entry scale;
// i64. File "scale.cc".
Program MakeScaleProgram();

// Like MakeScaleProgram, but the recursion goes through a second function:
// scale_a(k, n) -> r: n <= 0 ? k : scale_b(k, n - 1) + k, and
// scale_b(k, n) -> r = scale_a(k, n). scale_b's call writes scale_a.k from
// scale_b's own k, so scale_a.k is Full although every call passes the same
// value. Entry scale_a; i64. File "scale2.cc".
Program MakeScaleMutualProgram();

// A Halt inside a recursive callee: main(k, n) -> r: r = k + n;
// y = f(k, n); r = y + k. f(k, n) -> r: n <= 0 ? { r = k; Halt if k % 5 == 0,
// else return } : { y = f(k, n - 1); k = k * 3 % 101; r = y + k }. A lane
// that halts ends the program with main's r as it was at the Halt, k + n.
// Entry main; i64. File "halt.cc".
Program MakeHaltInCalleeProgram();

// A gradient stub between a caller and its primal, with something for the
// tidy passes and for pruning to do:
//   main(x, y) -> (v, dy): ^0 entry: t = copy x; goto ^1
//                           ^1 call: v, dy = call grad_f(t, y); return
//   unused(z) -> z: return                        (never called)
//   grad_f(a, b) -> (value, db): the gradient stub of f wrt param 1 (b),
//                                no blocks, no signature
//   f(a, b) -> r: ab = mul(a, b); r = mul(ab, a); return    (r = a^2 b)
// Only the stub names f. Entry main; f64 inputs. File "grad.cc".
Program MakeGradientStubCallerProgram();

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_PASSES_TEST_PROGRAMS_H_
