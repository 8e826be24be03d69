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

struct FusedProgram {
  uint64_t fingerprint = 0;  // ProgramFingerprint of the program compiled
  std::span<const FusedSegment> segments;
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
// non-overlapping order. FailedPrecondition otherwise, saying
// to regenerate it from this program (`autobatch compile`).
absl::Status CheckFusedProgram(const FusedProgram& fused, const Program& program);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_FUSED_BLOCKS_H_
