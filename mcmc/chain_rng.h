// ChainRng: a chain's random stream as two plain integers, so a batched
// per-example program can hold it in IR variables and reproduce it bit for bit.
//
// A chain's stream is the Philox stream of backends/random.h keyed by
// ChainKey(seed, chain_id). The stream has no hidden state: the pair
// (key, counter) IS the state, and every draw is a pure function of it. Each
// draw uses the CURRENT counter and then advances it by exactly one:
//
//   NextUniform(rng)       = PhiloxUniform(key, counter, /*index=*/0)
//                            == element 0 of random_uniform(key, counter) with
//                               attr shape [] (or [1]); then counter += 1
//   NextNormals(rng, out)  = PhiloxNormal(key, counter, i) for i = 0..n-1
//                            == random_normal(key, counter) with attr shape
//                               [n]; then counter += 1 (ONE step per vector)
//
// so the batched equivalent of a draw is one random_* op on the lane's (key,
// counter) variables followed by `counter = counter + 1` (u64 add, wrapping).
// Which draws a sampler makes, in what order, is documented with the sampler
// (mcmc/sampler_config.h summarizes all three).
#ifndef AUTOBATCH_MCMC_CHAIN_RNG_H_
#define AUTOBATCH_MCMC_CHAIN_RNG_H_

#include <cstdint>
#include <span>

namespace autobatch::mcmc {

struct ChainRng {
  uint64_t key = 0;
  uint64_t counter = 0;
};

// The SplitMix64 output function (Steele, Lea, Flood 2014; the finalizer of
// java.util.SplittableRandom):
//   z += 0x9e3779b97f4a7c15
//   z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
//   z = (z ^ (z >> 27)) * 0x94d049bb133111eb
//   return z ^ (z >> 31)
// A bijection on 64-bit integers with full avalanche.
uint64_t SplitMix64(uint64_t z);
// SplitMix64's increment (2^64 / the golden ratio): a generator whose state
// advances by it and returns SplitMix64(the state before) is SplitMix64's.
inline constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;

// The Philox key of chain `chain_id` under user seed `seed`:
//   ChainKey(seed, chain_id) = SplitMix64(seed ^ SplitMix64(chain_id)).
// For a fixed seed, distinct chain ids give distinct keys (a composition of
// bijections); neighbouring ids and seeds give unrelated keys. Keys are
// computed on the host and handed to batched programs as u64 inputs.
uint64_t ChainKey(uint64_t seed, uint64_t chain_id);

// The stream of chain `chain_id` at counter `counter` (0 = its start).
inline ChainRng MakeChainRng(uint64_t seed, uint64_t chain_id, uint64_t counter = 0) {
  return ChainRng{ChainKey(seed, chain_id), counter};
}

// The stream of the generated quantities of draw `draw` (0-based, sampling
// draws only) of chain `chain_id`: a key of its own,
//   SplitMix64(ChainKey(seed, chain_id) ^ kGeneratedQuantitiesStream),
// and counter draw * 2^32, so the generated quantities' body may make 2^32
// draws (random ops) per sampling draw before it reaches the next draw's.
// The sampler's streams are never touched: adding generated quantities does
// not change a draw. A draw's values depend on (seed, chain id, draw) only,
// not on the batch, the shards or the other chains.
inline constexpr uint64_t kGeneratedQuantitiesStream = 0x67656e5f7175616eULL;  // "gen_quan"
ChainRng GeneratedQuantitiesRng(uint64_t seed, uint64_t chain_id, int64_t draw);
// The same for warmup draw `draw` (saved with SampleOptions::save_warmup),
// with a key of its own (kWarmupGeneratedQuantitiesStream in place of
// kGeneratedQuantitiesStream), so saving warmup changes no sampling draw's
// generated quantities.
inline constexpr uint64_t kWarmupGeneratedQuantitiesStream = 0x67656e5f7761726dULL;  // "gen_warm"
ChainRng WarmupGeneratedQuantitiesRng(uint64_t seed, uint64_t chain_id, int64_t draw);

// One uniform in the open interval (0, 1) (never 0 or 1; see
// backends/random.h); advances the counter by 1.
double NextUniform(ChainRng& rng);

// Fills `out` with out.size() standard normals (one Philox counter value for
// the whole vector: element i is PhiloxNormal(key, counter, i)); advances the
// counter by 1, also when `out` is empty. Does not allocate.
void NextNormals(ChainRng& rng, std::span<double> out);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_CHAIN_RNG_H_
