// The `autobatch sample` subcommand: runs many MCMC chains of a known target
// or of a model written as a program on the batched VM and prints CmdStan's
// summary table.
//
//   autobatch sample --target eight_schools [--target-params JSON-or-k=v]
//   autobatch sample --model eight_schools --data samples/models/eight_schools.data.json
//       [--chains 4] [--warmup 1000] [--samples 1000] [--seed 1 | --seed 1,2,3,4]
//       [--init 2 | --init inits.json] [--thin 1] [--save-warmup]
//       [--delta 0.8] [--max-depth 10] [--algorithm nuts|hmc|rwmh]
//       [--step-size 1] [--no-adapt] [--vm stack|stackless] [--backend eigen]
//       [--output-dir DIR] [--output-file FILE] [--sig-figs 6] [--summary-json FILE]
//       [--save-adaptation FILE] [--load-adaptation FILE] [--no-progress] [--fused]
//       [--print-ir untyped|typed|lowered]
//
// `autobatch targets` lists the targets and example models (the samplers'
// test mocks only with --all). --help shows every option's type with its
// range or choices. --output-file writes every chain's draws to one Stan CSV
// file with a chain__ column first (mcmc::MakeCombinedCsv), as well as (or
// instead of) --output-dir's file per chain.
// CmdStan's everyday options: --seed is one seed for every chain or one per
// chain (a comma-separated list); --init R starts each chain at
// uniform(-R, R) on the unconstrained scale (0: the origin), --init FILE at
// the constrained values in a CmdStan JSON file (every parameter, mapped
// through the inverse transforms); --thin N keeps every N-th draw;
// --save-warmup writes the warmup draws before each file's adaptation block.
// Progress goes to stderr: a bar redrawn with '\r' when stderr is a
// terminal, a plain line every ~10% otherwise. The summary table goes to
// stdout at the end. --load-adaptation starts every chain from the file's
// step size and metric and turns adaptation off (warmup is then burn-in);
// --save-adaptation writes chain 0's adapted step size and metric.
// --print-ir prints the IR of the sampling program (the one the sampling
// iterations run, for this target, algorithm and max depth) at that stage
// and exits without sampling: `typed` is what the stackless VM runs,
// `lowered` what the stack VM runs.
// --model names a model written as a program: a model file
// (mcmc/model/model_json.h; user kernels refused) or an example model of
// samples/models/:
// its log density and gradient run inside the sampling program (linked, not
// a kernel), with --data read as CmdStan JSON against its declarations.
// Errors (unknown target, bad numbers, unwritable outputs, sampler
// failures) print one message and exit with status 1. The outputs (every
// chain's CSV path, --output-file, which may not be another output's path,
// --summary-json, --save-adaptation) and the memory the
// draws need (mcmc::CheckSampleMemory) are checked before sampling starts; an
// output that still fails afterwards (a full disk) is reported without
// losing the others or the summary, and is left absent, never cut
// (support/output_file.h); a symbolic link is refused. --output-dir is locked
// (flock on DIR/.autobatch.lock) from the checks until the files are written,
// so a second run on it fails at once; holding it, the run removes the
// earlier runs' output_<n>.csv files it will not write, saying so on stderr.
#ifndef AUTOBATCH_TOOLS_SAMPLE_COMMAND_H_
#define AUTOBATCH_TOOLS_SAMPLE_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"
#include "support/communicator.h"

namespace autobatch {

// Option values as text: numbers are parsed (and range-checked) by
// RunSampleCommand so that bad numbers are exit-1 errors with a message.
struct SampleArgs {
  std::string target;
  std::string target_params;
  std::string model;  // an example model (samples/models/), instead of --target
  std::string data;   // its data: CmdStan JSON
  std::string chains = "4";
  std::string warmup = "1000";
  std::string samples = "1000";
  std::string seed = "1";
  std::string delta = "0.8";
  std::string max_depth = "10";
  std::string step_size = "1";
  std::string algorithm = "nuts";
  std::string vm = "stack";
  std::string backend = "eigen";
  std::string block_policy = "most-lanes";
  std::string shards = "auto";
  std::string max_memory;  // empty: the default limit
  std::string output_dir;
  std::string output_file;  // all chains in one Stan CSV file, with chain__
  std::string sig_figs = "6";
  std::string summary_json;
  std::string save_adaptation;
  std::string load_adaptation;
  std::string print_ir;  // empty: sample
  std::string init = "2";  // a radius, or a JSON file of constrained values
  std::string thin = "1";
  bool save_warmup = false;
  bool no_adapt = false;
  bool no_progress = false;
  bool fused = false;
  bool compiled = false;  // --compiled: the whole program compiled (stack VM)
  bool dump_ir_on_error = false;
};

// Adds the subcommand to `app`, binding its options to `args` (which must
// outlive parsing). Returns the subcommand.
CLI::App* AddSampleCommand(CLI::App& app, SampleArgs& args);

// Runs it over the processes of `comm` (SingleProcess(), or MPI's ranks
// under mpirun: each rank runs and writes its range of the chains, rank 0
// holds the output directory, prints and writes the summary); returns the
// process exit status (0, 1, or 128 + the signal that interrupted it).
int RunSampleCommand(const SampleArgs& args, Communicator& comm);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_SAMPLE_COMMAND_H_
