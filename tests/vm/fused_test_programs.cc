// The programs of the fused-block tests (see fused_test_programs.h).
#include "tests/vm/fused_test_programs.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/testing/tape_programs.h"
#include "support/status.h"
#include "passes/pipeline.h"
#include "samples/collatz/collatz.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/mutual_recursion/even_odd.h"
#include "samples/peanuts/peanuts.h"
#include "frontend/builder.h"
#include "frontend/value.h"
#include "tests/backends/op_cases.h"

namespace autobatch::testing {
namespace {

// The value, or a message and abort: these programs are fixed, so a failure
// here is a bug in the test or the pipeline.
template <typename T>
T Unwrap(absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) {
    std::fprintf(stderr, "fused test programs: %s: %s\n", what, value.status().ToString().c_str());
    std::abort();
  }
  return *std::move(value);
}

Program Lower(const Program& untyped, const std::vector<TensorType>& types) {
  return Unwrap(LowerProgram(untyped, types), "LowerProgram");
}

// A value of dtype T: mostly ordinary, sometimes an edge case.
template <typename T>
T RandomElement(std::mt19937_64& rng) {
  const int pick = static_cast<int>(rng() % 16);
  if constexpr (std::is_floating_point_v<T>) {
    switch (pick) {
      case 0: return std::numeric_limits<T>::quiet_NaN();
      case 1: return std::numeric_limits<T>::infinity();
      case 2: return -std::numeric_limits<T>::infinity();
      case 3: return T(-0.0);
      case 4: return T(0);
      case 5: return std::numeric_limits<T>::denorm_min();
      case 6: return T(1e300 > std::numeric_limits<T>::max() ? 3e38 : 1e300);
      default: return static_cast<T>(std::normal_distribution<double>(0, 3)(rng));
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else {
    switch (pick) {
      case 0: return std::numeric_limits<T>::min();
      case 1: return std::numeric_limits<T>::max();
      case 2: return T(0);
      case 3: return static_cast<T>(-1);
      case 4: return static_cast<T>(rng());
      default: return static_cast<T>(std::uniform_int_distribution<int>(-9, 9)(rng));
    }
  }
}

Tensor RandomTensor(const TensorType& type, int64_t batch, std::mt19937_64& rng) {
  Tensor t(type, batch);
  VisitDType(type.dtype, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = batch * type.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      const T value = RandomElement<T>(rng);
      if constexpr (std::is_same_v<T, bool>) {
        const uint8_t byte = value ? 1 : 0;
        std::memcpy(t.bytes() + i, &byte, 1);
      } else {
        std::memcpy(t.bytes() + i * static_cast<int64_t>(sizeof(T)), &value, sizeof(T));
      }
    }
  });
  return t;
}

// Every op case but the user kernel, each reading its own parameters and
// writing its own result, all in the entry block.
FusedTestProgram AllOps() {
  Program program;
  Function fn;
  fn.name = "all_ops";
  fn.loc = SourceLoc{"fused_test_programs.cc", 1};
  Block block;
  block.label = "entry";
  block.terminator = Return{};
  std::vector<TensorType> types;
  int k = 0;
  for (const OpCase& c : AllCases()) {
    if (c.op.prim == Primitive::kUserKernel) continue;
    PrimOp op = c.op;
    op.inputs.clear();
    op.outputs.clear();
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      VarId v = program.module.AddVariable(
          {absl::StrCat("in", k, "_", i), FunctionId(0), std::nullopt, StorageClass::kFull});
      fn.params.push_back(v);
      types.push_back(c.inputs[i]);
      op.inputs.push_back(v);
    }
    VarId out = program.module.AddVariable(
        {absl::StrCat("out", k), FunctionId(0), std::nullopt, StorageClass::kFull});
    op.outputs.push_back(out);
    fn.results.push_back(out);
    block.ops.push_back(std::move(op));
    ++k;
  }
  fn.blocks.push_back(std::move(block));
  program.entry = program.module.AddFunction(std::move(fn));
  FusedTestProgram out{"all_ops", std::make_unique<Context>(), Lower(program, types), {}};
  out.inputs = [types](int64_t batch, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Tensor> inputs;
    for (const TensorType& t : types) inputs.push_back(RandomTensor(t, batch, rng));
    return inputs;
  };
  return out;
}

// The inputs of a program taking one i64 in [lo, hi].
std::function<std::vector<Tensor>(int64_t, uint64_t)> IntsIn(int64_t lo, int64_t hi) {
  return [lo, hi](int64_t batch, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<int64_t> n(static_cast<size_t>(batch));
    for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    return std::vector<Tensor>{*Tensor::FromVector(n)};
  };
}

FusedTestProgram FromContext(std::string name, std::unique_ptr<Context> ctx,
                             const BatchFunction& fn, const std::vector<TensorType>& types,
                             std::function<std::vector<Tensor>(int64_t, uint64_t)> inputs) {
  Program lowered = Lower(Unwrap(ctx->Program(fn), "Context::Program"), types);
  return {std::move(name), std::move(ctx), std::move(lowered), std::move(inputs)};
}

// A segment between ops the VM runs itself, in a block that runs compact
// for some lanes: `a` (a register) is written by matvec_batched (unfused),
// updated by the segment and read by matvec_batched again, so the VM must
// drop its stale compact copy of `a` when the segment writes the storage.
FusedTestProgram CompactState() {
  auto ctx = std::make_unique<Context>();
  auto m = std::make_shared<DenseMatrix>();
  m->rows = m->cols = 3;
  for (int i = 0; i < 9; ++i) m->data.push_back(0.5 * i - 1.75);
  BatchFunction fn = ctx->Batch("compact_state")([m](Builder& b, Value x, Value n) {
    Var a = b.Local("a", x);
    Var c = b.Local("c", x);
    b.If(n > 0).Then([&] {
      a = matvec_batched(m, x);
      Value t = a + x;
      a = t * x - t;
      c = matvec_batched(m, a);
    });
    return std::make_tuple(Value(a), Value(c));
  });
  const std::vector<TensorType> types = {Vector(DType::kF64, 3), Scalar(DType::kI64)};
  return FromContext("compact_state", std::move(ctx), fn, types,
                     [](int64_t batch, uint64_t seed) {
                       std::mt19937_64 rng(seed);
                       std::vector<double> x(static_cast<size_t>(batch * 3));
                       for (double& v : x) v = std::normal_distribution<double>()(rng);
                       std::vector<int64_t> n(static_cast<size_t>(batch));
                       for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(-1, 1)(rng);
                       return std::vector<Tensor>{*Tensor::FromVector(x, {3}),
                                                  *Tensor::FromVector(n)};
                     });
}

}  // namespace

std::vector<FusedTestProgram> FusedTestPrograms() {
  std::vector<FusedTestProgram> programs;
  programs.push_back(AllOps());
  const std::vector<TensorType> one_int = {Scalar(DType::kI64)};
  {
    auto ctx = std::make_unique<Context>();
    BatchFunction fn = samples::DefineFibonacci(*ctx);
    programs.push_back(FromContext("fibonacci", std::move(ctx), fn, one_int, IntsIn(-2, 14)));
  }
  {
    auto ctx = std::make_unique<Context>();
    BatchFunction fn = samples::DefineEvenOdd(*ctx).is_even;
    programs.push_back(FromContext("even_odd", std::move(ctx), fn, one_int, IntsIn(0, 40)));
  }
  {
    auto ctx = std::make_unique<Context>();
    BatchFunction fn = samples::DefineCollatz(*ctx);
    programs.push_back(FromContext("collatz", std::move(ctx), fn, one_int, IntsIn(-3, 1000)));
  }
  {
    auto ctx = std::make_unique<Context>();
    const samples::PeaNutsConfig config{.dimension = 8, .max_depth = 4};
    BatchFunction fn = samples::DefinePeaNuts(*ctx, config);
    const std::vector<TensorType> types = {Vector(DType::kF64, config.dimension),
                                           Scalar(DType::kI64), Scalar(DType::kI64)};
    programs.push_back(FromContext(
        "peanuts", std::move(ctx), fn, types, [config](int64_t batch, uint64_t seed) {
          std::mt19937_64 rng(seed);
          std::vector<double> x(static_cast<size_t>(batch * config.dimension));
          for (double& v : x) v = std::normal_distribution<double>()(rng);
          std::vector<int64_t> seeds(static_cast<size_t>(batch)), traj(seeds.size());
          for (size_t i = 0; i < seeds.size(); ++i) {
            seeds[i] = static_cast<int64_t>(rng());
            traj[i] = std::uniform_int_distribution<int64_t>(0, 3)(rng);
          }
          return std::vector<Tensor>{*Tensor::FromVector(x, {config.dimension}),
                                     *Tensor::FromVector(seeds), *Tensor::FromVector(traj)};
        }));
  }
  programs.push_back(CompactState());
  // Tapes (ir/ir.h, "Tapes"): segments end at tape ops, so values flow
  // between a segment and a push or pop through memory.
  const std::vector<TensorType> int_and_double = {Scalar(DType::kI64), Scalar(DType::kF64)};
  auto tape_inputs = [](int64_t batch, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<int64_t> n(static_cast<size_t>(batch));
    for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(-2, 12)(rng);
    return std::vector<Tensor>{*Tensor::FromVector(n),
                               RandomTensor(Scalar(DType::kF64), batch, rng)};
  };
  programs.push_back({"tape_loop", std::make_unique<Context>(),
                      Lower(TapeLoopProgram(), int_and_double), tape_inputs});
  programs.push_back({"tape_recursive", std::make_unique<Context>(),
                      Lower(RecursiveTapeProgram(), int_and_double), tape_inputs});
  return programs;
}

FusedTestSampler EightSchoolsNuts() { return EightSchoolsSampler(mcmc::Algorithm::kNuts); }

FusedTestSampler EightSchoolsSampler(mcmc::Algorithm algorithm) {
  FusedTestSampler out;
  out.model = Unwrap(mcmc::MakeTarget("eight_schools", nlohmann::json::object()), "MakeTarget");
  mcmc::SamplerConfig config;  // nuts_bench's: the defaults (max_depth 10)
  config.step_size = 0.3;
  out.sampler = Unwrap(mcmc::BatchedSampler::Create(*out.model, algorithm, config),
                       "BatchedSampler::Create");
  out.lowered = Unwrap(out.sampler->ExecutableProgram(/*lowered=*/true), "ExecutableProgram");
  return out;
}

std::vector<mcmc::BatchedChain> StartingChains(const FusedTestSampler& sampler, size_t n,
                                               uint64_t seed) {
  std::vector<uint64_t> ids(n);
  for (size_t k = 0; k < n; ++k) ids[k] = k;
  mcmc::SamplerConfig config;
  config.step_size = 0.3;
  absl::StatusOr<std::vector<mcmc::BatchedChain>> chains =
      mcmc::MakeBatchedChains(*sampler.model, config, seed, ids);
  EXPECT_TRUE(chains.ok()) << chains.status();
  return chains.ok() ? *std::move(chains) : std::vector<mcmc::BatchedChain>{};
}

bool BitIdentical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!(a[k] == b[k])) return false;
  }
  return true;
}

void ExpectSameDraws(const mcmc::BatchedRunResult& got, const mcmc::BatchedRunResult& expected) {
  ASSERT_EQ(got.chains.size(), expected.chains.size());
  for (size_t k = 0; k < got.chains.size(); ++k) {
    const auto& a = got.chains[k];
    const auto& b = expected.chains[k];
    ASSERT_EQ(a.draws.size(), b.draws.size());
    EXPECT_EQ(std::memcmp(a.draws.data(), b.draws.data(), a.draws.size() * sizeof(double)), 0)
        << "chain " << k;
    EXPECT_EQ(a.stats, b.stats) << "chain " << k;
  }
}

}  // namespace autobatch::testing
