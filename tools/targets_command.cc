// The `autobatch targets` subcommand (tools/targets_command.h).
#include "tools/targets_command.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mcmc/model/constraint.h"
#include "mcmc/model/data.h"
#include "mcmc/model/program_model.h"
#include "mcmc/model/targets/registry.h"
#include "samples/models/models.h"
#include "support/output_file.h"

namespace autobatch {
namespace {

// "mu, tau, eta[8]": the sampled parameters with their shapes.
std::string ParameterList(const std::vector<mcmc::ParameterSpec>& params) {
  std::vector<std::string> parts;
  for (const mcmc::ParameterSpec& p : params) {
    parts.push_back(p.shape.empty() ? p.name
                                    : absl::StrCat(p.name, "[", absl::StrJoin(p.shape, ", "), "]"));
  }
  return absl::StrJoin(parts, ", ");
}

// One target: its name and summary, what it samples with the default
// parameters, then its --target-params one per line.
void AppendTarget(const mcmc::TargetInfo& info, std::string& out) {
  absl::StrAppend(&out, "  ", info.name, "\n      ", info.summary, "\n");
  absl::StatusOr<std::unique_ptr<mcmc::Target>> target =
      mcmc::MakeTarget(info.name, nlohmann::json::object());
  if (target.ok()) {
    const int64_t d = (*target)->dimension();
    absl::StrAppend(&out, "      samples ", ParameterList((*target)->parameters()), " (", d,
                    d == 1 ? " coordinate" : " coordinates",
                    info.params.empty() ? "" : " with the defaults", ")\n");
  }
  if (info.params.empty()) {
    absl::StrAppend(&out, "      no --target-params\n");
    return;
  }
  size_t width = 0;
  for (const mcmc::TargetParamInfo& p : info.params) width = std::max(width, p.name.size());
  for (const mcmc::TargetParamInfo& p : info.params) {
    absl::StrAppend(&out, "      ", p.name, std::string(width + 2 - p.name.size(), ' '),
                    p.description, "\n");
  }
}

void AppendModel(const samples::ExampleModelInfo& info, std::string& out) {
  absl::StrAppend(&out, "  ", info.name, "\n      ", info.summary, "\n");
  absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> model =
      samples::MakeExampleModel(info.name);
  if (!model.ok()) return;
  const std::vector<mcmc::ParameterSpec> params = (*model)->parameters();
  const std::vector<std::vector<mcmc::Extent>>& shapes = (*model)->parameter_shapes();
  std::vector<std::string> parts;
  bool sized_by_data = false;
  for (size_t i = 0; i < params.size(); ++i) {
    const bool shaped = i < shapes.size() && !shapes[i].empty();
    parts.push_back(shaped ? absl::StrCat(params[i].name, mcmc::ShapeText(shapes[i]))
                           : params[i].name);
    sized_by_data |= shaped && mcmc::HasNamedExtent(shapes[i]);
  }
  absl::StrAppend(&out, "      samples ", absl::StrJoin(parts, ", "),
                  sized_by_data ? " (sizes named by data variables)" : "", "\n");
}

}  // namespace

CLI::App* AddTargetsCommand(CLI::App& app, TargetsArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "targets", "list what `sample` can sample: the built-in targets (--target) with their "
                 "parameters, and the example models (--model)");
  cmd->add_flag("--all", args.all, "also list the samplers' test targets (mocks)");
  return cmd;
}

std::string DescribeTargets(const TargetsArgs& args) {
  std::string out =
      "Built-in targets (hand-written C++):\n"
      "  autobatch sample --target NAME [--target-params k=v,...]\n\n";
  const std::vector<mcmc::TargetInfo> infos = mcmc::TargetInfos();
  for (const mcmc::TargetInfo& info : infos) {
    if (!info.test_only) AppendTarget(info, out);
  }
  absl::StrAppend(&out,
                  "\nExample models written as programs (samples/models/):\n"
                  "  autobatch sample --model NAME --data samples/models/NAME.data.json\n"
                  "  (`autobatch model NAME --json` writes one as a file to start your own)\n\n");
  for (const samples::ExampleModelInfo& info : samples::ExampleModelInfos()) {
    AppendModel(info, out);
  }
  if (args.all) {
    absl::StrAppend(&out,
                    "\nTest targets (mocks for the samplers' tests; sampled like the built-in "
                    "ones):\n\n");
    for (const mcmc::TargetInfo& info : infos) {
      if (info.test_only) AppendTarget(info, out);
    }
  }
  return out;
}

int RunTargetsCommand(const TargetsArgs& args) {
  WriteStdout(DescribeTargets(args));
  return 0;
}

}  // namespace autobatch
