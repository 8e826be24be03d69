// fuse_glm: a GLM log mass and its gradient on the same operands become one
// bernoulli_logit_glm_value_grad.
#ifndef AUTOBATCH_PASSES_FUSE_GLM_H_
#define AUTOBATCH_PASSES_FUSE_GLM_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// In one straight-line run of blocks (a block, then the block its Goto
// targets when that Goto is the target's only way in, and so on: the
// differentiated function's forward and reverse sweeps without branches),
// `a = bernoulli_logit_glm(X, y, al, be)` and a later
// `g = bernoulli_logit_glm_grad(X, y, al, be)` (or the grad first) on the
// same four input variables, none of them written between the two ops,
// become
//
//   vg = bernoulli_logit_glm_value_grad(X, y, al, be)   (at the first op)
//   a = reduce_sum(slice(vg, 0, 1))                     (at the value op)
//   g = slice(vg, 1, K + 1)                              (at the grad op)
//
// with vg and the one-element slice new variables, uniform when a and g
// are (a pair whose outputs differ in uniformity is left alone). The fused
// op computes both results with their separate ops' bits (ir/primitives.def)
// and reads X once; the sum of one element is that element (an empty sum
// starts from -0, the identity of +), so every variable keeps its bits.
// Each op joins at most one pair, the first counterpart after it.
//
// Why: the differentiated log density computes the value in its forward
// sweep and the gradient in its reverse sweep on the same operands; each
// op's pass over X costs most of a gradient evaluation.
//
// Requires: a verified program at stage typed, after differentiate (which
// emits the gradient op) and cse (which makes equal operands the same
// variables). Guarantees: every lane computes the same bits for every
// variable that existed before.
absl::StatusOr<Program> FuseGlm(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_FUSE_GLM_H_
