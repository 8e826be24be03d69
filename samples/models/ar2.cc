// An AR(2) time series whose log density is a loop over time, as a Stan user
// writes it (T is data, so the loop's trip count is data too):
//
//   data { int<lower=3> T; vector[T] y; }
//   parameters { real alpha; vector[2] beta; real<lower=0> sigma; }
//   model {
//     alpha ~ normal(0, 5);  beta ~ normal(0, 1);  sigma ~ normal(0, 2.5);
//     for (t in 3:T)
//       y[t] ~ normal(alpha + beta[1] * y[t - 1] + beta[2] * y[t - 2], sigma);
//   }
//
// The loop is a real loop of the program (Builder::While), not a vectorized
// sum, whose bound is read from the data when the program runs: the compiler
// differentiates it with per-lane tapes (passes/differentiate.h), and every
// chain runs it T - 2 times. The length of y is T, taken from the data.
#include "mcmc/model/distributions.h"
#include "samples/models/models.h"

namespace autobatch::samples {

using mcmc::ModelData;
using mcmc::ModelParameter;
using mcmc::ModelTarget;
using mcmc::Transform;

std::unique_ptr<mcmc::ProgramModel> Ar2Model() {
  auto model = std::make_unique<mcmc::ProgramModel>("ar2");
  ModelParameter alpha = model->AddParameter("alpha");
  ModelParameter beta = model->AddParameter("beta", {2});
  ModelParameter sigma = model->AddParameter("sigma", {}, Transform::LowerBound(0));
  ModelData steps = model->AddData({.name = "T", .dtype = DType::kI64, .lower = 0});
  ModelData y = model->AddData({.name = "y", .shape = {"T"}});
  model->SetLogDensity([=](ModelTarget& target) {
    target += mcmc::normal_lupdf(alpha(), 0.0, 5.0);
    target += mcmc::normal_lupdf(beta(), 0.0, 1.0);
    target += mcmc::normal_lupdf(sigma(), 0.0, 2.5);
    const Value a = alpha(), s = sigma(), series = y(), last = steps();
    const Value beta1 = reduce_sum(slice(beta(), 0, 1));
    const Value beta2 = reduce_sum(slice(beta(), 1, 1));
    Builder& b = target.builder();
    Var t = b.Local("t", int64_t{2});  // 0-based: y[t - 2], y[t - 1] -> y[t]
    b.While([&] { return t < last; }).Do([&] {
      const Value window = gather(series, concat({t - 2, t - 1, t}));
      const Value y2 = reduce_sum(slice(window, 0, 1));
      const Value y1 = reduce_sum(slice(window, 1, 1));
      const Value yt = reduce_sum(slice(window, 2, 1));
      target += mcmc::normal_lupdf(yt, a + beta1 * y1 + beta2 * y2, s);
      t = t + 1;
    });
  });
  return model;
}

}  // namespace autobatch::samples
