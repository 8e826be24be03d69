// Checks a batch of input tensors against a program's entry parameters.
#ifndef AUTOBATCH_VM_INPUTS_H_
#define AUTOBATCH_VM_INPUTS_H_

#include <span>

#include "absl/status/status.h"
#include "backends/tensor.h"
#include "ir/ir.h"

namespace autobatch {

// OK if `inputs` fit the entry function of `program`: one tensor per
// parameter, each of the parameter's type when the type is known (the
// variable's type, or the function's explicit Signature), and all with the
// same batch size (0 allowed), except that a UNIFORM parameter's tensor
// (Variable::uniform) holds exactly one lane, shared by every lane.
// Otherwise InvalidArgument naming the input index, the parameter and what
// is wrong.
absl::Status CheckInputs(const Program& program, std::span<const Tensor> inputs);

// Whether entry parameter `i` of `program` is uniform (false when out of range).
bool IsUniformInput(const Program& program, size_t i);

// The batch size of checked inputs: that of the first input that is not
// uniform; 1 when there is none (no inputs, or only uniform ones: one
// example, as on the reference interpreter).
int64_t BatchOfInputs(const Program& program, std::span<const Tensor> inputs);

// OK if every typed variable of `program` takes at most `max_bytes` bytes for
// `batch` lanes (overflow-safe). Otherwise ResourceExhausted naming the
// variable, its function, its type and the limit (CallOptions::
// max_value_bytes).
absl::Status CheckValueSizes(const Program& program, int64_t batch, int64_t max_bytes);

// An estimate of the bytes a batched run of `program` holds per lane as it
// starts (what it charges to its memory budget, support/memory.h): every
// typed variable's value but uniform ones (one lane for the whole batch)
// and tapes (empty), a Full variable's `frames_per_stack` times (the stack
// VM's first frames: 1 + StackStorage::kInitialFrames; the other executors
// keep one). In floating point, so it cannot overflow.
double StartingBytesPerLane(const Program& program, int64_t frames_per_stack);
// The same for one value of `type` written to `variable`.
absl::Status CheckValueSize(const Module& module, VarId variable, const TensorType& type,
                            int64_t batch, int64_t max_bytes);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_INPUTS_H_
