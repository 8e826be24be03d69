// infer_types: gives every variable its TensorType from the input types.
#ifndef AUTOBATCH_PASSES_INFER_TYPES_H_
#define AUTOBATCH_PASSES_INFER_TYPES_H_

#include <span>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "support/deadline.h"

namespace autobatch {

// Infers the type of every variable of `program`, given the types of the
// entry function's params (`input_types`, one per param, in order).
//
// Requires: stage kUntyped or kTyped; the program passes VerifyProgram
// (ir/verifier.h). Types already present on variables are kept and checked
// like declarations.
//
// How: types flow forward to a fixed point. A PrimOp's outputs are typed by
// InferPrimitiveType (ir/type_rules.h) once all its inputs are typed; a
// CallOp types the callee's params from its args and its results from the
// callee's results. Recursive and mutually recursive functions therefore get
// their result types from their base cases (the paths that return without
// recursing), with no annotation. Typing is monomorphic: one type per
// variable, so one set of param types per function. An explicit
// Function::signature, when given, seeds and is checked against its
// function's params and results. A gradient stub (Function::gradient_of)
// has no body; its types and its primal's flow both ways: stub param i <->
// primal param i, stub result 0 <-> primal result 0, stub result 1 + k <->
// primal param wrt[k]. So calling the stub types the primal and vice versa.
// Stubs stay stubs (the differentiate pass writes their bodies).
// A tape takes the type of the values pushed on it (every push must
// agree), and a tape_pop's result the tape's type.
//
// Guarantees on success: functions not reachable from the entry (through
// calls) are dropped, and so are variables that no remaining function
// mentions (params, results, op operands, branch conditions); the remaining
// functions and variables keep their relative order (FunctionIds and VarIds
// are renumbered, program.entry follows). Every variable has a type, every
// PrimOp passes its type rule, every Branch condition is a bool scalar,
// every call passes and receives the callee's types, and stage = kTyped.
// Nothing else changes.
//
// Errors (InvalidArgument) name the function, the variable, both types and
// the user's source line, and say what to do:
// * a variable given two types (f64 on one path, i64 on another), including
//   a function called with two different argument types, a gradient stub
//   and its primal called with different types, a tape pushed values of two
//   types, or a signature that disagrees with the inferred or given types;
// * a primitive whose operand types break its rule;
// * a Branch on anything but a bool scalar;
// * a gradient stub whose primal does not return an f64 scalar, or is
//   differentiated with respect to a param whose dtype is not f64;
// * a variable whose type cannot be inferred: a recursion with no base case
//   (every path assigning a result goes through a recursive call), a
//   variable only computed from itself (a loop variable with no initial
//   value), a variable read but never assigned, or a tape popped but never
//   pushed;
// * `input_types` not matching the entry's param count.
// `deadline` (PassContext::deadline): charged per op swept; once it has
// passed, DeadlineExceeded.
absl::StatusOr<Program> InferTypes(Program program,
                                   std::span<const TensorType> input_types,
                                   Deadline deadline = {});

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_INFER_TYPES_H_
