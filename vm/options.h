// Options of one batched call (which VM, backend, limits, budgets).
#ifndef AUTOBATCH_VM_OPTIONS_H_
#define AUTOBATCH_VM_OPTIONS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace autobatch {

class Communicator;  // support/communicator.h

struct FusedProgram;  // vm/fused_blocks.h

// The executor of a batched call (see DESIGN.md, "Execution").
enum class Vm : uint8_t {
  kStack,      // program-counter batching: per-lane PC stacks, re-converges
  kStackless,  // local static batching: host recursion, execution queues
};

// Which block the stack VM runs next among those with waiting lanes. Any
// policy gives the same per-lane results; they differ in how many lanes each
// block execution serves (docs/BENCHMARKS.md, "Block policy").
enum class BlockPolicy : uint8_t {
  // TFP's policy: the lowest global block index. With blocks numbered
  // callers first and expensive blocks last (order_blocks), every lane that
  // can reach an expensive block does before it runs: expensive kernels get
  // the free-running utilization bound.
  kLowestIndex,
  // The block with the most waiting lanes (ties: lowest index), except that
  // blocks with an expensive kernel (RunsExpensiveKernel) run only when no
  // other block has lanes: fewer, fuller executions of the cheap blocks,
  // while expensive kernels still serve every lane that can reach them.
  // Faster when many cheap blocks dominate (batched NUTS: 25-30%); more
  // block executions than kLowestIndex on small recursive programs
  // (fibonacci's TFP anchor counts). The MCMC layer's default.
  kMostLanes,
};
inline std::string_view BlockPolicyName(BlockPolicy policy) {
  return policy == BlockPolicy::kMostLanes ? "most-lanes" : "lowest-index";
}
// The policy named (BlockPolicyName's spelling), or nullopt.
inline std::optional<BlockPolicy> BlockPolicyFromName(std::string_view name) {
  for (BlockPolicy p : {BlockPolicy::kLowestIndex, BlockPolicy::kMostLanes}) {
    if (name == BlockPolicyName(p)) return p;
  }
  return std::nullopt;
}

// How to run a batch. Every limit is a clean error when exceeded, never a
// crash or a hang.
struct CallOptions {
  Vm vm = Vm::kStack;
  // The stack VM's schedule (ignored by the other executors).
  BlockPolicy block_policy = BlockPolicy::kLowestIndex;
  // Backend name ("eigen", "threaded").
  std::string backend = "eigen";
  // Run the batch as this many independent batched calls ("shards") on
  // contiguous lane ranges, each with its own VM and backend, on
  // min(shards, hardware threads) threads (RunOnThreads: new threads and the
  // calling thread; each takes the next shard until none is left); outputs
  // are concatenated and profiles summed. A lane's bits do not depend on the
  // batch (DESIGN.md, "Determinism"), so they are those of the unsharded
  // call. Sharding parallelizes everything a VM does (scheduling, stacks and
  // kernels), where the threaded backend splits single ops; more shards than
  // threads also keep each batch's working set in cache (measured in
  // docs/BENCHMARKS.md, "Shards per run"). Requires every
  // user kernel of the program to be bit_stable (the promise that lets the
  // threaded backend call it from several threads on disjoint lanes), else
  // InvalidArgument naming the kernel. Clamped to the batch; the step budget
  // applies to each shard, the wall-clock budget to the whole call. Ignored
  // by dry_run. Must be >= 1.
  int shards = 1;
  // Threads that run the shards: 0 = min(shards, hardware threads); N >= 1 =
  // min(shards, N, hardware threads). Results do not depend on it; it lets a
  // benchmark compare one thread with two on the same shards. Must be >= 0.
  int shard_threads = 0;
  // Maximum recursion depth (frames, the entry's included) of any lane. The
  // stack VM grows its stacks on demand up to this depth, or until one
  // stack's frames for the whole batch would pass max_value_bytes, or all
  // stacks together max_stack_bytes (each is ResourceExhausted); the
  // stackless VM and the reference interpreter bound host recursion by it.
  // Must be >= 1.
  int64_t max_stack_depth = 10000;
  // Run the reference interpreter one lane at a time instead of a batched VM
  // (vm and backend are ignored). The oracle; slow.
  bool dry_run = false;
  // Step budget: blocks executed (batched VMs: block executions of the whole
  // batch; dry_run: blocks of each lane). Exceeding it is ResourceExhausted,
  // so a program that never halts returns an error. <= 0: no limit.
  int64_t max_steps = 100'000'000;
  // Wall-clock budget of the whole call in seconds; <= 0: no limit.
  // Exceeding it is DeadlineExceeded. It binds within about a millisecond
  // plus the longest single op: every executor reads the clock after each
  // ~1 MiB of operands its ops touch, each expensive op (a matrix product or
  // a user kernel), 256 small ops or 64 small blocks, whichever comes first
  // (Budget, vm/run_support.h), and the stack VM runs a fused segment in
  // chunks of lanes with a reading after each. One op is never interrupted:
  // a user kernel or a built-in over a huge value delays the stop by its
  // length. Measured by tests/vm/deadline_test.cc (docs/BENCHMARKS.md, "The
  // cost of a deadline"): a loop whose one block is 40 lgamma ops on 1 MiB
  // values, given 0.2 s, stops 0.20-0.33 s after the call began on every
  // executor (reading the clock every 64 blocks: 3.5-12 s), at no cost
  // measurable on vm_bench. RunProgram's compile counts against it too
  // (frontend/run.h): it stops between passes and inside the long ones.
  double timeout_seconds = 0;
  // A compile error (a type error, say) ends with the IR the failing pass
  // received (PipelineOptions::show_ir_on_error; `--dump-ir-on-error`).
  // Off by default: the error names the op and the source line.
  bool dump_ir_on_error = false;
  // When timeout_seconds > 0: the point in time the budget ends, if it began
  // before the executor started. RunProgram and BatchFunction::Run set it
  // when the call begins, so that the compile, a JIT compile and every shard
  // share one budget; messages still name timeout_seconds. Unset: the budget
  // begins when the executor starts.
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
  // Optional: when it becomes true the batched VMs stop within
  // Budget::kClockInterval block executions and the call is Cancelled (e.g.
  // set by a SIGINT handler: a relaxed atomic store is async-signal-safe).
  // Read relaxed, never written; must outlive the call. The reference
  // interpreter (dry_run) ignores it.
  const std::atomic<bool>* cancel = nullptr;
  // A block runs COMPACT (gather the active lanes, run, scatter back) when
  // fewer than dense_fraction * batch lanes are active, else DENSE (run all
  // lanes, keep the active results). Measured by bench/dense_compact_bench
  // (docs/BENCHMARKS.md, "Dense or compact"). Both modes give identical bits.
  double dense_fraction = 0.5;
  // The same for blocks that run an expensive kernel (a matrix product or a
  // user kernel): gathering pays off for them up to a much larger share of
  // active lanes (measured crossover about 0.9 for a 100x100 matvec).
  double dense_fraction_heavy = 0.85;
  // The stack VM also uses dense_fraction_heavy for a block whose values
  // over the whole batch (the bytes per lane of the variables it touches,
  // times the batch) exceed this: dense, each of its ops streams the whole
  // batch through the caches, where compact tiles (tile_bytes) stay in them.
  // The default was measured against 0, 1 MiB and 16 MiB with
  // bench/nuts_bench (docs/BENCHMARKS.md, "Wide blocks"). <= 0: never.
  int64_t dense_max_bytes = int64_t{4} << 20;
  // The stack VM decides between compact and dense for a block that at
  // least a quarter of the batch, but not all of it, runs by timing both
  // (vm/timed_choice.h; fewer lanes always run compact), instead of by
  // dense_fraction and dense_fraction_heavy; except for blocks that
  // dense_max_bytes makes wide, whose dense passes cost the blocks after
  // them (caches) more than themselves, and blocks with an op whose lanes
  // depend on the batch (their bits would follow the clock). Results do not
  // depend on it; its
  // speed on a program may vary between runs. False for a fixed mode (tests
  // that need one, or repeatable profiles).
  bool time_dense_or_compact = true;
  // The stack VM runs a compact block with many lanes in tiles, one tile of
  // lanes after another, so that what the block touches for one tile stays
  // in cache instead of streaming every variable of the whole batch through
  // memory once per op. A tile holds max(8, tile_bytes / B) lanes, B being
  // the bytes per lane of the variables the block touches. Blocks with an op
  // whose lanes depend on the batch (a batched matrix product, a user kernel
  // not bit_stable) are not tiled: a product over more lanes is faster.
  // Results do not depend on it (of a run that fails at several places, the
  // error reported first may). 0 = never tile; must be >= 0. The default,
  // the L2 cache of one core of the reference machine, was measured with
  // bench/nuts_bench (docs/BENCHMARKS.md, "Lane tiles").
  int64_t tile_bytes = int64_t{512} << 10;
  // The stack VM keeps a Full variable with at least this many bytes per
  // lane as a frame stack: every frame in place, the current one at the
  // lane's depth, so a push or a pop moves no data (a separate top is
  // copied into a frame on a push and back on a pop), but every read and
  // write goes to frames scattered over the lanes' depths. Results do not
  // depend on it. The default was measured with `autobatch sample` on AR(1)
  // of dimension 16 to 100 and on eight schools (docs/BENCHMARKS.md,
  // "Frame stacks"): frame stacks win from about 64 doubles per lane. Must
  // be >= 1.
  int64_t frame_stack_min_lane_bytes = 512;
  // Time every primitive execution (Profile::primitives[...].nanoseconds).
  bool profile_timing = false;
  // The largest value an executor allocates, in bytes: a variable's type
  // size times the batch (dry_run: times one lane). A program whose types
  // ask for more (e.g. broadcast to [1e9]) is ResourceExhausted naming the
  // variable, before anything is allocated, instead of exhausting memory.
  // Also the most one tape's values over the batch may take (vm/tapes.h;
  // dry_run: one lane's).
  int64_t max_value_bytes = int64_t{4} << 30;
  // The stack VM's stacks together (a frame of every Full variable and the
  // program counter, times the batch, times the depth) may take at most
  // this many bytes; a recursion that would need more is ResourceExhausted
  // naming the limit, not a failed allocation. Like max_value_bytes it
  // applies to each shard. All tapes together (ir/ir.h, "Tapes") may take
  // as much again, on every executor (dry_run: per lane); a tape's depth
  // counts loop iterations, so max_stack_depth does not bound it. Must be
  // >= 1.
  int64_t max_stack_bytes = int64_t{8} << 30;
  // The most memory the whole call may hold at once, in bytes: every value,
  // stack, tape and scratch buffer of every shard and thread together, its
  // outputs included (support/memory.h; small bookkeeping such as lane
  // lists is not counted). Each allocation is charged before it is made,
  // and one that would pass the limit stops the call with ResourceExhausted
  // naming it, where the system would abort it with std::bad_alloc or,
  // under Linux's overcommit, the OOM killer. 0 = the default: 3/4 of the
  // smallest of physical memory, what RLIMIT_AS (ulimit -v) leaves of the
  // address space and the cgroup's memory.max (DefaultMemoryLimit). A call
  // made inside another run (a sampler's VM calls inside Sample) counts
  // against that run's limit and ignores its own. Must be >= 0.
  int64_t max_memory_bytes = 0;
  // The stack VM runs these fused blocks (vm/fused_blocks.h; generated from
  // this very program by `autobatch compile` or EmitFusedBlocks in
  // codegen/codegen.h) in place of the ops they cover: in compact blocks, and in
  // dense blocks that every lane runs (over a partial dense block the
  // kernels' passes are faster). Results are bit-identical without them. A
  // FusedProgram generated from another program is FailedPrecondition. The
  // other executors ignore it; every shard of a sharded call uses it. The
  // fused segments run on the calling thread, also with the threaded
  // backend. Must outlive the call.
  const FusedProgram* fused_blocks = nullptr;
  // The stack VM runs fused blocks compiled for this program on first use
  // (codegen/jit.h: the build's C++ compiler, cached on disk), as if they had
  // been passed in fused_blocks; ignored when fused_blocks is set and by the
  // other executors. The JIT's errors (no compiler, compile or load
  // failure) fail the call.
  bool jit_fused_blocks = false;
  // The stack VM runs the whole program compiled (EmitCompiledProgram,
  // codegen/codegen.h), compiled on first use by the JIT (codegen/jit.h,
  // JitCompiledProgram) unless one has been passed in fused_blocks: every
  // block a function of its lanes, its ops inline where the generated code
  // can run them (vm/fused_blocks.h). The bits, errors, budgets and profile
  // counters are the stack VM's. Stack VM only: other executors refuse it;
  // the JIT's errors fail the call. Wins over jit_fused_blocks.
  bool jit_compiled_program = false;
  // The processes the call is spread over (support/communicator.h: MPI
  // ranks under mpirun; null = this process alone). A collective call:
  // every process makes it with the same program, inputs and options.
  // Process r runs lanes RankRange(batch, r, size) (its slice of the inputs;
  // uniform inputs whole) with shards of its own; the processes agree on
  // the outcome (an error on one is every process's, naming its rank and
  // lanes), and rank 0 gathers every lane's outputs in lane order: rank 0
  // gets the whole batch's outputs, bit-identical to one process's call,
  // another rank its own lanes' outputs. A profile counts this process's
  // lanes. RunProgram and BatchFunction::Run honour it; Sample() takes
  // SampleOptions::communicator instead (it splits chains, not each call).
  Communicator* communicator = nullptr;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_OPTIONS_H_
