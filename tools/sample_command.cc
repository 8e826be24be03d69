// The `autobatch sample` subcommand: option parsing, output checks, the run
// and its outputs.
#include "tools/sample_command.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "backends/run_on_threads.h"
#include "ir/printer.h"
#include "support/memory.h"
#include "support/output_file.h"
#include "support/status.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/output/progress.h"
#include "mcmc/sample.h"
#include "mcmc/model/program_model.h"
#include "mcmc/model/targets/registry.h"
#include "samples/models/models.h"
#include "tools/cli_types.h"
#include "tools/model_command.h"

namespace autobatch {
namespace {

using mcmc::Algorithm;

// Set by the SIGINT/SIGTERM handler, read by Sample() (SampleOptions::
// cancel): a lock-free atomic store and a sig_atomic_t are all a handler may
// touch.
std::atomic<bool> interrupt_requested{false};
volatile sig_atomic_t interrupt_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnInterrupt(int signo) {
  interrupt_signal = signo;
  interrupt_requested.store(true, std::memory_order_relaxed);
}

// SIGINT and SIGTERM (what mpirun forwards before its SIGKILL) stop the run
// at its next safe point instead of killing it, for as long as this lives.
// SA_RESETHAND: a second signal kills the process the default way (the
// output files are written whole or not at all, so it leaves no torn file).
class InterruptHandlers {
 public:
  InterruptHandlers() {
    interrupt_requested.store(false, std::memory_order_relaxed);
    interrupt_signal = 0;
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptHandlers() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// The shell's exit status of a process killed by signal `signo`: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
int InterruptedStatus(int signo) { return 128 + signo; }

const char* SignalName(int signo) { return signo == SIGTERM ? "SIGTERM" : "SIGINT"; }

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "autobatch sample: error: %s\n", std::string(status.message()).c_str());
  return 1;
}

// The ranges MakeOptions checks, which --help shows.
constexpr int64_t kMaxChains = int64_t{1} << 24;
constexpr int64_t kMaxIterations = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxShards = 256;
constexpr char kSeedText[] = "INT in [0, 18446744073709551615]";

absl::StatusOr<int64_t> ParseInt(const std::string& option, const std::string& text,
                                 int64_t min, int64_t max) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat(option, " '", text,
                                                   "' is not an integer in [", min, ", ",
                                                   max, "]"));
  }
  return value;
}

absl::StatusOr<uint64_t> ParseSeed(const std::string& text) {
  uint64_t value = 0;
  if (text.empty() || text[0] == '-' || !absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--seed '", text, "' is not an integer in [0, 18446744073709551615]"));
  }
  return value;
}

absl::StatusOr<double> ParsePositive(const std::string& option, const std::string& text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || !(value > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(option, " '", text, "' is not a finite number > 0"));
  }
  return value;
}

// Fails now, before a long run, if `path` cannot be written later: it must
// not be a directory, and if it does not exist its directory must exist and
// be writable (the writers do not create directories); an existing file
// must be writable, and not a symbolic link. Opens nothing that exists (a
// pipe would block).
absl::Status CheckWritableFile(const std::string& option, const std::string& path) {
  AB_RETURN_IF_ERROR(RefuseSymlink(path, option));
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    return absl::FailedPreconditionError(absl::StrCat(
        option, ": '", path, "' is a directory; give the path of a file to write"));
  }
  if (status.type() == std::filesystem::file_type::not_found) {
    {
      std::ofstream probe(path, std::ios::app);
      if (!probe) {
        return absl::FailedPreconditionError(
            absl::StrCat(option, ": cannot write '", path,
                         "' (does its directory exist, and may it be written?)"));
      }
    }
    std::error_code removed;
    std::filesystem::remove(path, removed);
    return absl::OkStatus();
  }
  if (!std::filesystem::exists(status)) {  // e.g. a directory on the way cannot be searched
    return absl::FailedPreconditionError(
        absl::StrCat(option, ": cannot write '", path, "': ", ec.message()));
  }
  if (access(path.c_str(), W_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        option, ": cannot write '", path, "': ", std::strerror(errno),
        "; make it writable or give another path"));
  }
  return absl::OkStatus();
}

// --output-file must not be another output of the run (--summary-json,
// --save-adaptation) nor named like a chain's file in --output-dir, which a
// later run there would take for one (and remove as stale). Paths only:
// checked before --output-dir is created or cleaned.
absl::Status CheckOutputFileIsItsOwn(const SampleArgs& args) {
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::weakly_canonical(args.output_file, ec);
  if (ec) return absl::OkStatus();  // CheckWritableFile reports it
  auto same = [&](const std::string& other) {
    std::error_code other_ec;
    return !other.empty() && std::filesystem::weakly_canonical(other, other_ec) == file &&
           !other_ec;
  };
  for (const auto& [option, path] : {std::pair{"--summary-json", &args.summary_json},
                                     std::pair{"--save-adaptation", &args.save_adaptation}}) {
    if (same(*path)) {
      return absl::InvalidArgumentError(absl::StrCat("--output-file '", args.output_file,
                                                     "' is also ", option,
                                                     "'s file: give each output its own path"));
    }
  }
  const std::string filename = file.filename().string();
  absl::string_view name = filename;
  int64_t n = 0;
  if (!args.output_dir.empty() && absl::ConsumePrefix(&name, "output_") &&
      absl::ConsumeSuffix(&name, ".csv") && absl::SimpleAtoi(name, &n)) {
    std::error_code dir_ec;
    if (std::filesystem::weakly_canonical(args.output_dir, dir_ec) == file.parent_path() &&
        !dir_ec) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--output-file '", args.output_file,
          "' is named like a chain's file in --output-dir (output_<n>.csv): give the combined "
          "file another name or directory"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<mcmc::SampleOptions> MakeOptions(const SampleArgs& args, const mcmc::Model& model) {
  mcmc::SampleOptions o;
  if (args.algorithm == "nuts") {
    o.algorithm = Algorithm::kNuts;
  } else if (args.algorithm == "hmc") {
    o.algorithm = Algorithm::kHmc;
  } else if (args.algorithm == "rwmh") {
    o.algorithm = Algorithm::kRwmh;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--algorithm '", args.algorithm, "' is not one of nuts, hmc, rwmh"));
  }
  if (args.vm == "stack") {
    o.call.vm = Vm::kStack;
  } else if (args.vm == "stackless") {
    o.call.vm = Vm::kStackless;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--vm '", args.vm, "' is not one of stack, stackless"));
  }
  o.call.backend = args.backend;
  const std::optional<BlockPolicy> policy = BlockPolicyFromName(args.block_policy);
  if (!policy) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--block-policy '", args.block_policy, "' is not one of lowest-index, most-lanes"));
  }
  o.call.block_policy = *policy;
  if (args.fused && o.call.vm != Vm::kStack) {
    return absl::InvalidArgumentError(
        "--fused runs fused blocks on the stack VM; with --vm stackless drop --fused");
  }
  if (args.compiled && o.call.vm != Vm::kStack) {
    return absl::InvalidArgumentError(
        "--compiled compiles the sampler for the stack VM's runtime; with --vm stackless drop "
        "--compiled");
  }
  if (args.compiled && args.fused) {
    return absl::InvalidArgumentError(
        "--compiled and --fused: a compiled program already runs every block compiled; pass "
        "one of them");
  }
  o.call.jit_fused_blocks = args.fused;
  o.call.jit_compiled_program = args.compiled;
  o.call.dump_ir_on_error = args.dump_ir_on_error;
  AB_ASSIGN_OR_RETURN(o.num_chains, ParseInt("--chains", args.chains, 1, kMaxChains));
  if (args.shards == "auto") {
    o.call.shards = mcmc::kAutoShards;  // Sample() chooses (mcmc::DefaultShards)
  } else {
    AB_ASSIGN_OR_RETURN(const int64_t shards, ParseInt("--shards", args.shards, 1, kMaxShards));
    o.call.shards = static_cast<int>(shards);
  }
  if (!args.max_memory.empty()) {
    absl::StatusOr<int64_t> bytes = ParseBytes(args.max_memory);
    if (!bytes.ok() || *bytes < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--max-memory: ", bytes.ok() ? "give at least 1 byte" : bytes.status().message()));
    }
    o.call.max_memory_bytes = *bytes;
  }
  AB_ASSIGN_OR_RETURN(o.num_warmup, ParseInt("--warmup", args.warmup, 0, kMaxIterations));
  AB_ASSIGN_OR_RETURN(o.num_samples, ParseInt("--samples", args.samples, 1, kMaxIterations));
  // One seed, or one per chain.
  if (absl::StrContains(args.seed, ',')) {
    for (const absl::string_view part : absl::StrSplit(args.seed, ',')) {
      AB_ASSIGN_OR_RETURN(const uint64_t seed, ParseSeed(std::string(part)));
      o.chain_seeds.push_back(seed);
    }
    if (static_cast<int64_t>(o.chain_seeds.size()) != o.num_chains) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--seed '", args.seed, "' lists ", o.chain_seeds.size(), " seeds for ", o.num_chains,
          " chains: give one seed for every chain, or one per chain"));
    }
    o.seed = o.chain_seeds.front();
  } else {
    AB_ASSIGN_OR_RETURN(o.seed, ParseSeed(args.seed));
  }
  AB_ASSIGN_OR_RETURN(o.thin, ParseInt("--thin", args.thin, 1, kMaxIterations));
  o.save_warmup = args.save_warmup;
  // --init: a radius, or a file of constrained values (CmdStan's init=).
  double radius = 0;
  if (absl::SimpleAtod(args.init, &radius)) {
    if (!std::isfinite(radius) || radius < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--init '", args.init,
          "' is not a radius >= 0 (uniform(-R, R) on the unconstrained scale) nor a JSON "
          "file of initial values"));
    }
    o.init_radius = radius;
  } else {
    AB_ASSIGN_OR_RETURN(const std::string text, ReadText("--init", args.init));
    absl::StatusOr<std::vector<double>> values = mcmc::ReadInitValues(model, text, args.init);
    if (!values.ok()) {
      return absl::Status(values.status().code(),
                          absl::StrCat("--init: ", values.status().message()));
    }
    o.init_values = {*std::move(values)};
  }
  AB_ASSIGN_OR_RETURN(const int64_t depth,
                      ParseInt("--max-depth", args.max_depth, 1, mcmc::kMaxTreeDepth));
  o.sampler.max_depth = static_cast<int>(depth);
  AB_ASSIGN_OR_RETURN(o.sampler.step_size, ParsePositive("--step-size", args.step_size));
  AB_ASSIGN_OR_RETURN(o.adaptation.delta, ParsePositive("--delta", args.delta));
  if (!(o.adaptation.delta < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--delta '", args.delta, "' must be in (0, 1)"));
  }
  o.adaptation.engaged = !args.no_adapt && args.load_adaptation.empty();
  if (!args.load_adaptation.empty()) {
    // Read here for a clear message naming the option.
    absl::StatusOr<mcmc::AdaptedParameters> loaded =
        mcmc::LoadAdaptation(args.load_adaptation, model.dimension());
    if (!loaded.ok()) {
      return absl::Status(loaded.status().code(),
                          absl::StrCat("--load-adaptation: ", loaded.status().message()));
    }
    o.adaptation.load_path = args.load_adaptation;
  }
  if (o.num_warmup == 0 && o.adaptation.engaged && o.algorithm != Algorithm::kRwmh) {
    return absl::InvalidArgumentError(
        "--warmup 0 needs adaptation off: add --no-adapt (and --step-size) or "
        "--load-adaptation FILE");
  }
  return o;
}

// --print-ir: the sampling iterations' program (no warmup adapter in it).
int PrintSamplerIr(const mcmc::Model& model, const mcmc::SampleOptions& options,
                   const std::string& stage) {
  if (stage != "untyped" && stage != "typed" && stage != "lowered") {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--print-ir: unknown stage '", stage, "'; use untyped, typed or lowered")));
  }
  absl::StatusOr<std::unique_ptr<mcmc::BatchedSampler>> sampler =
      mcmc::BatchedSampler::Create(model, options.algorithm, options.sampler);
  if (!sampler.ok()) return Fail(sampler.status());
  const Program* program = &(*sampler)->program();
  if (stage != "untyped") {
    absl::StatusOr<const Program*> compiled =
        (*sampler)->ExecutableProgram(/*lowered=*/stage == "lowered",
                                      options.call.dump_ir_on_error);
    if (!compiled.ok()) return Fail(compiled.status());
    program = *compiled;
  }
  WriteStdout(PrintProgram(*program));
  return 0;
}

}  // namespace

CLI::App* AddSampleCommand(CLI::App& app, SampleArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "sample", "run MCMC chains of a known target in one batch; print the summary (SIGINT or "
      "SIGTERM stop sampling and keep the draws so far: outputs written, exit 130/143)");
  // Values are read as text and checked by MakeOptions (exit 1 with a
  // message); option_text shows their real type and range in --help.
  const std::string targets = absl::StrJoin(mcmc::UserTargetNames(), ", ");
  const std::string models = absl::StrJoin(samples::ExampleModelNames(), ", ");
  cmd->add_option("--target", args.target,
                  "built-in target (hand-written C++): " + targets +
                      " (`autobatch targets` describes them and their parameters)")
      ->type_name("NAME");
  cmd->add_option("--model", args.model,
                  "instead of --target, a model written as a program: a model file "
                  "(`autobatch model NAME --json` writes one) or an example model: " + models)
      ->type_name("FILE|NAME");
  cmd->add_option("--data", args.data, "the --model's data: a CmdStan JSON file")
      ->type_name("FILE");
  cmd->add_option("--target-params", args.target_params,
                  "target parameters: JSON object or k=v,k=v (e.g. dimension=50; `autobatch "
                  "targets` lists each target's)")
      ->type_name("JSON|k=v,...");
  cmd->add_option("--chains", args.chains, "number of chains (default 4)")
      ->option_text(IntegerText(1, kMaxChains));
  cmd->add_option("--warmup", args.warmup, "warmup iterations per chain (default 1000)")
      ->option_text(IntegerText(0, kMaxIterations));
  cmd->add_option("--samples", args.samples, "sampling iterations per chain (default 1000)")
      ->option_text(IntegerText(1, kMaxIterations));
  cmd->add_option("--seed", args.seed,
                  "random seed (default 1), or one per chain as a comma-separated list")
      ->option_text(std::string(kSeedText) + " or INT,INT,...");
  cmd->add_option("--init", args.init,
                  "initial values: a radius R, each chain starting at uniform(-R, R) on the "
                  "unconstrained scale (default 2; 0: the origin), or a CmdStan JSON file of "
                  "every parameter's constrained values")
      ->option_text("NUMBER >= 0 or FILE");
  cmd->add_option("--thin", args.thin, "keep every N-th draw (default 1)")
      ->option_text(IntegerText(1, kMaxIterations));
  cmd->add_flag("--save-warmup", args.save_warmup,
                "also write the warmup draws, before each CSV file's adaptation block");
  cmd->add_option("--delta", args.delta, "adaptation target acceptance (default 0.8)")
      ->option_text("NUMBER in (0, 1)");
  cmd->add_option("--max-depth", args.max_depth, "NUTS maximum tree depth (default 10)")
      ->option_text(IntegerText(1, mcmc::kMaxTreeDepth));
  cmd->add_option("--step-size", args.step_size,
                  "initial (or, with --no-adapt, fixed) step size (default 1)")
      ->option_text("NUMBER > 0");
  cmd->add_flag("--no-adapt", args.no_adapt,
                "no adaptation: warmup is burn-in with the given step size and unit metric");
  cmd->add_option("--algorithm", args.algorithm, "the sampler (default nuts)")
      ->option_text(ChoiceText({"nuts", "hmc", "rwmh"}));
  cmd->add_option("--vm", args.vm, "the VM that runs the chains (default stack)")
      ->option_text(ChoiceText({"stack", "stackless"}));
  cmd->add_option("--backend", args.backend, "backend name (default eigen)")->type_name("NAME");
  cmd->add_option("--block-policy", args.block_policy, "stack VM schedule (default most-lanes)")
      ->option_text(ChoiceText({"most-lanes", "lowest-index"}));
  cmd->add_option("--shards", args.shards,
                  "run the chains as N sub-batches on N threads (same draws for every N); "
                  "default auto: at least one per hardware thread, smaller for big models "
                  "(mcmc::DefaultShards)")
      ->option_text(IntegerText(1, kMaxShards) + " or auto");
  cmd->add_option("--max-memory", args.max_memory,
                  "the most memory the run may hold, e.g. 512M or 4G (the draws and every "
                  "VM call's values, stacks and scratch; default: " +
                      DescribeDefaultMemoryLimit(ReadMemoryBounds()) + ")")
      ->option_text(kBytesText);
  cmd->add_option("--output-dir", args.output_dir,
                  "write one Stan CSV file per chain there (output_<id+1>.csv); the directory "
                  "is locked for the run, and an earlier run's extra output_<n>.csv removed")
      ->type_name("DIR");
  cmd->add_option("--output-file", args.output_file,
                  "also write every chain's draws to this one Stan CSV file, with a chain__ "
                  "column (1-based chain id) first")
      ->type_name("FILE");
  cmd->add_option("--sig-figs", args.sig_figs, "significant digits in the CSV files (default 6)")
      ->option_text(IntegerText(1, mcmc::kStanCsvMaxSigFigs));
  cmd->add_option("--summary-json", args.summary_json,
                  "write the summary as JSON to FILE: the run, then per column, then totals, "
                  "then per chain")
      ->type_name("FILE");
  cmd->add_option("--save-adaptation", args.save_adaptation,
                  "write chain 0's adapted step size and metric to FILE (JSON)")
      ->type_name("FILE");
  cmd->add_option("--load-adaptation", args.load_adaptation,
                  "use the step size and metric in FILE for every chain; no adaptation")
      ->type_name("FILE");
  cmd->add_flag("--no-progress", args.no_progress, "print no progress to stderr");
  cmd->add_flag("--fused", args.fused,
                "stack VM: compile the sampler's fused blocks with the C++ compiler (once; "
                "cached in $AUTOBATCH_CACHE_DIR or ~/.cache/autobatch): same draws, faster");
  cmd->add_flag("--compiled", args.compiled,
                "stack VM: compile the whole sampling program to native code with the C++ "
                "compiler (once; cached like --fused): same draws");
  cmd->add_option("--print-ir", args.print_ir,
                  "print the sampling program's IR at this stage and exit without sampling")
      ->option_text(ChoiceText({"untyped", "typed", "lowered"}));
  cmd->add_flag("--dump-ir-on-error", args.dump_ir_on_error,
                "on a compile error (a type error in --model's program, say), also print the "
                "IR the failing pass received");
  return cmd;
}

// The model to sample: --target's built-in target or --model's program with
// its data (--data; an example model's own by default).
absl::StatusOr<std::unique_ptr<mcmc::Model>> MakeModel(const SampleArgs& args) {
  if (args.target.empty() == args.model.empty()) {
    return absl::InvalidArgumentError(
        "give either --target (a built-in target) or --model (a model written as a program) "
        "with --data");
  }
  if (!args.model.empty()) {
    if (!args.target_params.empty()) {
      return absl::InvalidArgumentError(
          "--target-params belongs to --target; a --model takes its data from --data");
    }
    AB_ASSIGN_OR_RETURN(std::unique_ptr<mcmc::ProgramModel> model,
                        LoadModelWithData(args.model, args.data, /*data_optional=*/false));
    return std::unique_ptr<mcmc::Model>(std::move(model));
  }
  if (!args.data.empty()) {
    return absl::InvalidArgumentError(
        "--data belongs to --model; a built-in --target takes --target-params");
  }
  absl::StatusOr<nlohmann::json> params = mcmc::ParseTargetParams(args.target_params);
  if (!params.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--target-params: ", params.status().message()));
  }
  AB_ASSIGN_OR_RETURN(std::unique_ptr<mcmc::Target> target,
                      mcmc::MakeTarget(args.target, *params));
  return std::unique_ptr<mcmc::Model>(std::move(target));
}

// The output checks before sampling, and the output directory's lock and
// cleaning (rank 0's alone in a run over processes: the other ranks write
// their chains' files into the directory rank 0 holds).
absl::Status PrepareOutputs(const SampleArgs& args, const mcmc::SampleOptions& options,
                            std::optional<OutputDirectoryLock>& lock) {
  // The directory is held from here until the files are written: a second
  // run on it fails now instead of mixing its files with ours.
  if (!args.output_file.empty()) AB_RETURN_IF_ERROR(CheckOutputFileIsItsOwn(args));
  if (!args.output_dir.empty()) {
    absl::Status s = mcmc::CheckChainCsvFiles(args.output_dir, options.num_chains);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--output-dir: ", s.message()));
    AB_ASSIGN_OR_RETURN(OutputDirectoryLock acquired,
                        OutputDirectoryLock::Acquire(args.output_dir));
    lock.emplace(std::move(acquired));
    // Removed before sampling, so that even a failed run leaves no file of
    // an earlier run that could be read as one of this run's chains.
    absl::StatusOr<std::vector<std::string>> stale =
        mcmc::RemoveStaleChainCsvFiles(args.output_dir, options.num_chains);
    if (!stale.ok()) {
      return absl::Status(stale.status().code(),
                          absl::StrCat("--output-dir: ", stale.status().message()));
    }
    if (!stale->empty()) {
      std::fprintf(stderr,
                   "autobatch sample: removed %zu file(s) of an earlier run from '%s' that this "
                   "run of %lld chain(s) does not write: %s\n",
                   stale->size(), args.output_dir.c_str(),
                   static_cast<long long>(options.num_chains),
                   absl::StrJoin(*stale, ", ").c_str());
    }
  }
  if (!args.summary_json.empty()) {
    AB_RETURN_IF_ERROR(CheckWritableFile("--summary-json", args.summary_json));
  }
  if (!args.output_file.empty()) {
    AB_RETURN_IF_ERROR(CheckWritableFile("--output-file", args.output_file));
  }
  if (!args.save_adaptation.empty()) {
    AB_RETURN_IF_ERROR(CheckWritableFile("--save-adaptation", args.save_adaptation));
  }
  return absl::OkStatus();
}

int RunSampleCommand(const SampleArgs& args, Communicator& comm) {
  // In a run over processes every step that may fail on one process ends
  // with the processes agreeing on the outcome, so none is left waiting.
  const bool root = comm.rank() == 0;
  absl::StatusOr<std::unique_ptr<mcmc::Model>> target = MakeModel(args);
  absl::StatusOr<mcmc::SampleOptions> options =
      target.ok() ? MakeOptions(args, **target) : absl::StatusOr<mcmc::SampleOptions>(target.status());
  if (options.ok() && !args.print_ir.empty()) {
    return root ? PrintSamplerIr(**target, *options, args.print_ir) : 0;
  }
  absl::StatusOr<int64_t> sig_figs =
      ParseInt("--sig-figs", args.sig_figs, 1, mcmc::kStanCsvMaxSigFigs);
  absl::Status setup = options.status();
  if (setup.ok()) setup = sig_figs.status();
  // Everything that can be checked before sampling is: a long run must not
  // end in an error that loses its results.
  if (setup.ok()) setup = mcmc::CheckSampleMemory(**target, *options);
  if (absl::Status agreed = comm.AgreeOnStatus(setup); !agreed.ok()) return Fail(agreed);
  std::optional<OutputDirectoryLock> lock;
  absl::Status prepared = root ? PrepareOutputs(args, *options, lock) : absl::OkStatus();
  if (absl::Status agreed = comm.AgreeOnStatus(prepared); !agreed.ok()) return Fail(agreed);
  options->communicator = &comm;

  mcmc::ProgressPrinter printer(stderr, isatty(fileno(stderr)) != 0);
  if (!args.no_progress && root) options->progress = printer.AsCallback();
  absl::StatusOr<mcmc::SampleResult> result;
  {
    const InterruptHandlers handlers;
    options->cancel = &interrupt_requested;
    result = mcmc::Sample(**target, *options);
  }
  const int caught = interrupt_signal;
  if (!result.ok()) {
    // Cancelled, or another error the signal caused (a terminal's Ctrl-C
    // also reaches a JIT compiler running in the same process group).
    if (caught != 0) {
      std::fprintf(stderr, "autobatch sample: %s: %s; no output written\n", SignalName(caught),
                   std::string(result.status().message()).c_str());
      return InterruptedStatus(caught);
    }
    return Fail(result.status());
  }

  // An output that fails anyway (a full disk) does not stop the others: each
  // failure is reported, the summary still printed, and the exit status 1.
  int status = 0;
  if (result->interrupted) {
    // Another process may have caught it (mpirun forwards signals to all).
    const int signo = caught != 0 ? caught : SIGINT;
    result->interrupted_by = SignalName(signo);
    std::fprintf(stderr,
                 "autobatch sample: %s: sampling stopped after %lld of %lld draws per chain; "
                 "writing the outputs of those draws\n",
                 SignalName(signo), static_cast<long long>(result->num_draws()),
                 static_cast<long long>(options->num_samples));
    // Like a shell's status for a process the signal ended (130, 143), so a
    // script or mpirun sees that the run did not complete.
    status = InterruptedStatus(signo);
  }
  if (!args.output_dir.empty()) {
    // Each process writes the chains it ran.
    absl::StatusOr<std::vector<std::string>> paths =
        mcmc::WriteChainCsvFiles(*result, args.output_dir, static_cast<int>(*sig_figs));
    if (absl::Status agreed = comm.AgreeOnStatus(paths.status()); !agreed.ok()) {
      status = std::max(status, Fail(agreed));
    }
  }
  // Rank 0 holds every chain and the summary; it writes the rest.
  if (!root) return status;
  if (!args.output_file.empty()) {
    absl::Status written =
        mcmc::WriteCombinedCsvFile(*result, args.output_file, static_cast<int>(*sig_figs));
    if (!written.ok()) {
      status = std::max(status, Fail(absl::Status(
                                    written.code(),
                                    absl::StrCat("--output-file: ", written.message()))));
    }
  }
  if (!args.summary_json.empty()) {
    absl::Status written = WriteFileAtomically(
        args.summary_json, mcmc::SummaryJson(*result).dump(2) + "\n", "--summary-json");
    if (!written.ok()) status = std::max(status, Fail(written));
  }
  if (!args.save_adaptation.empty()) {
    const mcmc::ChainSummary& chain0 = result->chains.front();
    absl::Status saved =
        mcmc::SaveAdaptation(args.save_adaptation, {chain0.step_size, chain0.inv_metric});
    if (!saved.ok()) {
      status = std::max(status, Fail(absl::Status(
                                    saved.code(),
                                    absl::StrCat("--save-adaptation: ", saved.message()))));
    }
  }
  WriteStdout(mcmc::FormatSummary(*result));  // checked at exit (CloseStdout)
  return status;
}

}  // namespace autobatch
