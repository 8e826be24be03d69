// The hand-written targets a user would write with the C library's math
// (<cmath>'s exp and log1p), the scalar baselines of issue 27's speed item:
// "gradients per second of batched NUTS on the program model against the
// scalar reference sampler on the hand-written C++ target of the same model
// (the plain C++ a user would write, with the C library's math)".
//
// The built-in targets (mcmc/model/targets/) compute the same formulas with
// support/math, whose one-value path (SLEEF's sse2 variant, for bits that
// match the batched kernels) costs 1.3-4x glibc per call (docs/BENCHMARKS.md,
// math_bench); against them a batched program looks faster than it is. These
// have no bit-stability promise (tests/lint/check_math_calls.cmake exempts
// this file's source) and are only ever timed, never compared bit for bit.
#ifndef AUTOBATCH_BENCH_LIBM_TARGETS_H_
#define AUTOBATCH_BENCH_LIBM_TARGETS_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mcmc/model/targets/eight_schools.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "nlohmann/json.hpp"

namespace autobatch::bench {

// mcmc::EightSchools's log density and gradient, with std::exp and
// std::log1p.
class LibmEightSchools final : public mcmc::Target {
 public:
  std::string name() const override { return "eight_schools_libm"; }
  std::vector<mcmc::ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override;
};

// mcmc::LogisticRegression's model on the same generated data (its Options),
// as a careful user writes it: per row one t = exp(-|eta|), the softplus
// log1p(t) + max(+-eta, 0) and the residual from t, as Stan's log1p_exp and
// inv_logit do.
class LibmLogisticRegression final : public mcmc::Target {
 public:
  explicit LibmLogisticRegression(const mcmc::LogisticRegression::Options& options);

  std::string name() const override { return "logistic_regression_libm"; }
  std::vector<mcmc::ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override;

 private:
  mcmc::LogisticRegression::Data data_;
  double prior_precision_;
};

// OK when `libm` and `reference` (the built-in target of the same model)
// agree at the unconstrained point `q`: the log density and every gradient
// entry within 1e-9 x (1 + |reference's value|) (the two differ by the math
// functions' last bits, summed over at most a few thousand terms);
// otherwise Internal naming the first value that differs. The benchmarks
// check their starting points with it, so a baseline that computes another
// model fails loudly.
absl::Status CheckAgrees(const mcmc::Model& libm, const mcmc::Model& reference,
                         std::span<const double> q);

// "eight_schools_libm" or "logistic_regression_libm" (its "rows",
// "features", "seed" and "prior_sd" from `params` as the built-in target
// reads them, the rest defaults); nullptr for any other name.
std::unique_ptr<mcmc::Target> MakeLibmTarget(const std::string& name,
                                             const nlohmann::json& params);

}  // namespace autobatch::bench

#endif  // AUTOBATCH_BENCH_LIBM_TARGETS_H_
