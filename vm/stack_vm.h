// The stack VM: program-counter batching of a lowered program.
//
// Every lane has a program counter (a global block index: functions in
// module order, blocks in function order) and a stack of return addresses.
// Each step picks one block (CallOptions::block_policy) and runs it for
// exactly the lanes whose PC is there, so lanes at different recursion
// depths re-converge whenever they reach the same block. Full variables are
// LaneStacks (write = push unless in place, PopOp = pop), wide ones kept as
// frame stacks that push and pop without moving data
// (CallOptions::frame_stack_min_lane_bytes); Register, Temporary and Null
// variables are one Tensor each. Choosing the next block costs
// O(blocks / 64) and moving lanes O(lanes that ran), never O(batch).
#ifndef AUTOBATCH_VM_STACK_VM_H_
#define AUTOBATCH_VM_STACK_VM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "vm/options.h"
#include "vm/profile.h"

namespace autobatch {

// Runs `program` (stage kLowered, verified) on `inputs` (one Tensor per entry
// parameter, one batch size). Returns one Tensor per entry result. Errors:
// bad inputs (naming the parameter), stack overflow beyond
// options.max_stack_depth (naming function and lane), exhausted budgets, user
// kernel failures, and FailedPrecondition for a pop of an empty stack (naming
// function, variable and op): a program lowered elsewhere (e.g. loaded from
// JSON) may break the stack discipline, which the verifier does not check;
// lower_calls never does. `profile`, if not null, receives the run's counters.
absl::StatusOr<std::vector<Tensor>> RunStackVm(
    const Program& program, std::vector<Tensor> inputs,
    const KernelRegistry* kernels, Backend& backend, const CallOptions& options,
    Profile* profile = nullptr);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_VM_H_
