// Ahead-of-time code generation: the fused blocks (vm/fused_blocks.h) of a
// lowered program, as C++ source to compile into the program that runs it.
//
// A segment is a maximal run of consecutive ops of one block, at least two
// of them primitives that compute (not constant or fill_like, which the
// stack VM fills once per run), that are all fusable: built-in primitives whose
// per-lane value is a function of the lane alone (not a user kernel, not
// matvec_batched), computed from the kernels' own per-element definitions
// (backends/element_ops.h), that push no frame (an op writing a Full
// variable is fusable only in place: a push moves the stack, which is the
// VM's job), on values of at most kMaxFusedElements elements (they are
// locals on the stack); and pops whose variables no later op of the segment
// touches, which the VM runs after the segment. Copies and keep-or-replace
// selects of values wider than 8 bytes into variables that outlive the
// block are left to the VM, which moves only the lanes that change
// (vm/stack/compact.cc); they end a segment. So do tape_push and tape_pop
// (ir/ir.h, "Tapes"): the VM runs them between segments, and a value a
// segment computes for a push, or reads from a pop, goes through memory.
//
// Usage: generate once per lowered program (`autobatch compile`, or
// EmitFusedBlocks from a build step), compile the source with the project's
// flags (-ffp-contract=off: the bits depend on it), and pass the function it
// defines to CallOptions::fused_blocks; or let the JIT do all of that when
// the program runs (codegen/jit.h, CallOptions::jit_fused_blocks). The stack VM
// checks the fingerprint and runs the segments in compact blocks, and in
// dense blocks that every lane runs; the other executors ignore the option.
#ifndef AUTOBATCH_CODEGEN_CODEGEN_H_
#define AUTOBATCH_CODEGEN_CODEGEN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

inline constexpr int64_t kMaxFusedElements = 1024;

// At most this many primitives per segment: the compiler's time grows
// faster than linearly with a function's size (a 300-op segment took GCC
// minutes at -O3), and the longest merge of NUTS has about 50.
inline constexpr int32_t kMaxSegmentOps = 64;

// A segment runs its lanes in chunks of kFusedChunk: every op for the chunk's
// lanes, then the next chunk. Each local holds a chunk's lanes one after the
// other (element e of lane k at k * elements + e, as in storage, so a lane
// loads and stores with contiguous copies), so the compiler vectorizes an op
// over the lanes of a scalar and the elements of a vector, the
// transcendental primitives run the kernels' own vector code on the chunk,
// and a chunk's values stay in L1 from one op to the next.
inline constexpr int64_t kFusedChunk = 8;

// At most this many bytes of locals per segment (each variable it touches,
// for a chunk of lanes, plus a matvec's copy of its result): they live on
// the stack of the thread that runs the segment, which may be a pool
// worker's or a host application's with a small stack, and a frame larger
// than the guard page could skip past it. 64 ops on f64[1024] values would
// otherwise take about 8 MiB.
inline constexpr int64_t kMaxSegmentLocalBytes = int64_t{256} << 10;

struct SegmentPlan {
  FunctionId function;
  BlockId block;
  int32_t first_op = 0;
  int32_t end_op = 0;
  std::vector<VarId> inputs;   // read before written, in order of first use
  std::vector<VarId> outputs;  // written and read after, in order of first write
};

// The segments of `program` (stage kLowered, typed), in function, block and
// op order.
std::vector<SegmentPlan> PlanFusedSegments(const Program& program);

// InvalidArgument unless `symbol` can name the generated function: a C++
// identifier that is not a keyword, `main`, a namespace the file uses (std,
// autobatch, absl), a type or macro of the headers it includes (names ending
// in _t such as int64_t and size_t; NULL, NAN, INT64_MAX, ...), a name the
// JIT generates (autobatch_..., jit_host) or one reserved for the C++
// implementation (__x, _X). The message names the symbol and why.
absl::Status CheckFusedBlocksSymbol(std::string_view symbol);

// C++ source defining `const autobatch::FusedProgram& <symbol>()` (declared
// in the global namespace) for `program`.
// InvalidArgument for a program that is not lowered or a symbol that
// CheckFusedBlocksSymbol refuses.
absl::StatusOr<std::string> EmitFusedBlocks(const Program& program, std::string_view symbol);

// C++ source defining `const autobatch::FusedProgram& <symbol>()` for
// `program` as a whole compiled program: a function per block (its
// `blocks`, vm/fused_blocks.h, CompiledRuntime), which the stack VM calls in
// place of interpreting any block (codegen/program_codegen.cc says what
// runs inline). Same usage as EmitFusedBlocks (`autobatch compile
// --whole-program`, or JitCompiledProgram, codegen/jit.h).
// InvalidArgument for a program that is not lowered (or has a Return
// terminator) or a symbol that CheckFusedBlocksSymbol refuses.
absl::StatusOr<std::string> EmitCompiledProgram(const Program& program, std::string_view symbol);

}  // namespace autobatch

#endif  // AUTOBATCH_CODEGEN_CODEGEN_H_
