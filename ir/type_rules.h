// Type rules of primitives: the output type of a PrimOp from its input types.
#ifndef AUTOBATCH_IR_TYPE_RULES_H_
#define AUTOBATCH_IR_TYPE_RULES_H_

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// The output types of `op` given its input types, following the TypeRule in
// ir/primitives.def (user kernels: the signature in `kernels`). A mismatch is
// an InvalidArgument naming the primitive, the offending operand and both
// types, and the op's source location. fill_like's literal must keep its
// value in x's dtype (a whole number in range for an integer dtype, 0 or 1
// for bool, finite in f32 if finite; rounding to f32's nearest is fine), so
// that `n * 0.5` with an i64 `n` is an error, not a multiplication by 0.
absl::StatusOr<std::vector<TensorType>> InferPrimitiveType(
    const PrimOp& op, std::span<const TensorType> inputs,
    const std::map<std::string, KernelSignature>& kernels);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_TYPE_RULES_H_
