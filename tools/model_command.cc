// The `autobatch model` subcommand (tools/model_command.h).
#include "tools/model_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mcmc/model/data.h"
#include "mcmc/model/model_json.h"
#include "mcmc/model/program_model.h"
#include "mcmc/sample.h"
#include "nlohmann/json.hpp"
#include "samples/models/models.h"
#include "support/output_file.h"
#include "support/status.h"

namespace autobatch {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "autobatch model: error: %s\n", std::string(status.message()).c_str());
  return 1;
}

// A model file, not an example model's name (LoadModel).
bool IsModelFile(const std::string& name_or_path) {
  std::error_code ec;
  return name_or_path.ends_with(".json") || std::filesystem::is_regular_file(name_or_path, ec);
}

// The log density and gradient at the constrained values of `at_path`.
absl::StatusOr<nlohmann::json> LogProb(mcmc::ProgramModel& model, const ModelArgs& args) {
  AB_ASSIGN_OR_RETURN(std::string at_text, ReadText("--at", args.at));
  AB_ASSIGN_OR_RETURN(const std::vector<double> constrained,
                      mcmc::ReadInitValues(model, at_text, args.at));
  std::vector<double> q(static_cast<size_t>(model.dimension()));
  AB_RETURN_IF_ERROR(mcmc::Unconstrain(model, constrained, q));
  std::vector<double> grad(q.size());
  const double logp = model.LogDensityGradient(q, grad);
  AB_RETURN_IF_ERROR(model.last_error());
  nlohmann::json gradient = nlohmann::json::object();
  const std::vector<std::string> names = mcmc::UnconstrainedNames(model);
  for (size_t i = 0; i < names.size(); ++i) gradient[names[i]] = grad[i];
  return nlohmann::json{{"log_density", logp}, {"gradient", std::move(gradient)}};
}

}  // namespace

absl::StatusOr<std::string> ReadText(const std::string& option, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(option, ": cannot read '", path, "' (does it exist?)"));
  }
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> LoadModel(const std::string& name_or_path) {
  if (!IsModelFile(name_or_path)) return samples::MakeExampleModel(name_or_path);
  AB_ASSIGN_OR_RETURN(std::string text, ReadText("--model", name_or_path));
  return mcmc::ModelFromJson(text, name_or_path);
}

absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> LoadModelWithData(
    const std::string& name_or_path, const std::string& data_path, bool data_optional) {
  AB_ASSIGN_OR_RETURN(std::unique_ptr<mcmc::ProgramModel> model, LoadModel(name_or_path));
  if (!data_path.empty()) {
    AB_ASSIGN_OR_RETURN(const std::string text, ReadText("--data", data_path));
    AB_RETURN_IF_ERROR(model->LoadData(text, data_path));
  } else if (!IsModelFile(name_or_path)) {
    AB_ASSIGN_OR_RETURN(const samples::ExampleModelDataFile data,
                        samples::ExampleModelData(name_or_path));
    AB_RETURN_IF_ERROR(model->LoadData(std::string(data.text), std::string(data.path)));
  } else if (!data_optional) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_or_path, " needs --data FILE (the model's data, CmdStan JSON)"));
  }
  return model;
}

CLI::App* AddModelCommand(CLI::App& app, ModelArgs& args) {
  std::string models;
  for (const std::string& name : samples::ExampleModelNames()) {
    absl::StrAppend(&models, models.empty() ? "" : ", ", name);
  }
  CLI::App* cmd = app.add_subcommand(
      "model", "show a model written as a program, or its log density at given values");
  cmd->add_option(
         "model", args.model,
         "a model file (autobatch-model JSON, as --json writes) or an example model: " + models)
      ->required()
      ->type_name("FILE|NAME");
  cmd->add_flag("--json", args.json,
                "print the model as JSON: declarations, its log density's IR and its "
                "generated quantities' (if any); a model file whose parameter sizes come from "
                "its data needs --data (the JSON is written for those sizes)");
  cmd->add_flag("--log-prob", args.log_prob,
                "print the log density (lp__) and its gradient at --at's constrained values");
  cmd->add_option("--data", args.data,
                  "the model's data: a CmdStan JSON file (for --log-prob; for --json, the "
                  "parameter sizes); an example model's default: its own data set "
                  "(samples/models/NAME.data.json, built in)")
      ->type_name("FILE");
  cmd->add_option("--at", args.at,
                  "constrained parameter values: a CmdStan JSON file, one entry per parameter")
      ->type_name("FILE");
  return cmd;
}

int RunModelCommand(const ModelArgs& args) {
  if (args.json == args.log_prob)
    return Fail(absl::InvalidArgumentError("give --json or --log-prob"));
  if (args.json && !args.at.empty()) {
    return Fail(absl::InvalidArgumentError("--at belongs to --log-prob"));
  }
  if (args.log_prob && args.at.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--log-prob needs --at FILE (constrained parameter values, CmdStan JSON)"));
  }
  absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> model =
      LoadModelWithData(args.model, args.data, /*data_optional=*/args.json);
  if (!model.ok()) return Fail(model.status());
  if (args.json) {
    absl::StatusOr<nlohmann::json> json = mcmc::ModelToJson(**model);
    if (!json.ok()) return Fail(json.status());
    WriteStdout(json->dump(1) + "\n");
    return 0;
  }
  absl::StatusOr<nlohmann::json> result = LogProb(**model, args);
  if (!result.ok()) return Fail(result.status());
  WriteStdout(result->dump(1) + "\n");
  return 0;
}

}  // namespace autobatch
