// RunScalarLoop: the scalar reference the NUTS benchmarks measure against,
// ScalarNuts looped over the chains one after another.
#ifndef AUTOBATCH_BENCH_SCALAR_LOOP_H_
#define AUTOBATCH_BENCH_SCALAR_LOOP_H_

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "mcmc/model/model.h"
#include "mcmc/sampler_config.h"
#include "mcmc/scalar/scalar_nuts.h"

namespace autobatch::mcmc {

// `draws` transitions of each chain, from its starting state and stream.
// `Start` has chain_id, state (ChainState) and rng (ChainRng), as
// BatchedChain does.
template <typename Start>
std::vector<ScalarChainResult> RunScalarLoop(const Model& model, const SamplerConfig& config,
                                             const std::vector<Start>& starts, int64_t draws) {
  ScalarNuts nuts(model, config);
  const int64_t d = model.dimension();
  std::vector<ScalarChainResult> out;
  out.reserve(starts.size());
  for (const Start& start : starts) {
    ScalarChainResult r;
    r.chain_id = start.chain_id;
    r.dimension = d;
    r.draws.resize(static_cast<size_t>(draws * d));
    r.stats.resize(static_cast<size_t>(draws));
    ChainState state = start.state;
    ChainRng rng = start.rng;
    for (int64_t n = 0; n < draws; ++n) {
      nuts.Transition(state, rng, &r.stats[static_cast<size_t>(n)]);
      std::copy(state.q.begin(), state.q.end(), r.draws.begin() + n * d);
    }
    r.final_state = std::move(state);
    r.final_rng = rng;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_BENCH_SCALAR_LOOP_H_
