// The IR verifier: checks every invariant listed below and reports them all.
//
// The verifier never stops at the first problem: it reports every violation
// it finds, each with its function, block and op. It never crashes on a
// malformed program (out-of-range indices included); a check that needs an
// index that is already reported as broken is skipped rather than repeated.
//
// Invariants checked at EVERY stage:
//  P1  the entry function index exists.
//  P2  function names are unique (callers, printers and JSON name them).
//  P3  every user kernel declared in Module::kernels has valid shapes
//      (dimensions >= 0, element count fits; see V3).
//  V1  every variable's `function` exists.
//  V2  variable names are unique within their function.
//  V3  a variable's type, when present, has dimensions >= 0 and an element
//      count that fits (8 * count <= INT64_MAX).
//  F1  a function has at least one block (block 0 is its entry), unless it
//      is a gradient stub (G2).
//  F2  params and results name existing variables of the function itself.
//  F3  no variable appears twice among the params (a call copies each
//      argument into its own parameter). Results may repeat.
//  F4  an explicit Signature declares as many params and results as the
//      function has.
//  G1  a gradient stub (Function::gradient_of set) appears only in untyped
//      and typed programs (the differentiate pass writes its body first).
//  G2  a gradient stub has no blocks.
//  G3  gradient_of.function exists, is not the stub itself and is not a
//      stub.
//  G4  gradient_of.wrt is non-empty and lists indices of the primal's params
//      in ascending order, each once.
//  G5  the stub has as many params as the primal, 1 + wrt.size() results,
//      and the primal has exactly one result.
//  R1  every variable an op or terminator names exists.
//  R2  it belongs to the function using it. In LOWERED programs a function
//      may also use the params and results of the functions it PushGotos to
//      (the caller writes the callee's params and reads its results).
//      Any function's PrimOps may also READ (as inputs) the uniform
//      parameters of the entry: they are program-wide read-only inputs (a
//      model's data, read at the leaf of a recursive sampler).
//  R3  every block a terminator names (Branch targets, Goto target, PushGoto
//      return_to) exists in the same function.
//  R4  every function a CallOp or PushGoto names exists.
//  O1  a PrimOp's input count matches the primitive table (variadic: >= 1);
//      a built-in has exactly one output.
//  O2  a user-kernel PrimOp (Primitive::kUserKernel) names a kernel
//      (attrs.kernel) that is declared in Module::kernels, with the input and
//      output counts of its KernelSignature.
//  O3  a PrimOp's outputs and a CallOp's results are distinct variables
//      (otherwise which write wins is undefined).
//  O4  a CallOp passes as many args as the callee has params and receives as
//      many results as the callee has results.
//  O5  a kernel's vjp (KernelSignature::vjp), when set, names another kernel
//      declared in Module::kernels whose inputs are the kernel's inputs then
//      its outputs' types, and whose outputs are the kernel's inputs' types.
//  S1  PopOp, PushGoto and IndirectGoto appear only in lowered programs;
//      CallOp and Return appear only in unlowered ones. TapePushOp and
//      TapePopOp may appear at every stage.
//  K1  a tape (a variable that is the tape operand of some TapePushOp or
//      TapePopOp) is named nowhere else: not a PrimOp input, output or
//      in_place, a call argument or result, a parameter or result, a Branch
//      condition, a PopOp variable, a pushed value or a popped result.
//  K2  a tape belongs to the function of every tape op naming it (R2 with
//      no allowance for callees' params in lowered programs), so all of a
//      tape's ops are in one function.
//  K3  every tape is both pushed (some tape_push names it) and popped (some
//      tape_pop does): a tape only pushed leaves every activation that
//      pushes unbalanced, one only popped fails its first pop. The
//      balance itself depends on each lane's path: see "NOT checked".
//
// Once TYPED (stage >= kTyped):
//  T1  every variable has a type.
//  T2  every PrimOp passes its type rule (InferPrimitiveType; this includes
//      attributes, e.g. a constant's literal or a slice's bounds) and each
//      output variable's type equals the inferred type.
//  T3  a Branch condition is a bool scalar.
//  T4  a CallOp's args have the types of the callee's params, and its
//      results the types of the callee's results.
//  T5  an explicit Signature's types equal the param and result types.
//  G6  a gradient stub's param i has the type of the primal's param i; the
//      primal's result is an f64 scalar and so is the stub's result 0; each
//      param wrt[k] of the primal has dtype f64, and the stub's result 1 + k
//      has its type. (Checked only when G3-G5 hold.)
//  T6  a tape_push's value and a tape_pop's result have the tape's type.
//
// Once ALLOCATED (stage >= kAllocated; storage classes are only meaningful
// from there, so none of this is checked before):
//  A1  params and results are never Temporary (the caller writes params and
//      reads results, so they cross a block boundary).
//  A2  results are never Null (the caller, or the program's output, reads
//      them).
//  A3  a Null variable is never read (by an op or a Branch condition).
//  A4  a Temporary is read only after a write to it earlier in the SAME block
//      (a read by op k needs a write by an op before k; a Branch condition
//      needs a write by any op of the block). It may be written in several
//      blocks, each reading only its own write. No CallOp that may re-enter
//      the temp's function (see A6) lies between that write and the read;
//      the error is reported at the CallOp.
//  A5  a PopOp pops only Full variables (nothing else has a stack).
//  A6  a Register variable is not live across a call that may overwrite it,
//      i.e. a CallOp or PushGoto whose callee can reach (through the static
//      call graph of CallOps and PushGotos) a function that writes the
//      variable: as an op output (a PopOp's too), a CallOp result, or a
//      CallOp param other than one the call passes to itself (`f(x)` inside
//      f(x) does not write x). Liveness is the usual intra-function backward analysis: ops
//      read their inputs / args and write their outputs / results (PopOp
//      writes its vars); Return and IndirectGoto read the function's results;
//      Halt reads the entry function's results; a PushGoto reads the callee's
//      params, and the callee's results are written by the call (so reading
//      them after the return does not make them live across it). Checked only
//      for functions with no R1-R4 / F2 error.
//  A7  a variable's storage class is tape if and only if it is a tape (K1).
//      Tapes have no frames: a PopOp never names one (K1).
//
// Uniform variables (Variable::uniform; ir/ir.h), at EVERY stage:
//  U1  a uniform variable belongs to the entry function (other functions
//      may read the entry's uniform parameters: R2).
//  U2  a uniform parameter of the entry is written by no op.
//  U3  any other uniform variable is written by exactly one op of the
//      program: a built-in PrimOp with at least one input, every input
//      uniform, in a block of the entry that every lane runs exactly once
//      (BlocksRunOncePerLane, ir/uniform.h: no loop, no per-lane branch).
//  U4  a uniform variable is never a CallOp argument or result, a Branch
//      condition or a result of the entry; nothing calls (CallOp, PushGoto)
//      a function with uniform parameters.
//  U5  once allocated, a uniform variable is Register or Null (no stack).
//
// Deliberately NOT checked (not sound, or not an invariant): reads of
// variables that may be unwritten (inactive or unassigned lanes hold junk, and
// every primitive is total), unreachable blocks, whether every path reaches a
// Return, the balance of pushes and pops of Full variables, and the balance
// of tape pushes and pops per activation beyond K3 (it depends on each
// lane's path: the executors check it at run time, ir/ir.h "Tapes").
#ifndef AUTOBATCH_IR_VERIFIER_H_
#define AUTOBATCH_IR_VERIFIER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace autobatch {

// One violated invariant and where it is.
struct VerifierError {
  FunctionId function;  // invalid: about the program as a whole
  BlockId block;        // invalid: about the function (or a variable of it)
  int op_index = -1;    // index into Block::ops; -1: the terminator (when
                        // `block` is valid) or no op
  std::string message;  // what is wrong and what to do
  // Copied from the program so that ToString needs nothing else.
  std::string function_name;
  std::string block_label;

  // "function 'fib', block ^2 (then), op 3: message";
  // "function 'fib', block ^2, terminator: message" (no label);
  // "function 'fib': message"; "program: message".
  std::string ToString() const;
};

// Every violation of the invariants above, in a deterministic order: the
// program's, then the variables', then each function's in order (its
// params/results, then each block's ops and terminator, then storage).
std::vector<VerifierError> CollectVerifierErrors(const Program& program);

// OK if CollectVerifierErrors finds nothing; otherwise InvalidArgument whose
// message holds one VerifierError::ToString() per line.
absl::Status VerifyProgram(const Program& program);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_VERIFIER_H_
