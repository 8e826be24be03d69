// Measures the dense/compact crossover: for a cheap block and a heavy block,
// the time per block execution in each mode as the active fraction varies.
//
// Usage: dense_compact_bench [--batch N] [--reps N]
// Prints one row per (kernel, active fraction) with both times and their
// ratio; the crossover is where compact stops being faster. Figures go to
// docs/BENCHMARKS.md together with this command.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/ir.h"

namespace autobatch {
namespace {

double SecondsPerRun(Backend& backend, const std::vector<PrimOp>& ops,
                     std::vector<Tensor>& vars, const LaneSet& lanes,
                     ExecMode mode, int reps) {
  std::vector<const Tensor*> ins;
  std::vector<Tensor*> outs;
  auto run_block = [&] {
    for (const PrimOp& op : ops) {
      ins.clear();
      outs.clear();
      for (VarId v : op.inputs) ins.push_back(&vars[v.value]);
      for (VarId v : op.outputs) outs.push_back(&vars[v.value]);
      absl::Status s = backend.RunOp(op, ins, outs, lanes, mode, nullptr);
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        std::exit(1);
      }
    }
  };
  run_block();  // warm up scratch buffers
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) run_block();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count() /
         reps;
}

PrimOp Op(Primitive p, std::vector<int> in, int out) {
  PrimOp op;
  op.prim = p;
  for (int i : in) op.inputs.push_back(VarId(i));
  op.outputs.push_back(VarId(out));
  return op;
}

int Main(int argc, char** argv) {
  int64_t batch = 1024;
  int reps = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  std::unique_ptr<Backend> backend = MakeBackend(BackendKind::kEigen);
  std::mt19937_64 rng(1);

  // Cheap block: 6 scalar f64 elementwise ops (a NUTS bookkeeping block).
  std::vector<Tensor> cheap_vars;
  for (int i = 0; i < 8; ++i) {
    cheap_vars.push_back(backend->Allocate(Scalar(DType::kF64), batch));
    double* d = cheap_vars.back().data<double>();
    for (int64_t l = 0; l < batch; ++l) d[l] = 1.0 + 0.001 * static_cast<double>(l);
  }
  std::vector<PrimOp> cheap = {Op(Primitive::kAdd, {0, 1}, 2), Op(Primitive::kMul, {2, 1}, 3),
                               Op(Primitive::kSub, {3, 0}, 4), Op(Primitive::kExp, {4}, 5),
                               Op(Primitive::kMax, {5, 2}, 6), Op(Primitive::kLt, {6, 3}, 7)};
  cheap_vars[7] = backend->Allocate(Scalar(DType::kBool), batch);

  // Heavy block: matvec with a 100x100 matrix, then tanh (a leapfrog's gradient).
  const int64_t d = 100;
  auto matrix = std::make_shared<DenseMatrix>();
  matrix->rows = matrix->cols = d;
  for (int64_t i = 0; i < d * d; ++i) {
    matrix->data.push_back(std::normal_distribution<double>(0, 0.1)(rng));
  }
  std::vector<Tensor> heavy_vars;
  for (int i = 0; i < 3; ++i) heavy_vars.push_back(backend->Allocate(Vector(DType::kF64, d), batch));
  PrimOp mv = Op(Primitive::kMatVec, {0}, 1);
  mv.attrs.matrix = matrix;
  std::vector<PrimOp> heavy = {mv, Op(Primitive::kTanh, {1}, 2)};

  std::printf("batch %lld, %d reps per point (times in microseconds per block)\n",
              static_cast<long long>(batch), reps);
  std::printf("%-8s %8s %12s %12s %10s\n", "block", "active", "dense_us", "compact_us",
              "dense/compact");
  for (const char* which : {"cheap", "heavy"}) {
    bool is_heavy = which[0] == 'h';
    for (double fraction : {0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0}) {
      std::vector<uint8_t> mask(static_cast<size_t>(batch), 0);
      for (int64_t l = 0; l < batch; ++l) {
        mask[l] = std::uniform_real_distribution<double>()(rng) < fraction;
      }
      LaneSet lanes = LaneSet::FromMask(mask);
      int r = is_heavy ? std::max(1, reps / 20) : reps;
      auto& vars = is_heavy ? heavy_vars : cheap_vars;
      const auto& ops = is_heavy ? heavy : cheap;
      double dense = SecondsPerRun(*backend, ops, vars, lanes, ExecMode::kDense, r);
      double compact = SecondsPerRun(*backend, ops, vars, lanes, ExecMode::kCompact, r);
      std::printf("%-8s %8.2f %12.2f %12.2f %10.2f\n", which, fraction, dense * 1e6,
                  compact * 1e6, dense / compact);
    }
  }
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
