// fold_constants: a built-in op whose inputs are all known constants
// becomes a `constant` holding its value.
#ifndef AUTOBATCH_PASSES_FOLD_CONSTANTS_H_
#define AUTOBATCH_PASSES_FOLD_CONSTANTS_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// `y = f(a, b, ...)`, a built-in PrimOp whose every input holds a known
// value where it is read (passes/constants.h KnownConstants: a variable
// written only by one constant or fill_like op, or written by one earlier
// in the same block), becomes `y = constant {literal}` with the value f
// computes, evaluated by RunPrimitive, the one definition every executor
// runs: the folded program gives every lane the same bits as before. Within
// a block, a folded result counts as known for the ops after it, so chains
// fold in one run.
//
// Never folded: constant and fill_like themselves (already constants),
// random_uniform and random_normal (draws stay visible as draws),
// matvec_batched (its bits may depend on the batch), user kernels, ops
// writing a uniform variable (a constant has no uniform input, verifier
// U3; a uniform op runs once per call anyway), ops of more than one output, results or inputs of more than
// kMaxConstantElements (256) elements (the literal is written out in full),
// and results no literal reproduces bit for bit (a NaN other than the
// canonical one).
//
// Why: differentiated code and the frontend's literals leave arithmetic on
// constants (a derivative's 2 * 1, a cast of a literal); each costs a kernel
// launch per block execution, a constant costs nothing on the stack VM (the
// block plan fills constant temporaries once).
//
// Requires: a verified program at stage typed (types give each value its
// size). Guarantees: every lane computes the same bits for every variable;
// inputs that only fed folded ops are left for remove_dead_ops.
absl::StatusOr<Program> FoldConstants(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_FOLD_CONSTANTS_H_
