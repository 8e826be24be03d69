// The example models by name (samples/models/models.h).
#include "samples/models/models.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace autobatch::samples {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<mcmc::ProgramModel> (*make)();
};

constexpr Entry kModels[] = {
    {"eight_schools", &EightSchoolsModel},
    {"logistic_regression", &LogisticRegressionModel},
    {"hierarchical", &HierarchicalModel},
    {"ar2", &Ar2Model},
    {"mixture", &MixtureModel},
    {"poisson_regression", &PoissonRegressionModel},
};

}  // namespace

std::vector<std::string> ExampleModelNames() {
  std::vector<std::string> names;
  for (const Entry& e : kModels) names.emplace_back(e.name);
  return names;
}

absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> MakeExampleModel(std::string_view name) {
  for (const Entry& e : kModels) {
    if (name == e.name) return e.make();
  }
  return absl::NotFoundError(absl::StrCat("no example model '", std::string(name),
                                          "'; the models are ",
                                          absl::StrJoin(ExampleModelNames(), ", ")));
}

}  // namespace autobatch::samples
