// Tiny scalar executors for the pass tests.
//
// A reference interpreter for unlowered programs and a batched stack machine
// for lowered ones, which checks the stack discipline lower_calls promises.
//
// Only what the test programs use: scalar variables, values held as double
// (i64 exact below 2^53, bool as 0/1), primitives constant, fill_like, copy,
// add, sub, mul, div, mod, neg, comparisons, and, or, not, select.
#ifndef AUTOBATCH_TESTS_PASSES_MACHINE_H_
#define AUTOBATCH_TESTS_PASSES_MACHINE_H_

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch::testing {

using Values = std::vector<double>;

// Runs an unlowered program (typed or allocated) for one lane: CallOp
// recurses on the host with fresh variables per activation.
absl::StatusOr<Values> RunReference(const Program& program, const Values& inputs);

struct StackRun {
  std::vector<Values> outputs;   // per lane
  int64_t block_executions = 0;  // steps: one per block run (any lane count)
  int64_t lane_block_executions = 0;  // summed over lanes
  int64_t max_lane_block_executions = 0;  // of the busiest lane: a lower bound
  std::vector<std::vector<int64_t>> executions;  // [function][block]: steps
};

// Runs a lowered program on all lanes at once like the stack VM: each step
// runs the block with the lowest global index (functions in module order,
// blocks in function order) that has lanes, for exactly those lanes. Full
// variables are per-lane stacks, Register / Temporary a per-lane value,
// Null dropped. Errors (FailedPrecondition) on any breach of the lowered
// contract: reading or popping an empty stack, an in_place write to an
// empty stack, reading a Null variable, a Temporary not written earlier in
// the same block run, a Register never written, or, when a lane halts, a
// Full variable holding a frame other than one per entry result.
absl::StatusOr<StackRun> RunStackMachine(const Program& program,
                                         const std::vector<Values>& lane_inputs);

// Runs `unlowered` on RunReference lane by lane and `lowered` on
// RunStackMachine with all lanes at once; succeeds if every lane's outputs
// agree and the stack machine found no breach. Stores the stack machine's
// run in *run if given.
::testing::AssertionResult AgreesWithReference(const Program& unlowered,
                                               const Program& lowered,
                                               const std::vector<Values>& lane_inputs,
                                               StackRun* run = nullptr);

// Lanes 0..6 for a program with `num_params` params: lane a gives every
// param a, except the second, which is 3.
std::vector<Values> SmallLaneInputs(size_t num_params);

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_PASSES_MACHINE_H_
