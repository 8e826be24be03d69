// RunProgram: compile a program as the chosen executor needs and run a batch.
#ifndef AUTOBATCH_FRONTEND_RUN_H_
#define AUTOBATCH_FRONTEND_RUN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "vm/options.h"
#include "vm/profile.h"
#include "vm/stack/block_plan.h"

namespace autobatch {

// Runs `program` on `inputs` (one batched Tensor per entry parameter) with
// the executor `options` choose:
//   dry_run     the reference interpreter, lane by lane (any unlowered stage);
//   kStackless  the stackless VM on CompileProgram's output (typed programs
//               run as they are);
//   kStack      the stack VM on LowerProgram's output (lowered programs run
//               as they are).
// Untyped programs are typed for the inputs' types. `profile`, if not null,
// receives the batched VMs' counters (dry_run leaves it untouched).
// CallOptions::timeout_seconds is the budget of the whole call, compile
// included: the compile stops once it has passed (PipelineOptions::
// deadline, passes/pipeline.h) with the DeadlineExceeded a VM gives for a
// run over its budget, naming the pass, and the executor gets what is left
// (a JIT compile of fused blocks is not begun once it has passed, but one
// under way is not interrupted).
// Errors: the compiler's (naming the pass), the executor's, an unknown
// backend name (listing the known ones); InvalidArgument for an unlowered
// program that may read a variable before assigning it (every executor
// refuses it, the reference interpreter and the stackless VM before running
// it as given; passes/analysis/definedness.h).
absl::StatusOr<std::vector<Tensor>> RunProgram(const Program& program,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options,
                                               Profile* profile = nullptr);

// RunProgram on plan.program(), a lowered program, whose block plan
// (vm/stack/block_plan.h) the caller keeps, so that repeated calls (and the
// shards of each) share it instead of each call building it again: the stack
// VM uses `plan` as it is; the other executors refuse a lowered program as
// RunProgram does. Context keeps a plan beside each lowered program it
// caches (BatchFunction::Run).
absl::StatusOr<std::vector<Tensor>> RunProgram(const BlockPlan& plan,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options,
                                               Profile* profile = nullptr);

// The lane ranges [begin, end) that a call over `batch` lanes with
// CallOptions::shards = `shards` (>= 1) runs as, in lane order:
// min(shards, batch) contiguous ranges whose sizes differ by at most one, or
// the single range [0, batch) if that is fewer than two.
std::vector<std::pair<int64_t, int64_t>> ShardRanges(int64_t batch, int shards);


}  // namespace autobatch

#endif  // AUTOBATCH_FRONTEND_RUN_H_
