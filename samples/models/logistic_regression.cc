// Bayesian logistic regression, its sizes N and K taken from the data (the
// checked-in data are German-credit shaped: 1000 rows, an intercept and 24
// features), with the priors of the hand-written target
// (mcmc/model/targets/logistic_regression.h):
//
//   data { int N; int K; matrix[N, K] X; array[N] int<lower=0, upper=1> y; }
//   parameters { real alpha; vector[K] beta; }
//   model {
//     alpha ~ normal(0, 2.5);  beta ~ normal(0, 2.5);
//     y ~ bernoulli_logit_glm(X, alpha, beta);
//   }
//
// Its data are that target's (make_model_data.cc): one posterior, two codes.
#include "mcmc/model/distributions.h"
#include "samples/models/models.h"

namespace autobatch::samples {

using mcmc::ModelData;
using mcmc::ModelParameter;
using mcmc::ModelTarget;

std::unique_ptr<mcmc::ProgramModel> LogisticRegressionModel() {
  constexpr double kPriorSd = 2.5;
  auto model = std::make_unique<mcmc::ProgramModel>("logistic_regression");
  ModelParameter alpha = model->AddParameter("alpha");
  ModelParameter beta = model->AddParameter("beta", {"K"});
  model->AddData({.name = "N", .dtype = DType::kI64, .lower = 0});
  model->AddData({.name = "K", .dtype = DType::kI64, .lower = 0});
  ModelData x = model->AddData({.name = "X", .shape = {"N", "K"}});
  ModelData y =
      model->AddData({.name = "y", .dtype = DType::kI64, .shape = {"N"}, .lower = 0, .upper = 1});
  model->SetLogDensity([=](ModelTarget& target) {
    target += mcmc::normal_lupdf(alpha(), 0.0, kPriorSd);
    target += mcmc::normal_lupdf(beta(), 0.0, kPriorSd);
    target += mcmc::bernoulli_logit_glm_lupmf(y(), x(), alpha(), beta());
  });
  return model;
}

}  // namespace autobatch::samples
