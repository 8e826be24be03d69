// The example models by name (samples/models/models.h).
#include "samples/models/models.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/status.h"

namespace autobatch::samples {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<mcmc::ProgramModel> (*make)();
  const char* summary;
};

constexpr Entry kModels[] = {
    {"eight_schools", &EightSchoolsModel,
     "the non-centred eight schools hierarchical model, with theta and posterior "
     "predictive y_rep generated"},
    {"logistic_regression", &LogisticRegressionModel,
     "logistic regression on German-credit shaped data: 1000 rows, 24 features"},
    {"hierarchical", &HierarchicalModel,
     "varying intercepts, non-centred: 200 observations in 8 groups"},
    {"ar2", &Ar2Model, "AR(2) time series of 100 points; its log density is a loop"},
    {"mixture", &MixtureModel,
     "two-component normal mixture of 200 points, ordered means"},
    {"poisson_regression", &PoissonRegressionModel,
     "Poisson regression with an exposure offset: 200 rows, 3 features"},
};

}  // namespace

std::vector<std::string> ExampleModelNames() {
  std::vector<std::string> names;
  for (const Entry& e : kModels) names.emplace_back(e.name);
  return names;
}

std::vector<ExampleModelInfo> ExampleModelInfos() {
  std::vector<ExampleModelInfo> infos;
  for (const Entry& e : kModels) infos.push_back({e.name, e.summary});
  return infos;
}

namespace {

// The table's entry called `name`, or NotFound listing the names.
absl::StatusOr<const Entry*> FindEntry(std::string_view name) {
  for (const Entry& e : kModels) {
    if (name == e.name) return &e;
  }
  return absl::NotFoundError(absl::StrCat("no example model '", std::string(name),
                                          "'; the models are ",
                                          absl::StrJoin(ExampleModelNames(), ", ")));
}

}  // namespace

absl::StatusOr<std::unique_ptr<mcmc::ProgramModel>> MakeExampleModel(std::string_view name) {
  AB_ASSIGN_OR_RETURN(const Entry* entry, FindEntry(name));
  return entry->make();
}

absl::StatusOr<ExampleModelDataFile> ExampleModelData(std::string_view name) {
  AB_RETURN_IF_ERROR(FindEntry(name).status());
  const std::string path = absl::StrCat("samples/models/", std::string(name), ".data.json");
  for (const ExampleModelDataFile& file : ExampleModelDataFiles()) {
    if (file.path == path) return file;
  }
  AB_CHECK(false, "an example model has no data set built in (samples/models/CMakeLists.txt)");
}

}  // namespace autobatch::samples
