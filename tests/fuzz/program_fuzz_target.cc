// The body of the program fuzzer: arbitrary bytes through load, verify, compile and every executor.
#include "tests/fuzz/program_fuzz_target.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "ir/ir.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "tests/fuzz/fuzz_inputs.h"
#include "tests/fuzz/gradient_check.h"
#include "vm/options.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

// Lanes of the synthesized batch, picked by the input's hash: mostly three,
// sometimes the edges (one lane, no lanes).
constexpr int64_t kFuzzBatchSizes[] = {3, 3, 2, 1, 0, 4};

bool Small(const TensorType& type, const FuzzLimits& limits) {
  return type.NumElements() <= limits.max_input_elements;
}

// Whether every lane's results are promised to be independent of the batch
// (no built-in primitive flagged not bit_stable; the stand-in kernels always
// are, whatever the program declares).
bool IsBitStable(const Program& program) {
  for (const Function& f : program.module.functions) {
    for (const Block& b : f.blocks) {
      for (const Op& op : b.ops) {
        const auto* prim = std::get_if<PrimOp>(&op);
        if (prim != nullptr && prim->prim != Primitive::kUserKernel &&
            !Info(prim->prim).bit_stable) {
          return false;
        }
      }
    }
  }
  return true;
}

std::string InternalFinding(std::string_view where, const absl::Status& status) {
  return absl::StrCat("Internal error (a bug by the project's own definition) from ",
                      std::string(where), ": ", std::string(status.message()));
}

// Findings reported to the owners of the code at fault and not fixed yet.
// Each has a reproducer in tests/fuzz/regressions/known_*.json, whose golden
// outcome shows the tag; when the fix lands, delete the case here, check
// that the reproducer now runs clean, and update the golden.
//
std::string KnownInternalError(const Program& program, const std::string& finding) {
  (void)program;
  (void)finding;
  return "";
}

// Whether the stack VM popped an empty stack (FailedPrecondition) in a
// program that the pipeline lowered: lower_calls promises the stack
// discipline, so that is our bug, whereas a program given lowered (which the
// verifier does not check for it) is bad input. Nothing else on the stack VM
// path returns FailedPrecondition (the stand-in kernels never fail), but a
// tape's: popping an empty tape, or ending with values on one, is the
// program's doing (ir/ir.h, "Tapes"; the verifier cannot see it), and those
// errors name the tape.
bool BrokenStackDiscipline(const Program& program, const CallOptions& options,
                           const absl::Status& status) {
  const bool tape_error =
      absl::StrContains(status.message(), "tape_pop of tape '") ||
      absl::StrContains(status.message(), " on tape '");
  return options.vm == Vm::kStack && !options.dry_run && program.stage != Stage::kLowered &&
         status.code() == absl::StatusCode::kFailedPrecondition && !tape_error;
}

// A budget the run exhausted (CallOptions: max_steps, max_value_bytes,
// max_stack_depth, timeout_seconds).
bool IsBudget(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

std::string DescribeStatus(const absl::Status& status) {
  if (status.ok()) return "values";
  return absl::StrCat(absl::StatusCodeToString(status.code()), " (",
                      std::string(status.message()).substr(0, 300), ")");
}

std::string CodeName(const absl::Status& status) {
  return absl::StatusCodeToString(status.code());
}

}  // namespace

std::string FuzzOutcome::Summary() const {
  std::string out = absl::StrCat("load=", loaded ? "ok" : "error");
  if (loaded) absl::StrAppend(&out, " verify=", verified ? "ok" : "error");
  if (ran) {
    absl::StrAppend(&out, " batch=", batch, " reference=", CodeName(reference),
                    " stackless=", CodeName(stackless), " stack=", CodeName(stack));
  }
  if (compared) absl::StrAppend(&out, " compared");
  if (gradient_checked) {
    absl::StrAppend(&out, " gradient=", CodeName(gradient),
                    gradient_compared ? " gradient-compared" : "",
                    finite_differences ? " finite-differences" : "");
  }
  if (!known_issue.empty()) absl::StrAppend(&out, " known-issue=", known_issue);
  if (!finding.empty()) absl::StrAppend(&out, " FINDING");
  return out;
}

FuzzOutcome RunFuzzInput(std::string_view bytes, const FuzzLimits& limits) {
  FuzzOutcome outcome;
  absl::StatusOr<Program> loaded = LoadProgramJson(bytes);
  if (!loaded.ok()) {
    outcome.rejected = loaded.status();
    if (loaded.status().code() == absl::StatusCode::kInternal) {
      outcome.finding = InternalFinding("LoadProgramJson", loaded.status());
    }
    return outcome;
  }
  outcome.loaded = true;
  const Program& program = *loaded;

  // Whatever loads must dump and load back to the same text.
  const std::string dumped = DumpProgramJson(program);
  absl::StatusOr<Program> reloaded = LoadProgramJson(dumped);
  if (!reloaded.ok()) {
    outcome.finding = absl::StrCat("the dump of a loaded program does not load: ",
                                   std::string(reloaded.status().message()));
    return outcome;
  }
  if (DumpProgramJson(*reloaded) != dumped) {
    outcome.finding = "dump -> load -> dump changed the JSON text";
    return outcome;
  }

  absl::Status verified = VerifyProgram(program);
  if (!verified.ok()) {
    outcome.rejected = verified;
    if (verified.code() == absl::StatusCode::kInternal) {
      outcome.finding = InternalFinding("VerifyProgram", verified);
    }
    return outcome;
  }
  outcome.verified = true;
  (void)PrintProgram(program, PrintOptions{.locations = true, .storage_classes = true});

  KernelRegistry kernels;
  for (const auto& [name, sig] : program.module.kernels) {
    for (const std::vector<TensorType>* types : {&sig.inputs, &sig.outputs}) {
      for (const TensorType& t : *types) {
        if (!Small(t, limits)) return outcome;
      }
    }
    absl::Status registered = kernels.Register(
        name, sig, [sig](const KernelCall& call) { return StandInKernel(sig, call); });
    if (!registered.ok()) return outcome;
  }
  absl::Status bound = kernels.CheckBound(program.module);
  if (!bound.ok()) {
    if (bound.code() == absl::StatusCode::kInternal) {
      outcome.finding = InternalFinding("KernelRegistry::CheckBound", bound);
    }
    return outcome;
  }

  std::vector<TensorType> types = EntryInputTypes(program);
  for (const TensorType& t : types) {
    if (!Small(t, limits)) return outcome;
  }
  const uint64_t hash = FuzzHash(bytes);
  outcome.batch = kFuzzBatchSizes[(hash >> 16) % std::size(kFuzzBatchSizes)];
  std::vector<Tensor> inputs;
  const Function& entry = program.module.function(program.entry);
  for (size_t i = 0; i < types.size(); ++i) {
    // A uniform input is given once: one lane for every lane (vm/inputs.h).
    const bool uniform = i < entry.params.size() && program.module.var(entry.params[i]).uniform;
    inputs.push_back(SynthesizeInput(types[i], uniform ? 1 : outcome.batch, hash + i * 131));
    if (uniform) inputs.back().set_uniform();
  }
  outcome.ran = true;

  CallOptions options;
  options.max_steps = limits.max_steps;
  options.max_stack_depth = limits.max_stack_depth;
  // Values beyond the fuzzing size are refused by the executors themselves
  // (ResourceExhausted), which is what this exercises.
  options.max_value_bytes = limits.max_value_elements * 8 * std::max<int64_t>(outcome.batch, 1);
  options.max_memory_bytes = limits.max_memory_bytes;
  options.timeout_seconds = limits.timeout_seconds;
  // Every other input runs the stack VM with every Full variable a frame
  // stack (the default keeps only wide ones so, and few programs here have
  // any).
  if ((hash >> 40) & 1) options.frame_stack_min_lane_bytes = 1;
  // The stack VM runs a block that some lanes are away from compact or
  // dense, both promised to give the same bits; by default it picks by the
  // clock (vm/timed_choice.h), which would make a finding depend on the
  // machine's speed (one did: found on a slow machine, never locally). Here
  // the input picks: every block dense, or every partial block compact.
  options.time_dense_or_compact = false;
  const double dense_fraction = ((hash >> 41) & 1) ? 0.0 : 1.0;
  options.dense_fraction = dense_fraction;
  options.dense_fraction_heavy = dense_fraction;
  struct Executor {
    const char* name;
    bool dry_run;
    Vm vm;
    absl::Status* status;
    std::vector<Tensor> outputs;
  };
  Executor executors[] = {
      {"reference interpreter", true, Vm::kStack, &outcome.reference, {}},
      {"stackless VM", false, Vm::kStackless, &outcome.stackless, {}},
      {"stack VM", false, Vm::kStack, &outcome.stack, {}},
  };
  for (Executor& e : executors) {
    options.dry_run = e.dry_run;
    options.vm = e.vm;
    absl::StatusOr<std::vector<Tensor>> out =
        RunProgram(program, inputs, &kernels, options);
    *e.status = out.status();
    if (out.ok()) {
      e.outputs = std::move(*out);
    } else if (BrokenStackDiscipline(program, options, out.status())) {
      outcome.finding = absl::StrCat("the stack VM found a program lower_calls lowered "
                                     "breaking the stack discipline: ",
                                     std::string(out.status().message()));
      return outcome;
    } else if (out.status().code() == absl::StatusCode::kInternal) {
      const std::string finding = InternalFinding(e.name, out.status());
      outcome.known_issue = KnownInternalError(program, finding);
      if (outcome.known_issue.empty()) {
        outcome.finding = finding;
        return outcome;
      }
    }
  }

  // The executors agree on errors as on values: the same status code, or a
  // budget (steps, value bytes, stack depth, time), which each counts its
  // own way (the reference interpreter counts every lane's blocks), against
  // anything. A lowered program runs on the stack VM only (the others
  // refuse it by its stage).
  for (size_t i = 0; program.stage != Stage::kLowered && i < std::size(executors); ++i) {
    for (size_t j = i + 1; j < std::size(executors); ++j) {
      const absl::Status& a = *executors[i].status;
      const absl::Status& b = *executors[j].status;
      if (a.code() == b.code() || IsBudget(a) || IsBudget(b)) continue;
      outcome.finding = absl::StrCat("the ", executors[i].name, " gives ", DescribeStatus(a),
                                     " but the ", executors[j].name, " gives ",
                                     DescribeStatus(b));
      return outcome;
    }
  }

  if (!IsBitStable(program)) return outcome;
  // Every pair of executors that succeeded must agree bit for bit.
  for (size_t i = 0; i < std::size(executors); ++i) {
    for (size_t j = i + 1; j < std::size(executors); ++j) {
      if (!executors[i].status->ok() || !executors[j].status->ok()) continue;
      outcome.compared = true;
      outcome.finding = CompareOutputs(executors[i].name, executors[i].outputs,
                                       executors[j].name, executors[j].outputs);
      if (outcome.finding.empty()) continue;
      // Whether each of the two gives the same again: an executor that
      // does not is reading memory it never wrote, or following the clock.
      for (const Executor* e : {&executors[i], &executors[j]}) {
        options.dry_run = e->dry_run;
        options.vm = e->vm;
        absl::StatusOr<std::vector<Tensor>> again =
            RunProgram(program, inputs, &kernels, options);
        const std::string changed =
            again.ok() ? CompareOutputs(e->name, e->outputs, "its rerun", *again)
                       : absl::StrCat("its rerun failed: ", again.status().ToString());
        absl::StrAppend(&outcome.finding, "; ",
                        changed.empty() ? absl::StrCat(e->name, " gives the same on a rerun")
                                        : changed);
      }
      return outcome;
    }
  }
  const GradientCheck gradient = CheckGradients(program, inputs, kernels, options);
  outcome.gradient_checked = gradient.checked;
  outcome.gradient = gradient.status;
  outcome.gradient_compared = gradient.compared;
  outcome.finite_differences = gradient.finite_differences;
  outcome.finding = gradient.finding;
  return outcome;
}

}  // namespace autobatch
