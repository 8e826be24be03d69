// Two models' log densities written as per-example programs, for
// Context::Gradient: the compiler writes their gradients (compare
// mcmc/model/targets/, where the same models carry hand-written ones).
#ifndef AUTOBATCH_SAMPLES_GRADIENTS_LOG_DENSITIES_H_
#define AUTOBATCH_SAMPLES_GRADIENTS_LOG_DENSITIES_H_

#include <cstdint>
#include <vector>

#include "frontend/context.h"

namespace autobatch::samples {

// Eight schools, non-centred, on the unconstrained scale: q = (mu, log tau,
// eta[8]) as one f64[10] vector; the log density (up to a constant) with
// the log-Jacobian of tau = exp(u), as mcmc::EightSchools computes it.
BatchFunction RegisterEightSchools(Context& ctx);

// Bayesian logistic regression: q = (alpha, beta[k]) as one f64[k + 1]
// vector; x is rows x k row-major, y is 0/1 per row; normal(0, prior_sd)
// priors. The data are attributes of the program (a matrix and a sign
// vector), the same for every lane.
BatchFunction RegisterLogisticRegression(Context& ctx, const std::vector<double>& x,
                                         const std::vector<double>& y, int64_t rows,
                                         int64_t features, double prior_sd);

}  // namespace autobatch::samples

#endif  // AUTOBATCH_SAMPLES_GRADIENTS_LOG_DENSITIES_H_
