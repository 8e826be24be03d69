// Inputs of the pea-nuts sample (dimension 8) whose lanes take different
// paths, for the tests that compare a batch's bits across ways of running
// it (shards, MPI ranks).
#ifndef AUTOBATCH_TESTS_FRONTEND_PEANUTS_INPUTS_H_
#define AUTOBATCH_TESTS_FRONTEND_PEANUTS_INPUTS_H_

#include <cstdint>
#include <vector>

#include "backends/tensor.h"

namespace autobatch {

// `batch` lanes of (x f64[8], seed i64, trajectories i64): lane l has
// x_i = 0.1 l - 0.3 i, seed 31 l + 5 and 2 trajectories.
inline std::vector<Tensor> PeaNutsInputs(int64_t batch) {
  std::vector<double> x;
  std::vector<int64_t> seed, traj;
  for (int64_t l = 0; l < batch; ++l) {
    for (int i = 0; i < 8; ++i) x.push_back(0.1 * static_cast<double>(l) - 0.3 * i);
    seed.push_back(l * 31 + 5);
    traj.push_back(2);
  }
  return {*Tensor::FromVector(x, {8}), *Tensor::FromVector(seed), *Tensor::FromVector(traj)};
}

}  // namespace autobatch

#endif  // AUTOBATCH_TESTS_FRONTEND_PEANUTS_INPUTS_H_
