// Varying intercepts, non-centred: N observations in J groups, group g[i]
// (1-based, as in Stan):
//
//   data { int N; int J; array[N] int<lower=1, upper=J> g; vector[N] y; }
//   parameters {
//     real mu_alpha; real<lower=0> tau; vector[J] alpha_raw; real<lower=0> sigma;
//   }
//   model {
//     mu_alpha ~ normal(0, 5);  tau ~ normal(0, 2.5);  sigma ~ normal(0, 2.5);
//     alpha_raw ~ normal(0, 1);
//     y ~ normal(mu_alpha + tau * alpha_raw[g], sigma);
//   }
#include "mcmc/model/distributions.h"
#include "samples/models/models.h"

namespace autobatch::samples {

using mcmc::ModelData;
using mcmc::ModelParameter;
using mcmc::ModelTarget;
using mcmc::Transform;

std::unique_ptr<mcmc::ProgramModel> HierarchicalModel() {
  auto model = std::make_unique<mcmc::ProgramModel>("hierarchical");
  ModelParameter mu_alpha = model->AddParameter("mu_alpha");
  ModelParameter tau = model->AddParameter("tau", {}, Transform::LowerBound(0));
  // The number of groups is fixed: g's bound (Stan's upper=J) is a number
  // here, and an index past J would be clamped by gather, not reported. N
  // comes from the data.
  constexpr int64_t kGroups = 8;
  ModelParameter alpha_raw = model->AddParameter("alpha_raw", {kGroups});
  ModelParameter sigma = model->AddParameter("sigma", {}, Transform::LowerBound(0));
  model->AddData({.name = "N", .dtype = DType::kI64, .lower = 0});
  model->AddData({.name = "J", .dtype = DType::kI64, .lower = kGroups, .upper = kGroups});
  ModelData g = model->AddData(
      {.name = "g", .dtype = DType::kI64, .shape = {"N"}, .lower = 1, .upper = kGroups});
  ModelData y = model->AddData({.name = "y", .shape = {"N"}});
  model->SetLogDensity([=](ModelTarget& target) {
    target += mcmc::normal_lupdf(mu_alpha(), 0.0, 5.0);
    target += mcmc::normal_lupdf(tau(), 0.0, 2.5);
    target += mcmc::normal_lupdf(sigma(), 0.0, 2.5);
    target += mcmc::normal_lupdf(alpha_raw(), 0.0, 1.0);
    // Stan's 1-based group indices, 0-based for gather.
    const Value group_raw = gather(alpha_raw(), g() - 1);
    target += mcmc::normal_lupdf(y(), mu_alpha() + tau() * group_raw, sigma());
  });
  return model;
}

}  // namespace autobatch::samples
