// The compiler pipelines: lists of registered passes (passes/registry.h),
// run in order and verified between passes.
//
//   tidy:           remove_unreachable_blocks, then repeat(thread_jumps,
//                   fold_branches, merge_blocks, fold_copies,
//                   propagate_copies, remove_dead_ops) until a round
//                   changes nothing, then compact_variables
//   typed:          infer_types -> differentiate -> infer_uniformity, then
//                   repeat(fold_constants, simplify_arithmetic, cse,
//                   propagate_copies, remove_dead_ops) until a round
//                   changes nothing (the cleanup; both pipelines run this
//                   part)
//   CompileProgram: tidy -> typed -> thread_jumps
//                   -> allocate_variables
//                   (for the reference interpreter and the stackless VM)
//   LowerProgram:   tidy -> typed -> inline_calls -> thread_jumps
//                   -> allocate_variables -> lower_calls -> fuse_pop_push
//                   -> coalesce_copies -> coalesce_registers
//                   -> coalesce_copies(any_reads) -> thread_jumps
//                   -> order_blocks
//                   (for the stack VM)
//
// The lists themselves are in pipeline.cc (CompilePipelineText,
// LowerPipelineText), written as `autobatch opt --passes` reads them.
#ifndef AUTOBATCH_PASSES_PIPELINE_H_
#define AUTOBATCH_PASSES_PIPELINE_H_

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "passes/registry.h"

namespace autobatch {

// The line a compile error ends with when its IR is not shown.
inline constexpr char kIrOnErrorHint[] =
    "(pass --dump-ir-on-error, or set dump_ir_on_error in CallOptions or show_ir_on_error in "
    "PipelineOptions, to see the program's IR)";

struct PipelineOptions {
  // Run VerifyProgram (ir/verifier.h) on the input and after every pass. A
  // failure after a pass is a bug of autobatch, reported as Internal. Always
  // on in tests; turning it off only saves compile time.
  bool verify = true;
  // If set, the IR after every pass is written here, under a header
  // "=== after <pass> ===" ("=== after <pass> (round N) ===" for the second
  // and later rounds of a repeated group), or "(unchanged)" when the pass
  // changed nothing.
  std::ostream* print_ir_after_each_pass = nullptr;
  // On a pass's error, append the IR the pass received to the message
  // (`--dump-ir-on-error` on the command line). Off by default: the error
  // names the op and the user's source line, and a whole program's IR would
  // bury it; the message then ends with a one-line hint (kIrOnErrorHint).
  bool show_ir_on_error = false;
  // Optional optimizations of LowerProgram (the tidy passes always run).
  // `cleanup` (both pipelines): the repeated fold_constants,
  // simplify_arithmetic, cse, propagate_copies, remove_dead_ops group after
  // infer_uniformity; every lane's bits are the same without it.
  bool cleanup = true;
  bool inline_calls = true;
  bool thread_jumps = true;  // both pipelines (also in the tidy round)
  bool fuse_pop_push = true;
  bool coalesce_copies = true;
  bool coalesce_registers = true;
  bool order_blocks = true;
  // The compile's time budget (support/deadline.h; none by default). The
  // runner reads the clock before every pass (so a deadline already passed
  // stops the compile before its first pass) and after the last, and the
  // passes that can take long on a big program charge it inside their loops
  // (PassContext::deadline): inline_calls, infer_types (its sweeps) and
  // coalesce_copies (its sweeps, repeated until none changes the block).
  // Once it has passed, the compile stops with DeadlineExceeded ("time budget
  // exhausted while compiling: ... before|in|after pass <name>") naming the
  // budget to raise (CallOptions::timeout_seconds, `autobatch run
  // --timeout`): the code of a batched VM's run over its time budget, which
  // the CLI reports alike (exit status 1). RunProgram (frontend/run.h) and
  // BatchFunction::Run pass the call's budget. The compile's output does not
  // depend on it, only whether it finishes.
  Deadline deadline = {};
};

// A list of passes to run: each step one pass, or a group run round after
// round until a round leaves the program unchanged.
struct PipelineStep {
  std::vector<const PassInfo*> passes;  // one, unless `repeat`
  bool repeat = false;
};
using Pipeline = std::vector<PipelineStep>;

// Reads a pass list: registered pass names separated by commas, and
// `repeat(name,name,...)` for a group repeated until a round changes
// nothing (groups do not nest). Spaces are ignored. An unknown name is
// NotFound listing every pass; a malformed list (an empty name, unbalanced
// parentheses, a nested repeat) is InvalidArgument saying what is wrong.
absl::StatusOr<Pipeline> ParsePipeline(std::string_view text);
// The text ParsePipeline reads back to `pipeline`.
std::string PipelineText(const Pipeline& pipeline);

// The pipelines' lists, with `options`' switches applied; TidyPipelineText
// is the tidy passes both start with (options.thread_jumps also drops
// thread_jumps from the tidy round).
std::string TidyPipelineText(const PipelineOptions& options = {});
std::string CompilePipelineText(const PipelineOptions& options = {});
std::string LowerPipelineText(const PipelineOptions& options = {});

// Runs `pipeline` on `program`: verifies the input (a malformed input keeps
// the verifier's code and says so), runs each pass with `context`, and
// verifies after each (options.verify). A pass's error is returned with its
// code (InvalidArgument for the user's type error or for a program at a stage
// the pass does not take), prefixed "pass <name> failed: "; a pass's output
// that does not verify is Internal (a bug of autobatch) naming the pass.
// With options.show_ir_on_error the message ends with the IR the pass
// received, else with kIrOnErrorHint. A compile stopped by
// options.deadline is DeadlineExceeded, with no IR (see
// PipelineOptions::deadline).
absl::StatusOr<Program> RunPipeline(Program program, const Pipeline& pipeline,
                                    const PassContext& context,
                                    const PipelineOptions& options = {});

// What CompileProgram and LowerProgram check of the program as given,
// before they change it: the verifier, the definedness check
// (passes/analysis/definedness.h), and for an untyped program infer_types
// for `input_types` (its unreachable blocks dropped first: no lane runs
// them). So an executor that runs a program as written (the reference
// interpreter) refuses what the compiler refuses. OK or the error, as
// RunPipeline.
absl::Status CheckProgram(const Program& program, std::vector<TensorType> input_types,
                          const PipelineOptions& options = {});

// Types and allocates `untyped` (stage kUntyped, kTyped, or kAllocated,
// whose storage classes are then chosen again) for the entry's input types:
// the tidy passes, infer_types, infer_uniformity, the cleanup group and
// thread_jumps (each unless disabled in `options`), then
// allocate_variables. The result (stage kAllocated) runs on the reference
// interpreter and the stackless VM. Errors as RunPipeline.
absl::StatusOr<Program> CompileProgram(Program untyped,
                                       std::vector<TensorType> input_types,
                                       const PipelineOptions& options = {});

// CompileProgram with inline_calls after the cleanup group, then lower_calls,
// fuse_pop_push, coalesce_copies, coalesce_registers, coalesce_copies with
// ForwardCopies::kAnyReads (both runs under options.coalesce_copies),
// thread_jumps again (coalescing empties join blocks) and order_blocks
// (each optimization unless disabled in `options`). The result (stage
// kLowered) runs on the stack VM. Errors as RunPipeline.
absl::StatusOr<Program> LowerProgram(Program untyped,
                                     std::vector<TensorType> input_types,
                                     const PipelineOptions& options = {});

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_PIPELINE_H_
