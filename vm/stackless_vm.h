// The stackless VM: local static batching with host recursion.
//
// Each function activation keeps an execution queue: one LaneSet of waiting
// lanes per block. It repeatedly runs the lowest-index block that has
// waiting lanes, for all of them at once (masks of lanes that arrived from
// different predecessors coalesce), and a Branch splits the set. A CallOp
// recurses on the host for the calling lanes, with a fresh activation of the
// callee (its own copy of the callee's variables). Cheap and simple, but
// lanes at different recursion depths never run together.
#ifndef AUTOBATCH_VM_STACKLESS_VM_H_
#define AUTOBATCH_VM_STACKLESS_VM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "vm/options.h"
#include "vm/profile.h"

namespace autobatch {

// Runs `program` (stage kTyped or kAllocated, verified; not lowered) on
// `inputs`. Host recursion is bounded by options.max_stack_depth activations
// (a clear ResourceExhausted error naming the function, never a crash).
// Other errors as RunStackVm.
absl::StatusOr<std::vector<Tensor>> RunStacklessVm(
    const Program& program, std::vector<Tensor> inputs,
    const KernelRegistry* kernels, Backend& backend, const CallOptions& options,
    Profile* profile = nullptr);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACKLESS_VM_H_
