// inline_calls: replaces calls to non-recursive functions by the callee's
// blocks, so that the stack VM pays no call for them.
#ifndef AUTOBATCH_PASSES_INLINE_CALLS_H_
#define AUTOBATCH_PASSES_INLINE_CALLS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "support/deadline.h"

namespace autobatch {

// A call is inlined when its callee cannot reach itself through the call
// graph (no recursion, direct or mutual), never halts (a Halt inlined into the
// entry would change which of its paths must assign the results), is not a
// gradient stub (it has no body until differentiate writes one), and either
// has one call site in the functions the entry reaches or has at most
// kInlineMaxOps ops with its own inlined calls counted in (so a chain of
// small functions calling each other twice grows by a bounded factor, not
// exponentially).
inline constexpr int kInlineMaxOps = 32;

// Each such "results = call g(args)" in block B of f becomes:
//   B      its ops before the call, then a copy of each arg into a fresh
//          variable of f that stands for g's param, then a jump to
//   g's blocks, cloned right after B and labelled "g.<label>" ("g#2.<label>"
//          for the second copy of g in f, and so on), their
//          variables renamed to fresh variables of f named "g.<name>" ("#2",
//          "#3"... appended on a clash; so each inlined copy of g gets tapes
//          of its own, still balanced within it), every Return a jump to
//   B.ret  the continuation: a copy of each of g's renamed results into the
//          call's results, then B's ops after the call and B's terminator.
// The blocks after B move down. Then a block that ends in a jump to a block
// with no other predecessor (not the entry) absorbs it, e.g. B and g's entry,
// or g's only returning block and B.ret: fewer blocks, fewer VM steps.
// Which callees are inlined is decided callees first (post-order of the
// call graph); the bodies are then inlined top-down, each callee cloned as
// written and the calls it brings in inlined as the scan reaches them, so a
// chain of small functions collapses into one in time linear in its length,
// and inlined names do not nest (a chain f1 -> f2 -> f3 gives f1 variables
// "f2.x" and "f3.x", not "f2.f3.x"). Ops keep their source locations; the copies carry the call's.
// Functions no longer reachable from the entry, and variables nothing
// mentions, are then dropped (as infer_types does).
//
// Why: on the stack VM a call costs a program-counter push and pop, a block
// boundary on each side, copies of the arguments and results through the
// callee's params and results, and a Full variable (a stack) for everything
// live across it that the callee may write. An inlined body needs none of
// that: the copies become copies inside one function, which coalesce_copies
// and coalesce_registers remove where they can.
//
// Requires: stage kTyped (after infer_types, before allocate_variables).
// Guarantees: every lane computes the same values, bit for bit (the same ops
// run in the same order, plus copies); stage unchanged; the program verifies.
// `deadline` (PassContext::deadline): charged per block and op scanned and
// per op cloned; once it has passed, DeadlineExceeded.
absl::StatusOr<Program> InlineCalls(Program program, Deadline deadline = {});

// Inlines every call in function `f` whose callee is not recursive and
// never halts, whatever its size, and the calls that inlining brings in, as
// InlineCalls does; calls to other callees stay. Other functions and the
// variables of `f` that lose their uses are left as they are. For passes
// that need a call-free function (differentiate).
// Requires: stage kTyped.
void InlineEveryCall(Program& program, FunctionId f);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_INLINE_CALLS_H_
