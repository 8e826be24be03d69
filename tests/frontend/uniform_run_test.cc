// Uniform inputs run on every executor: stored once (Profile::storage_bytes),
// read by every lane through a stride-0 view, the same bits everywhere.
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/context.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

// s = sum of X (uniform) per lane; lanes with y > 0 return s * y, the
// others |X|^2 - y: two blocks each some lanes run (compact on the stack VM).
constexpr char kProgram[] = R"(program stage=untyped entry=@main

func @main(%X: f64[1000,25] uniform, %y: f64) -> (%r: f64) {
^0 entry:
  %s: f64 = reduce_sum %X
  %zero: f64 = fill_like %y {literal = f64 0}
  %c: bool = gt %y, %zero
  branch %c, ^1, ^2
^1 pos:
  %r: f64 = mul %s, %y
  goto ^3
^2 neg:
  %m: f64 = squared_norm %X
  %r: f64 = sub %m, %y
  goto ^3
^3 exit:
  return
}
)";

constexpr int64_t kLanes = 1024;
constexpr int64_t kMatrixBytes = 1000 * 25 * 8;

Tensor Matrix() {
  Tensor x(TensorType{DType::kF64, {1000, 25}}, 1);
  for (int64_t i = 0; i < 25000; ++i) x.data<double>()[i] = 0.001 * static_cast<double>(i % 997) - 0.3;
  return x;
}

std::vector<double> Expected(const Tensor& x, const std::vector<double>& y) {
  const double* v = x.data<double>();
  double sum = v[0], squares = v[0] * v[0];
  for (int64_t i = 1; i < 25000; ++i) {
    sum += v[i];
    squares += v[i] * v[i];
  }
  std::vector<double> out;
  for (double yi : y) out.push_back(yi > 0 ? sum * yi : squares - yi);
  return out;
}

struct Case {
  std::string name;
  CallOptions options;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"reference", {.dry_run = true}});
  cases.push_back({"stackless", {.vm = Vm::kStackless}});
  cases.push_back({"stack", {.vm = Vm::kStack}});
  cases.push_back({"stack_threaded", {.vm = Vm::kStack, .backend = "threaded:2"}});
  CallOptions sharded;
  sharded.shards = 3;
  cases.push_back({"stack_shards", sharded});
  CallOptions compact;
  compact.time_dense_or_compact = false;
  compact.dense_fraction = 1.0;
  compact.dense_fraction_heavy = 1.0;
  compact.tile_bytes = 64;
  cases.push_back({"stack_compact_tiles", compact});
  return cases;
}

TEST(UniformRunTest, EveryExecutorReadsOneCopy) {
  absl::StatusOr<Program> program = ParseProgram(kProgram);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<double> y;
  for (int64_t l = 0; l < kLanes; ++l) y.push_back(static_cast<double>(l % 7) - 3.0 + 0.25 * l);
  const std::vector<double> expected = Expected(Matrix(), y);
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    Profile profile;
    absl::StatusOr<std::vector<Tensor>> out =
        RunProgram(*program, {Matrix(), *Tensor::FromVector(y)}, nullptr, c.options, &profile);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToVector<double>(), expected);
  }
}

// The issue's acceptance test: a 1000x25 f64 matrix with 1024 lanes is
// stored once. Everything else the program stores is a few scalars a lane.
TEST(UniformRunTest, MatrixOf1000x25With1024LanesIsStoredOnce) {
  absl::StatusOr<Program> program = ParseProgram(kProgram);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<double> y(kLanes, 1.5);
  for (Vm vm : {Vm::kStack, Vm::kStackless}) {
    Profile profile;
    CallOptions options;
    options.vm = vm;
    ASSERT_TRUE(RunProgram(*program, {Matrix(), *Tensor::FromVector(y)}, nullptr, options,
                           &profile)
                    .ok());
    EXPECT_GE(profile.storage_bytes, kMatrixBytes);
    // One matrix plus at most 16 scalars (or stack frames of them) a lane;
    // a matrix per lane would be 204.8 MB.
    EXPECT_LE(profile.storage_bytes, kMatrixBytes + 16 * 8 * 4 * kLanes)
        << "vm " << static_cast<int>(vm);
  }
}

TEST(UniformRunTest, UniformInputNeedsOneLane) {
  absl::StatusOr<Program> program = ParseProgram(kProgram);
  ASSERT_TRUE(program.ok()) << program.status();
  Tensor two(TensorType{DType::kF64, {1000, 25}}, 2);
  absl::StatusOr<std::vector<Tensor>> out =
      RunProgram(*program, {two, *Tensor::FromVector(std::vector<double>{1, 2})}, nullptr, {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("input 0 (parameter 'X' of 'main') is uniform, so it is given once"));
}

TEST(UniformRunTest, ContextMarksUniformParams) {
  Context ctx;
  BatchFunction f = ctx.Declare("scaled_sum", {.param_names = {"x", "w"},
                                               .uniform_params = {"x"}});
  ctx.Batch(f)([](Builder&, Value x, Value w) { return reduce_sum(x) * w; });
  Tensor x = *Tensor::FromVector<double>({1, 2, 3, 4}, {4});
  Tensor w = *Tensor::FromVector<double>({1, -1, 0.5});
  for (bool dry_run : {false, true}) {
    absl::StatusOr<std::vector<Tensor>> out = f.Run({x, w}, {.dry_run = dry_run});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{10, -10, 5}));
  }
  BatchFunction g = ctx.Declare("bad", {.param_names = {"x"}, .uniform_params = {"z"}});
  ctx.Batch(g)([](Builder&, Value x) { return x; });
  absl::StatusOr<std::vector<Tensor>> bad = g.Run({w});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("FunctionOptions::uniform_params names 'z', which is not a parameter"));
}

// A user kernel receives a uniform input as a view flagged uniform (one
// lane, stride 0) and reads it at `data` for every lane.
TEST(UniformRunTest, UserKernelReadsAUniformInputInPlace) {
  Context ctx;
  int uniform_views = 0;
  Kernel weighted = ctx.RegisterKernel(
      "weighted_total",
      KernelSignature{{Vector(DType::kF64, 3), Scalar(DType::kF64)}, {Scalar(DType::kF64)}},
      [&uniform_views](const KernelCall& call) {
        uniform_views += call.inputs[0].uniform ? 1 : 0;
        const auto* x = reinterpret_cast<const double*>(call.inputs[0].data);
        const auto* w = reinterpret_cast<const double*>(call.inputs[1].data);
        auto* out = reinterpret_cast<double*>(call.outputs[0].data);
        for (int64_t l = 0; l < call.num_lanes; ++l) {
          const double* xl = call.inputs[0].uniform ? x : x + 3 * l;
          out[l] = (xl[0] + xl[1] + xl[2]) * w[l];
        }
        return absl::OkStatus();
      });
  BatchFunction f = ctx.Declare("f", {.param_names = {"x", "w"}, .uniform_params = {"x"}});
  ctx.Batch(f)([weighted](Builder&, Value x, Value w) {
    Value total = weighted(x, w);
    return total;
  });
  Tensor x = *Tensor::FromVector<double>({1, 2, 3}, {3});
  Tensor w = *Tensor::FromVector<double>({1, 2, 3, 4, 5});
  for (Vm vm : {Vm::kStack, Vm::kStackless}) {
    uniform_views = 0;
    absl::StatusOr<std::vector<Tensor>> out = f.Run({x, w}, {.vm = vm});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{6, 12, 18, 24, 30}));
    EXPECT_GT(uniform_views, 0);
  }
}

}  // namespace
}  // namespace autobatch
