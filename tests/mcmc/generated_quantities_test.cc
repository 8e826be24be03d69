// Generated quantities of models written as programs (ProgramModel::
// AddGenerated / SetGeneratedQuantities): their values against the formula,
// the draws unchanged by them bit for bit, the same values at every batch,
// chunking and shard count, Stan's CSV names, model files, and mistakes as
// clear errors.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mcmc/chain_rng.h"
#include "mcmc/model/distributions.h"
#include "mcmc/model/model_json.h"
#include "mcmc/model/program_model.h"
#include "mcmc/output/stan_csv.h"
#include "mcmc/sample.h"
#include "tests/mcmc/batched_test_util.h"
#include "tests/mcmc/eight_schools_program.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

SampleOptions SmallRun() {
  SampleOptions options;
  options.num_chains = 6;
  options.num_warmup = 150;
  options.num_samples = 120;
  options.seed = 20261129;
  return options;
}

void ExpectSameColumns(const SampleResult& a, const SampleResult& b, Eigen::Index columns,
                       const std::string& what) {
  ASSERT_EQ(a.draws.size(), b.draws.size());
  for (size_t k = 0; k < a.draws.size(); ++k) {
    ASSERT_EQ(a.draws[k].rows(), b.draws[k].rows());
    for (Eigen::Index n = 0; n < a.draws[k].rows(); ++n) {
      for (Eigen::Index j = 0; j < columns; ++j) {
        ASSERT_TRUE(SameBits(a.draws[k](n, j), b.draws[k](n, j)))
            << what << ": chain " << k << ", draw " << n << ", column " << a.column_names[j];
      }
    }
  }
}

TEST(GeneratedQuantitiesTest, ValuesFollowTheFormulaAndTheDrawsDoNotChange) {
  std::unique_ptr<ProgramModel> with = EightSchoolsProgram(/*generated_quantities=*/true);
  std::unique_ptr<ProgramModel> without = EightSchoolsProgram();
  absl::StatusOr<SampleResult> a = Sample(*with, SmallRun());
  absl::StatusOr<SampleResult> b = Sample(*without, SmallRun());
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  // Parameters (and sampler statistics) first, bit for bit the same.
  ASSERT_EQ(a->column_names.size(), b->column_names.size() + 17);
  for (size_t j = 0; j < b->column_names.size(); ++j) {
    EXPECT_EQ(a->column_names[j], b->column_names[j]);
  }
  ExpectSameColumns(*a, *b, static_cast<Eigen::Index>(b->column_names.size()), "with vs without");
  // theta.j = mu + tau * eta.j, exactly (the same two operations).
  const Eigen::Index mu = a->ColumnIndex("mu"), tau = a->ColumnIndex("tau");
  const Eigen::Index eta1 = a->ColumnIndex("eta.1"), theta1 = a->ColumnIndex("theta.1");
  const Eigen::Index y_rep1 = a->ColumnIndex("y_rep.1"), k = a->ColumnIndex("k");
  ASSERT_GE(theta1, 0);
  ASSERT_GE(y_rep1, 0);
  ASSERT_GE(k, 0);
  const double sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
  double z_sum = 0, z2_sum = 0, count = 0;
  for (const Eigen::MatrixXd& draws : a->draws) {
    for (Eigen::Index n = 0; n < draws.rows(); ++n) {
      for (Eigen::Index j = 0; j < 8; ++j) {
        const double theta = draws(n, mu) + draws(n, tau) * draws(n, eta1 + j);
        EXPECT_EQ(draws(n, theta1 + j), theta);
        const double z = (draws(n, y_rep1 + j) - theta) / sigma[j];
        z_sum += z;
        z2_sum += z * z;
        ++count;
      }
      EXPECT_GE(draws(n, k), 0);
      EXPECT_EQ(draws(n, k), std::floor(draws(n, k)));
    }
  }
  // (y_rep - theta) / sigma are standard normals.
  EXPECT_NEAR(z_sum / count, 0.0, 4.5 / std::sqrt(count));
  EXPECT_NEAR(z2_sum / count, 1.0, 4.5 * std::sqrt(2.0 / count));
  // The summary has their rows too.
  EXPECT_EQ(a->summary.size(), a->column_names.size());
}

TEST(GeneratedQuantitiesTest, TheSameValuesAtEveryChunkingAndShardCount) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram(/*generated_quantities=*/true);
  absl::StatusOr<SampleResult> base = Sample(*model, SmallRun());
  ASSERT_TRUE(base.ok()) << base.status();
  SampleOptions chunked = SmallRun();
  chunked.num_chunks = 7;  // generated in 7 calls of other lanes
  chunked.call.shards = 3;
  absl::StatusOr<SampleResult> other = Sample(*model, chunked);
  ASSERT_TRUE(other.ok()) << other.status();
  ExpectSameColumns(*base, *other, static_cast<Eigen::Index>(base->column_names.size()),
                    "7 chunks, 3 shards");
  // GenerateBatch directly: all lanes at once, then one lane at a time.
  const int64_t lanes = 20, c = model->constrained_size();
  const int64_t g = static_cast<int64_t>(model->generated_names().size());
  std::vector<double> x(static_cast<size_t>(lanes * c));
  std::vector<uint64_t> keys(lanes), counters(lanes);
  for (int64_t l = 0; l < lanes; ++l) {
    for (int64_t j = 0; j < c; ++j) x[l * c + j] = 0.5 + 0.01 * static_cast<double>(l + j);
    const ChainRng rng = GeneratedQuantitiesRng(3, static_cast<uint64_t>(l % 4), l);
    keys[l] = rng.key;
    counters[l] = rng.counter;
  }
  std::vector<double> all(static_cast<size_t>(lanes * g)), one(static_cast<size_t>(g));
  ASSERT_TRUE(model
                  ->GenerateBatch({.lanes = lanes,
                                   .constrained = x.data(),
                                   .rng_keys = keys.data(),
                                   .rng_counters = counters.data()},
                                  all.data(), {})
                  .ok());
  for (int64_t l = 0; l < lanes; ++l) {
    ASSERT_TRUE(model
                    ->GenerateBatch({.lanes = 1,
                                     .constrained = x.data() + l * c,
                                     .rng_keys = &keys[l],
                                     .rng_counters = &counters[l]},
                                    one.data(), {})
                    .ok());
    for (int64_t j = 0; j < g; ++j) EXPECT_TRUE(SameBits(one[j], all[l * g + j])) << l << ", " << j;
  }
}

// An interrupted run keeps its draws' generated quantities: they are
// computed after the flag is set (their calls ignore it), the same values
// as an uninterrupted run's first draws.
TEST(GeneratedQuantitiesTest, AnInterruptedRunKeepsThem) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram(/*generated_quantities=*/true);
  SampleOptions options = SmallRun();
  options.num_chunks = 4;  // 30 draws each
  options.progress_interval_seconds = 0;
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  options.progress = [&](const SampleProgress& p) {
    if (p.phase == SamplePhase::kSampling) cancel.store(true);
  };
  absl::StatusOr<SampleResult> interrupted = Sample(*model, options);
  ASSERT_TRUE(interrupted.ok()) << interrupted.status();
  ASSERT_TRUE(interrupted->interrupted);
  ASSERT_EQ(interrupted->num_draws(), 30);
  SampleOptions reference_options = SmallRun();
  reference_options.num_samples = 30;
  absl::StatusOr<SampleResult> reference = Sample(*model, reference_options);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ExpectSameColumns(*interrupted, *reference,
                    static_cast<Eigen::Index>(reference->column_names.size()),
                    "interrupted vs 30 draws");
}

// With fused blocks, the generated quantities' program is compiled before
// warmup too (Model::PrepareGenerate): a compiler that cannot run fails the
// run before its first report, naming the generated quantities (it used to
// fail after sampling's first call).
TEST(GeneratedQuantitiesTest, FusedCodeIsCompiledBeforeWarmup) {
  const std::string cache = ::testing::TempDir() + "gq_fused_cache";
  std::filesystem::remove_all(cache);
  ASSERT_EQ(setenv("AUTOBATCH_JIT_CXX", "/nonexistent/c++", 1), 0);
  ASSERT_EQ(setenv("AUTOBATCH_CACHE_DIR", cache.c_str(), 1), 0);
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram(/*generated_quantities=*/true);
  SampleOptions options = SmallRun();
  options.call.jit_fused_blocks = true;
  int reports = 0;
  options.progress = [&](const SampleProgress&) { ++reports; };
  absl::StatusOr<SampleResult> result = Sample(*model, options);
  unsetenv("AUTOBATCH_JIT_CXX");
  unsetenv("AUTOBATCH_CACHE_DIR");
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("generated quantities: "));
  EXPECT_THAT(result.status().message(), HasSubstr("cannot run the C++ compiler"));
  EXPECT_EQ(reports, 0);
}

TEST(GeneratedQuantitiesTest, TheCsvHasStansNamesAfterTheParameters) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram(/*generated_quantities=*/true);
  SampleOptions options = SmallRun();
  options.num_chains = 2;
  absl::StatusOr<SampleResult> result = Sample(*model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string dir = ::testing::TempDir() + "gq_csv";
  std::filesystem::remove_all(dir);
  absl::StatusOr<std::vector<std::string>> paths = WriteChainCsvFiles(*result, dir, 17);
  ASSERT_TRUE(paths.ok()) << paths.status();
  absl::StatusOr<StanCsv> csv = ReadStanCsv(paths->front());
  ASSERT_TRUE(csv.ok()) << csv.status();
  const std::vector<std::string>& names = csv->column_names;
  const std::vector<std::string> tail(std::find(names.begin(), names.end(), "mu"), names.end());
  std::vector<std::string> want = {"mu", "tau"};
  for (const char* name : {"eta", "theta", "y_rep"}) {
    for (int i = 1; i <= 8; ++i) want.push_back(absl::StrCat(name, ".", i));
  }
  want.push_back("k");
  EXPECT_EQ(tail, want);
  const std::string summary = FormatSummary(*result);
  EXPECT_THAT(summary, HasSubstr("y_rep.8"));
}

// A model file carries the quantities and their program; sampling the
// loaded model gives the same draws and quantities bit for bit.
TEST(GeneratedQuantitiesTest, AModelFileCarriesThem) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram(/*generated_quantities=*/true);
  absl::StatusOr<nlohmann::json> json = ModelToJson(*model);
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_TRUE(json->contains("generated_quantities"));
  absl::StatusOr<std::unique_ptr<ProgramModel>> loaded = ModelFromJson(json->dump(), "m.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE((*loaded)->SetData(model->data()).ok());
  EXPECT_EQ(OutputColumnNames(**loaded), OutputColumnNames(*model));
  SampleOptions options = SmallRun();
  options.num_chains = 3;
  absl::StatusOr<SampleResult> a = Sample(*model, options);
  absl::StatusOr<SampleResult> b = Sample(**loaded, options);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectSameColumns(*a, *b, static_cast<Eigen::Index>(a->column_names.size()), "file");
  absl::StatusOr<nlohmann::json> again = ModelToJson(**loaded);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->dump(), json->dump());
  // Without the field: an old file, no quantities.
  nlohmann::json old = *json;
  old.erase("generated_quantities");
  absl::StatusOr<std::unique_ptr<ProgramModel>> plain = ModelFromJson(old.dump(), "old.json");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE((*plain)->generated_names().empty());
}

TEST(GeneratedQuantitiesTest, MalformedFileFieldsNameTheirPath) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram(/*generated_quantities=*/true);
  absl::StatusOr<nlohmann::json> json = ModelToJson(*model);
  ASSERT_TRUE(json.ok()) << json.status();
  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> edit;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"not an object", [](nlohmann::json& j) { j["generated_quantities"] = 3; },
       "m.json: generated_quantities: should be an object"},
      {"no quantities", [](nlohmann::json& j) { j["generated_quantities"].erase("quantities"); },
       "m.json: generated_quantities: missing field 'quantities'"},
      {"bad shape",
       [](nlohmann::json& j) { j["generated_quantities"]["quantities"][1]["shape"] = "8"; },
       "m.json: generated_quantities.quantities[1].shape: should be an array"},
      {"no program", [](nlohmann::json& j) { j["generated_quantities"].erase("program"); },
       "m.json: generated_quantities: missing field 'program'"},
      {"the log density as program",
       [](nlohmann::json& j) { j["generated_quantities"]["program"] = j["program"]; },
       "m.json: generated_quantities.program: its entry takes 3 inputs; "
       "generated quantities "
       "take x, rng_key, rng_counter then the 2 data variables (5)"},
      {"a quantity too many",
       [](nlohmann::json& j) {
         j["generated_quantities"]["quantities"].push_back(
             {{"name", "extra"}, {"shape", nlohmann::json::array()}});
       },
       "returns 3 values; the model declares 4 generated quantities"},
      {"a wrong shape",
       [](nlohmann::json& j) { j["generated_quantities"]["quantities"][0]["shape"] = {7}; },
       "generated quantity 'theta' is set to a value of type f64[8]; it is "
       "declared f64[7]"},
      {"a clashing name",
       [](nlohmann::json& j) { j["generated_quantities"]["quantities"][2]["name"] = "mu"; },
       "'mu' is declared twice"},
  };
  for (const Case& c : cases) {
    nlohmann::json edited = *json;
    c.edit(edited);
    absl::StatusOr<std::unique_ptr<ProgramModel>> loaded = ModelFromJson(edited.dump(), "m.json");
    ASSERT_FALSE(loaded.ok()) << c.what;
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(c.error)) << c.what;
  }
}

// A model with one scalar parameter and the body `body`.
absl::Status CheckWith(const std::function<void(ProgramModel&, ModelParameter)>& declare) {
  ProgramModel model("m");
  ModelParameter x = model.AddParameter("x");
  model.SetLogDensity([=](ModelTarget& target) { target += normal_lupdf(x(), 0.0, 1.0); });
  declare(model, x);
  if (absl::Status valid = model.Validate(); !valid.ok()) return valid;
  return model.CheckGenerated();
}

TEST(GeneratedQuantitiesTest, MistakesAreClearErrors) {
  struct Case {
    std::string what;
    std::function<void(ProgramModel&, ModelParameter)> declare;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"a quantity never set",
       [](ProgramModel& m, ModelParameter x) {
         ModelGenerated a = m.AddGenerated("a");
         m.AddGenerated("b");
         m.SetGeneratedQuantities([=](GeneratedQuantities& gq) { gq.Set(a, x() * 2.0); });
       },
       "model 'm': generated quantities: generated quantity 'b' is never set"},
      {"a name of a parameter",
       [](ProgramModel& m, ModelParameter x) {
         ModelGenerated a = m.AddGenerated("x");
         m.SetGeneratedQuantities([=](GeneratedQuantities& gq) { gq.Set(a, x()); });
       },
       "'x' is declared twice (a generated quantity needs a name of its own)"},
      {"a name twice",
       [](ProgramModel& m, ModelParameter x) {
         ModelGenerated a = m.AddGenerated("a");
         ModelGenerated b = m.AddGenerated("a");
         m.SetGeneratedQuantities([=](GeneratedQuantities& gq) {
           gq.Set(a, x());
           gq.Set(b, x());
         });
       },
       "'a' is declared twice"},
      {"a bad name", [](ProgramModel& m, ModelParameter) { m.AddGenerated("y rep"); },
       "generated quantity 'y rep': a name is a word of letters, digits and "
       "'_'"},
      {"a bad shape", [](ProgramModel& m, ModelParameter) { m.AddGenerated("a", {0}); },
       "generated quantity 'a' has shape [0]; a generated quantity is a "
       "scalar"},
      {"no body", [](ProgramModel& m, ModelParameter) { m.AddGenerated("a"); },
       "it declares generated quantities ('a', ...) but no body to compute "
       "them (call "
       "SetGeneratedQuantities)"},
      {"a body without quantities",
       [](ProgramModel& m, ModelParameter) {
         m.SetGeneratedQuantities([](GeneratedQuantities&) {});
       },
       "it has a generated-quantities body but declares no quantity (call "
       "AddGenerated)"},
      {"a vector set to a scalar",
       [](ProgramModel& m, ModelParameter x) {
         ModelGenerated a = m.AddGenerated("a", {3});
         m.SetGeneratedQuantities(
             [=](GeneratedQuantities& gq) { gq.Set(a, normal_rng(gq, x(), 1.0)); });
       },
       "generated quantity 'a' is set to a value of type f64; it is declared "
       "f64[3]"},
      {"a count",
       [](ProgramModel& m, ModelParameter x) {
         ModelGenerated a = m.AddGenerated("a");
         m.SetGeneratedQuantities(
             [=](GeneratedQuantities& gq) { gq.Set(a, poisson_rng(gq, exp(x()))); });
       },
       "generated quantity 'a' is set to a value of type i64; it is declared "
       "f64 (convert "
       "counts with cast(x, DType::kF64))"},
      {"another model's quantity",
       [](ProgramModel& m, ModelParameter x) {
         static ProgramModel other("other");
         static ModelGenerated foreign = other.AddGenerated("z");
         ModelGenerated a = m.AddGenerated("a");
         m.SetGeneratedQuantities([=](GeneratedQuantities& gq) {
           gq.Set(a, x());
           gq.Set(foreign, x());
         });
       },
       "generated_quantities_test.cc:"},
  };
  for (const Case& c : cases) {
    const absl::Status status = CheckWith(c.declare);
    ASSERT_FALSE(status.ok()) << c.what;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.error)) << c.what;
  }
  // Sample() checks before any work.
  ProgramModel model("m");
  ModelParameter x = model.AddParameter("x");
  model.SetLogDensity([=](ModelTarget& target) { target += normal_lupdf(x(), 0.0, 1.0); });
  ModelGenerated a = model.AddGenerated("a", {2});
  model.SetGeneratedQuantities([=](GeneratedQuantities& gq) { gq.Set(a, x()); });
  ASSERT_TRUE(model.SetData({}).ok());
  absl::StatusOr<SampleResult> result = Sample(model, SmallRun());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("generated quantity 'a' is set to a value of type f64; "
                        "it is declared "
                        "f64[2]"));
}

}  // namespace
}  // namespace autobatch::mcmc
