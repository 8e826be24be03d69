// Tests of ChainRng: keys, counter discipline, and agreement with the Philox
// helpers that define the random_* primitives.
#include "mcmc/chain_rng.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "backends/random.h"
#include "gtest/gtest.h"

namespace autobatch::mcmc {
namespace {

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

TEST(SplitMix64Test, MatchesTheReferenceSequence) {
  // The first outputs of SplitMix64 seeded with 0 (Vigna's splitmix64.c):
  // output k is the mix of k * golden gamma, i.e. SplitMix64((k-1) * gamma).
  EXPECT_EQ(SplitMix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMix64(0x9e3779b97f4a7c15ULL), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMix64(0x3c6ef372fe94f82aULL), 0x06c45d188009454fULL);
}

TEST(ChainKeyTest, IsTheDocumentedComposition) {
  for (uint64_t seed : {0ULL, 1ULL, 20240601ULL, ~0ULL}) {
    for (uint64_t chain : {0ULL, 1ULL, 5ULL, 1ULL << 40}) {
      EXPECT_EQ(ChainKey(seed, chain), SplitMix64(seed ^ SplitMix64(chain)));
    }
  }
}

TEST(ChainKeyTest, DistinctChainsAndSeedsGetDistinctKeys) {
  std::set<uint64_t> keys;
  for (uint64_t chain = 0; chain < 10000; ++chain) keys.insert(ChainKey(42, chain));
  EXPECT_EQ(keys.size(), 10000u);
  // Neighbouring seeds do not give related keys for the same chain.
  for (uint64_t chain = 0; chain < 100; ++chain) {
    EXPECT_NE(ChainKey(42, chain), ChainKey(43, chain));
    EXPECT_NE(ChainKey(42, chain), ChainKey(42, chain) + 1);
  }
  // Swapping seed and chain id gives a different key (no symmetry).
  EXPECT_NE(ChainKey(3, 7), ChainKey(7, 3));
}

TEST(ChainRngTest, MakeChainRngStartsAtTheGivenCounter) {
  ChainRng rng = MakeChainRng(9, 4);
  EXPECT_EQ(rng.key, ChainKey(9, 4));
  EXPECT_EQ(rng.counter, 0u);
  EXPECT_EQ(MakeChainRng(9, 4, 17).counter, 17u);
}

TEST(ChainRngTest, NextUniformIsElementZeroAtTheCurrentCounter) {
  ChainRng rng = MakeChainRng(1, 2, 100);
  for (uint64_t k = 0; k < 50; ++k) {
    const double expected = PhiloxUniform(rng.key, 100 + k, /*index=*/0);
    const double u = NextUniform(rng);
    EXPECT_TRUE(SameBits(u, expected)) << k;
    EXPECT_EQ(rng.counter, 101 + k);
    EXPECT_GT(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(ChainRngTest, NextNormalsIsOneCounterStepPerVector) {
  for (size_t n : {size_t{1}, size_t{2}, size_t{7}, size_t{10}, size_t{101}}) {
    ChainRng rng = MakeChainRng(3, 8, 5);
    std::vector<double> z(n);
    NextNormals(rng, z);
    EXPECT_EQ(rng.counter, 6u) << n;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_TRUE(SameBits(z[i], PhiloxNormal(rng.key, 5, static_cast<int64_t>(i))))
          << "n=" << n << " i=" << i;
    }
    // A prefix of a longer draw is the shorter draw (element i does not
    // depend on n), as for the primitive.
    ChainRng again = MakeChainRng(3, 8, 5);
    std::vector<double> longer(n + 3);
    NextNormals(again, longer);
    for (size_t i = 0; i < n; ++i) EXPECT_TRUE(SameBits(z[i], longer[i]));
  }
  ChainRng rng = MakeChainRng(3, 8, 5);
  NextNormals(rng, std::span<double>());
  EXPECT_EQ(rng.counter, 6u);
}

TEST(ChainRngTest, DrawsDependOnlyOnKeyAndCounter) {
  // Interleaving draws of two chains does not change either stream.
  ChainRng a = MakeChainRng(11, 0), b = MakeChainRng(11, 1);
  std::vector<double> alone_a, alone_b, mixed_a, mixed_b;
  {
    ChainRng x = a;
    for (int k = 0; k < 20; ++k) alone_a.push_back(NextUniform(x));
    ChainRng y = b;
    for (int k = 0; k < 20; ++k) alone_b.push_back(NextUniform(y));
  }
  for (int k = 0; k < 20; ++k) {
    mixed_a.push_back(NextUniform(a));
    mixed_b.push_back(NextUniform(b));
  }
  EXPECT_EQ(alone_a, mixed_a);
  EXPECT_EQ(alone_b, mixed_b);
  EXPECT_NE(alone_a, alone_b);
}

TEST(ChainRngTest, UniformsAndNormalsHaveTheRightMoments) {
  ChainRng rng = MakeChainRng(2024, 3);
  constexpr int kN = 200000;
  double sum_u = 0, sum_z = 0, sum_z2 = 0;
  std::vector<double> z(kN);
  for (int k = 0; k < kN; ++k) sum_u += NextUniform(rng);
  NextNormals(rng, z);
  for (double x : z) {
    sum_z += x;
    sum_z2 += x * x;
  }
  // 6-sigma bands: uniform sd 1/sqrt(12), normal mean sd 1, x^2 sd sqrt(2).
  EXPECT_NEAR(sum_u / kN, 0.5, 6 * std::sqrt(1.0 / 12 / kN));
  EXPECT_NEAR(sum_z / kN, 0.0, 6 * std::sqrt(1.0 / kN));
  EXPECT_NEAR(sum_z2 / kN, 1.0, 6 * std::sqrt(2.0 / kN));
}

}  // namespace
}  // namespace autobatch::mcmc
