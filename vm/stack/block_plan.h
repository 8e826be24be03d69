// The stack VM's block plan: the facts about a lowered program that no call
// changes (global block numbering, constant temporaries, per-block and
// per-variable static facts, storage peepholes), computed once per program
// and shared by every call and shard that runs it. Also the block-order
// contract the stack VM's schedule rests on, and its checker.
//
// The block-order contract
// ------------------------
// Every block has a global index; with BlockPolicy::kLowestIndex the
// scheduler (vm/stack/scheduler.h) runs the waiting block with the lowest,
// so the numbering is the schedule. It has two halves:
//  1. Functions (BlockPlan::Build numbers them): the entry first, then the
//     functions the call graph reaches from it, breadth-first over each
//     function's PushGoto callees in block order (so every called function
//     comes after a function that calls it), then the unreached ones in
//     module order. A function's blocks take consecutive global indices in
//     their order within the function.
//  2. Blocks within a function (passes/order_blocks.h arranges them): block
//     0 first; then the "calling" blocks, from which a PushGoto is reachable
//     inside the function (PushGoto's return_to counts as a successor); then
//     the "exit" blocks, which lead only to a return or a halt; within each
//     group, blocks that run no expensive kernel (RunsExpensiveKernel,
//     ir/ir.h) before those that do.
// What relies on it:
//  - kLowestIndex: a lane back in a caller (e.g. an outer loop starting the
//    next trajectory) runs at once and rejoins the lanes inside the callee
//    instead of waiting until none is left there, so lanes run free rather
//    than in lock step (callers first); lanes on their way out wait at high
//    indices, where lanes returning from other depths gather and run as one
//    batch (exit blocks last); every lane that can reach an expensive block
//    does before it runs (expensive blocks last).
//  - kMostLanes breaks ties by the lowest index and defers expensive blocks
//    by their flag (BlockFacts::heavy), not by their place.
//  - The batched NUTS program (mcmc/batched/batched_nuts.cc) evaluates the
//    model only in its leaf, called only by build_tree (the pipeline
//    inlines it there): build_tree comes after the chain's functions by half
//    1, and the leaf's block, build_tree's one expensive block, last in
//    build_tree by half 2, so it has the highest global index and each
//    model-kernel execution serves every unfinished chain.
// CheckBlockOrder checks both halves; tests/vm/block_plan_test.cc runs it on
// the samples and the NUTS program as the pipeline orders them.
#ifndef AUTOBATCH_VM_STACK_BLOCK_PLAN_H_
#define AUTOBATCH_VM_STACK_BLOCK_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

// How a compact block may run an op on the variables' storage instead of
// on compact copies (vm/stack/compact.h), as far as the program alone
// decides; the compact executor checks the rest (which copies the block
// has made so far) when the op runs.
enum class StoragePeephole : uint8_t {
  kNone,
  // to = copy(from), from != to, `to` outliving the block.
  kCopy,
  // x = select(c, y, x) or x = select(c, x, y): one bool per lane, values of
  // one type wider than 8 bytes, x outliving the block and not pushed.
  kSelect,
};

struct BlockFacts {
  FunctionId fn;
  BlockId block;
  // Bytes per lane of the variables the block touches (each counted once).
  int64_t lane_bytes = 0;
  // Runs an expensive kernel (RunsExpensiveKernel): scheduling, and the
  // dense/compact choice's cost hint.
  bool heavy = false;
  // Runs an op whose lanes depend on the batch (a batched matrix product, a
  // user kernel not bit_stable): never tiled, never timed.
  bool batch_dependent = false;
  // Per op of the block.
  std::vector<StoragePeephole> peepholes;
};

struct VarFacts {
  int64_t lane_bytes = 0;  // one lane's value
  // Temporaries live within one block and null variables are never read:
  // their values in lanes outside the running set are dead.
  bool block_local = false;
  // A Temporary whose every write is a constant or fill_like op with the
  // same literal holds the same value in every lane whenever it is read:
  // this op (in the program), which the VM may run once for every lane and
  // then skip (vm/stack/storage.h, HoistConstants). Null otherwise.
  const PrimOp* constant_writer = nullptr;
};

class BlockPlan {
 public:
  // The plan of `program`, which must outlive it and not change. Stage
  // kLowered (and verified), else InvalidArgument saying to lower it.
  static absl::StatusOr<BlockPlan> Build(const Program& program);

  // How many plans Build has made in this process (tests show with it that
  // a repeated call reuses its plan).
  static int64_t BuildCount();

  const Program& program() const { return *program_; }
  const Module& module() const { return program_->module; }

  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  // The global index of `block` of `fn` (the contract above).
  int32_t Gid(FunctionId fn, BlockId block) const { return fn_offset_[fn.value] + block.value; }
  const BlockFacts& block(int32_t gid) const { return blocks_[static_cast<size_t>(gid)]; }
  const VarFacts& var(VarId v) const { return vars_[static_cast<size_t>(v.value)]; }

  // Bytes per lane of one frame of every stack: the Full variables' values
  // (at least 1 byte each) and the program counter's, saturating at
  // int64 max / 2.
  int64_t level_lane_bytes() const { return level_lane_bytes_; }

  // Whether `op` writing `output` pushes a frame of it: a Full variable not
  // written in place.
  bool PushesFrame(const PrimOp& op, VarId output) const;

 private:
  explicit BlockPlan(const Program& program) : program_(&program) {}
  void NumberBlocks();
  void FindConstants();

  const Program* program_;
  std::vector<int32_t> fn_offset_;  // per function: its block 0's global index
  std::vector<BlockFacts> blocks_;  // per global block
  std::vector<VarFacts> vars_;      // per variable
  int64_t level_lane_bytes_ = 0;
};

// Whether `program` (stage kLowered) keeps the block-order contract above:
// OK, or FailedPrecondition listing every block out of place (function,
// block index and label, which rule it breaks) and every function numbered
// before all its callers.
absl::Status CheckBlockOrder(const Program& program);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_STACK_BLOCK_PLAN_H_
