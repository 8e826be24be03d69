// The body of the program fuzzer: arbitrary bytes through load, verify, compile and every executor.
//
// RunFuzzInput treats `bytes` as the JSON form of a Program (ir/json.h) and
// follows the path of `autobatch run` (tools/autobatch_main.cc): load, verify,
// bind kernels, then RunProgram (frontend/run.h) on the reference interpreter
// (dry_run), the stackless VM and the stack VM, each compiling the program as
// it needs. Inputs are synthesized deterministically from the bytes (see
// kFuzzBatchSizes and SynthesizeInputs in the .cc); every user kernel the
// program declares is bound to a deterministic stand-in (a standard normal
// log density and gradient for model-shaped signatures, zeros otherwise).
// Budgets are tiny (FuzzLimits) so every input finishes quickly.
//
// Any error Status on the way is a fine answer to bad input. A FINDING is a
// violated promise of the project, reported in FuzzOutcome::finding:
//   * an Internal error (our "please report it" tier) from any stage;
//   * the stack VM pops an empty stack in a program the pipeline lowered
//     (lower_calls promises the stack discipline; a program given lowered
//     may break it: that is bad input, FailedPrecondition; so is an
//     unbalanced tape, ir/ir.h "Tapes", in any program);
//   * the JSON form of a loaded program is not a fixpoint (dump, load, dump
//     gives different text);
//   * two executors both succeed on a bit-stable program but their outputs
//     differ in any bit (DESIGN.md, "Execution").
// Findings that are known and reported but not yet fixed go to
// FuzzOutcome::known_issue instead (see KnownInternalError in the .cc).
// Crashes, aborts and sanitizer reports are findings too, by nature.
#ifndef AUTOBATCH_TESTS_FUZZ_PROGRAM_FUZZ_TARGET_H_
#define AUTOBATCH_TESTS_FUZZ_PROGRAM_FUZZ_TARGET_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace autobatch {

struct FuzzLimits {
  int64_t max_steps = 5000;       // CallOptions::max_steps
  int64_t max_stack_depth = 64;   // CallOptions::max_stack_depth
  double timeout_seconds = 5;     // CallOptions::timeout_seconds
  // Inputs or kernel signatures with more elements per lane than this are
  // not run (the fuzzer looks for bugs, not for big allocations we asked for).
  int64_t max_input_elements = 1024;
  // Values of more elements per lane than this are refused by the executors
  // (CallOptions::max_value_bytes, ResourceExhausted): the fuzzer looks for
  // bugs, not for big allocations, and checks that the bound holds.
  int64_t max_value_elements = int64_t{1} << 16;
  // All of a run's values, stacks and scratch together
  // (CallOptions::max_memory_bytes): well under libFuzzer's RSS limit, so a
  // program that keeps many values is refused by the executors
  // (ResourceExhausted) rather than reported as a leak of memory.
  int64_t max_memory_bytes = int64_t{512} << 20;
};

// How far one input got, for tests and for the fuzzer's verdict.
struct FuzzOutcome {
  bool loaded = false;    // LoadProgramJson succeeded
  bool verified = false;  // VerifyProgram succeeded
  absl::Status rejected;  // the error of LoadProgramJson or VerifyProgram
  bool ran = false;       // inputs were synthesized and the executors called
  int64_t batch = 0;      // lanes of the synthesized inputs
  // The executors' results (OK, or the error they returned).
  absl::Status reference = absl::UnknownError("not run");
  absl::Status stackless = absl::UnknownError("not run");
  absl::Status stack = absl::UnknownError("not run");
  bool compared = false;  // at least two succeeded and their outputs were compared
  // The gradient check (tests/fuzz/gradient_check.h), for entries that take
  // f64 scalars and return one: the reference interpreter's status on the
  // gradient, whether executors' gradients were compared, and whether
  // central differences were.
  bool gradient_checked = false;
  absl::Status gradient = absl::UnknownError("not run");
  bool gradient_compared = false;
  bool finite_differences = false;
  std::string finding;    // empty unless a promise was broken (see above)
  // A finding already reported and not fixed yet (tags in the .cc), kept
  // apart so the fuzzer can go on; tests show it in their goldens.
  std::string known_issue;

  // One line: "load=ok verify=ok batch=3 reference=OK stackless=OK
  // stack=OK compared" (status codes only, no messages).
  std::string Summary() const;
};

FuzzOutcome RunFuzzInput(std::string_view bytes, const FuzzLimits& limits = {});

}  // namespace autobatch

#endif  // AUTOBATCH_TESTS_FUZZ_PROGRAM_FUZZ_TARGET_H_
