// Poisson regression with an exposure offset:
//
//   data {
//     int N; int K; matrix[N, K] X; vector<lower=0>[N] exposure;
//     array[N] int<lower=0> y;
//   }
//   parameters { real alpha; vector[K] beta; }
//   model {
//     alpha ~ normal(0, 5);  beta ~ normal(0, 2.5);
//     y ~ poisson_log(log(exposure) + alpha + X * beta);
//   }
#include "mcmc/model/distributions.h"
#include "samples/models/models.h"

namespace autobatch::samples {

using mcmc::ModelData;
using mcmc::ModelParameter;
using mcmc::ModelTarget;

std::unique_ptr<mcmc::ProgramModel> PoissonRegressionModel() {
  auto model = std::make_unique<mcmc::ProgramModel>("poisson_regression");
  ModelParameter alpha = model->AddParameter("alpha");
  ModelParameter beta = model->AddParameter("beta", {"K"});
  model->AddData({.name = "N", .dtype = DType::kI64, .lower = 0});
  model->AddData({.name = "K", .dtype = DType::kI64, .lower = 0});
  ModelData x = model->AddData({.name = "X", .shape = {"N", "K"}});
  ModelData exposure = model->AddData({.name = "exposure", .shape = {"N"}, .lower = 0});
  ModelData y = model->AddData({.name = "y", .dtype = DType::kI64, .shape = {"N"}, .lower = 0});
  model->SetLogDensity([=](ModelTarget& target) {
    target += mcmc::normal_lupdf(alpha(), 0.0, 5.0);
    target += mcmc::normal_lupdf(beta(), 0.0, 2.5);
    target += mcmc::poisson_log_lupmf(y(), log(exposure()) + alpha() + matvec_input(x(), beta()));
  });
  return model;
}

}  // namespace autobatch::samples
