// Options of one batched call (which VM, backend, limits, budgets).
#ifndef AUTOBATCH_VM_OPTIONS_H_
#define AUTOBATCH_VM_OPTIONS_H_

#include <cstdint>
#include <string>

namespace autobatch {

// The executor of a batched call (see DESIGN.md, "Execution").
enum class Vm : uint8_t {
  kStack,      // program-counter batching: per-lane PC stacks, re-converges
  kStackless,  // local static batching: host recursion, execution queues
};

// How to run a batch. Every limit is a clean error when exceeded, never a
// crash or a hang.
struct CallOptions {
  Vm vm = Vm::kStack;
  // Backend name ("eigen", "threaded").
  std::string backend = "eigen";
  // Maximum recursion depth (frames, the entry's included) of any lane. The
  // stack VM grows its stacks on demand up to this depth; the stackless VM
  // and the reference interpreter bound host recursion by it.
  int64_t max_stack_depth = 10000;
  // Run the reference interpreter one lane at a time instead of a batched VM
  // (vm and backend are ignored). The oracle; slow.
  bool dry_run = false;
  // Step budget: blocks executed (batched VMs: block executions of the whole
  // batch; dry_run: blocks of each lane). Exceeding it is ResourceExhausted,
  // so a program that never halts returns an error. <= 0: no limit.
  int64_t max_steps = 100'000'000;
  // Wall-clock budget of the whole call in seconds; <= 0: no limit.
  double timeout_seconds = 0;
  // A block runs COMPACT (gather the active lanes, run, scatter back) when
  // fewer than dense_fraction * batch lanes are active, else DENSE (run all
  // lanes, keep the active results). Measured by bench/dense_compact_bench;
  // see docs/BENCHMARKS.md. Both modes give identical bits.
  double dense_fraction = 0.5;
  // The same for blocks that run an expensive kernel (a matrix product or a
  // user kernel): gathering pays off for them up to a much larger share of
  // active lanes (measured crossover about 0.9 for a 100x100 matvec).
  double dense_fraction_heavy = 0.85;
  // Time every primitive execution (Profile::primitives[...].nanoseconds).
  bool profile_timing = false;
  // The largest value an executor allocates, in bytes: a variable's type
  // size times the batch (dry_run: times one lane). A program whose types
  // ask for more (e.g. broadcast to [1e9]) is ResourceExhausted naming the
  // variable, before anything is allocated, instead of exhausting memory.
  int64_t max_value_bytes = int64_t{4} << 30;
};

}  // namespace autobatch

#endif  // AUTOBATCH_VM_OPTIONS_H_
