// Writes the synthetic data sets of the example models as CmdStan JSON,
// samples/models/<model>.data.json, from fixed seeds (identical bits on every
// machine: uniforms are multiples of 2^-53, normals are Irwin-Hall sums,
// transcendentals come from support/math). To regenerate the checked-in files:
//
//   cmake --build build --target make_model_data
//   build/samples/models/make_model_data samples/models
//
// logistic_regression is the hand-written target's data
// (mcmc/model/targets/logistic_regression.h, LogisticRegression::GenerateData
// with 1000 rows, 24 features and its default seed), so the example model and
// that target are one posterior (tests/samples/models_test.cc compares them).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/tensor.h"
#include "mcmc/chain_rng.h"
#include "mcmc/model/data.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "support/math/math.h"

namespace autobatch::samples {
namespace {

using mcmc::DataSpec;

// SplitMix64 (Steele, Lea, Flood 2014), as the hand-written targets use.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    const uint64_t z = mcmc::SplitMix64(state_);  // mixes state + the golden gamma
    state_ += mcmc::kGoldenGamma;
    return z;
  }
  // In [0, 1), a multiple of 2^-53.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }
  // Irwin-Hall: the sum of 12 uniforms minus 6 (mean 0, variance 1).
  double Normal() {
    double sum = 0;
    for (int k = 0; k < 12; ++k) sum += Uniform();
    return sum - 6.0;
  }
  // Knuth's multiplication method; fine for the small rates used here.
  int64_t Poisson(double rate) {
    const double limit = math::Exp(-rate);
    int64_t k = -1;
    double p = 1;
    do {
      ++k;
      p *= Uniform();
    } while (p > limit);
    return k;
  }
  // In {0, ..., n - 1}.
  int64_t Below(int64_t n) { return static_cast<int64_t>(Uniform() * static_cast<double>(n)); }

 private:
  uint64_t state_;
};

Tensor Scalar(int64_t v) { return *Tensor::FromVector<int64_t>({v}, {}); }
Tensor F64(std::vector<double> v, std::vector<int64_t> shape) {
  return *Tensor::FromVector<double>(std::move(v), std::move(shape));
}
Tensor I64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromVector<int64_t>(std::move(v), {n});
}

bool Write(const std::string& dir, const std::string& model, const std::vector<DataSpec>& specs,
           const std::vector<Tensor>& tensors) {
  const std::string path = dir + "/" + model + ".data.json";
  std::ofstream out(path);
  out << mcmc::WriteData(specs, tensors);
  if (!out.good()) {
    std::fprintf(stderr, "make_model_data: cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("wrote %s\n", path.c_str());
  return true;
}

// 1000 rows, an intercept and 24 features, labels from the logistic model.
bool LogisticRegressionData(const std::string& dir) {
  const int64_t n = 1000, k = 24;
  const mcmc::LogisticRegression::Data data =
      mcmc::LogisticRegression::GenerateData(n, k, mcmc::LogisticRegression::Options{}.seed);
  std::vector<int64_t> y;
  for (double v : data.y) y.push_back(v != 0 ? 1 : 0);
  return Write(dir, "logistic_regression",
               {{.name = "N", .dtype = DType::kI64},
                {.name = "K", .dtype = DType::kI64},
                {.name = "X", .shape = {n, k}},
                {.name = "y", .dtype = DType::kI64, .shape = {n}}},
               {Scalar(n), Scalar(k), F64(data.x, {n, k}), I64(y)});
}

// Varying intercepts: J = 8 groups of unequal sizes, N = 200 observations,
// mu_alpha = 1, tau = 0.7, sigma = 1; group indices 1-based as in Stan.
bool HierarchicalData(const std::string& dir) {
  const int64_t n = 200, j = 8;
  Rng rng(20260101);
  std::vector<double> alpha;
  for (int64_t g = 0; g < j; ++g) alpha.push_back(1.0 + 0.7 * rng.Normal());
  std::vector<int64_t> group;
  std::vector<double> y;
  for (int64_t i = 0; i < n; ++i) {
    // Groups 1..4 twice as likely as 5..8.
    const int64_t u = rng.Below(12);
    const int64_t g = u < 8 ? u / 2 : u - 4;
    group.push_back(g + 1);
    y.push_back(alpha[g] + rng.Normal());
  }
  return Write(dir, "hierarchical",
               {{.name = "N", .dtype = DType::kI64},
                {.name = "J", .dtype = DType::kI64},
                {.name = "g", .dtype = DType::kI64, .shape = {n}},
                {.name = "y", .shape = {n}}},
               {Scalar(n), Scalar(j), I64(group), F64(y, {n})});
}

// AR(2): y[t] = 0.5 + 0.6 y[t-1] - 0.3 y[t-2] + e[t], e ~ N(0, 1), T = 100,
// after a burn-in of 100 steps from 0.
bool Ar2Data(const std::string& dir) {
  const int64_t t_max = 100, burn_in = 100;
  Rng rng(20260102);
  double y1 = 0, y2 = 0;
  std::vector<double> y;
  for (int64_t t = 0; t < burn_in + t_max; ++t) {
    const double next = 0.5 + 0.6 * y1 - 0.3 * y2 + rng.Normal();
    y2 = y1;
    y1 = next;
    if (t >= burn_in) y.push_back(next);
  }
  return Write(dir, "ar2", {{.name = "T", .dtype = DType::kI64}, {.name = "y", .shape = {t_max}}},
               {Scalar(t_max), F64(y, {t_max})});
}

// Two normal components: weight 0.35 at -1.5 and 0.65 at 2, sd 1, N = 200.
bool MixtureData(const std::string& dir) {
  const int64_t n = 200;
  Rng rng(20260103);
  std::vector<double> y;
  for (int64_t i = 0; i < n; ++i) {
    const double mu = rng.Uniform() < 0.35 ? -1.5 : 2.0;
    y.push_back(mu + rng.Normal());
  }
  return Write(dir, "mixture", {{.name = "N", .dtype = DType::kI64}, {.name = "y", .shape = {n}}},
               {Scalar(n), F64(y, {n})});
}

// Counts with exposure: N = 200, K = 3 standard-normal covariates, exposure
// uniform in [0.5, 2], y ~ Poisson(exposure exp(0.5 + X (0.3, -0.2, 0.1))).
bool PoissonRegressionData(const std::string& dir) {
  const int64_t n = 200, k = 3;
  const double alpha = 0.5, beta[] = {0.3, -0.2, 0.1};
  Rng rng(20260104);
  std::vector<double> x, exposure;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    double eta = alpha;
    for (int64_t j = 0; j < k; ++j) {
      x.push_back(rng.Normal());
      eta += x.back() * beta[j];
    }
    exposure.push_back(0.5 + 1.5 * rng.Uniform());
    y.push_back(rng.Poisson(exposure.back() * math::Exp(eta)));
  }
  return Write(dir, "poisson_regression",
               {{.name = "N", .dtype = DType::kI64},
                {.name = "K", .dtype = DType::kI64},
                {.name = "X", .shape = {n, k}},
                {.name = "exposure", .shape = {n}},
                {.name = "y", .dtype = DType::kI64, .shape = {n}}},
               {Scalar(n), Scalar(k), F64(x, {n, k}), F64(exposure, {n}), I64(y)});
}

}  // namespace
}  // namespace autobatch::samples

int main(int argc, char** argv) {
  using namespace autobatch::samples;  // NOLINT(build/namespaces)
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory, e.g. samples/models>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok = LogisticRegressionData(dir) && HierarchicalData(dir) && Ar2Data(dir) &&
                  MixtureData(dir) && PoissonRegressionData(dir);
  return ok ? 0 : 1;
}
