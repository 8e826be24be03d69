// Counter-based random numbers (Philox4x32-10 via Random123).
#include "backends/random.h"

#include <algorithm>
#include <cmath>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#include <Random123/philox.h>
#pragma GCC diagnostic pop

#include "support/math/math.h"

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

namespace {

// Philox4x32-10 (Random123's philox4x32 with its default 10 rounds) for N
// lanes in structure-of-arrays form; a 32x32 -> 64-bit product per multiply,
// which vectorizes (vpmuludq).
template <int64_t N>
void PhiloxGroup(uint32_t (&c)[4][N], uint32_t (&k)[2][N]) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      for (int64_t l = 0; l < N; ++l) {
        k[0][l] += PHILOX_W32_0;
        k[1][l] += PHILOX_W32_1;
      }
    }
    for (int64_t l = 0; l < N; ++l) {
      const uint64_t p0 = uint64_t{PHILOX_M4x32_0} * c[0][l];
      const uint64_t p1 = uint64_t{PHILOX_M4x32_1} * c[2][l];
      const uint32_t c1 = c[1][l];
      const uint32_t c3 = c[3][l];
      c[0][l] = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k[0][l];
      c[1][l] = static_cast<uint32_t>(p1);
      c[2][l] = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k[1][l];
      c[3][l] = static_cast<uint32_t>(p0);
    }
  }
}

// PhiloxBitsLanes for m <= N lanes from `start`; lanes past m run on copies
// of the last lane's input.
template <int64_t N>
void PhiloxLanes(const uint64_t* key, const uint64_t* counter, uint64_t block, int64_t start,
                 int64_t m, uint64_t* bits0, uint64_t* bits1) {
  uint32_t c[4][N];
  uint32_t k[2][N];
  for (int64_t l = 0; l < N; ++l) {
    const int64_t src = start + std::min(l, m - 1);
    c[0][l] = static_cast<uint32_t>(block);
    c[1][l] = static_cast<uint32_t>(block >> 32);
    c[2][l] = static_cast<uint32_t>(counter[src]);
    c[3][l] = static_cast<uint32_t>(counter[src] >> 32);
    k[0][l] = static_cast<uint32_t>(key[src]);
    k[1][l] = static_cast<uint32_t>(key[src] >> 32);
  }
  PhiloxGroup<N>(c, k);
  for (int64_t l = 0; l < m; ++l) {
    bits0[start + l] = uint64_t{c[0][l]} | uint64_t{c[1][l]} << 32;
    bits1[start + l] = uint64_t{c[2][l]} | uint64_t{c[3][l]} << 32;
  }
}

}  // namespace

void PhiloxBitsLanes(const uint64_t* key, const uint64_t* counter, uint64_t block,
                     int64_t lanes, uint64_t* bits0, uint64_t* bits1) {
  // Groups of 16 (two independent chains of products per round), and of 8
  // for a short rest (a fused segment's chunk of 8 lanes).
  int64_t start = 0;
  for (; lanes - start > 8; start += 16) {
    PhiloxLanes<16>(key, counter, block, start, std::min<int64_t>(16, lanes - start), bits0,
                    bits1);
  }
  if (start < lanes) PhiloxLanes<8>(key, counter, block, start, lanes - start, bits0, bits1);
}

namespace {

constexpr double kTwoPi = 6.283185307179586;  // the double nearest 2 pi
// Lanes per pass of RandomLanes, so that its values stay on the stack.
constexpr int64_t kLaneChunk = 256;

// BoxMuller on m pairs (u0[l], u1[l]), in place (z0 into u0, z1 into u1),
// with the vector path of log, cos and sin: the same bits as BoxMuller.
// m <= kLaneChunk.
void BoxMullerLanes(double* u0, double* u1, int64_t m) {
  double rho[kLaneChunk];
  double c[kLaneChunk];
  math::Eval(math::Fn::kLog, u0, rho, m);
  for (int64_t l = 0; l < m; ++l) {
    rho[l] = std::sqrt(-2.0 * rho[l]);
    u1[l] = kTwoPi * u1[l];  // theta
  }
  math::Eval(math::Fn::kCos, u1, c, m);
  math::Eval(math::Fn::kSin, u1, u1, m);
  for (int64_t l = 0; l < m; ++l) {
    u0[l] = rho[l] * c[l];
    u1[l] = rho[l] * u1[l];
  }
}

}  // namespace

void RandomLanes(const uint64_t* key, const uint64_t* counter, int64_t lanes,
                 int64_t elements, bool normal, double* out) {
  uint64_t bits[2][kLaneChunk];
  double values[2][kLaneChunk];
  for (int64_t start = 0; start < lanes; start += kLaneChunk) {
    const int64_t m = std::min(kLaneChunk, lanes - start);
    for (int64_t i = 0; i < elements; i += 2) {
      PhiloxBitsLanes(key + start, counter + start, static_cast<uint64_t>(i / 2), m, bits[0],
                      bits[1]);
      for (int64_t l = 0; l < m; ++l) {
        values[0][l] = UniformFromBits(bits[0][l]);
        values[1][l] = UniformFromBits(bits[1][l]);
      }
      if (normal) BoxMullerLanes(values[0], values[1], m);
      for (int64_t l = 0; l < m; ++l) {
        double* o = out + (start + l) * elements;
        o[i] = values[0][l];
        if (i + 1 < elements) o[i + 1] = values[1][l];
      }
    }
  }
}

double UniformFromBits(uint64_t bits) {
  // 52 bits, not 53: (2^53 - 1) + 0.5 is not representable and would round
  // to 2^53, i.e. to u = 1.
  return (static_cast<double>(bits >> 12) + 0.5) * 0x1p-52;
}

std::array<double, 2> BoxMuller(double u0, double u1) {
  const double rho = std::sqrt(-2.0 * math::Log(u0));
  const double theta = kTwoPi * u1;
  return {rho * math::Cos(theta), rho * math::Sin(theta)};
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
