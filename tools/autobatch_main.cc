// The `autobatch` command-line tool: print, dump and run programs.
//
// A program is a file (.json, .ir or .txt: JSON if it starts with '{', else
// the IR's text form) or a sample name (tools/program_loader.h).
//
//   autobatch ir  <program|sample> [--stage untyped|typed|lowered]
//                 [--json] [--types i64,f64[3]] [--print-after-all]
//                 [--dot | --stats]   (ir/dot.h, passes/analysis/stats.h)
//                 [--dump-ir-on-error]
//   autobatch run <program|sample> --inputs inputs.json [--types ...]
//                 [--vm stack|stackless|reference] [--backend eigen|...]
//                 [--block-policy lowest-index|most-lanes] [--shards N]
//                 [--max-steps N] [--timeout S] [--max-stack-depth N]
//                 [--tile-bytes N] [--max-memory BYTES] [--fused]
//                 [--profile] [--dump-ir-on-error]
//       prints {"outputs": [...]}; --profile adds "profile" (block and
//       primitive counts and times) and prints its tables to stderr
//   autobatch compile <program|sample> [--types ...] [--symbol NAME]
//                 [-o FILE] [--dump-ir-on-error]
//   autobatch sample --target NAME [...]   (tools/sample_command.h)
//   autobatch targets [--all]              (tools/targets_command.h)
//   autobatch model NAME [...]             (tools/model_command.h)
//   autobatch opt <program.json|sample> --passes a,b,c [...]
//                 (tools/opt_command.h)
//   autobatch --version                    prints "autobatch X.Y.Z"
//
// --help, for every subcommand, shows each option's type with its range or
// choices (tools/cli_types.h) and its default.
// Errors print one clear message and exit with status 1 (2 for bad usage,
// such as a number out of its option's range); never a signal. A compile
// error shows the program's IR only with --dump-ir-on-error. `run` checks
// the inputs file against the entry's parameters (--types, else the
// program's declared types) before compiling (tools/run_inputs.h).
// Outputs are never torn: stdout is checked at exit and files are replaced
// whole (support/output_file.h); a failed write is status 1 with its reason.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/backend.h"
#include "frontend/context.h"
#include "frontend/run.h"
#include "ir/dot.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/memory.h"
#include "support/output_file.h"
#include "passes/analysis/stats.h"
#include "passes/pipeline.h"
#include "tools/cli_types.h"
#include "tools/model_command.h"
#include "tools/opt_command.h"
#include "tools/program_loader.h"
#include "tools/run_inputs.h"
#include "tools/sample_command.h"
#include "support/communicator.h"
#if AUTOBATCH_HAVE_MPI
#include "support/mpi/mpi_communicator.h"
#endif
#include "tools/sample_programs.h"
#include "tools/targets_command.h"
#include "tools/tensor_json.h"
#include "codegen/codegen.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "autobatch: error: %s\n", std::string(status.message()).c_str());
  return 1;
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// Numbers of the run options. CLI11 reads an integer with strtoll, which
// saturates a value too large for int64 (and reads "010" as octal): read it
// here, in decimal, refuse values outside [min, max], and hand CLI11 the
// value's canonical text. A usage error (exit 2) names the option.
CLI::Validator IntegerIn(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) {
        int64_t value = 0;
        if (!absl::SimpleAtoi(text, &value) || value < min || value > max) {
          return absl::StrCat("'", text, "' is not an integer in [", min, ", ", max, "]");
        }
        text = absl::StrCat(value);
        return std::string();
      },
      IntegerText(min, max));
}

// A byte count of at least 1 (ParseBytes: "4096", "512M", "4G"), handed to
// CLI11 as its number of bytes.
CLI::Validator ByteCount() {
  return CLI::Validator(
      [](std::string& text) {
        absl::StatusOr<int64_t> bytes = ParseBytes(text);
        if (!bytes.ok()) return std::string(bytes.status().message());
        if (*bytes < 1) return absl::StrCat("'", text, "': give at least 1 byte");
        text = absl::StrCat(*bytes);
        return std::string();
      },
      kBytesText);
}

// --timeout's limit: the VMs turn the budget into a steady_clock deadline in
// int64 nanoseconds, which holds about 292 years; 1e9 s is about 31.
constexpr double kMaxTimeoutSeconds = 1e9;

// A finite number of seconds in [0, kMaxTimeoutSeconds]: CLI11 alone takes
// "nan", "-1e400" and "inf" (and every negative number reads as "no limit").
CLI::Validator TimeoutSeconds() {
  return CLI::Validator(
      [](std::string& text) {
        double value = 0;
        if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || value < 0 ||
            value > kMaxTimeoutSeconds) {
          return absl::StrCat("'", text,
                              "' is not a number of seconds in [0, 1e9] (0: no time limit)");
        }
        return std::string();
      },
      "SECONDS in [0, 1e9]");
}

// The recursion limit is a number of frames; beyond 1e9 the VMs' stack
// arithmetic (depth x batch) could overflow, and no run has the memory.
constexpr int64_t kMaxStackDepth = 1'000'000'000;

absl::StatusOr<std::vector<TensorType>> ParseTypes(const std::string& text) {
  std::vector<TensorType> types;
  // Split on commas outside brackets: "f64[2,3],i64".
  std::string current;
  int depth = 0;
  auto flush = [&]() -> absl::Status {
    std::optional<TensorType> t = ParseTensorType(current);
    if (!t) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--types: cannot read '", current, "'; write types like i64, f64[3], bool"));
    }
    types.push_back(*t);
    current.clear();
    return absl::OkStatus();
  };
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      AB_RETURN_IF_ERROR(flush());
    } else if (c != ' ') {
      current += c;
    }
  }
  if (!current.empty()) AB_RETURN_IF_ERROR(flush());
  return types;
}

struct IrArgs {
  std::string program;
  std::string stage = "untyped";
  bool json = false;
  std::string types;
  bool print_after_all = false;
  bool no_inline = false;
  bool dot = false;
  bool stats = false;
  bool dump_ir_on_error = false;
};

int RunIr(const IrArgs& args) {
  if (args.dot && (args.json || args.stats)) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--dot writes a Graphviz graph and cannot be combined with ",
        args.json ? "--json" : "--stats",
        ": drop one (--stats --json writes the stats as JSON)")));
  }
  Context ctx;
  absl::StatusOr<NamedProgram> named = LoadProgramFile(args.program, ctx);
  if (!named.ok()) return Fail(named.status());
  std::vector<TensorType> types = named->default_types;
  if (!args.types.empty()) {
    absl::StatusOr<std::vector<TensorType>> parsed = ParseTypes(args.types);
    if (!parsed.ok()) return Fail(parsed.status());
    types = *parsed;
  }
  Program program = named->program;
  PipelineOptions options;
  options.print_ir_after_each_pass = args.print_after_all ? &std::cerr : nullptr;
  options.inline_calls = !args.no_inline;
  options.show_ir_on_error = args.dump_ir_on_error;
  // A lowered program (a lowered JSON dump) is printed as it is: lowering
  // cannot run twice, nor be undone.
  if (program.stage == Stage::kLowered && args.stage == "typed") {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "'", args.program, "' is already lowered, and --stage typed cannot undo that: drop "
        "--stage (or pass --stage lowered) to print it as it is")));
  }
  // A program already at the stage asked for (a typed or allocated file with
  // --stage typed) is printed as it is, like a lowered one: printing a
  // parsed text at its own stage gives the text back.
  const bool at_stage = program.stage == Stage::kLowered ||
                        (args.stage == "typed" && program.stage != Stage::kUntyped);
  if (args.stage != "untyped" && !at_stage) {
    if (types.empty() && !program.entry_function().params.empty()) {
      return Fail(absl::InvalidArgumentError(
          "--stage typed/lowered needs the input types: pass --types (e.g. --types i64)"));
    }
    absl::StatusOr<Program> compiled =
        args.stage == "typed" ? CompileProgram(program, types, options)
                              : LowerProgram(program, types, options);
    if (!compiled.ok()) return Fail(compiled.status());
    program = std::move(*compiled);
  }
  if (args.dot) {
    WriteStdout(PrintDot(program));
  } else if (args.stats) {
    const ProgramStats stats = ComputeStats(program);
    WriteStdout(args.json ? PrintStatsJson(program, stats) + "\n" : PrintStats(program, stats));
  } else {
    WriteStdout((args.json ? DumpProgramJson(program) : PrintProgram(program)) + "\n");
  }
  return 0;
}

struct CompileArgs {
  std::string program;
  std::string types;
  std::string symbol = "FusedBlocks";
  std::string output;
  bool dump_ir_on_error = false;
  bool whole_program = false;
};

// Writes the fused blocks (codegen/codegen.h) of the program as C++ source.
int RunCompile(const CompileArgs& args) {
  if (absl::Status s = CheckFusedBlocksSymbol(args.symbol); !s.ok()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--symbol ", s.message())));
  }
  if (!args.output.empty() && IsDirectory(args.output)) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "-o/--output: '", args.output, "' is a directory; give the path of the C++ file to "
        "write")));
  }
  Context ctx;
  absl::StatusOr<NamedProgram> named = LoadProgramFile(args.program, ctx);
  if (!named.ok()) return Fail(named.status());
  Program program = named->program;
  if (program.stage != Stage::kLowered) {
    std::vector<TensorType> types = named->default_types;
    if (!args.types.empty()) {
      absl::StatusOr<std::vector<TensorType>> parsed = ParseTypes(args.types);
      if (!parsed.ok()) return Fail(parsed.status());
      types = *parsed;
    }
    if (types.empty() && !program.entry_function().params.empty()) {
      return Fail(absl::InvalidArgumentError(
          "compile needs the input types: pass --types (e.g. --types i64)"));
    }
    absl::StatusOr<Program> lowered =
        LowerProgram(program, types, {.show_ir_on_error = args.dump_ir_on_error});
    if (!lowered.ok()) return Fail(lowered.status());
    program = std::move(*lowered);
  }
  absl::StatusOr<std::string> source = args.whole_program
                                            ? EmitCompiledProgram(program, args.symbol)
                                            : EmitFusedBlocks(program, args.symbol);
  if (!source.ok()) return Fail(source.status());
  if (args.output.empty()) {
    WriteStdout(*source);
    return 0;
  }
  if (absl::Status s = WriteFileAtomically(args.output, *source, "--output"); !s.ok()) {
    return Fail(s);
  }
  return 0;
}

struct RunArgs {
  std::string program;
  std::string inputs;
  std::string vm = "stack";
  std::string backend = "eigen";
  std::string block_policy = "lowest-index";
  int shards = 1;
  int64_t max_steps = CallOptions{}.max_steps;
  double timeout = 0;
  int64_t max_stack_depth = CallOptions{}.max_stack_depth;
  int64_t tile_bytes = CallOptions{}.tile_bytes;
  int64_t max_memory = 0;  // 0: the default limit
  bool fused = false;
  bool compiled = false;
  bool profile = false;
  std::string types;
  bool dump_ir_on_error = false;
};

void PrintProfileTable(const Profile& profile) {
  std::fprintf(stderr, "%-24s %-16s %10s %12s %8s\n", "function", "block", "runs",
               "lanes", "util");
  for (size_t f = 0; f < profile.blocks.size(); ++f) {
    for (size_t b = 0; b < profile.blocks[f].size(); ++b) {
      const BlockCounters& c = profile.blocks[f][b];
      if (c.executions == 0) continue;
      std::fprintf(stderr, "%-24s %-16s %10lld %12lld %7.1f%%\n",
                   profile.function_names[f].c_str(),
                   profile.block_labels[f][b].c_str(),
                   static_cast<long long>(c.executions),
                   static_cast<long long>(c.active_lanes),
                   100.0 * static_cast<double>(c.active_lanes) /
                       static_cast<double>(std::max<int64_t>(c.lane_slots, 1)));
    }
  }
  std::fprintf(stderr, "\n%-20s %10s %12s %12s\n", "primitive", "runs", "lanes", "seconds");
  for (size_t i = 0; i < profile.builtins.size(); ++i) {
    const PrimitiveCounters& c = profile.builtins[i];
    if (c.executions == 0) continue;
    std::fprintf(stderr, "%-20s %10lld %12lld %12.6f\n",
                 std::string(PrimitiveName(static_cast<Primitive>(i))).c_str(),
                 static_cast<long long>(c.executions),
                 static_cast<long long>(c.active_lanes),
                 static_cast<double>(c.nanoseconds) * 1e-9);
  }
  for (const auto& [name, c] : profile.kernels) {
    std::fprintf(stderr, "%-20s %10lld %12lld %12.6f\n", ("kernel:" + name).c_str(),
                 static_cast<long long>(c.executions),
                 static_cast<long long>(c.active_lanes),
                 static_cast<double>(c.nanoseconds) * 1e-9);
  }
  std::fprintf(stderr, "\nbatch utilization %.1f%%, lock-step bound %.1f%%\n",
               100.0 * profile.Utilization(), 100.0 * profile.LockStepBound());
}

int RunRun(const RunArgs& args, Communicator& comm) {
  Context ctx;
  absl::StatusOr<NamedProgram> named = LoadProgramFile(args.program, ctx);
  if (!named.ok()) return Fail(named.status());
  const Program& program = named->program;
  absl::Status bound = ctx.kernels().CheckBound(program.module);
  if (!bound.ok()) {
    return Fail(absl::Status(
        bound.code(),
        absl::StrCat(args.program, ": ", bound.message(),
                     "\n(the command line has only the kernels of its samples; run a program "
                     "with other kernels from C++, through RunProgram with your KernelRegistry)")));
  }

  std::vector<TensorType> types;
  if (!args.types.empty()) {
    absl::StatusOr<std::vector<TensorType>> parsed = ParseTypes(args.types);
    if (!parsed.ok()) return Fail(parsed.status());
    types = *std::move(parsed);
  }
  if (IsDirectory(args.inputs)) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--inputs: '", args.inputs, "' is a directory, not an inputs file: give the path of "
        "a JSON file like {\"inputs\": [[lane values...], ...]}")));
  }
  absl::StatusOr<RunInputs> inputs = ReadRunInputs(args.inputs, program, types);
  if (!inputs.ok()) return Fail(inputs.status());
  // Inputs written {"uniform": ...} make their parameters uniform (ir/ir.h).
  Program marked = program;
  for (size_t i = 0; i < inputs->uniform.size(); ++i) {
    Variable& param = marked.module.var(marked.entry_function().params[i]);
    if (!inputs->uniform[i] || param.uniform) continue;
    if (marked.stage == Stage::kLowered) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          args.inputs, ": inputs[", i, "] is uniform but parameter '", param.name,
          "' of the lowered program is not; mark it uniform before lowering (run the "
          "untyped program, or its IR with \"uniform\": true on the parameter)")));
    }
    param.uniform = true;
  }

  if (args.fused && args.vm != "stack") {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--fused runs fused blocks on the stack VM; with --vm ", args.vm,
        " drop --fused (or use --vm stack)")));
  }
  if (args.compiled && args.vm != "stack") {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--compiled compiles the program for the stack VM's runtime; with --vm ", args.vm,
        " drop --compiled (or use --vm stack)")));
  }
  if (args.compiled && args.fused) {
    return Fail(absl::InvalidArgumentError(
        "--compiled and --fused: a compiled program already runs every block compiled; "
        "pass one of them"));
  }
  CallOptions options;
  if (args.vm == "reference") {
    options.dry_run = true;
  } else {
    options.vm = args.vm == "stackless" ? Vm::kStackless : Vm::kStack;
  }
  options.backend = args.backend;
  options.block_policy = *BlockPolicyFromName(args.block_policy);  // checked by CLI11
  options.shards = args.shards;
  options.max_steps = args.max_steps;
  options.timeout_seconds = args.timeout;
  options.max_stack_depth = args.max_stack_depth;
  options.tile_bytes = args.tile_bytes;
  options.max_memory_bytes = args.max_memory;
  options.jit_fused_blocks = args.fused;
  options.jit_compiled_program = args.compiled;
  if (args.profile && options.dry_run) {
    return Fail(absl::InvalidArgumentError(
        "--profile counts the batched VMs' blocks and primitives; the reference interpreter "
        "keeps no profile: drop --profile or use --vm stack or stackless"));
  }
  options.profile_timing = args.profile;
  options.dump_ir_on_error = args.dump_ir_on_error;
  std::vector<TensorType> input_types;
  for (const Tensor& t : inputs->tensors) input_types.push_back(t.type());
  Profile profile;
  // Under mpirun each rank runs its range of the lanes and rank 0 gathers
  // the outputs (CallOptions::communicator); the profile is rank 0's own
  // lanes'.
  options.communicator = &comm;
  absl::StatusOr<std::vector<Tensor>> outputs =
      RunProgram(marked, std::move(inputs->tensors), &ctx.kernels(), options,
                 args.profile ? &profile : nullptr);
  if (!outputs.ok()) {
    // A type error that the inputs' guessed dtypes cause is about the file.
    return Fail(ExplainGuessedTypes(args.inputs, marked, input_types, inputs->guessed,
                                    outputs.status()));
  }
  if (comm.rank() != 0) return 0;
  nlohmann::json out;
  out["outputs"] = nlohmann::json::array();
  for (const Tensor& t : *outputs) out["outputs"].push_back(TensorToJson(t));
  if (args.profile) out["profile"] = profile.ToJson();
  WriteStdout(out.dump(2) + "\n");
  if (args.profile) PrintProfileTable(profile);
  return 0;
}

// The program argument of ir, run and compile (tools/program_loader.h).
constexpr char kProgramHelp[] =
    "a program file (.json, .ir or .txt; JSON if it starts with '{', else the IR text that "
    "`autobatch ir` prints) or a sample name";

// An integer option that CLI11 reads through IntegerIn (a bad value is a
// usage error, exit 2); --help shows its range.
template <typename T>
CLI::Option* AddInteger(CLI::App* cmd, const std::string& name, T& value,
                        const std::string& description, int64_t min, int64_t max) {
  return cmd->add_option(name, value, description)
      ->transform(IntegerIn(min, max))
      ->option_text(IntegerText(min, max));
}

// An option whose value is one of `choices` (a usage error otherwise).
CLI::Option* AddChoice(CLI::App* cmd, const std::string& name, std::string& value,
                       const std::string& description, const std::vector<std::string>& choices) {
  return cmd->add_option(name, value, description)
      ->check(CLI::IsMember(choices))
      ->option_text(ChoiceText(choices));
}

constexpr char kDumpIrOnErrorHelp[] =
    "on a compile error (a type error, say), also print the IR the failing pass received";

int Dispatch(int argc, char** argv, Communicator& comm) {
  CLI::App app{"autobatch: auto-batching compiler and VM"};
  app.require_subcommand(1);
  app.set_version_flag("--version", absl::StrCat("autobatch ", AUTOBATCH_VERSION),
                       "print the version (autobatch X.Y.Z) and exit");

  IrArgs ir;
  CLI::App* ir_cmd = app.add_subcommand("ir", "print or dump a program's IR");
  ir_cmd->add_option("program", ir.program, kProgramHelp)->required()->type_name("FILE|SAMPLE");
  AddChoice(ir_cmd, "--stage", ir.stage, "the stage to print (default untyped)",
            {"untyped", "typed", "lowered"});
  ir_cmd->add_flag("--json", ir.json, "dump JSON instead of text");
  ir_cmd->add_option("--types", ir.types, "entry input types, e.g. i64,f64[3]")
      ->type_name("TYPES");
  ir_cmd->add_flag("--print-after-all", ir.print_after_all,
                   "print the IR after every pass (to stderr)");
  ir_cmd->add_flag("--no-inline", ir.no_inline,
                   "lowered stage: keep calls to non-recursive functions as calls");
  ir_cmd->add_flag("--dot", ir.dot,
                   "write the control-flow graph for Graphviz (e.g. | dot -Tsvg > cfg.svg)");
  ir_cmd->add_flag("--stats", ir.stats,
                   "print op counts and a per-lane memory estimate (--json: as JSON)");
  ir_cmd->add_flag("--dump-ir-on-error", ir.dump_ir_on_error, kDumpIrOnErrorHelp);

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand("run", "run a program on JSON inputs");
  run_cmd->add_option("program", run.program, kProgramHelp)->required()->type_name("FILE|SAMPLE");
  run_cmd->add_option("--inputs", run.inputs, "JSON file: {\"inputs\": [...]}")
      ->required()
      ->type_name("FILE");
  AddChoice(run_cmd, "--vm", run.vm, "the VM that runs the batch (default stack)",
            {"stack", "stackless", "reference"});
  run_cmd->add_option("--backend", run.backend, "backend name (default eigen)")
      ->type_name("NAME");
  AddChoice(run_cmd, "--block-policy", run.block_policy,
            "stack VM schedule (default lowest-index)", {"lowest-index", "most-lanes"});
  run_cmd->add_option("--types", run.types,
                      "entry input types, e.g. i64,f64[3]: the inputs file is read as them "
                      "(default: the types the program declares, else those of the file's "
                      "values)")
      ->type_name("TYPES");
  run_cmd->add_flag("--dump-ir-on-error", run.dump_ir_on_error, kDumpIrOnErrorHelp);
  constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
  AddInteger(run_cmd, "--shards", run.shards,
             "run the batch as N sub-batches on N threads, same results (default 1)", 1, 256);
  AddInteger(run_cmd, "--max-steps", run.max_steps,
             absl::StrCat("block-execution budget: fail after N block executions "
                          "(0: no limit; default ",
                          CallOptions{}.max_steps, ")"),
             0, kInt64Max);
  run_cmd->add_option("--timeout", run.timeout,
                      "wall-clock budget in seconds (0: no limit; default 0)")
      ->transform(TimeoutSeconds())
      ->option_text("SECONDS in [0, 1e9]");
  AddInteger(run_cmd, "--max-stack-depth", run.max_stack_depth,
             absl::StrCat("recursion limit in frames (default ", CallOptions{}.max_stack_depth,
                          ")"),
             1, kMaxStackDepth);
  AddInteger(run_cmd, "--tile-bytes", run.tile_bytes,
             absl::StrCat("stack VM: run compact blocks in tiles of lanes whose data fit "
                          "this many bytes (0: never; default ",
                          CallOptions{}.tile_bytes, ")"),
             0, kInt64Max);
  run_cmd->add_option("--max-memory", run.max_memory,
                      "the most memory the run may hold, e.g. 512M or 4G (every value, stack "
                      "and scratch buffer together; default: " +
                          DescribeDefaultMemoryLimit(ReadMemoryBounds()) + ")")
      ->transform(ByteCount())
      ->option_text(kBytesText);
  run_cmd->add_flag("--fused", run.fused,
                    "stack VM: compile the program's fused blocks with the C++ compiler "
                    "(cached in $AUTOBATCH_CACHE_DIR or ~/.cache/autobatch) and run them");
  run_cmd->add_flag("--compiled", run.compiled,
                    "stack VM: compile the whole program to native code with the C++ compiler "
                    "(cached like --fused) and run it: the same outputs, errors and profile");
  run_cmd->add_flag("--profile", run.profile,
                    "add the profile to the JSON (block executions, active lanes, "
                    "utilization, per-primitive counts and times) and print its tables to "
                    "stderr; without it only the outputs are printed");

  CompileArgs compile;
  CLI::App* compile_cmd = app.add_subcommand(
      "compile",
      "write the program's fused blocks, or with --whole-program the whole compiled program, "
      "as C++ (pass them to CallOptions::fused_blocks)");
  compile_cmd->add_option("program", compile.program, kProgramHelp)
      ->required()
      ->type_name("FILE|SAMPLE");
  compile_cmd->add_option("--types", compile.types, "entry input types, e.g. i64,f64[3]")
      ->type_name("TYPES");
  compile_cmd->add_option("--symbol", compile.symbol,
                          "name of the generated function: a C++ identifier, not a keyword "
                          "(default FusedBlocks)")
      ->type_name("NAME");
  compile_cmd->add_option("-o,--output", compile.output, "C++ file to write (default: stdout)")
      ->type_name("FILE");
  compile_cmd->add_flag("--dump-ir-on-error", compile.dump_ir_on_error, kDumpIrOnErrorHelp);
  compile_cmd->add_flag("--whole-program", compile.whole_program,
                        "write every block as a function, with the scheduling compiled in "
                        "(what `run --compiled` compiles), not just the fused segments");

  SampleArgs sample;
  CLI::App* sample_cmd = AddSampleCommand(app, sample);

  OptArgs opt;
  CLI::App* opt_cmd = AddOptCommand(app, opt);

  ModelArgs model;
  CLI::App* model_cmd = AddModelCommand(app, model);

  TargetsArgs targets;
  CLI::App* targets_cmd = AddTargetsCommand(app, targets);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*ir_cmd) return RunIr(ir);
  if (*compile_cmd) return RunCompile(compile);
  if (*sample_cmd) return RunSampleCommand(sample, comm);
  if (*model_cmd) return RunModelCommand(model);
  if (*targets_cmd) return RunTargetsCommand(targets);
  if (*opt_cmd) return RunOptCommand(opt, {.load = LoadProgramFile, .parse_types = ParseTypes});
  return RunRun(run, comm);
}

#if AUTOBATCH_HAVE_MPI
// Points stdout and stderr at /dev/null (ranks other than 0 of an MPI run).
void SilenceOutput() {
  std::fflush(stdout);
  std::fflush(stderr);
  const int null = open("/dev/null", O_WRONLY);
  if (null < 0) return;
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
  close(null);
}
#endif

// Every command's stdout is checked once, at the end: a full disk or a
// closed pipe makes the exit status 1 with the reason, never a silent cut.
int Main(int argc, char** argv) {
  // A closed pipe must be an error we report (EPIPE), not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  // Under mpirun, the run's processes: `sample` and `run` spread their
  // chains or lanes over them. Ranks other than 0 print nothing: their
  // failures reach rank 0, which prints one message for all.
  Communicator* comm = &SingleProcess();
#if AUTOBATCH_HAVE_MPI
  std::unique_ptr<MpiCommunicator> mpi;
  if (StartedByMpiLauncher()) {
    absl::StatusOr<std::unique_ptr<MpiCommunicator>> created =
        MpiCommunicator::Create(&argc, &argv);
    if (!created.ok()) return Fail(created.status());
    mpi = *std::move(created);
    comm = mpi.get();
    if (comm->rank() != 0) SilenceOutput();
  }
#else
  if (StartedByMpiLauncher()) {
    return Fail(absl::FailedPreconditionError(
        "started by an MPI launcher, but this autobatch was built without MPI: every rank "
        "would run the whole job. Install Open MPI (tools/install_deps.sh) and build again "
        "(AUTOBATCH_MPI=ON), or run without mpirun"));
  }
#endif
  // The library turns running out of memory or threads into errors; this
  // catches what remains (parsing a huge file, formatting the output).
  int status = 1;
  absl::Status resources = CatchResourceErrors("autobatch", [&] {
    status = Dispatch(argc, argv, *comm);
    return absl::OkStatus();
  });
  if (!resources.ok()) status = Fail(resources);
  if (absl::Status closed = CloseStdout(); !closed.ok()) status = Fail(closed);
  return status;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
