// Fused blocks: runs of a lowered program's ops compiled ahead of time into
// one loop over the lanes (codegen/codegen.h writes them as C++), which the stack
// VM calls in place of running those ops one at a time.
//
// An interpreted compact block makes one pass over the running lanes per op,
// each value going to memory and back between ops. A fused segment runs all
// its ops for one lane, then the next, with the values that live only inside
// the segment held in locals (registers), from the same per-element
// definitions as the kernels (backends/element_ops.h), so every lane gets
// the bits the interpreter gives it.
//
// A FusedProgram belongs to exactly one lowered program, identified by its
// fingerprint; the VM refuses one generated from another program.
#ifndef AUTOBATCH_VM_FUSED_BLOCKS_H_
#define AUTOBATCH_VM_FUSED_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace autobatch {

// The values a segment runs on, for `n` lanes. Lane l's element e of the
// segment's k-th input variable is at element input_lanes[k][l] * E + e of
// inputs[k] (E the variable's elements; bool as one byte per element), and
// likewise for its k-th output: so a segment reads and writes a variable's
// storage in place (lane indices) or a compact copy (indices 0..n-1),
// whichever the VM holds current. An output that is also an input may share
// its buffer: each lane reads its inputs before writing.
struct FusedArgs {
  const std::byte* const* inputs;
  const int64_t* const* input_lanes;
  std::byte* const* outputs;
  const int64_t* const* output_lanes;
  int64_t n;
};
using FusedSegmentFn = void (*)(const FusedArgs& args);

// Ops [first_op, end_op) of one block, fused.
struct FusedSegment {
  int32_t function = 0;  // FunctionId value
  int32_t block = 0;     // BlockId value
  int32_t first_op = 0;
  int32_t end_op = 0;
  // Variables (VarId values) the segment reads before writing them, and the
  // ones it writes that are read after it (or outlive the block).
  std::span<const int32_t> inputs;
  std::span<const int32_t> outputs;
  FusedSegmentFn run = nullptr;
};

// A compiled program (codegen/codegen.h, EmitCompiledProgram) has every
// block of the program as a function, which the stack VM calls in place of
// running the block's ops and terminator itself. The function runs the
// block for the lanes in `lanes`: the ops it can, as loops over the lanes
// reading and writing the variables' storage in place (`vars`), the others
// through RunOp, which runs them as the VM does; then it routes the lanes
// to the blocks its terminator names (the global block numbers of
// vm/stack/block_plan.h, constants in the code). Every call that returns
// int32_t returns 0, or nonzero after keeping the error for the VM to
// report, and the block function then returns that value at once.
//
// Where a variable's values are: lane l's element e of variable v (E
// elements) is at vars[v].data as the element's stored type (bool as one
// byte), index slot * E + e, where slot is l, or depth[l] * batch + l for a
// frame stack (vars[v].depth non-null), or 0 for a uniform variable.
//
// A Full variable's stack (vm/stack/storage.h) is open to the compiled code
// too, so that it pushes and pops in place: stack_depth[l] frames are saved
// for lane l; a LaneStack (depth null) saves lane l's frame f at element
// (f * batch + l) * E of `saved` and keeps its current value at `data`; a
// frame stack saves nothing apart (the current frame is the value). The
// storage holds `frames` frames per lane and the stack may hold at most
// `depth_limit`. Code that would pass either calls the runtime instead,
// which grows the storage or reports the overflow as the VM does.
//
// The entries are valid until the next call into the runtime that may push
// (Push, RunOp, Enter): a push may move a stack's storage.
struct CompiledVar {
  std::byte* data = nullptr;
  const int32_t* depth = nullptr;
  int32_t* stack_depth = nullptr;
  std::byte* saved = nullptr;
  int64_t frames = 0;
  int64_t depth_limit = 0;
};

// The lanes' stacks of return addresses (global block numbers): lane l's
// frame f at saved[f * batch + l], depth[l] of them; room for `frames` per
// lane, at most depth_limit - 1 of them. Valid until the next Enter.
struct CompiledReturns {
  int32_t* depth = nullptr;
  int32_t* saved = nullptr;
  int64_t frames = 0;
  int64_t depth_limit = 0;
};

class CompiledRuntime {
 public:
  // The lanes running the block, in no particular order, and how many.
  const int64_t* lanes = nullptr;
  int64_t n = 0;
  int64_t batch = 0;
  CompiledVar* vars = nullptr;  // per VarId value
  CompiledReturns* returns = nullptr;
  // Room for `batch` lane indices each: a branch's split.
  int64_t* split_true = nullptr;
  int64_t* split_false = nullptr;

  // Runs op `op` of the running block for the running lanes, as the stack
  // VM runs it (its kernels, pushes, pops, tape ops and errors).
  virtual int32_t RunOp(int32_t op) = 0;
  // Pushes a frame of Full variable `var` for the running lanes (op `op`
  // of the block is about to write it), growing its storage or failing as
  // the VM does. A stack's current value stays where it was: in a frame
  // stack, at depth - 1.
  virtual int32_t Push(int32_t var, int32_t op) = 0;
  // Charges the block's inline ops to the call's time budget: `ops` of
  // them, touching `op_lane_bytes` per lane summed over the ops (as
  // FusedSegmentWork counts a segment's, vm/stack/fused_calls.h).
  virtual int32_t Charge(int32_t ops, int64_t op_lane_bytes) = 0;
  // The terminators. Jump: `count` lanes of `lanes` now wait at block
  // `gid`. Enter: the running lanes call function `callee` (a FunctionId
  // value), to return to block `return_gid`. Leave: they return. Finish:
  // they halt.
  virtual void Jump(const int64_t* lanes, int64_t count, int32_t gid) = 0;
  virtual int32_t Enter(int32_t return_gid, int32_t callee) = 0;
  virtual int32_t Leave() = 0;
  virtual int32_t Finish() = 0;

 protected:
  ~CompiledRuntime() = default;
};

using CompiledBlockFn = int32_t (*)(CompiledRuntime& rt);

struct CompiledBlock {
  int32_t function = 0;  // FunctionId value
  int32_t block = 0;     // BlockId value
  // The primitive ops the function runs inline (not through RunOp), in
  // order: the VM counts them in the profile as it would count running them.
  std::span<const int32_t> inline_ops;
  CompiledBlockFn run = nullptr;
};

struct FusedProgram {
  uint64_t fingerprint = 0;  // ProgramFingerprint of the program compiled
  std::span<const FusedSegment> segments;
  // Empty, or (a compiled program) one per block of the program, in
  // function and block order.
  std::span<const CompiledBlock> blocks = {};
};

// 64-bit FNV-1a of `text`, continuing from `hash` (the offset basis by
// default), so that several texts can be hashed as one.
uint64_t Fnv1a64(std::string_view text, uint64_t hash = 14695981039346656037ull);

// A 64-bit hash (FNV-1a) of `program`'s JSON form (ir/json.h): equal for
// equal programs, and in practice different for different ones.
uint64_t ProgramFingerprint(const Program& program);

// Whether `fused` was generated from `program` (fingerprints equal) and
// every segment names an existing function, block, op range (starting
// with a primitive, with no call or tape op) and variables in ascending,
// non-overlapping order; and, for a compiled program, that it has one
// function per block of the program, each naming existing inline ops.
// FailedPrecondition otherwise, saying
// to regenerate it from this program (`autobatch compile`).
absl::Status CheckFusedProgram(const FusedProgram& fused, const Program& program);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_FUSED_BLOCKS_H_
