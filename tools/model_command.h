// The `autobatch model` subcommand: what a model written as a program is,
// and its log density at given values (CmdStan's `log_prob` method).
//
//   autobatch model eight_schools --json
//       the model as JSON: {"format": "autobatch-model", "version": 1,
//       "name", "parameters": [{name, shape, transform}], "data": [{name,
//       dtype, shape, bounds}], "program": the IR JSON (untyped) of its
//       value-and-gradient program, whose last inputs are the data}
//   autobatch model eight_schools --log-prob [--data d.json] --at params.json
//       prints {"log_density", "gradient": {coordinate: value}} at the
//       CONSTRAINED parameter values of params.json (CmdStan JSON, one entry
//       per parameter), mapped to the unconstrained scale first: the log
//       density is lp__ (Jacobians included) and the gradient is with respect
//       to the unconstrained coordinates, named as in the initialization
//       messages ("tau", "eta.3"; a simplex of K has K - 1).
//
// MODEL is a model file or an example model of samples/models/ (LoadModel);
// an example model's data is its own data set unless --data names another.
// Errors (unknown model, unreadable or malformed files, values outside a
// parameter's support) print one message and exit with status 1.
#ifndef AUTOBATCH_TOOLS_MODEL_COMMAND_H_
#define AUTOBATCH_TOOLS_MODEL_COMMAND_H_

#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "mcmc/model/program_model.h"

namespace autobatch {

struct ModelArgs {
  std::string model;
  bool json = false;
  bool log_prob = false;
  std::string data;
  std::string at;
};

CLI::App* AddModelCommand(CLI::App& app, ModelArgs& args);
int RunModelCommand(const ModelArgs& args);

// The model `name_or_path` names: a model file (a path ending in .json, or
// any existing file: mcmc/model/model_json.h) or an example model of
// samples/models/.
absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> LoadModel(const std::string& name_or_path);

// LoadModel(name_or_path) with its data loaded: the CmdStan JSON file at
// `data_path` (--data), or without one, an example model's own data set
// (samples/models/<name>.data.json, built in). A model file without
// `data_path` gets no data when `data_optional` (`model --json`: its sizes
// may need none), and is InvalidArgument "<name_or_path> needs --data FILE"
// otherwise.
absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> LoadModelWithData(
    const std::string& name_or_path, const std::string& data_path, bool data_optional);

// The contents of the file at `path`, given with command-line option
// `option`: NotFound "<option>: cannot read '<path>' (does it exist?)".
absl::StatusOr<std::string> ReadText(const std::string& option, const std::string& path);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_MODEL_COMMAND_H_
