// RunProgram: compile a program as the chosen executor needs and run a batch.
#include "vm/run.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "passes/pipeline.h"
#include "vm/inputs.h"
#include "vm/reference_interpreter.h"
#include "vm/stack_vm.h"
#include "vm/stackless_vm.h"

namespace autobatch {
namespace {

std::vector<TensorType> TypesOf(const std::vector<Tensor>& inputs) {
  std::vector<TensorType> types;
  for (const Tensor& t : inputs) types.push_back(t.type());
  return types;
}

ReferenceOptions ToReferenceOptions(const CallOptions& options) {
  ReferenceOptions ref;
  ref.max_depth = options.max_stack_depth;
  ref.max_steps = options.max_steps;
  ref.max_value_bytes = options.max_value_bytes;
  if (options.timeout_seconds > 0) {
    ref.deadline = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(options.timeout_seconds));
  }
  return ref;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunProgram(const Program& program,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options,
                                               Profile* profile) {
  if (options.dry_run) {
    if (program.stage == Stage::kLowered) {
      return absl::InvalidArgumentError(
          "dry_run runs unlowered programs; this one is lowered");
    }
    if (program.stage == Stage::kUntyped && !inputs.empty() && inputs[0].batch() == 0) {
      // No lane runs, so only inference can give the outputs their types.
      AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
      AB_ASSIGN_OR_RETURN(Program typed, CompileProgram(program, TypesOf(inputs)));
      return RunReferenceBatch(typed, std::move(inputs), kernels, ToReferenceOptions(options));
    }
    return RunReferenceBatch(program, std::move(inputs), kernels,
                             ToReferenceOptions(options));
  }
  AB_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend,
                      MakeBackend(options.backend));
  if (options.vm == Vm::kStackless) {
    if (program.stage == Stage::kLowered) {
      return absl::InvalidArgumentError(
          "the stackless VM runs unlowered programs; this one is lowered: "
          "use the stack VM or pass the untyped program");
    }
    if (program.stage != Stage::kUntyped) {
      return RunStacklessVm(program, std::move(inputs), kernels, *backend,
                            options, profile);
    }
    AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
    AB_ASSIGN_OR_RETURN(Program compiled,
                        CompileProgram(program, TypesOf(inputs)));
    return RunStacklessVm(compiled, std::move(inputs), kernels, *backend,
                          options, profile);
  }
  if (program.stage == Stage::kLowered) {
    return RunStackVm(program, std::move(inputs), kernels, *backend, options,
                      profile);
  }
  AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
  AB_ASSIGN_OR_RETURN(Program lowered, LowerProgram(program, TypesOf(inputs)));
  return RunStackVm(lowered, std::move(inputs), kernels, *backend, options,
                    profile);
}

}  // namespace autobatch
