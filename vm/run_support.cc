// Shared machinery of the executors: budgets, input checks, op dispatch.
#include "vm/run_support.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch {

Budget::Budget(int64_t max_steps,
               std::optional<std::chrono::steady_clock::time_point> deadline)
    : max_steps_(max_steps) {
  if (deadline) deadline_ = Deadline(*deadline, /*seconds=*/0);
}

Deadline CallDeadline(const CallOptions& options) {
  if (!(options.timeout_seconds > 0) || !options.deadline) {
    return Deadline::In(options.timeout_seconds);
  }
  return Deadline(*options.deadline, options.timeout_seconds);
}

Budget::Budget(const CallOptions& options)
    : max_steps_(options.max_steps),
      deadline_(CallDeadline(options)),
      cancel_(options.cancel) {}

absl::Status Budget::Exhausted(Outcome outcome) const {
  AB_CHECK(outcome != Outcome::kWithin, "Budget::Exhausted: the budget lasts");
  if (outcome == Outcome::kCancelled) {
    return absl::CancelledError(absl::StrCat("the call was cancelled (CallOptions::cancel) after ",
                                             steps_, " block executions"));
  }
  if (outcome == Outcome::kOutOfSteps) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "step budget exhausted: the program ran more than ", max_steps_,
        " block executions without halting; raise CallOptions::max_steps "
        "(--max-steps) if it is just long, or look for a loop that never ends"));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "time budget exhausted: the program ran longer than ", deadline_.seconds(),
      " s; raise CallOptions::timeout_seconds (--timeout) if it is just long, "
      "or look for a loop that never ends"));
}

absl::Status Budget::ExhaustedAt(Outcome outcome, std::string_view at) const {
  AB_CHECK(outcome != Outcome::kWithin, "Budget::ExhaustedAt: the budget lasts");
  if (outcome == Outcome::kCancelled) {
    return absl::CancelledError(absl::StrCat("the call was cancelled (CallOptions::cancel) after ",
                                             steps_, " blocks, at ", std::string(at)));
  }
  if (outcome == Outcome::kOutOfSteps) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "step budget exhausted: ", max_steps_, " blocks executed, at ", std::string(at),
        "; raise max_steps (CallOptions::max_steps, --max-steps) if the program is just "
        "long, or look for a loop that never ends"));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "deadline exceeded after ", steps_, " blocks, at ", std::string(at),
      "; raise the time budget (CallOptions::timeout_seconds, --timeout) if the program is "
      "just long, or look for a loop that never ends"));
}

absl::Status CheckNoGradientStubs(const Program& program) {
  const std::vector<Function>& functions = program.module.functions;
  for (const Function& f : functions) {
    if (!f.gradient_of) continue;
    const int32_t primal = f.gradient_of->function.value;
    const std::string primal_name =
        primal >= 0 && static_cast<size_t>(primal) < functions.size()
            ? absl::StrCat("'", functions[primal].name, "'")
            : absl::StrCat("function #", primal);
    return absl::InvalidArgumentError(absl::StrCat(
        "function '", f.name, "' is a gradient stub of ", primal_name,
        "; run the differentiate pass (CompileProgram/LowerProgram do)"));
  }
  return absl::OkStatus();
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
