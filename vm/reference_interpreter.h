// The reference interpreter: runs a program on ONE example (lane) with host
// semantics and no masks. It is the oracle of every differential test and
// backs dry_run, and its .cc is the IR's semantics written as an executor:
// one function per concern (a PrimOp, a call, a terminator, a budget step).
//
// Semantics are the unlowered ones of ir/ir.h: a CallOp copies its args into
// a fresh activation of the callee's variables, runs the callee from block 0
// to Return and copies the callee's results back; each activation has its own
// values. Every PrimOp is computed by RunPrimitive (backends/kernels.h) with
// num_lanes = 1 and output types from InferPrimitiveType (ir/type_rules.h),
// the same code the batched backends run, so results are bit-identical to
// them lane by lane.
//
// Dynamically typed: values carry their TensorType, so untyped, typed and
// allocated programs run alike (storage classes are ignored). Where a
// variable has a declared type, a value of another type written to it is an
// error. Lowered programs (PushGoto, IndirectGoto, PopOp) are rejected.
// RunProgram (frontend/run.h, dry_run) checks a program statically first,
// as the compiler does, so that its errors are the batched VMs'; this
// interpreter's own checks of types and reads are the oracle's, per lane.
//
// Limits. The interpreter does not recurse on the host: activations live on
// a heap-allocated stack, so no depth can overflow the thread's stack, and
// ReferenceOptions::max_depth bounds memory instead. Exceeding max_depth,
// max_steps (blocks executed) or the deadline is ResourceExhausted /
// DeadlineExceeded naming the function and block, never a crash or a hang.
// Reading a variable no op has written in the current activation is
// InvalidArgument naming the function, block, op and variable.
//
// Tapes (ir/ir.h, "Tapes"): one stack of values per tape for the run. A
// tape_pop finding no value that its own activation pushed, and a Return
// (or Halt, which ends every activation) leaving a tape of an ending
// activation deeper than the activation found it, are FailedPrecondition
// naming the tape, function and block; a tape passing max_value_bytes, or
// all tapes passing max_stack_bytes, is ResourceExhausted.
#ifndef AUTOBATCH_VM_REFERENCE_INTERPRETER_H_
#define AUTOBATCH_VM_REFERENCE_INTERPRETER_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"

namespace autobatch {

// One lane's value: a Tensor with batch size 1, of any TensorType.
using LaneValue = Tensor;

struct ReferenceOptions {
  // Maximum number of live activations (the entry's included).
  int64_t max_depth = 10000;
  // Maximum number of blocks executed (entering a block counts one); <= 0:
  // no limit. Makes `While(true)` an error instead of a hang.
  int64_t max_steps = 100'000'000;
  // Wall-clock deadline, checked after blocks and ops as their work adds up
  // (the step and time budget every executor shares, Budget in
  // vm/run_support.h).
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
  // The largest value (bytes, one lane) an op may produce; larger is
  // ResourceExhausted naming the variable (CallOptions::max_value_bytes).
  // Also the most one tape may hold.
  int64_t max_value_bytes = int64_t{4} << 30;
  // The most all tapes together may hold, in bytes (values pushed and not
  // yet popped; CallOptions::max_stack_bytes).
  int64_t max_stack_bytes = int64_t{8} << 30;
  // The most memory the run (every lane's values and tapes, and the
  // outputs) may hold at once; 0 = DefaultMemoryLimit()
  // (CallOptions::max_memory_bytes). RunReferenceBatch charges it.
  int64_t max_memory_bytes = 0;
};

// A program checked and indexed once, runnable on many lanes. Holds a
// pointer to `program` and `kernels`, which must outlive it.
class ReferenceInterpreter {
 public:
  // Checks what running needs (and never trusts the program otherwise):
  // stage is not lowered; no function is a gradient stub
  // (CheckNoGradientStubs, vm/run_support.h); the entry, every function, block, variable and
  // callee index is in range; a function's variables belong to it; CallOp
  // arities match the callee; no lowered-only op or terminator; every user
  // kernel an op names is registered in `kernels` (null = none registered)
  // with the signature in Module::kernels. Errors name where.
  static absl::StatusOr<ReferenceInterpreter> Create(const Program& program,
                                                     const KernelRegistry* kernels);

  // Runs the entry function on one lane: `inputs` has one LaneValue
  // (batch 1) per entry parameter; returns one per entry result.
  absl::StatusOr<std::vector<LaneValue>> Run(std::vector<LaneValue> inputs,
                                             const ReferenceOptions& options = {}) const;

 private:
  ReferenceInterpreter(const Program& program, const KernelRegistry* kernels)
      : program_(&program), kernels_(kernels) {}

  const Program* program_;
  const KernelRegistry* kernels_;
  std::vector<int32_t> slot_;        // per variable: index in its function's frame
  std::vector<int32_t> frame_size_;  // per function: number of variables
  std::vector<std::vector<VarId>> fn_tapes_;  // per function: its tapes
};

// Create + Run on one lane.
absl::StatusOr<std::vector<LaneValue>> RunReference(const Program& program,
                                                    std::vector<LaneValue> inputs,
                                                    const KernelRegistry* kernels,
                                                    const ReferenceOptions& options = {});

// Runs a batch lane by lane (dry_run): `inputs` are batched tensors checked
// by CheckInputs (vm/inputs.h); returns batched outputs. Every lane must
// produce outputs of the same types. With no inputs the batch has one lane.
// With zero lanes the outputs are empty tensors of the entry results'
// declared types (FailedPrecondition if some type is unknown: run
// infer_types first). A lane's error is returned prefixed with "lane i: ".
absl::StatusOr<std::vector<Tensor>> RunReferenceBatch(const Program& program,
                                                      std::vector<Tensor> inputs,
                                                      const KernelRegistry* kernels,
                                                      const ReferenceOptions& options = {});

}  // namespace autobatch

#endif  // AUTOBATCH_VM_REFERENCE_INTERPRETER_H_
