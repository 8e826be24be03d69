// Stan's constraint transforms on the host (double): the description of a
// parameter's transform, its validation, and the forward map (unconstrained
// y -> constrained x, with log|J|) and its inverse.
//
// The transforms (Stan reference manual, "Constraint transforms"; the
// formulas of the project brief's MCMC.md, "Models as programs"):
//   identity         x = y                           log|J| = 0
//   lower bound a    x = a + exp(y)                  log|J| = y
//   upper bound b    x = b - exp(y)                  log|J| = y
//   bounds a < b     x = a + (b - a) logistic(y)     log|J| = log(b - a)
//                                                      - log1p_exp(-y) -
//                                                      log1p_exp(y)
//   simplex, K       K - 1 coordinates, stick-breaking (below)
//   ordered, K       x_1 = y_1, x_k = x_{k-1} + exp(y_k)  log|J| = sum_{k>=2}
//   y_k
// The bounds apply elementwise to any shape; simplex and ordered take a 1-D
// parameter (shape {K}).
//
// Simplex (m = K - 1 coordinates, k = 0..m-1): c_k = log(m - k),
// t_k = y_k - c_k, z_k = logistic(t_k) and 1 - z_k = logistic(-t_k) (no
// cancellation near z_k = 1); the stick s_0 = 1, x_k = s_k z_k,
// s_{k+1} = s_k (1 - z_k), x_K = s_m. log|J| = sum_k [log z_k + log(1 - z_k)
// + log s_k] = -sum_k [log1p_exp(-t_k) + (m - k) log1p_exp(t_k)], since
// log s_k = -sum_{j<k} log1p_exp(t_j): finite for every finite y (Stan
// computes log s_k as log(1 - sum_{j<k} x_j), -inf once the stick rounds
// to 0).
//
// Exact operations. Every function here computes with the operations the
// IR version (mcmc/model/transforms.h) emits, in the same order, with
// support/math/math.h for every transcendental (the VM primitives' kernels),
// so the two agree bit for bit; a sum over elements is reduce_sum's: the
// first element, then + each next one in index order (0 when empty).
// With a = 0 (and b = 1) the bounded maps reduce bit for bit to the former
// log and logit transforms: 0 + exp(y) == exp(y), 0 + 1 * logistic(y) ==
// logistic(y).
#ifndef AUTOBATCH_MCMC_MODEL_CONSTRAINT_H_
#define AUTOBATCH_MCMC_MODEL_CONSTRAINT_H_

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace autobatch::mcmc {

// How a constrained parameter is reached from the unconstrained space.
struct Transform {
  enum class Kind : uint8_t { kIdentity, kLowerBound, kUpperBound, kBounded, kSimplex, kOrdered };
  Kind kind = Kind::kIdentity;
  double lower = 0;  // kLowerBound, kBounded
  double upper = 0;  // kUpperBound, kBounded

  static constexpr Transform Identity() { return {}; }
  static constexpr Transform LowerBound(double a) { return {Kind::kLowerBound, a, 0}; }
  static constexpr Transform UpperBound(double b) { return {Kind::kUpperBound, 0, b}; }
  static constexpr Transform Bounded(double a, double b) { return {Kind::kBounded, a, b}; }
  static constexpr Transform Simplex() { return {Kind::kSimplex, 0, 0}; }
  static constexpr Transform Ordered() { return {Kind::kOrdered, 0, 0}; }

  // Shorthands (the built-in targets' spellings).
  static const Transform kIdentity;  // Identity()
  static const Transform kLog;       // LowerBound(0): x = exp(y) > 0
  static const Transform kLogit;     // Bounded(0, 1): x = logistic(y) in (0, 1)

  // "identity", "lower bound 0", "upper bound 2", "bounds (0, 1)",
  // "simplex", "ordered".
  std::string ToString() const;
  friend bool operator==(const Transform&, const Transform&) = default;
};
inline constexpr Transform Transform::kIdentity = Transform::Identity();
inline constexpr Transform Transform::kLog = Transform::LowerBound(0);
inline constexpr Transform Transform::kLogit = Transform::Bounded(0, 1);
std::ostream& operator<<(std::ostream& os, const Transform& transform);

// A parameter's constrained elements occupy size() consecutive values of the
// constrained vector, in CmdStan column order: the FIRST index varies
// fastest (a 2x3 matrix m is m.1.1, m.2.1, m.1.2, m.2.2, m.1.3, m.2.3); its
// unconstrained coordinates occupy unconstrained_size() consecutive values
// of q.
struct ParameterSpec {
  std::string name;            // "theta"
  std::vector<int64_t> shape;  // {} scalar, {8} vector (CSV names theta.1..)
  Transform transform = Transform::kIdentity;
  // Constrained elements: product of shape, 1 if {}.
  int64_t size() const;
  // Unconstrained coordinates: size(), but K - 1 for a simplex of K
  // (0 for an invalid simplex of K < 1).
  int64_t unconstrained_size() const;
};

// OK, or InvalidArgument naming the parameter ("parameter 'theta': ...")
// when its shape has a negative extent; a simplex or ordered parameter is
// not 1-D; a simplex has K < 1; a bound is not finite; a >= b; or b - a
// overflows.
absl::Status ValidateParameter(const ParameterSpec& spec);

// "theta.2.1" for constrained element `flat` (first index fastest).
std::string ElementName(const ParameterSpec& spec, int64_t flat);

// The forward map: writes x (size() values) from y (unconstrained_size()
// values; both sizes checked) and returns log|J|. Requires a valid spec.
// Finite y gives finite x and log|J|, except where exp(y) overflows (a
// one-sided bound or an ordered increment with y > ~709.78): x is then inf
// as in Stan.
double ConstrainParameter(const ParameterSpec& spec, std::span<const double> y,
                          std::span<double> x);

// The inverse map (user initial values): writes y from x (sizes checked).
// InvalidArgument, naming the element ("value 0 of parameter theta.3 is
// outside its support: it must be ...") when x is outside the transform's
// open support: not finite, not above a / below b, a simplex with a negative
// entry or a sum further than 1e-8 from 1, an ordered vector not strictly
// increasing; or when an element is so close to the boundary that its
// unconstrained value is not finite. Requires a valid spec.
absl::Status UnconstrainParameter(const ParameterSpec& spec, std::span<const double> x,
                                  std::span<double> y);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_CONSTRAINT_H_
