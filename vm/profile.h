// Profiling counters of a batched run: cheap, always on.
#ifndef AUTOBATCH_VM_PROFILE_H_
#define AUTOBATCH_VM_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "nlohmann/json.hpp"

namespace autobatch {

struct BlockCounters {
  int64_t executions = 0;    // batched executions of the block
  int64_t active_lanes = 0;  // sum over executions of lanes that ran it
  int64_t dense = 0;         // executions in dense mode
  int64_t compact = 0;       // executions in compact mode
  // Tiles run by compact executions split into tiles of lanes
  // (CallOptions::tile_bytes); executions run whole add none.
  int64_t tiles = 0;
  // Dense executions that ran the block's fused segments
  // (CallOptions::fused_blocks): every one with all lanes there, and those
  // with some away where the segments were measured faster (vm/timed_choice.h;
  // so this count, like dense and compact with
  // CallOptions::time_dense_or_compact, may differ between runs).
  int64_t dense_fused = 0;
  int64_t ops = 0;           // ops run (primitives and pops), all executions
  int64_t nanoseconds = 0;   // only when timing is on (stack VM)
  // Sum over executions of the batch of the call that ran them: the lane
  // slots the block could have served (executions * batch, unless the
  // profile sums shards of different sizes).
  int64_t lane_slots = 0;
};

struct PrimitiveCounters {
  int64_t executions = 0;    // batched executions (one per op run)
  int64_t active_lanes = 0;  // sum over executions of lanes it ran for
  int64_t nanoseconds = 0;   // only when timing is on
  int64_t lane_slots = 0;    // sum over executions of the call's batch
};

// Counters of one batched call. Batch utilization = useful lane-block
// executions / executed lane-block slots = sum(active) / sum(lane_slots)
// (= sum(active) / (executions * batch) for one unsharded call).
struct Profile {
  int64_t batch = 0;
  int64_t steps = 0;  // batched block executions
  // Bytes of variable storage the batched VM allocated at the start of the
  // call (the stack VM: every value, stack top and initial frames; the
  // stackless VM: the entry activation's values). A uniform value counts
  // one lane. Shards add theirs.
  int64_t storage_bytes = 0;
  // Indexed [function][block] of the program that ran (which may be a
  // compiled form of the program the caller passed), with its names.
  std::vector<std::vector<BlockCounters>> blocks;
  std::vector<std::string> function_names;
  std::vector<std::vector<std::string>> block_labels;
  // Built-ins indexed by Primitive; user kernels by name.
  std::vector<PrimitiveCounters> builtins;
  std::map<std::string, PrimitiveCounters> kernels;
  // Per-lane number of blocks each lane executed (its own trip count).
  std::vector<int64_t> lane_blocks;
  bool timing = false;

  void Reset(const Program& program, int64_t batch_size, bool with_timing);
  // Adds the counters of a run of the same program on further lanes (a
  // shard, CallOptions::shards): sums every counter, appends lane_blocks
  // (`shard`'s lanes come after this profile's) and adds the batches.
  void Add(const Profile& shard);
  double Utilization() const;
  PrimitiveCounters& CountersFor(const PrimOp& op) {
    return op.prim == Primitive::kUserKernel
               ? kernels[op.attrs.kernel]
               : builtins[static_cast<size_t>(op.prim)];
  }
  // Executions of built-in primitive `name` ("add") or user kernel `name`.
  int64_t PrimitiveExecutions(const std::string& name) const;
  // Executions of every block whose terminator is `Return`/`IndirectGoto`
  // etc. are not singled out; this sums executions of the blocks of `fn`.
  int64_t FunctionBlockExecutions(FunctionId fn) const;
  // Lock-step bound on utilization: every step waits for the slowest lane
  // (vmap of a while loop): mean(lane_blocks) / max(lane_blocks).
  double LockStepBound() const;
  nlohmann::json ToJson() const;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_PROFILE_H_
