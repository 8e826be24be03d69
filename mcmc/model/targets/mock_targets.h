// Mock targets for exact NUTS tree arithmetic: one whose trajectories never
// U-turn and one whose energy error is set by an option (divergence tests).
// Neither is a proper density; do not adapt the step size on them.
#ifndef AUTOBATCH_MCMC_MODEL_TARGETS_MOCK_TARGETS_H_
#define AUTOBATCH_MCMC_MODEL_TARGETS_MOCK_TARGETS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "mcmc/model/targets/target.h"

namespace autobatch::mcmc {

// "never_uturn": parameter x[d], log p = 0, gradient 0 (flat).
// Why flat rather than linear: with a constant nonzero gradient c the
// momentum p0 + t c eventually reverses along c on the backward side of a
// trajectory, so U-turns CAN occur; with c = 0 every momentum of a
// trajectory equals p0, so every sum rho of momenta is k p0 (k >= 1) and
// every U-turn test, rho . M^-1 p0 = k p0' M^-1 p0 > 0 (any positive diagonal
// metric, including Stan's extra checks across subtrees), passes. Leapfrog
// keeps p exactly and H = K(p0) exactly, so no divergence, accept_stat = 1,
// and NUTS runs to max depth: n_leapfrog = 2^max_depth - 1. Positions grow
// linearly (|q| <= |q0| + n eps |p0|), finite for any sane step.
// NOTE: acceptance is always 1, so Stan's step-size heuristic (double while
// acceptance > 0.8) never stops on it: use a fixed step size.
class NeverUturn final : public Target {
 public:
  struct Options {
    int64_t dimension = 2;  // in [1, kMaxDimension]
  };
  static absl::StatusOr<std::unique_ptr<NeverUturn>> Create(const Options& options);

  std::string name() const override { return "never_uturn"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;

 private:
  explicit NeverUturn(int64_t dimension) : dimension_(dimension) {}
  int64_t dimension_;
};

// "energy_jump": parameter x[d], gradient 0, and
//   log p(x) = 0 if x == 0 exactly (every coordinate, -0.0 counts as 0),
//   log p(x) = -height otherwise.
// Start a chain AT THE ORIGIN (InitOptions{.radius = 0} or InitializeAt
// zeros). The gradient is 0, so p stays p0 (nonzero almost surely) and
// every leapfrog state after the start is off the origin with
// H - H0 = (height + K) - K = height up to one rounding (|error| <=
// ulp(height + K), below 2.3e-13 for height + K < 2048). Hence:
//   height > 1000 (e.g. 1000.001): the FIRST leapfrog diverges
//     (n_leapfrog = 1, divergent__ = 1) and the chain stays at the origin;
//   height < 1000 (e.g. 999.999): nothing diverges, no U-turn (see
//     NeverUturn), n_leapfrog = 2^max_depth - 1, accept_stat = exp(-height)
//     (0 in double for height > 745), and the chain stays at the origin
//     (the other states have multinomial weight exp(-height)).
// A NaN height gives log p = NaN off the origin: NaN energy, which must count
// as divergent.
class EnergyJump final : public Target {
 public:
  struct Options {
    int64_t dimension = 2;  // in [1, kMaxDimension]
    double height = 1001;   // any double except -inf/+inf (NaN allowed, see above)
  };
  static absl::StatusOr<std::unique_ptr<EnergyJump>> Create(const Options& options);

  std::string name() const override { return "energy_jump"; }
  std::vector<ParameterSpec> parameters() const override;
  double LogDensityGradient(std::span<const double> q,
                            std::span<double> grad) const override;

  double height() const { return height_; }

 private:
  EnergyJump(int64_t dimension, double height) : dimension_(dimension), height_(height) {}
  int64_t dimension_;
  double height_;
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_TARGETS_MOCK_TARGETS_H_
