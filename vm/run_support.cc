// Shared machinery of the batched VMs: input checks, budgets, op dispatch.
#include "vm/run_support.h"

#include "absl/strings/str_cat.h"

namespace autobatch {

Budget::Budget(const CallOptions& options)
    : max_steps_(options.max_steps),
      has_deadline_(options.timeout_seconds > 0),
      timeout_seconds_(options.timeout_seconds) {
  if (has_deadline_) {
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(options.timeout_seconds));
  }
}

absl::Status Budget::StepsExceeded() const {
  return absl::ResourceExhaustedError(absl::StrCat(
      "step budget exhausted: the program ran more than ", max_steps_,
      " block executions without halting; raise CallOptions::max_steps "
      "(--max-steps) if it is just long, or look for a loop that never ends"));
}

absl::Status Budget::TimeExceeded() const {
  return absl::DeadlineExceededError(absl::StrCat(
      "time budget exhausted: the program ran longer than ", timeout_seconds_,
      " s; raise CallOptions::timeout_seconds (--timeout) if it is just long, "
      "or look for a loop that never ends"));
}

absl::Status RunCountedOp(Backend& backend, const PrimOp& op,
                          std::span<const Tensor* const> inputs,
                          std::span<Tensor* const> outputs,
                          const LaneSet& lanes, ExecMode mode,
                          const KernelRegistry* kernels, Profile& profile,
                          const Function& fn, int64_t active, bool new_execution) {
  absl::Status status;
  CountOpRun(op, active >= 0 ? active : lanes.size(), new_execution, profile,
             [&] { status = backend.RunOp(op, inputs, outputs, lanes, mode, kernels); });
  if (!status.ok()) [[unlikely]] {
    return absl::Status(status.code(),
                        absl::StrCat("in function '", fn.name, "' at ",
                                     op.loc.ToString(), ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace autobatch
