// coalesce_registers: merges Register variables joined by copies, so that
// lowering's argument and result copies of recursive calls disappear.
#ifndef AUTOBATCH_PASSES_COALESCE_REGISTERS_H_
#define AUTOBATCH_PASSES_COALESCE_REGISTERS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Copy coalescing over the whole lowered program (a register allocator's
// "coalesce" step, with Register variables as the registers).
//
// Liveness is computed on the program's supergraph: a PushGoto continues at
// the callee's entry block, an IndirectGoto of function g at the return_to
// block of every PushGoto that calls g (and, for the entry function, at the
// program's exit, which reads the entry's results); Halt reads the entry's
// results. That over-approximates the paths a lane can take, so two
// variables that are never live at the same point of it never hold values
// needed at the same time in any lane.
//
// For each "d = copy s" (in function, block, op order), d and s — or the
// classes they have already been merged into — are merged when:
// * both are Register variables of the same function, with the same type;
// * the classes do not interfere: no write to a variable of one class
//   happens where a variable of the other is live (a copy's write does not
//   conflict with its own source);
// * the merged class would not hold two params or two results of one
//   function, nor a param and a result of the entry function (the program's
//   inputs and outputs), and no op writes variables of both classes
//   (an op never lists one output twice). An op may come to read and write
//   the same variable, e.g. NUTS's merge "r = select c, t, u" with t saved
//   from r becomes "r = select c, r, u": ops read their inputs before they
//   write, and every backend runs an op whose output is one of its inputs
//   (backends/backend.h, RunOp).
// A param and a result of another function may share a class: NUTS's tree
// passes its start on as its end ("r0 = copy start.q" in the leaf, "start.q
// = copy r0" before the second subtree), and one variable, listed among both
// the params and the results, needs neither copy.
// Each class is then renamed to one variable (its param if it has one, else
// its result, else its lowest VarId), everywhere: ops, terminators, params
// and results. Copies that became "x = copy x" are removed. Merged-away
// variables stay in the variable table, unused.
//
// Only Register variables are merged: Full variables have stacks whose
// pushes and pops lowering placed per variable, and Temporaries may hold junk
// outside the running lanes (ExecMode dense writes), which a Register must
// not. Variables of different functions are not merged, so the verifier's
// ownership rules (R2, A6) keep holding.
//
// Requires: stage kLowered (after lower_calls; best after coalesce_copies).
// Guarantees: every lane computes the same values, bit for bit; the stacks see
// the same pushes and pops; the program still verifies.
absl::StatusOr<Program> CoalesceRegisters(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_COALESCE_REGISTERS_H_
