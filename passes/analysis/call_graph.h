// The static call graph of a module and the "may write" closure over it.
#ifndef AUTOBATCH_PASSES_ANALYSIS_CALL_GRAPH_H_
#define AUTOBATCH_PASSES_ANALYSIS_CALL_GRAPH_H_

#include <vector>

#include "ir/ir.h"
#include "passes/analysis/liveness.h"

namespace autobatch {

// callees[f]: the functions f calls (CallOp or PushGoto), ascending, unique;
// a gradient stub's callee is its primal (Function::gradient_of), which its
// body will call once differentiate writes it, so reachability, recursion
// and pruning see the primal. Requires: every function index named is in
// range.
std::vector<std::vector<FunctionId>> Callees(const Module& module);

// reachable[f]: f is `entry` or can be called, transitively, from it.
std::vector<bool> ReachableFunctions(const Module& module, FunctionId entry);

// recursive[f]: f can reach itself through calls (directly or through
// others). Linear in the call graph's size (strongly connected components),
// so a chain of thousands of calls costs no more than its length.
std::vector<bool> RecursiveFunctions(const Module& module);

// call_may_write[g]: every variable that a call to g may write before it
// returns, in the activation-local semantics of ir/ir.h:
//   call_may_write[g] = writes(g) + call_may_write[h] for every callee h of g,
//   writes(f)         = outputs of f's PrimOps + results of f's CallOps
//                     + the params a CallOp of f copies an argument into,
//                       except where the argument IS that param (a self-call
//                       passing it through unchanged).
// It is the least fixed point over the call graph, so recursion and mutual
// recursion are covered: with fib calling fib(n - 1), a call to fib may write
// fib's own n; with is_even calling is_odd calling is_even, a call to is_odd
// may write every variable of both functions. A variable x live across a call
// to g must survive it on a stack exactly when x is in call_may_write[g].
// A param that every recursive call passes through unchanged (NUTS's step
// size, metric and RNG key) is in no call_may_write set of its own function,
// so it needs no stack: the outermost call writes it once.
std::vector<VarSet> CallMayWrite(const Module& module);

// The program without the functions its entry cannot reach and without the
// variables no remaining function mentions; what is left keeps its order and
// is renumbered (callees and gradient_of included). Requires: indices in
// range (a verified program).
Program PruneUnreachable(const Program& in);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ANALYSIS_CALL_GRAPH_H_
