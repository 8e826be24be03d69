// Models written as programs: the log density and gradient against the
// hand-written target, the model linked into the batched samplers (no
// kernel), and every chain bit-identical to the scalar sampler on the same
// program.
#include "mcmc/model/program_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/json.h"
#include "ir/printer.h"
#include "mcmc/model/distributions.h"
#include "mcmc/model/model_json.h"
#include "mcmc/model/targets/eight_schools.h"
#include "mcmc/output/stan_csv.h"
#include "mcmc/sample.h"
#include "tests/mcmc/batched_test_util.h"
#include "tests/mcmc/eight_schools_program.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Differences of the log density between points (the hand-written target
// drops constants the lupdf forms keep) and gradients agree.
TEST(ProgramModelTest, EightSchoolsAgreesWithTheHandWrittenTarget) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  std::unique_ptr<Model> hand = EightSchools::Create();
  ASSERT_EQ(model->dimension(), hand->dimension());
  const int64_t d = model->dimension();
  const int64_t points = 1000;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> uniform(-3, 3);
  std::vector<double> q(static_cast<size_t>(points * d));
  for (double& x : q) x = uniform(rng);
  ExpectSameDensityUpToAConstant(*model, *hand, q, points);
  std::vector<double> logp(points), grad(q.size());
  model->LogDensityGradientBatch(q.data(), logp.data(), grad.data(), points, nullptr);
  // One point, one lane at a time: the same bits as the batch.
  std::vector<double> g1(static_cast<size_t>(d));
  const double l1 = model->LogDensityGradient({q.data() + 5 * d, static_cast<size_t>(d)}, g1);
  EXPECT_TRUE(SameBits(l1, logp[5]));
  for (int64_t i = 0; i < d; ++i) EXPECT_TRUE(SameBits(g1[i], grad[5 * d + i]));
}

TEST(ProgramModelTest, TheSamplerLinksTheModelInsteadOfCallingAKernel) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*model, Algorithm::kNuts, SamplerConfig{});
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  const Program& program = (*sampler)->program();
  const std::string text = PrintProgram(program);
  EXPECT_THAT(text, HasSubstr("func @eight_schools.log_density.grad("));
  EXPECT_THAT(text, Not(HasSubstr(kLogDensityKernelName)));
  // The data are the program's last inputs, uniform.
  const Function& entry = program.module.function(program.entry);
  ASSERT_GE(entry.params.size(), 2u);
  EXPECT_EQ(program.module.var(entry.params[entry.params.size() - 2]).name, "y");
  EXPECT_TRUE(program.module.var(entry.params.back()).uniform);
}

TEST(ProgramModelTest, EveryChainMatchesTheScalarSamplerOnTheSameProgram) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  SamplerConfig config;
  config.step_size = 0.3;
  const uint64_t seed = 20261129;
  const std::vector<uint64_t> ids = ChainIds(24);
  const int64_t num_draws = 8;
  absl::StatusOr<std::vector<ScalarChainResult>> scalar =
      RunScalarChains(*model, config, seed, ids, num_draws);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::map<uint64_t, ScalarChainResult> oracle = ByChainId(*std::move(scalar));
  std::set<int> depths;
  for (const auto& [id, r] : oracle) {
    for (const DrawStats& s : r.stats) depths.insert(s.treedepth);
  }
  EXPECT_GE(depths.size(), 2u);

  absl::StatusOr<std::vector<BatchedChain>> all = MakeBatchedChains(*model, config, seed, ids);
  ASSERT_TRUE(all.ok()) << all.status();
  for (Algorithm algorithm : {Algorithm::kNuts, Algorithm::kHmc, Algorithm::kRwmh}) {
    absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
        BatchedSampler::Create(*model, algorithm, config);
    ASSERT_TRUE(sampler.ok()) << sampler.status();
    std::map<uint64_t, ScalarChainResult> expected = oracle;
    if (algorithm != Algorithm::kNuts) {
      // The scalar reference of this algorithm on the same program.
      ScalarRunOptions options;
      options.algorithm = algorithm;
      absl::StatusOr<std::vector<ScalarChainResult>> ref =
          RunScalarChains(*model, config, seed, ids, num_draws, options);
      ASSERT_TRUE(ref.ok()) << ref.status();
      expected = ByChainId(*std::move(ref));
    }
    std::vector<VmCase> vms = BatchedVms();
    CallOptions sharded;
    sharded.vm = Vm::kStack;
    sharded.shards = 3;  // each shard holds its copy of the data
    vms.push_back({"stack/3 shards", sharded});
    for (int batch : {1, 7, 24}) {
      std::vector<BatchedChain> chains(all->begin(), all->begin() + batch);
      for (const VmCase& vm : vms) {
        const std::string where = std::string(AlgorithmName(algorithm)) + ", batch " +
                                  std::to_string(batch) + ", " + vm.name;
        absl::StatusOr<BatchedRunResult> run = (*sampler)->Run(chains, num_draws, vm.options);
        ASSERT_TRUE(run.ok()) << where << ": " << run.status();
        for (size_t k = 0; k < chains.size(); ++k) {
          ExpectSameChain(run->chains[k], expected.at(chains[k].chain_id), where);
        }
      }
    }
  }
}

// A model saved to a file and loaded back (its log density's IR, imported
// into the sampler's Context and differentiated again) gives the same
// chains, bit for bit, as the model defined in C++.
TEST(ProgramModelTest, AModelFileSamplesLikeItsCppModel) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  absl::StatusOr<nlohmann::json> json = ModelToJson(*model);
  ASSERT_TRUE(json.ok()) << json.status();
  absl::StatusOr<std::unique_ptr<ProgramModel>> loaded = ModelFromJson(json->dump(), "m.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE((*loaded)->SetData(model->data()).ok());
  EXPECT_EQ(OutputColumnNames(**loaded), OutputColumnNames(*model));
  SamplerConfig config;
  config.step_size = 0.3;
  const std::vector<uint64_t> ids = ChainIds(8);
  absl::StatusOr<BatchedRunResult> a = RunBatchedChains(*model, config, 7, ids, 6);
  absl::StatusOr<BatchedRunResult> b = RunBatchedChains(**loaded, config, 7, ids, 6);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t k = 0; k < ids.size(); ++k) ExpectSameChain(b->chains[k], a->chains[k], "file");
  // Writing the loaded model gives the same file.
  absl::StatusOr<nlohmann::json> again = ModelToJson(**loaded);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->dump(), json->dump());
}

TEST(ProgramModelTest, BadModelFilesAreClearErrors) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  const nlohmann::json good = *ModelToJson(*model);
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const Case cases[] = {
      {[](nlohmann::json& j) { j["format"] = "autobatch-ir"; },
       "m.json: format: is 'autobatch-ir'; a model file says 'autobatch-model'"},
      {[](nlohmann::json& j) { j["version"] = 2; },
       "m.json: version: is 2; this reader reads version 1"},
      {[](nlohmann::json& j) { j.erase("parameters"); },
       "m.json: (top level): missing field 'parameters'"},
      {[](nlohmann::json& j) { j["parameters"][1]["transform"]["kind"] = "positive"; },
       "m.json: parameters[1].transform.kind: unknown transform 'positive'"},
      {[](nlohmann::json& j) { j["parameters"][1]["transform"].erase("lower"); },
       "m.json: parameters[1].transform: missing field 'lower'"},
      {[](nlohmann::json& j) { j["data"][0]["dtype"] = "f16"; },
       "m.json: data[0].dtype: unknown dtype 'f16'"},
      {[](nlohmann::json& j) { j["data"].erase(1); },
       "m.json: program: its entry takes 3 inputs; a log density takes q then the 1 data"},
      {[](nlohmann::json& j) { j["program"]["stage"] = "bogus"; }, "m.json: program: "},
  };
  for (const Case& c : cases) {
    nlohmann::json j = good;
    c.edit(j);
    absl::StatusOr<std::unique_ptr<ProgramModel>> loaded = ModelFromJson(j.dump(), "m.json");
    ASSERT_FALSE(loaded.ok()) << c.message;
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(c.message));
  }
  absl::StatusOr<std::unique_ptr<ProgramModel>> not_json = ModelFromJson("{", "m.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_THAT(std::string(not_json.status().message()), HasSubstr("m.json: "));

  // A log density that calls a user kernel cannot be a file: its code would
  // be missing.
  Context ctx;
  Kernel twice =
      ctx.RegisterKernel("twice", KernelSignature{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}},
                         [](const KernelCall&) { return absl::OkStatus(); });
  BatchFunction f = ctx.Batch(
      "k.log_density", {.param_names = {"q", "y", "sigma"}, .uniform_params = {"y", "sigma"}})(
      [&](Builder&, Value q, Value, Value) { return twice(reduce_sum(q)); });
  absl::StatusOr<Program> with_kernel = ctx.Program(f);
  ASSERT_TRUE(with_kernel.ok()) << with_kernel.status();
  nlohmann::json j = good;
  j["program"] = ProgramToJson(*with_kernel);
  absl::StatusOr<std::unique_ptr<ProgramModel>> refused = ModelFromJson(j.dump(), "m.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("calls user kernel 'twice'"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("an imported program is IR only"));
}

// A simplex of K values has K - 1 unconstrained coordinates but K columns:
// Sample() and the Stan CSV files carry the constrained values.
TEST(ProgramModelTest, ASimplexHasKColumnsInTheCsvFiles) {
  ProgramModel model("proportions");
  ModelParameter theta = model.AddParameter("theta", {3}, Transform::Simplex());
  ModelData counts = model.AddData({.name = "counts", .dtype = DType::kI64, .shape = {3}});
  model.SetLogDensity([=](ModelTarget& target) {
    // Multinomial counts: sum_k counts_k log(theta_k), a Dirichlet(2) prior.
    target += dirichlet_lpdf(theta(), broadcast(Value(2.0), {3}));
    target += reduce_sum(cast(counts(), DType::kF64) * log(theta()));
  });
  ASSERT_TRUE(model.LoadData(R"({"counts": [20, 30, 50]})", "counts.json").ok());
  EXPECT_EQ(model.dimension(), 2);
  EXPECT_EQ(model.constrained_size(), 3);
  SampleOptions options;
  options.num_chains = 2;
  options.num_warmup = 200;
  options.num_samples = 200;
  absl::StatusOr<SampleResult> result = Sample(model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string dir = ::testing::TempDir() + "simplex_csv";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  absl::StatusOr<std::vector<std::string>> paths = WriteChainCsvFiles(*result, dir, 17);
  ASSERT_TRUE(paths.ok()) << paths.status();
  absl::StatusOr<StanCsv> csv = ReadStanCsv(paths->front());
  ASSERT_TRUE(csv.ok()) << csv.status();
  const std::vector<std::string>& names = csv->column_names;
  const auto first = std::find(names.begin(), names.end(), "theta.1");
  ASSERT_NE(first, names.end());
  ASSERT_LE(first + 3, names.end());
  EXPECT_EQ(*(first + 2), "theta.3");
  const size_t column = static_cast<size_t>(first - names.begin());
  double mean3 = 0;
  const Eigen::MatrixXd& draws = csv->draws;
  ASSERT_EQ(draws.rows(), 200);
  const auto c = static_cast<Eigen::Index>(column);
  for (Eigen::Index n = 0; n < draws.rows(); ++n) {
    EXPECT_NEAR(draws(n, c) + draws(n, c + 1) + draws(n, c + 2), 1.0, 1e-12);
    mean3 += draws(n, c + 2) / static_cast<double>(draws.rows());
  }
  // Posterior Dirichlet(22, 32, 52): E[theta_3] = 52 / 106.
  EXPECT_NEAR(mean3, 52.0 / 106.0, 0.03);
}

TEST(ProgramModelTest, MistakesAreClearErrors) {
  ProgramModel empty("bad name");
  EXPECT_THAT(std::string(empty.Validate().message()),
              HasSubstr("the model name 'bad name' is not a word of letters, digits and '_'"));
  EXPECT_THAT(std::string(empty.Validate().message()), HasSubstr("it declares no parameter"));
  EXPECT_THAT(std::string(empty.Validate().message()),
              HasSubstr("it has no log density (call SetLogDensity)"));

  ProgramModel twice("m");
  twice.AddParameter("x");
  twice.AddParameter("x", {2, 3});
  twice.AddData({.name = "x"});
  twice.SetLogDensity([](ModelTarget&) {});
  const std::string message(twice.Validate().message());
  EXPECT_THAT(message, HasSubstr("'x' is declared twice"));
  EXPECT_THAT(message, HasSubstr("parameter 'x' has shape [2, 3]; a parameter is a scalar"));

  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  absl::Status wrong = model->SetData(
      {*Tensor::FromVector<double>({1, 2, 3}, {3}), *Tensor::FromVector<double>({1.0}, {})});
  EXPECT_THAT(std::string(wrong.message()),
              HasSubstr("model 'eight_schools': data 'y' is f64[3] x 1 lanes; it is declared "
                        "f64[8] (one lane)"));
  absl::Status bad_json = model->LoadData(R"({"y": [1, 2]})", "d.json");
  EXPECT_THAT(std::string(bad_json.message()), HasSubstr("d.json"));

  ProgramModel no_data("no_data");
  no_data.AddParameter("x");
  no_data.AddData({.name = "y"});
  no_data.SetLogDensity([](ModelTarget&) {});
  std::vector<double> g(1);
  EXPECT_TRUE(std::isnan(no_data.LogDensityGradient(std::vector<double>{0.0}, g)));
  EXPECT_THAT(std::string(no_data.last_error().message()),
              HasSubstr("model 'no_data': no data (call SetData or LoadData first)"));
  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(no_data, Algorithm::kNuts, SamplerConfig{});
  ASSERT_FALSE(sampler.ok());
  EXPECT_THAT(std::string(sampler.status().message()),
              HasSubstr("model 'no_data' has no data: call SetData or LoadData"));
}

// Stan's `int N; int K; matrix[N, K] X; vector[N] y; vector[K] beta;`:
// the sizes come from the data, which may change.
std::unique_ptr<ProgramModel> RegressionWithDataSizes() {
  auto model = std::make_unique<ProgramModel>("regression");
  ModelParameter beta = model->AddParameter("beta", {"K"});
  ModelParameter sigma = model->AddParameter("sigma", {}, Transform::LowerBound(0));
  model->AddData({.name = "N", .dtype = DType::kI64, .lower = 0});
  model->AddData({.name = "K", .dtype = DType::kI64, .lower = 0});
  ModelData x = model->AddData({.name = "X", .shape = {"N", "K"}});
  ModelData y = model->AddData({.name = "y", .shape = {"N"}});
  model->SetLogDensity([=](ModelTarget& target) {
    target += normal_lupdf(beta(), 0.0, 1.0);
    target += normal_lupdf(sigma(), 0.0, 1.0);
    target += normal_lupdf(y(), matvec_input(x(), beta()), sigma());
  });
  return model;
}

TEST(ProgramModelSizesTest, SizesComeFromTheDataAndMayChange) {
  std::unique_ptr<ProgramModel> model = RegressionWithDataSizes();
  ASSERT_TRUE(model->Validate().ok()) << model->Validate();
  // Before the data: a named extent counts as 0, and the log density needs
  // the data.
  EXPECT_EQ(model->dimension(), 1);
  EXPECT_EQ(model->parameter_shapes()[0], (std::vector<Extent>{"K"}));
  Context ctx;
  absl::StatusOr<ProgramModel::Linked> unlinked = model->Link(ctx);
  EXPECT_EQ(unlinked.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(unlinked.status().message()),
              HasSubstr("parameter 'beta' has shape [K] from the data; set the data"));
  std::vector<double> q1(1), g1(1);
  EXPECT_TRUE(std::isnan(model->LogDensityGradient(q1, g1)));
  SampleOptions before;
  before.num_chains = 1;
  before.num_warmup = 10;
  before.num_samples = 10;
  absl::StatusOr<SampleResult> no_data = Sample(*model, before);
  EXPECT_FALSE(no_data.ok());
  EXPECT_THAT(std::string(no_data.status().message()), HasSubstr("model 'regression'"));

  ASSERT_TRUE(model
                  ->LoadData(R"({"N": 3, "K": 2, "X": [[1, 0], [0, 1], [1, 1]],
                                   "y": [0.5, -0.5, 0.1]})",
                             "a.json")
                  .ok());
  EXPECT_EQ(model->dimension(), 3);
  EXPECT_EQ(OutputColumnNames(*model), (std::vector<std::string>{"beta.1", "beta.2", "sigma"}));
  std::vector<double> q(3, 0.1), grad(3);
  EXPECT_TRUE(std::isfinite(model->LogDensityGradient(q, grad))) << model->last_error();

  // Data of other sizes: the programs are rebuilt.
  ASSERT_TRUE(model->LoadData(R"({"N": 1, "K": 3, "X": [[1, 2, 3]], "y": [0.5]})", "b.json").ok());
  EXPECT_EQ(model->dimension(), 4);
  std::vector<double> q4(4, 0.1), grad4(4);
  EXPECT_TRUE(std::isfinite(model->LogDensityGradient(q4, grad4))) << model->last_error();
  SampleOptions options;
  options.num_chains = 2;
  options.num_warmup = 100;
  options.num_samples = 50;
  absl::StatusOr<SampleResult> result = Sample(*model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(std::find(result->column_names.begin(), result->column_names.end(), "beta.3"),
            result->column_names.end());
  EXPECT_EQ(std::find(result->column_names.begin(), result->column_names.end(), "beta.4"),
            result->column_names.end());
}

TEST(ProgramModelSizesTest, BadSizesAreClearErrors) {
  std::unique_ptr<ProgramModel> model = RegressionWithDataSizes();
  // A parameter of no element.
  const absl::Status zero = model->LoadData(R"({"N": 0, "K": 0, "X": [], "y": []})", "zero.json");
  EXPECT_THAT(std::string(zero.message()),
              HasSubstr("model 'regression': parameter 'beta' has extent 'K', which is 0; a "
                        "parameter vector has at least one element"));
  EXPECT_FALSE(model->has_data());
  // SetData: a negative size, a size that is not an i64 scalar.
  Tensor n = *Tensor::FromVector<int64_t>({-1}, {});
  Tensor k = *Tensor::FromVector<int64_t>({1}, {});
  const absl::Status negative = model->SetData(
      {n, k, Tensor(TensorType{DType::kF64, {0, 1}}, 1), Tensor(TensorType{DType::kF64, {0}}, 1)});
  EXPECT_THAT(std::string(negative.message()),
              HasSubstr("data 'X' has extent 'N', which is -1; a size must be non-negative"));
  const absl::Status wrong_size = model->SetData(
      {k, k, *Tensor::FromVector<double>({1, 2}, {2, 1}), *Tensor::FromVector<double>({1}, {1})});
  EXPECT_THAT(std::string(wrong_size.message()),
              HasSubstr("data 'X' is f64[2,1] x 1 lanes; it is declared f64[1,1]"));

  // Declarations naming a missing size, one declared later, a real.
  ProgramModel bad("bad");
  bad.AddParameter("theta", {"M"});
  bad.AddData({.name = "y", .shape = {"N"}});
  bad.AddData({.name = "N", .dtype = DType::kI64});
  bad.AddData({.name = "s"});
  bad.AddParameter("phi", {"s"});
  bad.SetLogDensity([](ModelTarget&) {});
  const std::string message(bad.Validate().message());
  EXPECT_THAT(message, HasSubstr("parameter 'theta' has extent 'M', but no data variable is "
                                 "named 'M'"));
  EXPECT_THAT(message, HasSubstr("('y') has extent 'N', but 'N' is declared after it"));
  EXPECT_THAT(message, HasSubstr("parameter 'phi' has extent 's', but 's' is f64[]; a size is "
                                 "an i64 scalar"));
}

// A model file keeps the data's size names: it reads data of any size.
TEST(ProgramModelSizesTest, AModelFileKeepsTheSizeNames) {
  ProgramModel model("means");
  ModelParameter mu = model.AddParameter("mu");
  model.AddData({.name = "N", .dtype = DType::kI64, .lower = 0});
  ModelData y = model.AddData({.name = "y", .shape = {"N"}});
  model.SetLogDensity([=](ModelTarget& target) { target += normal_lupdf(y(), mu(), 1.0); });
  absl::StatusOr<nlohmann::json> json = ModelToJson(model);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ((*json)["data"][1]["shape"], nlohmann::json::array({"N"}));
  absl::StatusOr<std::unique_ptr<ProgramModel>> loaded = ModelFromJson(json->dump(), "m.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (const char* data : {R"({"N": 2, "y": [1, 2]})", R"({"N": 4, "y": [1, 2, 3, 4]})"}) {
    ASSERT_TRUE((*loaded)->LoadData(data, "d.json").ok());
    ASSERT_TRUE(model.LoadData(data, "d.json").ok());
    std::vector<double> q = {0.3}, g1(1), g2(1);
    EXPECT_EQ((*loaded)->LogDensityGradient(q, g1), model.LogDensityGradient(q, g2))
        << (*loaded)->last_error();
    EXPECT_EQ(g1, g2);
  }
  // A bad extent in a file names its path.
  nlohmann::json bad = *json;
  bad["data"][1]["shape"] = nlohmann::json::array({true});
  absl::StatusOr<std::unique_ptr<ProgramModel>> refused = ModelFromJson(bad.dump(), "m.json");
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("m.json: data[1].shape[0]: should be an integer extent "
                        "or the name of a "
                        "size variable"));
  bad["data"][1]["shape"] = nlohmann::json::array({"M"});
  refused = ModelFromJson(bad.dump(), "m.json");
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("has extent 'M', but no data variable is named 'M'"));
  // Parameter sizes from the data: the file is written for the data set.
  std::unique_ptr<ProgramModel> regression = RegressionWithDataSizes();
  absl::StatusOr<nlohmann::json> no_data = ModelToJson(*regression);
  EXPECT_EQ(no_data.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(no_data.status().message()),
              HasSubstr("a model file fixes the parameters' sizes"));
}

}  // namespace
}  // namespace autobatch::mcmc
