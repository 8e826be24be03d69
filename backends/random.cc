// Counter-based random numbers (Philox4x32-10 via Random123).
#include "backends/random.h"

#include <cmath>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#include <Random123/philox.h>
#pragma GCC diagnostic pop

namespace autobatch {

std::array<uint64_t, 2> PhiloxBits(uint64_t key, uint64_t counter, uint64_t block) {
  r123::Philox4x32::ctr_type ctr = {{static_cast<uint32_t>(block),
                                     static_cast<uint32_t>(block >> 32),
                                     static_cast<uint32_t>(counter),
                                     static_cast<uint32_t>(counter >> 32)}};
  r123::Philox4x32::key_type k = {
      {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)}};
  r123::Philox4x32::ctr_type r = r123::Philox4x32()(ctr, k);
  return {uint64_t{r[0]} | uint64_t{r[1]} << 32, uint64_t{r[2]} | uint64_t{r[3]} << 32};
}

double UniformFromBits(uint64_t bits) {
  // 52 bits, not 53: (2^53 - 1) + 0.5 is not representable and would round
  // to 2^53, i.e. to u = 1.
  return (static_cast<double>(bits >> 12) + 0.5) * 0x1p-52;
}

std::array<double, 2> BoxMuller(double u0, double u1) {
  double rho = std::sqrt(-2.0 * std::log(u0));
  double theta = 6.283185307179586 * u1;
  return {rho * std::cos(theta), rho * std::sin(theta)};
}

double PhiloxUniform(uint64_t key, uint64_t counter, int64_t index) {
  std::array<uint64_t, 2> bits =
      PhiloxBits(key, counter, static_cast<uint64_t>(index) / 2);
  return UniformFromBits(bits[index % 2]);
}

double PhiloxNormal(uint64_t key, uint64_t counter, int64_t index) {
  std::array<uint64_t, 2> bits =
      PhiloxBits(key, counter, static_cast<uint64_t>(index) / 2);
  return BoxMuller(UniformFromBits(bits[0]), UniformFromBits(bits[1]))[index % 2];
}

}  // namespace autobatch
