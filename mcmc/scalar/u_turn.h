// NUTS's U-turn checks at the merge of two trajectory parts, with the
// summation order every sampler that must give ScalarNuts's bits shares.
#ifndef AUTOBATCH_MCMC_SCALAR_U_TURN_H_
#define AUTOBATCH_MCMC_SCALAR_U_TURN_H_

#include <cstdint>

namespace autobatch::mcmc {

// The three U-turn checks at the merge of a trajectory part A (first in
// time) with the part B after it, U(minus, plus, r) = dot(plus, r) > 0 &&
// dot(minus, r) > 0 (each sum in index order, SamplerDot):
//   U(sharp_beg,   sharp_end,   rho_a + rho_b)      around the merged part
//   U(sharp_beg,   sharp_b_beg, rho_a + p_b_beg)    A extended by B's first
//   U(sharp_a_end, sharp_end,   rho_b + p_a_end)    B extended by A's last
// and writes rho_out = rho_a + rho_b (may alias rho_a or rho_b). All six
// sums run in one pass: independent accumulators hide the latency of the
// ordered sums, and the bits are those of six separate `dot`s.
struct MergeInputs {
  const double* sharp_beg;    // A's first point
  const double* sharp_end;    // B's last point
  const double* sharp_a_end;  // A's last point
  const double* sharp_b_beg;  // B's first point
  const double* rho_a;
  const double* rho_b;
  const double* p_a_end;
  const double* p_b_beg;
  double* rho_out;
};

inline bool MergeChecks(const MergeInputs& in, int64_t d) {
  double s1_plus = 0, s1_minus = 0, s2_plus = 0, s2_minus = 0, s3_plus = 0, s3_minus = 0;
  for (int64_t i = 0; i < d; ++i) {
    const double rho_a = in.rho_a[i], rho_b = in.rho_b[i];
    const double r1 = rho_a + rho_b;
    const double r2 = rho_a + in.p_b_beg[i];
    const double r3 = rho_b + in.p_a_end[i];
    in.rho_out[i] = r1;
    if (i == 0) {
      s1_plus = in.sharp_end[0] * r1;
      s1_minus = in.sharp_beg[0] * r1;
      s2_plus = in.sharp_b_beg[0] * r2;
      s2_minus = in.sharp_beg[0] * r2;
      s3_plus = in.sharp_end[0] * r3;
      s3_minus = in.sharp_a_end[0] * r3;
    } else {
      s1_plus = s1_plus + in.sharp_end[i] * r1;
      s1_minus = s1_minus + in.sharp_beg[i] * r1;
      s2_plus = s2_plus + in.sharp_b_beg[i] * r2;
      s2_minus = s2_minus + in.sharp_beg[i] * r2;
      s3_plus = s3_plus + in.sharp_end[i] * r3;
      s3_minus = s3_minus + in.sharp_a_end[i] * r3;
    }
  }
  return s1_plus > 0 && s1_minus > 0 && s2_plus > 0 && s2_minus > 0 && s3_plus > 0 &&
         s3_minus > 0;
}

// MergeChecks for two single points a, b: all three checks are then
// U(sharp_a, sharp_b, p_a + p_b), computed once.
inline bool PairCheck(const double* sharp_a, const double* sharp_b, const double* p_a,
               const double* p_b, double* rho_out, int64_t d) {
  double r = p_a[0] + p_b[0];
  rho_out[0] = r;
  double plus = sharp_b[0] * r;
  double minus = sharp_a[0] * r;
  for (int64_t i = 1; i < d; ++i) {
    r = p_a[i] + p_b[i];
    rho_out[i] = r;
    plus = plus + sharp_b[i] * r;
    minus = minus + sharp_a[i] * r;
  }
  return plus > 0 && minus > 0;
}

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_SCALAR_U_TURN_H_
