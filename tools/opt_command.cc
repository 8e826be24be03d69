// The `autobatch opt` subcommand: runs any list of registered passes on a
// program, verifying after each, and prints the result.
#include "tools/opt_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "support/output_file.h"

namespace autobatch {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "autobatch: error: %s\n", std::string(status.message()).c_str());
  return 1;
}

void ListPasses() {
  size_t width = 0;
  for (const PassInfo& pass : AllPasses()) width = std::max(width, pass.name.size());
  WriteStdout("passes:\n");
  for (const PassInfo& pass : AllPasses()) {
    WriteStdout(absl::StrFormat("  %-*s  %s\n", static_cast<int>(width),
                                std::string(pass.name), std::string(pass.description)));
  }
  WriteStdout(absl::StrFormat(
      "\npipelines (as --passes lists):\n  typed (CompileProgram):  %s\n"
      "  lowered (LowerProgram): %s\n",
      CompilePipelineText(), LowerPipelineText()));
}

bool Runs(const Pipeline& pipeline, std::string_view name) {
  for (const PipelineStep& step : pipeline) {
    for (const PassInfo* pass : step.passes) {
      if (pass->name == name) return true;
    }
  }
  return false;
}

}  // namespace

CLI::App* AddOptCommand(CLI::App& app, OptArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "opt", "run a list of passes on a program, verifying after each; print the result");
  cmd->add_option("program", args.program, "program.json or a sample name")
      ->type_name("FILE|SAMPLE");
  cmd->add_option("--passes", args.passes,
                  "passes to run, e.g. infer_types,allocate_variables or "
                  "repeat(thread_jumps,merge_blocks) (see --list-passes)")
      ->type_name("PASSES");
  cmd->add_option("--types", args.types, "entry input types for infer_types, e.g. i64,f64[3]")
      ->type_name("TYPES");
  cmd->add_flag("--json", args.json, "print JSON instead of text");
  cmd->add_flag("--print-after-all", args.print_after_all,
                "print the IR after every pass (to stderr)");
  cmd->add_flag("--list-passes", args.list_passes,
                "list every pass with its description, and the pipelines");
  cmd->add_flag("--dump-ir-on-error", args.dump_ir_on_error,
                "on a pass's error, also print the IR the pass received");
  return cmd;
}

int RunOptCommand(const OptArgs& args, const ProgramReader& reader) {
  if (args.list_passes) {
    ListPasses();
    return 0;
  }
  if (args.program.empty()) {
    return Fail(absl::InvalidArgumentError(
        "opt needs a program (a program file or a sample name) and --passes; "
        "`autobatch opt --list-passes` lists the passes"));
  }
  if (args.passes.empty()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "opt needs --passes, e.g. --passes ", CompilePipelineText(),
        " (`autobatch opt --list-passes` lists the passes)")));
  }
  absl::StatusOr<Pipeline> pipeline = ParsePipeline(args.passes);
  if (!pipeline.ok()) return Fail(pipeline.status());
  Context ctx;
  absl::StatusOr<NamedProgram> named = reader.load(args.program, ctx);
  if (!named.ok()) return Fail(named.status());
  std::vector<TensorType> types = named->default_types;
  if (!args.types.empty()) {
    absl::StatusOr<std::vector<TensorType>> parsed = reader.parse_types(args.types);
    if (!parsed.ok()) return Fail(parsed.status());
    types = *std::move(parsed);
  }
  if (Runs(*pipeline, "infer_types") && types.empty() &&
      !named->program.entry_function().params.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--passes runs infer_types, which needs the entry's input types: pass --types "
        "(e.g. --types i64)"));
  }
  PipelineOptions options;
  options.print_ir_after_each_pass = args.print_after_all ? &std::cerr : nullptr;
  options.show_ir_on_error = args.dump_ir_on_error;
  absl::StatusOr<Program> result =
      RunPipeline(std::move(named->program), *pipeline,
                  PassContext{.input_types = std::move(types)}, options);
  if (!result.ok()) return Fail(result.status());
  WriteStdout((args.json ? DumpProgramJson(*result) : PrintProgram(*result)) + "\n");
  return 0;
}

}  // namespace autobatch
