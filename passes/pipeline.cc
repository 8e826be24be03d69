// The compiler pipeline: the passes in order, verified between passes.
#include "passes/pipeline.h"

#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "support/status.h"
#include "ir/verifier.h"
#include "passes/allocate_variables.h"
#include "passes/coalesce_copies.h"
#include "passes/coalesce_registers.h"
#include "passes/fuse_pop_push.h"
#include "passes/infer_types.h"
#include "passes/inline_calls.h"
#include "passes/lower_calls.h"
#include "passes/order_blocks.h"
#include "passes/thread_jumps.h"

namespace autobatch {
namespace {

// Runs passes one after the other on one program, with the checks and dumps
// the options ask for.
class PassRunner {
 public:
  PassRunner(Program program, const PipelineOptions& options)
      : program_(std::move(program)), options_(options) {}

  absl::Status VerifyInput() {
    if (!options_.verify) return absl::OkStatus();
    absl::Status status = VerifyProgram(program_);
    if (status.ok()) return status;
    return absl::Status(status.code(),
                        absl::StrCat("the program given to the compiler is malformed:\n",
                                     std::string(status.message()), IrSuffix("the compiler")));
  }

  absl::Status Run(std::string_view name,
                   const std::function<absl::StatusOr<Program>(Program)>& pass) {
    absl::StatusOr<Program> out = pass(program_);
    if (!out.ok()) {
      return absl::Status(out.status().code(),
                          absl::StrCat("pass ", std::string(name), " failed: ",
                                       std::string(out.status().message()),
                                       IrSuffix(name)));
    }
    if (options_.verify) {
      absl::Status status = VerifyProgram(*out);
      if (!status.ok()) {
        return absl::InternalError(absl::StrCat(
            "pass ", std::string(name),
            " produced an invalid program (a bug in autobatch; please report it):\n",
            std::string(status.message()), IrSuffix(name), "\n--- IR it produced ---\n",
            PrintProgram(*out, PrintOptions{.locations = true})));
      }
    }
    if (options_.print_ir_after_each_pass != nullptr) {
      *options_.print_ir_after_each_pass
          << "=== after " << name << " ===\n"
          << (*out == program_ ? std::string("(unchanged)\n") : PrintProgram(*out));
    }
    program_ = *std::move(out);
    return absl::OkStatus();
  }

  Program Take() { return std::move(program_); }

 private:
  std::string IrSuffix(std::string_view receiver) const {
    if (!options_.show_ir_on_error) return "";
    return absl::StrCat("\n--- IR given to ", std::string(receiver), " ---\n",
                        PrintProgram(program_, PrintOptions{.locations = true}));
  }

  Program program_;
  const PipelineOptions& options_;
};

// An allocated program (e.g. the JSON `autobatch ir --stage typed` writes)
// goes through the pipeline again from its types: its storage classes are
// chosen again by allocate_variables, after inline_calls has had its turn.
// (allocate_variables sets every storage class; resetting them only keeps
// the typed program free of stale ones.)
Program Unallocated(Program program) {
  if (program.stage != Stage::kAllocated) return program;
  for (Variable& v : program.module.variables) v.storage = StorageClass::kFull;
  program.stage = Stage::kTyped;
  return program;
}

// `inline_calls`: whether inline_calls runs after infer_types.
absl::Status Compile(PassRunner& runner, const std::vector<TensorType>& input_types,
                     bool inline_calls, bool thread_jumps) {
  AB_RETURN_IF_ERROR(runner.VerifyInput());
  AB_RETURN_IF_ERROR(runner.Run("infer_types", [&](Program p) {
    return InferTypes(std::move(p), input_types);
  }));
  if (inline_calls) AB_RETURN_IF_ERROR(runner.Run("inline_calls", InlineCalls));
  if (thread_jumps) AB_RETURN_IF_ERROR(runner.Run("thread_jumps", ThreadJumps));
  AB_RETURN_IF_ERROR(runner.Run("allocate_variables", AllocateVariables));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Program> CompileProgram(Program untyped, std::vector<TensorType> input_types,
                                       const PipelineOptions& options) {
  PassRunner runner(Unallocated(std::move(untyped)), options);
  AB_RETURN_IF_ERROR(Compile(runner, input_types, /*inline_calls=*/false, options.thread_jumps));
  return runner.Take();
}

absl::StatusOr<Program> LowerProgram(Program untyped, std::vector<TensorType> input_types,
                                     const PipelineOptions& options) {
  PassRunner runner(Unallocated(std::move(untyped)), options);
  AB_RETURN_IF_ERROR(Compile(runner, input_types, options.inline_calls, options.thread_jumps));
  AB_RETURN_IF_ERROR(runner.Run("lower_calls", LowerCalls));
  if (options.fuse_pop_push) AB_RETURN_IF_ERROR(runner.Run("fuse_pop_push", FusePopPush));
  if (options.coalesce_copies) {
    AB_RETURN_IF_ERROR(runner.Run("coalesce_copies", [](Program p) {
      return CoalesceCopies(std::move(p), ForwardCopies::kOnlyRead);
    }));
  }
  if (options.coalesce_registers) {
    AB_RETURN_IF_ERROR(runner.Run("coalesce_registers", CoalesceRegisters));
  }
  if (options.coalesce_copies) {
    AB_RETURN_IF_ERROR(runner.Run("coalesce_copies(any_reads)", [](Program p) {
      return CoalesceCopies(std::move(p), ForwardCopies::kAnyReads);
    }));
  }
  // Coalescing empties blocks (a join that only copied the result into the
  // function's result): thread jumps through them again.
  if (options.thread_jumps) AB_RETURN_IF_ERROR(runner.Run("thread_jumps", ThreadJumps));
  if (options.order_blocks) AB_RETURN_IF_ERROR(runner.Run("order_blocks", OrderBlocks));
  return runner.Take();
}

}  // namespace autobatch
