// A two-component normal mixture with ordered means (no label switching):
//
//   data { int N; vector[N] y; }
//   parameters { ordered[2] mu; real<lower=0, upper=1> theta; real<lower=0> sigma; }
//   model {
//     mu ~ normal(0, 5);  sigma ~ normal(0, 2.5);   // theta: uniform
//     for (n in 1:N)
//       target += log_mix(theta, normal_lupdf(y[n] | mu[1], sigma),
//                                normal_lupdf(y[n] | mu[2], sigma));
//   }
//
// log_mix is log(theta e^a + (1 - theta) e^b) per observation: the binary
// log_sum_exp(a, b) over all N observations at once (elementwise:
// max(a, b) + log1p_exp(-|a - b|), frontend/value.h; the primitive
// log_sum_exp of one vector would take a loop over the observations with a
// 2-vector each). The -log(sigma) both components share comes out of the
// sum as N log(sigma).
#include "mcmc/model/distributions.h"
#include "samples/models/models.h"

namespace autobatch::samples {

using mcmc::ModelData;
using mcmc::ModelParameter;
using mcmc::ModelTarget;
using mcmc::Transform;

std::unique_ptr<mcmc::ProgramModel> MixtureModel() {
  auto model = std::make_unique<mcmc::ProgramModel>("mixture");
  ModelParameter mu = model->AddParameter("mu", {2}, Transform::Ordered());
  ModelParameter theta = model->AddParameter("theta", {}, Transform::Bounded(0, 1));
  ModelParameter sigma = model->AddParameter("sigma", {}, Transform::LowerBound(0));
  ModelData n = model->AddData({.name = "N", .dtype = DType::kI64, .lower = 0});
  ModelData y = model->AddData({.name = "y", .shape = {"N"}});
  model->SetLogDensity([=](ModelTarget& target) {
    target += mcmc::normal_lupdf(mu(), 0.0, 5.0);
    target += mcmc::normal_lupdf(sigma(), 0.0, 2.5);
    const Value s = sigma();
    const Value z1 = (y() - reduce_sum(slice(mu(), 0, 1))) / s;
    const Value z2 = (y() - reduce_sum(slice(mu(), 1, 1))) / s;
    const Value a = log(theta()) - 0.5 * z1 * z1;
    const Value b = log1p(-theta()) - 0.5 * z2 * z2;
    target += reduce_sum(log_sum_exp(a, b));
    target += -cast(n(), DType::kF64) * log(s);
  });
  return model;
}

}  // namespace autobatch::samples
