// Eight schools, non-centred, as a Stan user writes it with `~` statements:
//
//   data { real y[8]; real<lower=0> sigma[8]; }
//   parameters { real mu; real<lower=0> tau; vector[8] eta; }
//   model {
//     mu ~ normal(0, 5);  tau ~ cauchy(0, 5);  eta ~ normal(0, 1);
//     y ~ normal(mu + tau * eta, sigma);
//   }
//   generated quantities {
//     vector[8] theta = mu + tau * eta;
//     real y_rep[8] = normal_rng(theta, sigma);
//   }
#include "mcmc/model/distributions.h"
#include "samples/models/models.h"

namespace autobatch::samples {

using mcmc::GeneratedQuantities;
using mcmc::ModelData;
using mcmc::ModelGenerated;
using mcmc::ModelParameter;
using mcmc::ModelTarget;

std::unique_ptr<mcmc::ProgramModel> EightSchoolsModel() {
  auto model = std::make_unique<mcmc::ProgramModel>("eight_schools");
  ModelParameter mu = model->AddParameter("mu");
  ModelParameter tau = model->AddParameter("tau", {}, mcmc::Transform::LowerBound(0));
  ModelParameter eta = model->AddParameter("eta", {8});
  ModelData y = model->AddData({.name = "y", .shape = {8}});
  ModelData sigma = model->AddData({.name = "sigma", .shape = {8}, .lower = 0.0});
  model->SetLogDensity([=](ModelTarget& target) {
    target += mcmc::normal_lupdf(mu(), 0.0, 5.0);
    target += mcmc::cauchy_lupdf(tau(), 0.0, 5.0);
    target += mcmc::normal_lupdf(eta(), 0.0, 1.0);
    target += mcmc::normal_lupdf(y(), mu() + tau() * eta(), sigma());
  });
  ModelGenerated theta = model->AddGenerated("theta", {8});
  ModelGenerated y_rep = model->AddGenerated("y_rep", {8});
  model->SetGeneratedQuantities([=](GeneratedQuantities& gq) {
    const Value school_effects = mu() + tau() * eta();
    gq.Set(theta, school_effects);
    gq.Set(y_rep, mcmc::normal_rng(gq, school_effects, sigma(), y_rep.shape()));
  });
  return model;
}

}  // namespace autobatch::samples
