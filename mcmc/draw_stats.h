// DrawStats: the per-draw sampler statistics, with Stan's column names.
#ifndef AUTOBATCH_MCMC_DRAW_STATS_H_
#define AUTOBATCH_MCMC_DRAW_STATS_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace autobatch::mcmc {

// One transition's statistics. NUTS fills every field as Stan's NUTS does;
// static HMC and RWMH document what they put in each (scalar_hmc.h,
// scalar_rwmh.h).
struct DrawStats {
  double lp = 0;           // lp__: log density of the returned point
  double accept_stat = 0;  // accept_stat__: mean Metropolis prob. (see samplers)
  double stepsize = 0;     // stepsize__: the step size used (after jitter)
  int treedepth = 0;       // treedepth__: doublings accepted
  int64_t n_leapfrog = 0;  // n_leapfrog__: leapfrog steps (gradients) taken
  bool divergent = false;  // divergent__: some leapfrog had H - H0 > max_delta_h
  double energy = 0;       // energy__: Hamiltonian at the returned point
  friend bool operator==(const DrawStats&, const DrawStats&) = default;
};

inline constexpr int kNumDrawStats = 7;

// Stan's column names, in Stan CSV order (the order of DrawStatValues).
inline constexpr std::array<std::string_view, kNumDrawStats> kDrawStatNames = {
    "lp__",         "accept_stat__", "stepsize__", "treedepth__",
    "n_leapfrog__", "divergent__",   "energy__"};

// Positions of n_leapfrog__ and divergent__ in that order.
inline constexpr int kNLeapfrogStat = 4;
inline constexpr int kDivergentStat = 5;

// The statistics as doubles in kDrawStatNames order (divergent__ is 0 or 1).
inline std::array<double, kNumDrawStats> DrawStatValues(const DrawStats& s) {
  return {s.lp,
          s.accept_stat,
          s.stepsize,
          static_cast<double>(s.treedepth),
          static_cast<double>(s.n_leapfrog),
          s.divergent ? 1.0 : 0.0,
          s.energy};
}

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_DRAW_STATS_H_
