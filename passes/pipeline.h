// The compiler pipeline: the passes in order, verified between passes.
//
//   CompileProgram: verify input -> infer_types -> thread_jumps
//                   -> allocate_variables
//                   (for the reference interpreter and the stackless VM)
//   LowerProgram:   verify input -> infer_types -> inline_calls
//                   -> thread_jumps -> allocate_variables -> lower_calls
//                   -> fuse_pop_push -> coalesce_copies
//                   -> coalesce_registers -> coalesce_copies(any_reads)
//                   -> thread_jumps -> order_blocks
//                   (for the stack VM)
#ifndef AUTOBATCH_PASSES_PIPELINE_H_
#define AUTOBATCH_PASSES_PIPELINE_H_

#include <ostream>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

struct PipelineOptions {
  // Run VerifyProgram (ir/verifier.h) on the input and after every pass. A
  // failure after a pass is a bug of autobatch, reported as Internal. Always
  // on in tests; turning it off only saves compile time.
  bool verify = true;
  // If set, the IR after every pass is written here, under a header
  // "=== after <pass> ===", or "(unchanged)" when the pass changed nothing.
  std::ostream* print_ir_after_each_pass = nullptr;
  // On a pass's error, append the IR the pass received to the message.
  bool show_ir_on_error = true;
  // Optional optimizations of LowerProgram.
  bool inline_calls = true;
  bool thread_jumps = true;  // both pipelines (twice in LowerProgram)
  bool fuse_pop_push = true;
  bool coalesce_copies = true;
  bool coalesce_registers = true;
  bool order_blocks = true;
};

// Types and allocates `untyped` (stage kUntyped, kTyped, or kAllocated,
// whose storage classes are then chosen again) for the entry's input types:
// infer_types, thread_jumps (unless disabled in `options`), then
// allocate_variables. The result (stage kAllocated) runs on the
// reference interpreter and the stackless VM.
// Errors name the failing pass, carry its message (user errors keep their
// code, e.g. InvalidArgument for a type error) and, if
// options.show_ir_on_error, the IR that pass received.
absl::StatusOr<Program> CompileProgram(Program untyped,
                                       std::vector<TensorType> input_types,
                                       const PipelineOptions& options = {});

// CompileProgram with inline_calls after infer_types, then lower_calls,
// fuse_pop_push, coalesce_copies, coalesce_registers, coalesce_copies with
// ForwardCopies::kAnyReads (both runs under options.coalesce_copies),
// thread_jumps again (coalescing empties join blocks) and order_blocks
// (each optimization unless disabled in `options`). The result (stage
// kLowered) runs on the stack VM. Errors as CompileProgram.
absl::StatusOr<Program> LowerProgram(Program untyped,
                                     std::vector<TensorType> input_types,
                                     const PipelineOptions& options = {});

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_PIPELINE_H_
