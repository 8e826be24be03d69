// Example models written as programs (mcmc/model/program_model.h): each
// declares its parameters and data and writes only its log density. Their
// data live beside them as CmdStan JSON, samples/models/<name>.data.json.
#ifndef AUTOBATCH_SAMPLES_MODELS_MODELS_H_
#define AUTOBATCH_SAMPLES_MODELS_MODELS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mcmc/model/program_model.h"

namespace autobatch::samples {

// The example models' names, e.g. "eight_schools".
std::vector<std::string> ExampleModelNames();

// The model called `name`, without data (LoadData it from its data file).
// NotFound listing the names for an unknown one.
absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> MakeExampleModel(std::string_view name);

// Eight schools, non-centred (Rubin 1981; MCMC.md): mu ~ normal(0, 5),
// tau ~ half-Cauchy(0, 5), eta ~ normal(0, 1), y ~ normal(mu + tau eta, sigma).
std::unique_ptr<mcmc::ProgramModel> EightSchoolsModel();

}  // namespace autobatch::samples

#endif  // AUTOBATCH_SAMPLES_MODELS_MODELS_H_
