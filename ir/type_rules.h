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
// types, and the op's source location.
absl::StatusOr<std::vector<TensorType>> InferPrimitiveType(
    const PrimOp& op, std::span<const TensorType> inputs,
    const std::map<std::string, KernelSignature>& kernels);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_TYPE_RULES_H_
