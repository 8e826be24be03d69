// Stan's constraint transforms as frontend programs; each case mirrors
// ConstrainParameter (constraint.cc) operation for operation.
#include "mcmc/model/transforms.h"

#include <vector>

#include "ir/ir.h"
#include "ir/types.h"
#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

using Kind = Transform::Kind;

// An f64 vector constant.
Value VectorConstant(const std::vector<double>& values) {
  return constant(Literal{Vector(DType::kF64, static_cast<int64_t>(values.size())), values, {}});
}

ConstrainedValue Simplex(const Value& y, int64_t m) {
  if (m == 0) return {concat({1.0}), Value(0.0)};
  std::vector<double> shifts, weights;
  for (int64_t k = 0; k < m; ++k) {
    shifts.push_back(math::Log(static_cast<double>(m - k)));
    weights.push_back(static_cast<double>(m - k));
  }
  const Value shift = y - VectorConstant(shifts);
  const Value z = logistic(shift);
  const Value neg_shift = -shift;
  const Value one_minus_z = logistic(neg_shift);
  const Value terms = log1p_exp(neg_shift) + VectorConstant(weights) * log1p_exp(shift);
  std::vector<Operand> parts = {slice(z, 0, 1)};
  Value stick = slice(one_minus_z, 0, 1);
  for (int64_t k = 1; k < m; ++k) {
    parts.push_back(stick * slice(z, k, 1));
    stick = stick * slice(one_minus_z, k, 1);
  }
  parts.push_back(stick);
  return {concat(parts), -reduce_sum(terms)};
}

ConstrainedValue Ordered(const Value& y, int64_t n) {
  if (n <= 1) return {y, Value(0.0)};
  const Value rest = slice(y, 1, n - 1);
  const Value increments = exp(rest);
  Value last = slice(y, 0, 1);
  std::vector<Operand> parts = {last};
  for (int64_t k = 1; k < n; ++k) {
    last = last + slice(increments, k - 1, 1);
    parts.push_back(last);
  }
  return {concat(parts), reduce_sum(rest)};
}

}  // namespace

ConstrainedValue ConstrainValue(const Value& y, const ParameterSpec& spec) {
  AB_CHECK(ValidateParameter(spec).ok(), "ConstrainValue: validate the spec first");
  const Transform& t = spec.transform;
  switch (t.kind) {
    case Kind::kIdentity:
      return {y, Value(0.0)};
    case Kind::kLowerBound:
      return {t.lower + exp(y), reduce_sum(y)};
    case Kind::kUpperBound:
      return {t.upper - exp(y), reduce_sum(y)};
    case Kind::kBounded: {
      const double width = t.upper - t.lower;
      const double log_width = math::Log(width);
      return {t.lower + width * logistic(y),
              reduce_sum((log_width - log1p_exp(-y)) - log1p_exp(y))};
    }
    case Kind::kSimplex:
      return Simplex(y, spec.unconstrained_size());
    case Kind::kOrdered:
      return Ordered(y, spec.size());
  }
  return {};
}

}  // namespace autobatch::mcmc
