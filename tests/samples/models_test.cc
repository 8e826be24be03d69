// The example models of samples/models: each validates and loads its data
// file, its compiler-written gradient matches central finite differences, and
// NUTS chains on it are bit-identical to the scalar sampler on the same
// program, and its model file samples like it; logistic regression is the hand-written target's posterior.
#include "samples/models/models.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mcmc/model/gradient_check.h"
#include "mcmc/model/model_json.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "tests/mcmc/batched_test_util.h"

namespace autobatch::samples {
namespace {

using mcmc::ProgramModel;

std::string DataPath(const std::string& name) {
  return std::string(AUTOBATCH_SOURCE_DIR "/samples/models/") + name + ".data.json";
}

// The model `name` with its data file loaded (failures reported, nullptr).
std::unique_ptr<ProgramModel> LoadExample(const std::string& name) {
  absl::StatusOr<std::unique_ptr<ProgramModel>> model = MakeExampleModel(name);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return nullptr;
  std::ifstream in(DataPath(name));
  EXPECT_TRUE(in.good()) << "cannot read " << DataPath(name);
  std::stringstream text;
  text << in.rdbuf();
  const absl::Status loaded = (*model)->LoadData(text.str(), DataPath(name));
  EXPECT_TRUE(loaded.ok()) << loaded;
  return loaded.ok() ? *std::move(model) : nullptr;
}

// Points uniform in (-2, 2) on the unconstrained scale, Stan's initial range.
std::vector<double> RandomPoints(int64_t points, int64_t dimension, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-2, 2);
  std::vector<double> q(static_cast<size_t>(points * dimension));
  for (double& x : q) x = uniform(rng);
  return q;
}

TEST(ExampleModelsTest, TheTableNamesEveryModelAndRefusesOthers) {
  EXPECT_THAT(ExampleModelNames(),
              ::testing::ElementsAre("eight_schools", "logistic_regression", "hierarchical", "ar2",
                                     "mixture", "poisson_regression"));
  absl::StatusOr<std::unique_ptr<ProgramModel>> missing = MakeExampleModel("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              ::testing::HasSubstr("no example model 'nope'; the models are eight_schools, "));
  absl::StatusOr<ExampleModelDataFile> no_data = ExampleModelData("nope");
  ASSERT_FALSE(no_data.ok());
  EXPECT_THAT(std::string(no_data.status().message()),
              ::testing::HasSubstr("no example model 'nope'"));
  EXPECT_EQ(ExampleModelDataFiles().size(), ExampleModelNames().size());
}

// `autobatch targets` prints each model with its one-line summary.
TEST(ExampleModelsTest, EveryModelHasASummary) {
  const std::vector<ExampleModelInfo> infos = ExampleModelInfos();
  ASSERT_EQ(infos.size(), ExampleModelNames().size());
  for (size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ(infos[i].name, ExampleModelNames()[i]);
    EXPECT_FALSE(infos[i].summary.empty()) << infos[i].name;
    EXPECT_EQ(infos[i].summary.find('\n'), std::string::npos) << infos[i].name;
  }
}

class ExampleModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleModelTest, ValidatesAndLoadsItsDataFile) {
  absl::StatusOr<std::unique_ptr<ProgramModel>> model = MakeExampleModel(GetParam());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name(), GetParam());
  EXPECT_TRUE((*model)->Validate().ok()) << (*model)->Validate();
  std::unique_ptr<ProgramModel> loaded = LoadExample(GetParam());
  ASSERT_NE(loaded, nullptr);
  EXPECT_TRUE(loaded->has_data());
  // The data file is exactly what WriteData writes for the data read from
  // it (make_model_data.cc's format), so regenerating it changes nothing.
  std::ifstream in(DataPath(GetParam()));
  std::stringstream text;
  text << in.rdbuf();
  if (GetParam() != "eight_schools") {  // hand-written, with integer reals
    EXPECT_EQ(mcmc::WriteData(loaded->data_specs(), loaded->data()), text.str());
  }
  // The library carries the same bytes (an example model needs no --data).
  absl::StatusOr<ExampleModelDataFile> built_in = ExampleModelData(GetParam());
  ASSERT_TRUE(built_in.ok()) << built_in.status();
  EXPECT_EQ(built_in->path, "samples/models/" + GetParam() + ".data.json");
  EXPECT_EQ(built_in->text, text.str());
}

// The compiler's gradient against central differences of the log density,
// at points where it is finite. The finite difference carries a rounding
// error of about |log density| 1e-16 / epsilon, hence the absolute bound.
TEST_P(ExampleModelTest, GradientMatchesFiniteDifferences) {
  std::unique_ptr<ProgramModel> model = LoadExample(GetParam());
  ASSERT_NE(model, nullptr);
  const int64_t d = model->dimension();
  const int64_t points = 6;
  const std::vector<double> q = RandomPoints(points, d, 20261201);
  std::vector<double> grad(static_cast<size_t>(d));
  for (int64_t p = 0; p < points; ++p) {
    const std::span<const double> at(q.data() + p * d, static_cast<size_t>(d));
    const double logp = model->LogDensityGradient(at, grad);
    ASSERT_TRUE(std::isfinite(logp)) << "point " << p << ": " << model->last_error();
    mcmc::GradientCheckOptions options;
    options.abs_tol = 1e-6 * (1 + 1e-2 * std::abs(logp));
    const absl::Status check = mcmc::CheckGradient(*model, at, options);
    EXPECT_TRUE(check.ok()) << "point " << p << ": " << check;
  }
}

// NUTS on the batched VMs, all chains together and one at a time, against
// the scalar sampler on the same program: every draw and statistic.
TEST_P(ExampleModelTest, NutsChainsAreBitIdenticalToTheScalarSampler) {
  std::unique_ptr<ProgramModel> model = LoadExample(GetParam());
  ASSERT_NE(model, nullptr);
  mcmc::SamplerConfig config;
  config.step_size = 0.05;
  const uint64_t seed = 20261202;
  const std::vector<uint64_t> ids = mcmc::ChainIds(6);
  const int64_t num_draws = 4;
  absl::StatusOr<std::vector<mcmc::ScalarChainResult>> scalar =
      mcmc::RunScalarChains(*model, config, seed, ids, num_draws);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::map<uint64_t, mcmc::ScalarChainResult> oracle = mcmc::ByChainId(*std::move(scalar));
  absl::StatusOr<std::vector<mcmc::BatchedChain>> all =
      mcmc::MakeBatchedChains(*model, config, seed, ids);
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<std::unique_ptr<mcmc::BatchedSampler>> sampler =
      mcmc::BatchedSampler::Create(*model, mcmc::Algorithm::kNuts, config);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  for (int batch : {1, 6}) {
    std::vector<mcmc::BatchedChain> chains(all->begin(), all->begin() + batch);
    for (const mcmc::VmCase& vm : mcmc::BatchedVms()) {
      const std::string where = "batch " + std::to_string(batch) + ", " + vm.name;
      absl::StatusOr<mcmc::BatchedRunResult> run = (*sampler)->Run(chains, num_draws, vm.options);
      ASSERT_TRUE(run.ok()) << where << ": " << run.status();
      for (size_t k = 0; k < chains.size(); ++k) {
        mcmc::ExpectSameChain(run->chains[k], oracle.at(chains[k].chain_id), where);
      }
    }
  }
}

// Dumped to a model file (IR JSON with the declarations) and read back,
// each model samples like its C++ definition, bit for bit, with the same
// columns; writing the loaded model gives the same file.
TEST_P(ExampleModelTest, AModelFileSamplesLikeItsCppModel) {
  std::unique_ptr<ProgramModel> model = LoadExample(GetParam());
  ASSERT_NE(model, nullptr);
  absl::StatusOr<nlohmann::json> json = mcmc::ModelToJson(*model);
  ASSERT_TRUE(json.ok()) << json.status();
  absl::StatusOr<std::unique_ptr<ProgramModel>> loaded =
      mcmc::ModelFromJson(json->dump(), GetParam() + ".json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE((*loaded)->SetData(model->data()).ok());
  EXPECT_EQ(mcmc::OutputColumnNames(**loaded), mcmc::OutputColumnNames(*model));
  mcmc::SamplerConfig config;
  config.step_size = 0.05;
  const std::vector<uint64_t> ids = mcmc::ChainIds(6);
  absl::StatusOr<mcmc::BatchedRunResult> a = mcmc::RunBatchedChains(*model, config, 11, ids, 4);
  absl::StatusOr<mcmc::BatchedRunResult> b = mcmc::RunBatchedChains(**loaded, config, 11, ids, 4);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t k = 0; k < ids.size(); ++k) {
    mcmc::ExpectSameChain(b->chains[k], a->chains[k], "the model file's chain");
  }
  absl::StatusOr<nlohmann::json> again = mcmc::ModelToJson(**loaded);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->dump(), json->dump());
}

INSTANTIATE_TEST_SUITE_P(Models, ExampleModelTest, ::testing::ValuesIn(ExampleModelNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// A log density computed on the host in long double, from the model's
// unconstrained coordinates and its data, with the sum of the absolute values
// of its terms (the scale of its rounding error).
struct HostLogDensity {
  long double value = 0;
  long double scale = 0;
  void Add(long double term) {
    value += term;
    scale += std::abs(term);
  }
  // normal_lupdf(x | mu, sigma): -z^2 / 2 - log(sigma).
  void Normal(long double x, long double mu, long double sigma) {
    const long double z = (x - mu) / sigma;
    Add(-z * z / 2);
    Add(-std::log(sigma));
  }
};

long double Softplus(long double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// q: the unconstrained point; data: the model's tensors in declaration order.
HostLogDensity HierarchicalOnHost(std::span<const double> q, const std::vector<Tensor>& data) {
  const std::vector<int64_t> g = data[2].ToVector<int64_t>();
  const std::vector<double> y = data[3].ToVector<double>();
  HostLogDensity lp;
  const long double mu = q[0], tau = std::exp(static_cast<long double>(q[1]));
  const long double sigma = std::exp(static_cast<long double>(q[10]));
  lp.Add(q[1]);  // log-Jacobians of the lower bounds
  lp.Add(q[10]);
  lp.Normal(mu, 0, 5);
  lp.Normal(tau, 0, 2.5);
  lp.Normal(sigma, 0, 2.5);
  for (int j = 0; j < 8; ++j) lp.Normal(q[2 + j], 0, 1);
  for (size_t i = 0; i < y.size(); ++i) lp.Normal(y[i], mu + tau * q[2 + (g[i] - 1)], sigma);
  return lp;
}

HostLogDensity Ar2OnHost(std::span<const double> q, const std::vector<Tensor>& data) {
  const int64_t steps = data[0].ToVector<int64_t>()[0];
  const std::vector<double> y = data[1].ToVector<double>();
  HostLogDensity lp;
  const long double sigma = std::exp(static_cast<long double>(q[3]));
  lp.Add(q[3]);
  lp.Normal(q[0], 0, 5);
  lp.Normal(q[1], 0, 1);
  lp.Normal(q[2], 0, 1);
  lp.Normal(sigma, 0, 2.5);
  for (int64_t t = 2; t < steps; ++t) {
    lp.Normal(y[t], q[0] + q[1] * static_cast<long double>(y[t - 1]) + q[2] * y[t - 2], sigma);
  }
  return lp;
}

HostLogDensity MixtureOnHost(std::span<const double> q, const std::vector<Tensor>& data) {
  const std::vector<double> y = data[1].ToVector<double>();
  HostLogDensity lp;
  const long double mu1 = q[0], mu2 = mu1 + std::exp(static_cast<long double>(q[1]));
  const long double theta = 1 / (1 + std::exp(-static_cast<long double>(q[2])));
  const long double sigma = std::exp(static_cast<long double>(q[3]));
  lp.Add(q[1]);                               // ordered
  lp.Add(-Softplus(-q[2]) - Softplus(q[2]));  // bounds (0, 1)
  lp.Add(q[3]);                               // lower bound 0
  lp.Normal(mu1, 0, 5);
  lp.Normal(mu2, 0, 5);
  lp.Normal(sigma, 0, 2.5);
  for (double yi : y) {
    const long double z1 = (yi - mu1) / sigma, z2 = (yi - mu2) / sigma;
    const long double a = std::log(theta) - z1 * z1 / 2, b = std::log1p(-theta) - z2 * z2 / 2;
    const long double m = std::max(a, b);
    lp.Add(m + std::log(std::exp(a - m) + std::exp(b - m)));
    lp.Add(-std::log(sigma));
  }
  return lp;
}

HostLogDensity PoissonRegressionOnHost(std::span<const double> q, const std::vector<Tensor>& data) {
  const std::vector<double> x = data[2].ToVector<double>();
  const std::vector<double> exposure = data[3].ToVector<double>();
  const std::vector<int64_t> y = data[4].ToVector<int64_t>();
  HostLogDensity lp;
  lp.Normal(q[0], 0, 5);
  for (int k = 0; k < 3; ++k) lp.Normal(q[1 + k], 0, 2.5);
  for (size_t i = 0; i < y.size(); ++i) {
    long double eta = std::log(static_cast<long double>(exposure[i])) + q[0];
    for (int k = 0; k < 3; ++k) eta += x[3 * i + k] * static_cast<long double>(q[1 + k]);
    lp.Add(y[i] * eta);
    lp.Add(-std::exp(eta));
  }
  return lp;
}

// The log density of each model with a loop, an index vector, a mixture or
// an offset is the direct sum a Stan user means, at random points:
// |program - host| <= 1e-12 (1 + sum of |terms|). (Eight schools and
// logistic regression are compared with their hand-written targets.)
TEST(ExampleModelsTest, LogDensitiesMatchAHostComputation) {
  using HostFn = HostLogDensity (*)(std::span<const double>, const std::vector<Tensor>&);
  const std::vector<std::pair<std::string, HostFn>> cases = {
      {"hierarchical", &HierarchicalOnHost},
      {"ar2", &Ar2OnHost},
      {"mixture", &MixtureOnHost},
      {"poisson_regression", &PoissonRegressionOnHost}};
  for (const auto& [name, host] : cases) {
    SCOPED_TRACE(name);
    std::unique_ptr<ProgramModel> model = LoadExample(name);
    ASSERT_NE(model, nullptr);
    const int64_t d = model->dimension();
    const int64_t points = 200;
    const std::vector<double> q = RandomPoints(points, d, 7);
    std::vector<double> logp(points), grad(q.size());
    model->LogDensityGradientBatch(q.data(), logp.data(), grad.data(), points, nullptr);
    ASSERT_TRUE(model->last_error().ok()) << model->last_error();
    for (int64_t p = 0; p < points; ++p) {
      const HostLogDensity want = host({q.data() + p * d, static_cast<size_t>(d)}, model->data());
      EXPECT_NEAR(logp[p], static_cast<double>(want.value),
                  1e-12 * (1 + static_cast<double>(want.scale)))
          << "point " << p;
    }
  }
}

// The data file holds the hand-written target's data, bit for bit, and the
// two log densities differ by a constant (the program keeps what the target
// drops) with the same gradient, at 1000 random points.
TEST(ExampleModelsTest, LogisticRegressionIsTheHandWrittenTarget) {
  std::unique_ptr<ProgramModel> model = LoadExample("logistic_regression");
  ASSERT_NE(model, nullptr);
  absl::StatusOr<std::unique_ptr<mcmc::LogisticRegression>> hand =
      mcmc::LogisticRegression::Create({.rows = 1000, .features = 24});
  ASSERT_TRUE(hand.ok()) << hand.status();
  const mcmc::LogisticRegression::Data& data = (*hand)->data();
  const std::vector<double> x = model->data()[2].ToVector<double>();
  const std::vector<int64_t> y = model->data()[3].ToVector<int64_t>();
  ASSERT_EQ(x.size(), data.x.size());
  ASSERT_EQ(y.size(), data.y.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(mcmc::SameBits(x[i], data.x[i])) << i;
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(static_cast<double>(y[i]), data.y[i]) << i;

  ASSERT_EQ(model->dimension(), (*hand)->dimension());
  const int64_t d = model->dimension();
  const int64_t points = 1000;
  const std::vector<double> q = RandomPoints(points, d, 42);
  ExpectSameDensityUpToAConstant(*model, **hand, q, points);
}

// The sizes come from the data: the same model on 50 rows and 3 features
// is the hand-written target of that size, has its columns and samples.
TEST(ExampleModelsTest, LogisticRegressionRunsOnDataOfAnotherSize) {
  absl::StatusOr<std::unique_ptr<ProgramModel>> model = MakeExampleModel("logistic_regression");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<mcmc::LogisticRegression>> hand =
      mcmc::LogisticRegression::Create({.rows = 50, .features = 3});
  ASSERT_TRUE(hand.ok()) << hand.status();
  const mcmc::LogisticRegression::Data& data = (*hand)->data();
  std::vector<int64_t> y;
  for (double v : data.y) y.push_back(v != 0 ? 1 : 0);
  std::vector<Tensor> tensors = {
      *Tensor::FromVector<int64_t>({50}, {}), *Tensor::FromVector<int64_t>({3}, {}),
      *Tensor::FromVector<double>(data.x, {50, 3}), *Tensor::FromVector<int64_t>(y, {50})};
  // Through the JSON reader, as a data file would be.
  const std::string json = mcmc::WriteData((*model)->data_specs(), tensors);
  ASSERT_TRUE((*model)->LoadData(json, "small.json").ok());
  ASSERT_EQ((*model)->dimension(), 4);
  ASSERT_EQ((*model)->dimension(), (*hand)->dimension());
  const std::vector<double> q = RandomPoints(100, 4, 7);
  ExpectSameDensityUpToAConstant(**model, **hand, q, 100);

  // The CSV columns, and NUTS draws on the batched sampler.
  EXPECT_EQ(mcmc::OutputColumnNames(**model),
            (std::vector<std::string>{"alpha", "beta.1", "beta.2", "beta.3"}));
  mcmc::SamplerConfig config;
  config.step_size = 0.1;
  const std::vector<uint64_t> ids = mcmc::ChainIds(4);
  absl::StatusOr<std::vector<mcmc::BatchedChain>> chains =
      mcmc::MakeBatchedChains(**model, config, 20261203, ids);
  ASSERT_TRUE(chains.ok()) << chains.status();
  absl::StatusOr<std::unique_ptr<mcmc::BatchedSampler>> sampler =
      mcmc::BatchedSampler::Create(**model, mcmc::Algorithm::kNuts, config);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  absl::StatusOr<mcmc::BatchedRunResult> run = (*sampler)->Run(*chains, 50, {});
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->chains.size(), 4u);
  for (const mcmc::ScalarChainResult& chain : run->chains) {
    ASSERT_EQ(chain.dimension, 4);
    ASSERT_EQ(chain.draws.size(), 50u * 4u);
    for (double x : chain.draws) ASSERT_TRUE(std::isfinite(x));
  }
}

}  // namespace
}  // namespace autobatch::samples
