// The `autobatch opt` subcommand: runs any list of registered passes on a
// program, verifying after each, and prints the result.
//
//   autobatch opt PROGRAM --passes a,b,repeat(c,d),e [--types i64,f64[3]]
//       [--json] [--print-after-all] [--dump-ir-on-error]
//   autobatch opt --list-passes
//
// PROGRAM is a program file or a sample name, read as `autobatch ir` reads
// it. --passes is a pass list as passes/pipeline.h ParsePipeline reads it;
// --types gives the entry's input types for infer_types (default: the
// sample's, or the parameter types a typed program file carries). The
// result is printed as text, or as JSON with --json; --print-after-all
// writes the IR after every pass to stderr; --dump-ir-on-error adds the IR
// a failing pass received to its error. --list-passes prints every
// pass with its one-line description, then the compiler's pipelines as pass
// lists. Errors (an unknown pass, which lists the valid ones; a pass given a
// program at a stage it does not take; a malformed program; a type error)
// print one message and exit with status 1.
#ifndef AUTOBATCH_TOOLS_OPT_COMMAND_H_
#define AUTOBATCH_TOOLS_OPT_COMMAND_H_

#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "frontend/context.h"
#include "ir/types.h"
#include "tools/sample_programs.h"

namespace autobatch {

struct OptArgs {
  std::string program;
  std::string passes;
  std::string types;
  bool json = false;
  bool print_after_all = false;
  bool list_passes = false;
  bool dump_ir_on_error = false;
};

// How the command line reads programs and --types lists (the same for every
// subcommand; autobatch_main.cc passes its own).
struct ProgramReader {
  // A program file or a sample name; samples register on the Context.
  std::function<absl::StatusOr<NamedProgram>(const std::string&, Context&)> load;
  std::function<absl::StatusOr<std::vector<TensorType>>(const std::string&)> parse_types;
};

// Adds `opt` to `app`, its options read into `args`.
CLI::App* AddOptCommand(CLI::App& app, OptArgs& args);

// Runs the subcommand; returns the exit status.
int RunOptCommand(const OptArgs& args, const ProgramReader& reader);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_OPT_COMMAND_H_
