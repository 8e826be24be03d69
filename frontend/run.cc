// RunProgram: compile a program as the chosen executor needs and run a batch.
#include "frontend/run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "backends/lane_copy.h"
#include "backends/run_on_threads.h"
#include "passes/analysis/definedness.h"
#include "passes/pipeline.h"
#include "support/communicator.h"
#include "support/deadline.h"
#include "support/memory.h"
#include "vm/inputs.h"
#include "codegen/jit.h"
#include "vm/reference_interpreter.h"
#include "vm/run_support.h"
#include "vm/stack/stack_vm.h"
#include "vm/stackless_vm.h"

namespace autobatch {
namespace {

std::vector<TensorType> TypesOf(const std::vector<Tensor>& inputs) {
  std::vector<TensorType> types;
  for (const Tensor& t : inputs) types.push_back(t.type());
  return types;
}

ReferenceOptions ToReferenceOptions(const CallOptions& options) {
  ReferenceOptions ref;
  ref.max_depth = options.max_stack_depth;
  ref.max_steps = options.max_steps;
  ref.max_value_bytes = options.max_value_bytes;
  ref.max_stack_bytes = options.max_stack_bytes;
  ref.max_memory_bytes = options.max_memory_bytes;
  ref.deadline = CallDeadline(options).at();
  return ref;
}

// One batched call of a program the chosen VM runs as it is (the stack VM:
// `plan`'s program).
absl::StatusOr<std::vector<Tensor>> RunBatched(const Program& executable, const BlockPlan* plan,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options, Profile* profile) {
  AB_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, MakeBackend(options.backend));
  if (options.vm == Vm::kStackless) {
    return RunStacklessVm(executable, std::move(inputs), kernels, *backend, options, profile);
  }
  AB_CHECK(plan != nullptr, "the stack VM runs a lowered program's plan");
  return RunStackVm(*plan, std::move(inputs), kernels, *backend, options, profile);
}

// Lanes [begin, end) of every tensor; a uniform input (one lane for all)
// whole.
std::vector<Tensor> LaneRange(const Program& program, const std::vector<Tensor>& tensors,
                              int64_t begin, int64_t end) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (IsUniformInput(program, i)) {
      out.push_back(t);
      continue;
    }
    Tensor part(t.type(), end - begin);
    CopyBytes(part.bytes(), t.lane_bytes_ptr(begin), part.size_bytes());
    out.push_back(std::move(part));
  }
  return out;
}

// RunBatched on options.shards contiguous lane ranges (vm/options.h,
// CallOptions::shards): a VM and backend per range, on up to one thread per
// hardware thread.
absl::StatusOr<std::vector<Tensor>> RunSharded(const Program& executable,
                                               const BlockPlan* plan,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options, Profile* profile) {
  if (options.tile_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CallOptions::tile_bytes is ", options.tile_bytes,
        "; use 0 (never tile) or a number of bytes per tile"));
  }
  if (options.frame_stack_min_lane_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CallOptions::frame_stack_min_lane_bytes is ", options.frame_stack_min_lane_bytes,
        "; use 1 (every Full variable a frame stack) or more bytes per lane"));
  }
  if (options.shard_threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CallOptions::shard_threads is ", options.shard_threads,
        "; use 0 (one per shard, up to the hardware threads) or a thread count"));
  }
  if (options.shards < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CallOptions::shards is ", options.shards, "; use 1 (no sharding) or more"));
  }
  const int64_t batch = inputs.empty() ? 0 : BatchOfInputs(executable, inputs);
  const std::vector<std::pair<int64_t, int64_t>> ranges = ShardRanges(batch, options.shards);
  const int shards = static_cast<int>(ranges.size());
  if (shards == 1) return RunBatched(executable, plan, std::move(inputs), kernels, options, profile);
  for (const auto& [name, signature] : executable.module.kernels) {
    if (!signature.bit_stable) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shards = ", options.shards, " needs every user kernel to be bit_stable, but '", name,
          "' is not (its lanes may depend on the batch, and it is not declared safe to call "
          "from several threads at once): run with shards = 1"));
    }
  }
  AB_RETURN_IF_ERROR(CheckInputs(executable, inputs));
  AB_RETURN_IF_ERROR(MakeBackend(options.backend).status());

  struct Shard {
    int64_t begin = 0, end = 0;
    std::vector<Tensor> inputs;
    absl::StatusOr<std::vector<Tensor>> result;
    Profile profile;
  };
  std::vector<Shard> parts(static_cast<size_t>(shards));
  for (size_t s = 0; s < parts.size(); ++s) {
    std::tie(parts[s].begin, parts[s].end) = ranges[s];
    parts[s].inputs = LaneRange(executable, inputs, parts[s].begin, parts[s].end);
  }
  inputs.clear();
  // Each thread takes the next shard not yet started until none is left.
  // The wall-clock budget is the call's: a shard that starts late gets what
  // is left of it.
  CallOptions shard_options = options;
  shard_options.deadline = CallDeadline(options).at();
  std::atomic<int> next{0};
  auto run_shards = [&] {
    for (int s = next++; s < shards; s = next++) {
      Shard& part = parts[static_cast<size_t>(s)];
      part.result = RunBatched(executable, plan, std::move(part.inputs), kernels, shard_options,
                               profile == nullptr ? nullptr : &part.profile);
    }
  };
  AB_RETURN_IF_ERROR(RunOnThreads(
      options.shard_threads > 0 ? std::min(shards, options.shard_threads) : shards, run_shards));

  for (int s = 0; s < shards; ++s) {
    const Shard& part = parts[static_cast<size_t>(s)];
    if (!part.result.ok()) {
      return absl::Status(
          part.result.status().code(),
          absl::StrCat("shard ", s + 1, " of ", shards, " (lanes ", part.begin, " to ",
                       part.end - 1, "; a lane number below counts from ", part.begin,
                       "): ", part.result.status().message()));
    }
  }
  std::vector<Tensor> outputs;
  const std::vector<Tensor>& first = *parts.front().result;
  for (size_t k = 0; k < first.size(); ++k) {
    Tensor out(first[k].type(), batch);
    for (const Shard& part : parts) {
      const Tensor& piece = (*part.result)[k];
      CopyBytes(out.lane_bytes_ptr(part.begin), piece.bytes(), piece.size_bytes());
    }
    outputs.push_back(std::move(out));
  }
  if (profile != nullptr) {
    *profile = std::move(parts.front().profile);
    for (size_t s = 1; s < parts.size(); ++s) profile->Add(parts[s].profile);
  }
  return outputs;
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> ShardRanges(int64_t batch, int shards) {
  const int64_t n = std::min<int64_t>(shards, batch);
  if (n < 2) return {{0, batch}};
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t s = 0; s < n; ++s) ranges.emplace_back(batch * s / n, batch * (s + 1) / n);
  return ranges;
}

namespace {

absl::Status CheckCallOptions(const CallOptions& options) {
  if (options.max_stack_depth < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CallOptions::max_stack_depth is ", options.max_stack_depth,
        "; use at least 1 (frames, the entry's included)"));
  }
  if (options.max_memory_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CallOptions::max_memory_bytes is ", options.max_memory_bytes,
        "; use 0 (the default: ", DescribeDefaultMemoryLimit(ReadMemoryBounds()),
        ") or a number of bytes"));
  }
  if (options.max_stack_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CallOptions::max_stack_bytes is ", options.max_stack_bytes,
        "; use at least 1 (bytes of all the stack VM's stacks together)"));
  }
  if (options.jit_compiled_program && options.vm != Vm::kStack && !options.dry_run) {
    return absl::InvalidArgumentError(
        "CallOptions::jit_compiled_program compiles the program for the stack VM's runtime; "
        "with the stackless VM drop it (or use the stack VM)");
  }
  return absl::OkStatus();
}

// The compile's options under the call's time budget (`deadline`, from
// CallOptions::timeout_seconds when the call began): the compile stops once
// it has passed (PipelineOptions::deadline). Its errors show the IR if
// `options` ask (CallOptions::dump_ir_on_error).
PipelineOptions CompileOptions(const CallOptions& options, const Deadline& deadline) {
  PipelineOptions compile;
  compile.show_ir_on_error = options.dump_ir_on_error;
  compile.deadline = deadline;
  return compile;
}

// `options` for the executor: its budget ends at `deadline`, the call's
// (CallOptions::deadline), which the compile has used some of.
CallOptions TimeLeft(const CallOptions& options, const Deadline& deadline) {
  CallOptions left = options;
  left.deadline = deadline.at();
  return left;
}

// The stack VM on plan.program() (a lowered program): fused blocks compiled
// first if asked (not begun once `deadline` has passed; a JIT compile under
// way is not interrupted), then the shards with what is left of the time.
absl::StatusOr<std::vector<Tensor>> RunPlanned(const BlockPlan& plan, std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options, Profile* profile,
                                               const Deadline& deadline) {
  CallOptions run_options = options;
  if ((options.jit_fused_blocks || options.jit_compiled_program) &&
      options.fused_blocks == nullptr) {
    if (deadline.Passed()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "time budget exhausted while compiling: the compile used up the time budget (",
          deadline.seconds(), " s) before the JIT compile of the fused blocks; raise the time "
          "budget (CallOptions::timeout_seconds, --timeout) if the program is just big"));
    }
    AB_ASSIGN_OR_RETURN(run_options.fused_blocks, JitForCall(plan.program(), options));
  }
  return RunSharded(plan.program(), &plan, std::move(inputs), kernels,
                    TimeLeft(run_options, deadline), profile);
}

// An unlowered program run as it is (by the reference interpreter, or by
// the stackless VM once typed) must assign every variable on every path
// before reading it, which allocate_variables checks on the way to the
// stack VM: without this the stackless VM would read whatever its storage
// held, and the reference interpreter would fail only on lanes that take
// such a path, so the executors would disagree on the same program.
absl::Status CheckRunsAsGiven(const Program& program) {
  absl::Status status = CheckDefinedBeforeUse(program);
  if (status.ok()) return status;
  return absl::InvalidArgumentError(
      absl::StrCat("the program may read a variable before assigning it; every executor "
                   "refuses it: ",
                   status.message()));
}

absl::StatusOr<std::vector<Tensor>> RunProgramInScope(const Program& program,
                                                      std::vector<Tensor> inputs,
                                                      const KernelRegistry* kernels,
                                                      const CallOptions& options,
                                                      Profile* profile) {
  // The call's time budget covers the compile too.
  const Deadline deadline = CallDeadline(options);
  const PipelineOptions compile = CompileOptions(options, deadline);
  if (options.dry_run) {
    if (program.stage == Stage::kLowered) {
      return absl::InvalidArgumentError(
          "dry_run runs unlowered programs; this one is lowered");
    }
    const bool has_stubs = std::any_of(program.module.functions.begin(),
                                       program.module.functions.end(),
                                       [](const Function& f) { return f.gradient_of.has_value(); });
    if (has_stubs || (program.stage == Stage::kUntyped && !inputs.empty() &&
                      inputs[0].batch() == 0)) {
      // No lane runs, so only inference can give the outputs their types;
      // a gradient stub gets its body from the differentiate pass.
      AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
      AB_ASSIGN_OR_RETURN(Program typed,
                          CompileProgram(program, TypesOf(inputs), compile));
      return RunReferenceBatch(typed, std::move(inputs), kernels,
                               ToReferenceOptions(TimeLeft(options, deadline)));
    }
    if (program.stage == Stage::kUntyped) {
      // Interpreted as written, but refused where the compiler refuses it
      // (a type error on a path no lane takes, a read before assignment),
      // so that every executor gives the same error.
      AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
      AB_RETURN_IF_ERROR(CheckProgram(program, TypesOf(inputs), compile));
    } else {
      AB_RETURN_IF_ERROR(CheckRunsAsGiven(program));
    }
    return RunReferenceBatch(program, std::move(inputs), kernels,
                             ToReferenceOptions(TimeLeft(options, deadline)));
  }
  if (options.vm == Vm::kStackless) {
    if (program.stage == Stage::kLowered) {
      return absl::InvalidArgumentError(
          "the stackless VM runs unlowered programs; this one is lowered: "
          "use the stack VM or pass the untyped program");
    }
    if (program.stage != Stage::kUntyped) {
      AB_RETURN_IF_ERROR(CheckRunsAsGiven(program));
      return RunSharded(program, nullptr, std::move(inputs), kernels,
                        TimeLeft(options, deadline), profile);
    }
    AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
    AB_ASSIGN_OR_RETURN(Program compiled,
                        CompileProgram(program, TypesOf(inputs), compile));
    return RunSharded(compiled, nullptr, std::move(inputs), kernels, TimeLeft(options, deadline),
                      profile);
  }
  Program lowered;
  if (program.stage != Stage::kLowered) {
    AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
    AB_ASSIGN_OR_RETURN(lowered, LowerProgram(program, TypesOf(inputs), compile));
  }
  const Program& executable = program.stage == Stage::kLowered ? program : lowered;
  AB_ASSIGN_OR_RETURN(const BlockPlan plan, BlockPlan::Build(executable));
  return RunPlanned(plan, std::move(inputs), kernels, options, profile, deadline);
}

// Whether `options` spread the call over more than one process.
bool OverProcesses(const CallOptions& options) {
  return options.communicator != nullptr && options.communicator->size() > 1;
}

// A call over processes (OverProcesses(options)): this process runs its
// slice of the lanes with `run_slice`, given `options` without the
// communicator, and rank 0 gathers every lane's outputs.
absl::StatusOr<std::vector<Tensor>> RunOverProcesses(
    const Program& program, std::vector<Tensor> inputs, const CallOptions& options,
    const std::function<absl::StatusOr<std::vector<Tensor>>(std::vector<Tensor>,
                                                            const CallOptions&)>& run_slice) {
  Communicator& comm = *options.communicator;
  CallOptions own = options;
  own.communicator = nullptr;
  // The slice of the inputs this process runs (every process checks the
  // whole batch the same way, so they agree on a bad input).
  const absl::Status checked = CheckInputs(program, inputs);
  int64_t first = 0, last = 0;
  absl::StatusOr<std::vector<Tensor>> local = std::vector<Tensor>{};
  if (!checked.ok()) {
    local = checked;
  } else {
    std::tie(first, last) = RankRange(BatchOfInputs(program, inputs), comm.rank(), comm.size());
    local = run_slice(LaneRange(program, inputs, first, last), own);
    if (!local.ok()) {
      local = absl::Status(local.status().code(),
                           absl::StrCat("lanes ", first, " to ", last - 1,
                                        " (a lane number below counts from ", first,
                                        "): ", local.status().message()));
    }
  }
  inputs.clear();
  AB_RETURN_IF_ERROR(comm.AgreeOnStatus(local.status()));
  // Each output's lanes, gathered output by output.
  std::vector<Tensor> outputs;
  for (const Tensor& mine : *local) {
    AB_ASSIGN_OR_RETURN(const std::vector<std::string> pieces,
                        comm.Gather(std::string_view(reinterpret_cast<const char*>(mine.bytes()),
                                                     static_cast<size_t>(mine.size_bytes())),
                                    0));
    if (comm.rank() != 0) continue;
    int64_t bytes = 0;
    for (const std::string& piece : pieces) bytes += static_cast<int64_t>(piece.size());
    const int64_t lane_bytes = mine.lane_bytes();
    Tensor all(mine.type(), lane_bytes > 0 ? bytes / lane_bytes : 0);
    int64_t at = 0;
    for (const std::string& piece : pieces) {
      CopyBytes(all.bytes() + at, reinterpret_cast<const std::byte*>(piece.data()),
                static_cast<int64_t>(piece.size()));
      at += static_cast<int64_t>(piece.size());
    }
    outputs.push_back(std::move(all));
  }
  if (comm.rank() != 0) return *std::move(local);
  return outputs;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunProgram(const Program& program,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options,
                                               Profile* profile) {
  if (OverProcesses(options)) {
    return RunOverProcesses(program, std::move(inputs), options,
                            [&](std::vector<Tensor> slice, const CallOptions& own) {
                              return RunProgram(program, std::move(slice), kernels, own, profile);
                            });
  }
  AB_RETURN_IF_ERROR(CheckCallOptions(options));
  // One budget for the whole call: compiling, every shard and the outputs.
  MemoryScope memory = MemoryScope::ForRun(options.max_memory_bytes);
  return CatchResourceErrors("the call", [&] {
    return RunProgramInScope(program, std::move(inputs), kernels, options, profile);
  });
}

absl::StatusOr<std::vector<Tensor>> RunProgram(const BlockPlan& plan,
                                               std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels,
                                               const CallOptions& options,
                                               Profile* profile) {
  if (OverProcesses(options)) {
    return RunOverProcesses(plan.program(), std::move(inputs), options,
                            [&](std::vector<Tensor> slice, const CallOptions& own) {
                              return RunProgram(plan, std::move(slice), kernels, own, profile);
                            });
  }
  if (options.dry_run || options.vm != Vm::kStack) {
    return RunProgram(plan.program(), std::move(inputs), kernels, options, profile);
  }
  AB_RETURN_IF_ERROR(CheckCallOptions(options));
  MemoryScope memory = MemoryScope::ForRun(options.max_memory_bytes);
  return CatchResourceErrors("the call", [&] {
    return RunPlanned(plan, std::move(inputs), kernels, options, profile, CallDeadline(options));
  });
}

}  // namespace autobatch
