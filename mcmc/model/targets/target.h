// Target: a Model with known answers (moments, exact draws) for sampler
// tests, and the numerically stable helpers the targets share.
//
// Every target's log density drops additive constants (as Stan's `~` does)
// and is computed by plain loops in a fixed order, so LogDensityGradient
// returns the same bits for the same q wherever q lies in memory (lanes in a
// batch have arbitrary 8-byte alignment) and never allocates.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_TARGET_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_TARGET_H_

#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "mcmc/model/model.h"
#include "support/math/math.h"

namespace autobatch::mcmc {

// Exact moments of the target, one entry per output column
// (OutputColumnNames order: constrained parameters, then generated
// quantities); NaN where not known in closed form.
struct KnownMoments {
  std::vector<double> mean;
  std::vector<double> variance;
};

class Target : public Model {
 public:
  // Default: every entry NaN.
  virtual KnownMoments known_moments() const;

  // Exact independent draws (for one-step conservation tests, which start
  // chains at exact draws). exact_draw_normals() is how many iid standard
  // normals one draw consumes; 0 means the target has no exact sampler.
  virtual int64_t exact_draw_normals() const { return 0; }
  // Writes an exact draw of the UNCONSTRAINED point q (dimension() values)
  // made from `normals` (exact_draw_normals() values, iid N(0, 1)); a
  // deterministic function of them. Requires exact_draw_normals() > 0.
  virtual void ExactDraw(std::span<const double> normals, std::span<double> q) const;
};

namespace target_internal {

// log(1 + exp(x)) without overflow or loss for large |x| (the log1p_exp
// primitive's definition).
inline double Softplus(double x) { return math::Log1pExp(x); }

// 1 / (1 + exp(-x)) without overflow (the logistic primitive's definition).
inline double Logistic(double x) { return math::Logistic(x); }

// KnownMoments of `columns` entries, all NaN.
KnownMoments UnknownMoments(int64_t columns);

// InvalidArgument "<target>: dimension must be in [min, max], got d" unless
// min <= d <= max.
absl::Status CheckDimension(std::string_view target, int64_t dimension, int64_t min,
                            int64_t max);

// InvalidArgument "<target>: <option> must be finite, got v" unless finite.
absl::Status CheckFinite(std::string_view target, std::string_view option, double value);

// Largest dimension of the O(d) targets (a guard against typos like 1e9).
inline constexpr int64_t kMaxDimension = int64_t{1} << 24;

}  // namespace target_internal
}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_TARGET_H_
