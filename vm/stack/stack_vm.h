// The stack VM: program-counter batching of a lowered program.
//
// Every lane has a program counter (a global block index, numbered as the
// block-order contract in vm/stack/block_plan.h says) and a stack of return
// addresses. Each step picks one block (CallOptions::block_policy) and runs
// it for exactly the lanes whose PC is there, so lanes at different
// recursion depths re-converge whenever they reach the same block. The VM
// composes one owner per concern:
//   BlockPlan        static facts of the program, built once per program
//                    (vm/stack/block_plan.h);
//   Scheduler        waiting sets, block choice, lane moves and returns
//                    (vm/stack/scheduler.h);
//   StackStorage     variables, frame and PC stacks, memory limits
//                    (vm/stack/storage.h);
//   CompactExecutor  compact blocks: copies, epochs, tiles, storage
//                    peepholes (vm/stack/compact.h);
// and runs dense blocks, terminators and the timed dense/compact choice
// itself (vm/stack/stack_vm.cc).
#ifndef AUTOBATCH_VM_STACK_STACK_VM_H_
#define AUTOBATCH_VM_STACK_STACK_VM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "vm/options.h"
#include "vm/profile.h"
#include "vm/stack/block_plan.h"

namespace autobatch {

// Runs plan.program() (stage kLowered, verified) on `inputs` (one Tensor per
// entry parameter, one batch size). Returns one Tensor per entry result.
// Errors: bad inputs (naming the parameter), stack overflow beyond
// options.max_stack_depth (naming function and lane), exhausted budgets, user
// kernel failures, and FailedPrecondition for a pop of an empty stack (naming
// function, variable and op): a program lowered elsewhere (e.g. loaded from
// JSON) may break the stack discipline, which the verifier does not check;
// lower_calls never does. `profile`, if not null, receives the run's
// counters. The plan is only read: calls (and shards) on several threads may
// share it.
absl::StatusOr<std::vector<Tensor>> RunStackVm(const BlockPlan& plan,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels, Backend& backend,
                                               const CallOptions& options,
                                               Profile* profile = nullptr);

// The same, building `program`'s plan for this call (BlockPlan::Build's
// error for a program not lowered). A caller that runs a program repeatedly
// keeps its plan instead (frontend/run.h).
absl::StatusOr<std::vector<Tensor>> RunStackVm(
    const Program& program, std::vector<Tensor> inputs,
    const KernelRegistry* kernels, Backend& backend, const CallOptions& options,
    Profile* profile = nullptr);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_STACK_VM_H_
