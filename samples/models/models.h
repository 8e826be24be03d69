// Example models written as programs (mcmc/model/program_model.h): each
// declares its parameters and data and writes only its log density. Their
// data live beside them as CmdStan JSON, samples/models/<name>.data.json.
#ifndef AUTOBATCH_SAMPLES_MODELS_MODELS_H_
#define AUTOBATCH_SAMPLES_MODELS_MODELS_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mcmc/model/program_model.h"

namespace autobatch::samples {

// The example models' names, e.g. "eight_schools".
std::vector<std::string> ExampleModelNames();

// An example model's name and a one-line description.
struct ExampleModelInfo {
  std::string name;
  std::string summary;
};
// In ExampleModelNames() order.
std::vector<ExampleModelInfo> ExampleModelInfos();

// The model called `name`, without data (LoadData it from its data file).
// NotFound listing the names for an unknown one.
absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> MakeExampleModel(std::string_view name);

// A data set as built into this library (samples/models/CMakeLists.txt).
struct ExampleModelDataFile {
  std::string_view path;  // "samples/models/eight_schools.data.json"
  std::string_view text;  // its CmdStan JSON when the library was built
};
// Every example model's data set, sorted by path.
std::span<const ExampleModelDataFile> ExampleModelDataFiles();
// The data set of the example model called `name`
// (samples/models/<name>.data.json): NotFound listing the names for an
// unknown one.
absl::StatusOr<ExampleModelDataFile> ExampleModelData(std::string_view name);

// Eight schools, non-centred (Rubin 1981; MCMC.md): mu ~ normal(0, 5),
// tau ~ half-Cauchy(0, 5), eta ~ normal(0, 1), y ~ normal(mu + tau eta, sigma);
// generated quantities theta = mu + tau eta and the posterior predictive
// y_rep ~ normal(theta, sigma).
std::unique_ptr<mcmc::ProgramModel> EightSchoolsModel();

// Logistic regression, German-credit shaped: N = 1000 rows, K = 24 features,
// alpha, beta ~ normal(0, 2.5), y ~ bernoulli_logit(alpha + X beta); the
// hand-written target's priors and data (mcmc/model/targets/logistic_regression.h).
std::unique_ptr<mcmc::ProgramModel> LogisticRegressionModel();

// Varying intercepts, non-centred: N = 200 observations in J = 8 groups
// (g 1-based), y ~ normal(mu_alpha + tau alpha_raw[g], sigma).
std::unique_ptr<mcmc::ProgramModel> HierarchicalModel();

// AR(2), T = 100: y[t] ~ normal(alpha + beta1 y[t-1] + beta2 y[t-2], sigma),
// the log density a loop over t (Builder::While).
std::unique_ptr<mcmc::ProgramModel> Ar2Model();

// Two-component normal mixture, N = 200: ordered means mu, weight theta in
// (0, 1), one shared sigma.
std::unique_ptr<mcmc::ProgramModel> MixtureModel();

// Poisson regression with an exposure offset, N = 200, K = 3:
// y ~ poisson_log(log(exposure) + alpha + X beta).
std::unique_ptr<mcmc::ProgramModel> PoissonRegressionModel();

}  // namespace autobatch::samples

#endif  // AUTOBATCH_SAMPLES_MODELS_MODELS_H_
