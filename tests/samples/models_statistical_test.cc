// Statistical tests of the example models (samples/models): whole runs with
// mcmc::Sample (8 chains, 1000 warmup and 1000 sampling iterations, fixed
// seeds) converge (split R-hat < 1.01 and bulk-ESS >= 400 for every
// parameter) and find the known posterior means where there are any.
//
// Error control. The comparisons with known posterior means form one family
// at a false-failure rate of kFamilyAlpha (Bonferroni z over all of them;
// each test checks its count): eight schools' reference means, and
// logistic regression against a long run of the hand-written target on the
// same data, and the synthetic models against long runs of their own
// (16 chains x 10 000 draws, tests/samples/data/model_reference_means.json,
// written by tools/make_model_references.sh); each bound combines both runs'
// MCSE. The synthetic models' posterior means are not known otherwise; a
// sanity bound checks them against the data-generating values too: each
// lies within kTruthSds posterior standard deviations of the posterior mean
// (a failure there means the model or the data are wrong, not a small bias).
//
// Cost (RelWithDebInfo, the shared 2-core machine, 2026-11-29, ctest wall
// time): 56 s in all, hence the `slow` label: logistic regression 30 s (most
// of it the hand-written target's 8 x 4000 reference draws), AR(2) 18 s (its
// log density is a loop of 98 steps), hierarchical 3.3 s, mixture 2.5 s,
// eight schools 1.4 s, Poisson regression 0.8 s.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "mcmc/model/targets/logistic_regression.h"
#include "mcmc/output/diagnostics.h"
#include "mcmc/sample.h"
#include "samples/models/models.h"

namespace autobatch::samples {
namespace {

using mcmc::ProgramModel;
using mcmc::SampleOptions;
using mcmc::SampleResult;

constexpr double kFamilyAlpha = 1e-3;
constexpr int kEightSchoolsComparisons = 2;
constexpr int kLogisticComparisons = 25;
// Every parameter of hierarchical (11), ar2 (4), mixture (4) and
// poisson_regression (4).
constexpr int kReferenceRunComparisons = 23;
constexpr int kMeanComparisons =
    kEightSchoolsComparisons + kLogisticComparisons + kReferenceRunComparisons;
constexpr double kMaxRhat = 1.01;
constexpr double kMinEss = 400;
constexpr double kTruthSds = 4;

double MeanZ() {
  static const double z = mcmc::InverseNormalCdf(1.0 - kFamilyAlpha / (2.0 * kMeanComparisons));
  return z;
}

std::unique_ptr<ProgramModel> LoadExample(const std::string& name) {
  absl::StatusOr<std::unique_ptr<ProgramModel>> model = MakeExampleModel(name);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return nullptr;
  const std::string path =
      std::string(AUTOBATCH_SOURCE_DIR "/samples/models/") + name + ".data.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const absl::Status loaded = (*model)->LoadData(text.str(), path);
  EXPECT_TRUE(loaded.ok()) << loaded;
  return loaded.ok() ? *std::move(model) : nullptr;
}

SampleOptions Options(uint64_t seed, double delta = 0.8, int64_t num_samples = 1000) {
  SampleOptions options;
  options.num_chains = 8;
  options.num_warmup = 1000;
  options.num_samples = num_samples;
  options.seed = seed;
  options.adaptation.delta = delta;
  return options;
}

const mcmc::SummaryRow& Row(const SampleResult& result, const std::string& column) {
  const Eigen::Index index = result.ColumnIndex(column);
  EXPECT_GE(index, 0) << column;
  return result.summary.at(static_cast<size_t>(std::max<Eigen::Index>(index, 0)));
}

// Every parameter column (after the sampler statistics): R-hat and ESS;
// prints the summary.
void ExpectConverged(const SampleResult& result) {
  std::printf("%s", mcmc::FormatSummary(result).c_str());
  for (size_t c = mcmc::kNumDrawStats; c < result.column_names.size(); ++c) {
    const mcmc::SummaryRow& row = result.summary[c];
    EXPECT_LT(row.rhat, kMaxRhat) << result.model_name << " " << result.column_names[c];
    EXPECT_GE(row.ess_bulk, kMinEss) << result.model_name << " " << result.column_names[c];
  }
}

void ExpectNearTruth(const SampleResult& result, const std::string& column, double truth) {
  const mcmc::SummaryRow& row = Row(result, column);
  std::printf("%s %s: mean %.4f sd %.4f truth %.4f (%.2f sd)\n", result.model_name.c_str(),
              column.c_str(), row.mean, row.stddev, truth, (row.mean - truth) / row.stddev);
  EXPECT_LE(std::abs(row.mean - truth), kTruthSds * row.stddev)
      << result.model_name << " " << column << ": mean " << row.mean << " sd " << row.stddev
      << " truth " << truth;
}

// The model's means against its long reference run (the file's columns,
// every parameter): |difference| <= z sqrt(mcse^2 + mcse_ref^2). Returns
// the number of comparisons.
int ExpectMatchesReferenceRun(const SampleResult& result, const std::string& name) {
  const std::string path =
      std::string(AUTOBATCH_SOURCE_DIR "/tests/samples/data/model_reference_means.json");
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  const nlohmann::json references = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(references.is_discarded()) << path << " is not JSON";
  if (references.is_discarded() || !references["models"].contains(name)) {
    ADD_FAILURE() << path << " has no reference run of " << name
                  << "; run tools/make_model_references.sh";
    return 0;
  }
  int comparisons = 0;
  double worst_z = 0;
  for (const auto& [column, ref] : references["models"][name].items()) {
    ++comparisons;
    const mcmc::SummaryRow& row = Row(result, column);
    const double mcse = std::hypot(row.mcse, ref["mcse"].get<double>());
    const double difference = row.mean - ref["mean"].get<double>();
    if (std::abs(difference / mcse) > std::abs(worst_z)) worst_z = difference / mcse;
    EXPECT_LE(std::abs(difference), MeanZ() * mcse)
        << name << " " << column << ": mean " << row.mean << " reference "
        << ref["mean"].get<double>() << " mcse " << mcse;
  }
  std::printf("%s: %d means against the reference run, worst z %.2f (bound %.2f)\n",
              name.c_str(), comparisons, worst_z, MeanZ());
  return comparisons;
}

TEST(ExampleModelsStatisticalTest, EightSchoolsFindsTheReferenceMeans) {
  std::unique_ptr<ProgramModel> model = LoadExample("eight_schools");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<SampleResult> result = mcmc::Sample(*model, Options(20261203, /*delta=*/0.95));
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConverged(*result);
  // Reference posterior means of the non-centred eight schools (posteriordb
  // eight_schools-eight_schools_noncentered: mu 4.39, tau 3.60), given to
  // two digits: the bound adds their rounding to z MCSE.
  const double kReferenceRounding = 0.05;
  int comparisons = 0;
  for (const auto& [column, reference] :
       std::vector<std::pair<std::string, double>>{{"mu", 4.4}, {"tau", 3.6}}) {
    ++comparisons;
    const mcmc::SummaryRow& row = Row(*result, column);
    std::printf("eight_schools %s: mean %.4f mcse %.4f reference %.2f (bound %.4f)\n",
                column.c_str(), row.mean, row.mcse, reference,
                MeanZ() * row.mcse + kReferenceRounding);
    EXPECT_LE(std::abs(row.mean - reference), MeanZ() * row.mcse + kReferenceRounding)
        << column << ": mean " << row.mean << " mcse " << row.mcse;
  }
  EXPECT_EQ(comparisons, kEightSchoolsComparisons);
}

// The program model against a long run of the hand-written target on the
// same posterior: |difference of means| <= z sqrt(mcse^2 + mcse_hand^2).
TEST(ExampleModelsStatisticalTest, LogisticRegressionMatchesTheHandWrittenTarget) {
  std::unique_ptr<ProgramModel> model = LoadExample("logistic_regression");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<SampleResult> result = mcmc::Sample(*model, Options(20261204));
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConverged(*result);

  absl::StatusOr<std::unique_ptr<mcmc::LogisticRegression>> hand =
      mcmc::LogisticRegression::Create({.rows = 1000, .features = 24});
  ASSERT_TRUE(hand.ok()) << hand.status();
  absl::StatusOr<SampleResult> reference =
      mcmc::Sample(**hand, Options(20261205, /*delta=*/0.8, /*num_samples=*/4000));
  ASSERT_TRUE(reference.ok()) << reference.status();
  int comparisons = 0;
  double worst_z = 0;
  for (size_t c = mcmc::kNumDrawStats; c < result->column_names.size(); ++c) {
    ++comparisons;
    const std::string& column = result->column_names[c];
    const mcmc::SummaryRow& row = result->summary[c];
    const mcmc::SummaryRow& ref = Row(*reference, column);
    const double mcse = std::hypot(row.mcse, ref.mcse);
    const double z = (row.mean - ref.mean) / mcse;
    if (std::abs(z) > std::abs(worst_z)) worst_z = z;
    EXPECT_LE(std::abs(row.mean - ref.mean), MeanZ() * mcse)
        << column << ": program " << row.mean << " hand-written " << ref.mean << " mcse " << mcse;
  }
  std::printf(
      "logistic_regression: %d means against the hand-written target, worst z %.2f "
      "(bound %.2f)\n",
      comparisons, worst_z, MeanZ());
  EXPECT_EQ(comparisons, kLogisticComparisons);
}

TEST(ExampleModelsStatisticalTest, HierarchicalMatchesItsReferenceRun) {
  std::unique_ptr<ProgramModel> model = LoadExample("hierarchical");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<SampleResult> result = mcmc::Sample(*model, Options(20261206, /*delta=*/0.9));
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConverged(*result);
  ExpectNearTruth(*result, "mu_alpha", 1.0);
  ExpectNearTruth(*result, "tau", 0.7);
  ExpectNearTruth(*result, "sigma", 1.0);
  EXPECT_EQ(ExpectMatchesReferenceRun(*result, "hierarchical"), 11);
}

TEST(ExampleModelsStatisticalTest, Ar2MatchesItsReferenceRun) {
  std::unique_ptr<ProgramModel> model = LoadExample("ar2");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<SampleResult> result = mcmc::Sample(*model, Options(20261207));
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConverged(*result);
  ExpectNearTruth(*result, "alpha", 0.5);
  ExpectNearTruth(*result, "beta.1", 0.6);
  ExpectNearTruth(*result, "beta.2", -0.3);
  ExpectNearTruth(*result, "sigma", 1.0);
  EXPECT_EQ(ExpectMatchesReferenceRun(*result, "ar2"), 4);
}

TEST(ExampleModelsStatisticalTest, MixtureMatchesItsReferenceRun) {
  std::unique_ptr<ProgramModel> model = LoadExample("mixture");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<SampleResult> result = mcmc::Sample(*model, Options(20261208));
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConverged(*result);
  ExpectNearTruth(*result, "mu.1", -1.5);
  ExpectNearTruth(*result, "mu.2", 2.0);
  ExpectNearTruth(*result, "theta", 0.35);
  ExpectNearTruth(*result, "sigma", 1.0);
  EXPECT_EQ(ExpectMatchesReferenceRun(*result, "mixture"), 4);
}

TEST(ExampleModelsStatisticalTest, PoissonRegressionMatchesItsReferenceRun) {
  std::unique_ptr<ProgramModel> model = LoadExample("poisson_regression");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<SampleResult> result = mcmc::Sample(*model, Options(20261209));
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConverged(*result);
  ExpectNearTruth(*result, "alpha", 0.5);
  ExpectNearTruth(*result, "beta.1", 0.3);
  ExpectNearTruth(*result, "beta.2", -0.2);
  ExpectNearTruth(*result, "beta.3", 0.1);
  EXPECT_EQ(ExpectMatchesReferenceRun(*result, "poisson_regression"), 4);
}

}  // namespace
}  // namespace autobatch::samples
