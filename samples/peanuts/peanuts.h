// Sample: "pea-nuts", a synthetic program shaped like NUTS (TFP's name).
#ifndef AUTOBATCH_SAMPLES_PEANUTS_PEANUTS_H_
#define AUTOBATCH_SAMPLES_PEANUTS_PEANUTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "frontend/context.h"
#include "ir/ir.h"

namespace autobatch::samples {

struct PeaNutsConfig {
  int64_t dimension = 100;  // state size of the leaf
  int64_t max_depth = 8;    // trajectory depths are uniform in [0, max_depth]
  // Leaf product: the per-lane matvec (bit-stable) or one matrix product over
  // the active lanes (matvec_batched, faster, bits depend on the batch).
  bool batched_product = false;
};

// A fixed dimension x dimension matrix with entries of size ~1/sqrt(d),
// generated from a fixed seed (identical on every machine).
std::shared_ptr<const DenseMatrix> PeaNutsMatrix(int64_t dimension);

// Registers
//   peanuts(x: f64[d], seed: i64, trajectories: i64) -> f64[d]
// on `ctx`: a While loop over `trajectories`; trajectory t has depth
// TrajectoryDepth(seed, t, max_depth) and runs tree(x, depth), a recursion
// that doubles like NUTS: tree(x, 0) = leaf(x) = tanh(M x), and
// tree(x, k) = tree(tree(x, k - 1), k - 1), so 2^depth leaves.
BatchFunction DefinePeaNuts(Context& ctx, const PeaNutsConfig& config);

// The per-trajectory depth, as the program computes it with wrapping i64
// arithmetic: h = seed * 6364136223846793005 + t * 1442695040888963407;
// depth = |(h / 65536) % (max_depth + 1)|.
int64_t TrajectoryDepth(int64_t seed, int64_t t, int64_t max_depth);

// Number of leaves lane (seed, trajectories) computes: sum over t of 2^depth.
int64_t PeaNutsLeaves(int64_t seed, int64_t trajectories, int64_t max_depth);

// The same algorithm in plain C++ for one example (what a user would write
// by hand): x is updated in place; `scratch` has d entries. Uses the same
// per-lane arithmetic order as the matvec primitive, and std::tanh.
void PeaNutsNative(const DenseMatrix& m, int64_t seed, int64_t trajectories,
                   int64_t max_depth, double* x, double* scratch);

}  // namespace autobatch::samples

#endif  // AUTOBATCH_SAMPLES_PEANUTS_PEANUTS_H_
