// infer_uniformity: values computed once per call from uniform inputs become
// uniform themselves.
#ifndef AUTOBATCH_PASSES_INFER_UNIFORMITY_H_
#define AUTOBATCH_PASSES_INFER_UNIFORMITY_H_

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// Marks uniform (Variable::uniform) every output of a PrimOp of the entry
// that the rule of ir/ir.h allows: a built-in with inputs, all uniform
// (MayComputeUniform, ir/uniform.h), in a block every lane runs exactly once
// (BlocksRunOncePerLane), whose output is that op's only write in the
// program and is not an entry param or result, a call argument or result,
// or a Branch condition. Repeated to a fixed point, so chains of such ops
// become uniform.
//
// Why: a uniform value is stored once per call and its op runs for one lane
// instead of every lane (`X^T X` of a design matrix, a data-derived
// constant); without it the value would be computed and stored per lane.
//
// Requires: a verified program at any stage (types are not read), in
// practice right after infer_types. Nothing to do without uniform inputs.
// Guarantees: the program verifies (U1-U5 hold for the marked variables:
// they are not allocated yet, and allocate_variables makes them Register or
// Null); every lane computes the same values as before; no op, block or
// variable is added or removed.
absl::StatusOr<Program> InferUniformity(Program program);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_INFER_UNIFORMITY_H_
