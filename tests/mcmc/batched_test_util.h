// Helpers shared by the batched sampler tests: bit-for-bit chain comparison,
// chain ids, and the VMs every test runs on.
#ifndef AUTOBATCH_TESTS_MCMC_BATCHED_TEST_UTIL_H_
#define AUTOBATCH_TESTS_MCMC_BATCHED_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/model/program_model.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/model/targets/registry.h"

namespace autobatch::mcmc {

inline bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

inline std::unique_ptr<Target> MakeOrDie(const std::string& name, const nlohmann::json& params) {
  absl::StatusOr<std::unique_ptr<Target>> t = MakeTarget(name, params);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

// Every draw, statistic, final state and stream position, bit for bit.
inline void ExpectSameChain(const ScalarChainResult& batched, const ScalarChainResult& scalar,
                     const std::string& where) {
  SCOPED_TRACE(where + ", chain id " + std::to_string(scalar.chain_id));
  ASSERT_EQ(batched.chain_id, scalar.chain_id);
  ASSERT_EQ(batched.dimension, scalar.dimension);
  ASSERT_EQ(batched.draws.size(), scalar.draws.size());
  ASSERT_EQ(batched.stats.size(), scalar.stats.size());
  for (size_t i = 0; i < scalar.draws.size(); ++i) {
    ASSERT_TRUE(SameBits(batched.draws[i], scalar.draws[i]))
        << "draw " << i / scalar.dimension << " coordinate " << i % scalar.dimension << ": "
        << batched.draws[i] << " vs " << scalar.draws[i];
  }
  for (size_t n = 0; n < scalar.stats.size(); ++n) {
    const auto a = DrawStatValues(batched.stats[n]);
    const auto b = DrawStatValues(scalar.stats[n]);
    for (int s = 0; s < kNumDrawStats; ++s) {
      ASSERT_TRUE(SameBits(a[s], b[s]))
          << "draw " << n << " " << kDrawStatNames[s] << ": " << a[s] << " vs " << b[s];
    }
  }
  ASSERT_EQ(batched.final_state.q.size(), scalar.final_state.q.size());
  for (size_t i = 0; i < scalar.final_state.q.size(); ++i) {
    EXPECT_TRUE(SameBits(batched.final_state.q[i], scalar.final_state.q[i]));
    EXPECT_TRUE(SameBits(batched.final_state.grad[i], scalar.final_state.grad[i]));
  }
  EXPECT_TRUE(SameBits(batched.final_state.logp, scalar.final_state.logp));
  EXPECT_EQ(batched.final_rng.key, scalar.final_rng.key);
  EXPECT_EQ(batched.final_rng.counter, scalar.final_rng.counter);
}

inline std::vector<uint64_t> ChainIds(int n) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<uint64_t>(i) * 7919 % 1009 + 3);
  return ids;
}

inline std::map<uint64_t, ScalarChainResult> ByChainId(std::vector<ScalarChainResult> results) {
  std::map<uint64_t, ScalarChainResult> out;
  for (ScalarChainResult& r : results) out.emplace(r.chain_id, std::move(r));
  return out;
}

struct VmCase {
  const char* name;
  CallOptions options;
};
inline std::vector<VmCase> BatchedVms() {
  CallOptions stack;
  stack.vm = Vm::kStack;
  CallOptions stackless;
  stackless.vm = Vm::kStackless;
  // The vectors of the test targets (f64[2] to f64[20]) kept as frame
  // stacks, the scalars with a separate top.
  CallOptions frames = stack;
  frames.frame_stack_min_lane_bytes = 16;
  return {{"stack", stack}, {"stackless", stackless}, {"stack/frame stacks", frames}};
}

// A model written as a program against a hand-written model of the same
// density at `points` points q (points x dimension, lane-major): their log
// densities differ by a constant (one may keep constants the other drops),
// so differences between consecutive points must agree, and so must the
// gradients, within 1e-12 x (1 + the sum of the absolute values involved).
inline void ExpectSameDensityUpToAConstant(const ProgramModel& program, const Model& hand,
                                           const std::vector<double>& q, int64_t points) {
  const int64_t d = program.dimension();
  ASSERT_EQ(hand.dimension(), d);
  ASSERT_EQ(static_cast<int64_t>(q.size()), points * d);
  std::vector<double> logp(points), grad(q.size());
  program.LogDensityGradientBatch(q.data(), logp.data(), grad.data(), points, nullptr);
  ASSERT_TRUE(program.last_error().ok()) << program.last_error().ToString();
  std::vector<double> hand_logp(points), hand_grad(q.size());
  for (int64_t p = 0; p < points; ++p) {
    hand_logp[p] = hand.LogDensityGradient({q.data() + p * d, static_cast<size_t>(d)},
                                           {hand_grad.data() + p * d, static_cast<size_t>(d)});
  }
  for (int64_t p = 1; p < points; ++p) {
    const double scale = 1 + std::abs(logp[p]) + std::abs(logp[p - 1]) + std::abs(hand_logp[p]) +
                         std::abs(hand_logp[p - 1]);
    EXPECT_NEAR(logp[p] - logp[p - 1], hand_logp[p] - hand_logp[p - 1], 1e-12 * scale)
        << "points " << p - 1 << " and " << p;
    for (int64_t i = 0; i < d; ++i) {
      const double g = grad[p * d + i], h = hand_grad[p * d + i];
      EXPECT_NEAR(g, h, 1e-12 * (1 + std::abs(h) + scale)) << "point " << p << " coordinate " << i;
    }
  }
}

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_TESTS_MCMC_BATCHED_TEST_UTIL_H_
