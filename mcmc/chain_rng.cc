// ChainRng: per-chain Philox streams for the scalar samplers.
#include "mcmc/chain_rng.h"

#include <array>
#include <cstddef>

#include "backends/random.h"

namespace autobatch::mcmc {

uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t ChainKey(uint64_t seed, uint64_t chain_id) {
  return SplitMix64(seed ^ SplitMix64(chain_id));
}

ChainRng GeneratedQuantitiesRng(uint64_t seed, uint64_t chain_id, int64_t draw) {
  return ChainRng{SplitMix64(ChainKey(seed, chain_id) ^ kGeneratedQuantitiesStream),
                  static_cast<uint64_t>(draw) << 32};
}

ChainRng WarmupGeneratedQuantitiesRng(uint64_t seed, uint64_t chain_id, int64_t draw) {
  return ChainRng{SplitMix64(ChainKey(seed, chain_id) ^ kWarmupGeneratedQuantitiesStream),
                  static_cast<uint64_t>(draw) << 32};
}

double NextUniform(ChainRng& rng) {
  const double u = PhiloxUniform(rng.key, rng.counter, /*index=*/0);
  ++rng.counter;
  return u;
}

void NextNormals(ChainRng& rng, std::span<double> out) {
  // One Philox block gives two normals; PhiloxNormal(.., i) would compute each
  // block twice. Same construction, same bits (backends/random.h).
  const size_t n = out.size();
  for (size_t i = 0; i < n; i += 2) {
    const std::array<uint64_t, 2> bits = PhiloxBits(rng.key, rng.counter, i / 2);
    const std::array<double, 2> z = BoxMuller(UniformFromBits(bits[0]), UniformFromBits(bits[1]));
    out[i] = z[0];
    if (i + 1 < n) out[i + 1] = z[1];
  }
  ++rng.counter;
}

}  // namespace autobatch::mcmc
