// Stan's constraint transforms as frontend programs: for models written as
// programs, the IR that maps a parameter's unconstrained segment y to its
// constrained value x and log|J| inside the function body being built.
//
// The operations are exactly those of the host version
// (mcmc/model/constraint.h, which states the formulas), in the same order,
// so x and log|J| are bit for bit ConstrainParameter's (NaN payloads aside:
// the VM canonicalizes them). Only primitives with adjoints
// (passes/adjoints.h) are on the path from y to the results, so a body
// using them is differentiable by Context::Gradient. The simplex's and the
// ordered vector's running products and sums are unrolled at build time
// (K is static): O(K) ops.
#ifndef AUTOBATCH_MCMC_MODEL_TRANSFORMS_H_
#define AUTOBATCH_MCMC_MODEL_TRANSFORMS_H_

#include "frontend/value.h"
#include "mcmc/model/constraint.h"

namespace autobatch::mcmc {

struct ConstrainedValue {
  Value x;             // the constrained value: f64[size()] (f64 for a scalar spec)
  Value log_jacobian;  // log|J|, an f64 scalar
};

// Emits the forward transform of `spec` (which must be valid:
// ValidateParameter; checked) on y: an f64 scalar for a scalar spec with an
// elementwise transform, else an f64 vector of spec.unconstrained_size()
// values (a matrix parameter's elements flattened first index fastest).
// A wrong y type is reported by the frontend (Context::Module) as a type
// error of the emitted ops.
ConstrainedValue ConstrainValue(const Value& y, const ParameterSpec& spec);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TRANSFORMS_H_
