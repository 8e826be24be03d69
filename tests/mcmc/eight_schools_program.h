// Eight schools (non-centred) as a model written as a program, with its data,
// for the tests of models as programs.
#ifndef AUTOBATCH_TESTS_MCMC_EIGHT_SCHOOLS_PROGRAM_H_
#define AUTOBATCH_TESTS_MCMC_EIGHT_SCHOOLS_PROGRAM_H_

#include <memory>

#include "gtest/gtest.h"
#include "mcmc/model/distributions.h"
#include "mcmc/model/program_model.h"

namespace autobatch::mcmc {

// As a Stan user writes it with `~` statements. With
// `generated_quantities`: theta = mu + tau eta, the posterior predictive
// y_rep ~ normal(theta, sigma) and a count k ~ poisson(tau) (cast to f64).
inline std::unique_ptr<ProgramModel> EightSchoolsProgram(bool generated_quantities = false) {
  auto model = std::make_unique<ProgramModel>("eight_schools");
  ModelParameter mu = model->AddParameter("mu");
  ModelParameter tau = model->AddParameter("tau", {}, Transform::kLog);
  ModelParameter eta = model->AddParameter("eta", {8});
  ModelData y = model->AddData({.name = "y", .shape = {8}});
  ModelData sigma = model->AddData({.name = "sigma", .shape = {8}});
  model->SetLogDensity([=](ModelTarget& target) {
    target += normal_lupdf(mu(), 0.0, 5.0);
    target += cauchy_lupdf(tau(), 0.0, 5.0);
    target += normal_lupdf(eta(), 0.0, 1.0);
    target += normal_lupdf(y(), mu() + tau() * eta(), sigma());
  });
  if (generated_quantities) {
    ModelGenerated theta = model->AddGenerated("theta", {8});
    ModelGenerated y_rep = model->AddGenerated("y_rep", {8});
    ModelGenerated k = model->AddGenerated("k");
    model->SetGeneratedQuantities([=](GeneratedQuantities& gq) {
      const Value effects = mu() + tau() * eta();
      gq.Set(theta, effects);
      gq.Set(y_rep, normal_rng(gq, effects, sigma(), y_rep.shape()));
      gq.Set(k, cast(poisson_rng(gq, tau()), DType::kF64));
    });
  }
  absl::Status set = model->LoadData(
      R"({"y": [28, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]})",
      "eight_schools.data.json");
  EXPECT_TRUE(set.ok()) << set;
  return model;
}

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_TESTS_MCMC_EIGHT_SCHOOLS_PROGRAM_H_
