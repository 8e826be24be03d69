// Sample: "pea-nuts", a synthetic program shaped like NUTS (TFP's name).
#include "samples/peanuts/peanuts.h"

#include <cmath>
#include <cstdlib>

namespace autobatch::samples {
namespace {

int64_t WrapMulAdd(int64_t a, uint64_t b, int64_t c, uint64_t d) {
  uint64_t h = static_cast<uint64_t>(a) * b + static_cast<uint64_t>(c) * d;
  return static_cast<int64_t>(h);
}

constexpr uint64_t kSeedMul = 6364136223846793005ull;
constexpr uint64_t kStepMul = 1442695040888963407ull;

void Tree(const DenseMatrix& m, int64_t depth, double* x, double* scratch) {
  if (depth == 0) {
    const int64_t d = m.cols;
    for (int64_t i = 0; i < d; ++i) scratch[i] = 0.0;
    for (int64_t j = 0; j < d; ++j) {
      const double xj = x[j];
      for (int64_t i = 0; i < d; ++i) scratch[i] += m.data[i * d + j] * xj;
    }
    for (int64_t i = 0; i < d; ++i) x[i] = std::tanh(scratch[i]);
    return;
  }
  Tree(m, depth - 1, x, scratch);
  Tree(m, depth - 1, x, scratch);
}

}  // namespace

std::shared_ptr<const DenseMatrix> PeaNutsMatrix(int64_t dimension) {
  auto m = std::make_shared<DenseMatrix>();
  m->rows = m->cols = dimension;
  m->data.resize(static_cast<size_t>(dimension * dimension));
  uint64_t state = 0x9E3779B97F4A7C15ull;
  const double scale = 2.0 / std::sqrt(static_cast<double>(dimension));
  for (double& v : m->data) {
    state = state * kSeedMul + kStepMul;  // LCG; top 53 bits -> [0, 1)
    double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    v = (u - 0.5) * scale;
  }
  return m;
}

int64_t TrajectoryDepth(int64_t seed, int64_t t, int64_t max_depth) {
  int64_t h = WrapMulAdd(seed, kSeedMul, t, kStepMul);
  return std::llabs((h / 65536) % (max_depth + 1));
}

int64_t PeaNutsLeaves(int64_t seed, int64_t trajectories, int64_t max_depth) {
  int64_t leaves = 0;
  for (int64_t t = 0; t < trajectories; ++t) {
    leaves += int64_t{1} << TrajectoryDepth(seed, t, max_depth);
  }
  return leaves;
}

void PeaNutsNative(const DenseMatrix& m, int64_t seed, int64_t trajectories,
                   int64_t max_depth, double* x, double* scratch) {
  for (int64_t t = 0; t < trajectories; ++t) {
    Tree(m, TrajectoryDepth(seed, t, max_depth), x, scratch);
  }
}

BatchFunction DefinePeaNuts(Context& ctx, const PeaNutsConfig& config) {
  std::shared_ptr<const DenseMatrix> matrix = PeaNutsMatrix(config.dimension);
  const bool batched = config.batched_product;
  BatchFunction tree =
      ctx.Declare("tree", {.param_names = {"x", "depth"}});
  ctx.Batch(tree)([tree, matrix, batched](Builder& b, Value x, Value depth) {
    Var out = b.Local("out");
    b.If(depth == 0)
        .Then([&] {
          out = tanh(batched ? matvec_batched(matrix, x) : matvec(matrix, x));
        })
        .Else([&] {
          Value half = tree(x, depth - 1);
          out = tree(half, depth - 1);
        });
    return out;
  });
  const int64_t max_depth = config.max_depth;
  return ctx.Batch("peanuts", {.param_names = {"x0", "seed", "trajectories"}})(
      [tree, max_depth](Builder& b, Value x0, Value seed, Value trajectories) {
        Var x = b.Local("x", x0);
        Var t = b.Local("t", trajectories - trajectories);
        b.While([&] { return t < trajectories; }).Do([&] {
          Value h = seed * static_cast<int64_t>(kSeedMul) +
                    t * static_cast<int64_t>(kStepMul);
          Value depth = abs((h / 65536) % (max_depth + 1));
          x = tree(x, depth);
          t = t + 1;
        });
        return x;
      });
}

}  // namespace autobatch::samples
