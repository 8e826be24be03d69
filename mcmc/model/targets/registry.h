// Target registry: builds any known target by name from JSON parameters (as
// given on a command line or in a JSON file).
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_REGISTRY_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

struct TargetParamInfo {
  std::string name;         // JSON key, e.g. "dimension"
  std::string description;  // type, valid range and default
};

struct TargetInfo {
  std::string name;     // e.g. "ar1"
  std::string summary;  // one line: what the density is and what it is for
  std::vector<TargetParamInfo> params;
  // A mock for the samplers' tests (energy_jump, never_uturn): buildable
  // like any target, but left out of the lists users read (`autobatch
  // targets`, `sample --help`).
  bool test_only = false;
};

// Every known target, sorted by name: ar1, ar1_batched, ar1_dense, banana,
// beta_bernoulli, bimodal, correlated_2d, eight_schools, energy_jump, funnel,
// iid_gaussian, ill_conditioned, logistic_regression, never_uturn.
std::vector<std::string> TargetNames();
std::vector<TargetInfo> TargetInfos();  // same order, with parameters
// The targets users sample (test_only false), sorted by name.
std::vector<std::string> UserTargetNames();

// Builds target `name`. `params` is null or a JSON object whose keys are a
// subset of the target's params (missing = default). Integers may be written
// as integral floats (50.0); doubles also accept the strings "nan", "inf",
// "-inf" (the project's JSON spelling of non-finite numbers).
// InvalidArgument on an unknown name (listing the user targets, then the
// test targets apart), a params
// value that is not an object, an unknown key (listing the target's
// parameters with their descriptions), a value of the wrong type, or a value
// the target rejects (naming the parameter and the valid range).
absl::StatusOr<std::unique_ptr<Target>> MakeTarget(std::string_view name,
                                                   const nlohmann::json& params);

// Parses command-line parameter text: empty -> {}; text starting with '{' ->
// a JSON object; otherwise comma-separated key=value pairs where each value
// is JSON, or a bare string when it is not ("dimension=50,rho=0.9",
// "mean=[0,3]", "height=nan"). InvalidArgument naming the bad part; a key
// given twice, at the top or inside a JSON value, is one.
absl::StatusOr<nlohmann::json> ParseTargetParams(std::string_view text);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_REGISTRY_H_
