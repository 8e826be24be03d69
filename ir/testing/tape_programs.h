// Programs with tapes (ir/ir.h, "Tapes") in the IR's text form, shared by
// the IR, pass and VM tests, with plain C++ models of what they compute.
#ifndef AUTOBATCH_IR_TESTING_TAPE_PROGRAMS_H_
#define AUTOBATCH_IR_TESTING_TAPE_PROGRAMS_H_

#include <cstdint>
#include <string_view>

#include "ir/ir.h"

namespace autobatch::testing {

// Stage untyped; `main(n: i64, x: f64) -> (s: f64)`. A first loop runs n
// times (a per-lane trip count): with v = x, 1.5x, 2.25x, ..., it pushes
// -v when i mod 3 == 0 and 2v + x otherwise (an If inside the loop) on the f64
// tape %t, and i mod 3 on the i64 tape %flags. A second loop pops both n
// times: s = 0.75 s + p, then s -= k when k == 1 (an If on a popped
// value). %first holds x from the entry to the exit, where its pop's
// result is never read. The order of the pops shows in s.
extern const std::string_view kTapeLoopText;
Program TapeLoopProgram();
double TapeLoopModel(int64_t n, double x);

// Stage untyped; `main(n: i64, x: f64) -> (r: f64)` = rec(n, x), where the
// recursive `rec` keeps x on its tape %saved across its recursive call (and
// pops a second copy, from %twin, before the call into %shape, which is read
// after it: a popped result live across a call, so Full), and calls
// `accum`, whose loops push k values on its tape %vals and pop them:
//   accum(a, k) = sum over pushes, popped last first: s = 3 s + p, of
//                 a, a + 0.5, ... (k values; none when k <= 0)
//   rec(n, x)   = n > 1 ? 0.5 rec(n - 1, 1.25 x) + accum(x, n) : accum(x, n)
extern const std::string_view kRecursiveTapeText;
Program RecursiveTapeProgram();
double RecursiveTapeModel(int64_t n, double x);

// Stage untyped; `main(x: f64) -> (y: f64)`: pushes x on %t only when
// x > 0, then pops %t: lanes with x <= 0 pop an empty tape.
extern const std::string_view kTapePopEmptyText;
Program TapePopEmptyProgram();

// Stage untyped; `main(x: f64) -> (y: f64)` = leak(x), where `leak` pushes
// its argument on its tape %t when it is > 0 and pops it only when it is
// > 10: unbalanced for lanes with 0 < x <= 10 (the verifier's K3 passes:
// %t is both pushed and popped).
extern const std::string_view kTapeUnbalancedText;
Program TapeUnbalancedProgram();

// Stage untyped; `main(x: f64) -> (y: f64)` pushes x on %t in a loop that
// ends only for a NaN x (then y pops x): the tape grows until a memory
// limit stops it.
extern const std::string_view kTapeRunawayText;
Program TapeRunawayProgram();

}  // namespace autobatch::testing

#endif  // AUTOBATCH_IR_TESTING_TAPE_PROGRAMS_H_
