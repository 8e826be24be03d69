// The data-indexed primitives (gather, scatter_add, matvec_input,
// matvec_t_input, bernoulli_logit_glm and its gradient) and uniform inputs
// (stride-0 views) in RunPrimitive: exact values, out-of-range indices, and a
// uniform operand giving the bits of the same operand repeated in every lane.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/kernels.h"
#include "backends/tensor.h"
#include "gtest/gtest.h"
#include "tests/backends/test_util.h"

namespace autobatch {
namespace {

using testing::MakeOp;

// Runs `op` over `lanes` lanes; inputs flagged in `uniform` hold one lane.
Tensor RunWith(const PrimOp& op, const std::vector<const Tensor*>& ins, std::vector<bool> uniform,
           TensorType out_type, int64_t lanes) {
  std::vector<ConstLanesView> views;
  for (size_t i = 0; i < ins.size(); ++i) {
    views.push_back({ins[i]->type(), ins[i]->bytes(), uniform[i]});
  }
  Tensor out(out_type, lanes);
  std::vector<LanesView> outs = {{out.type(), out.bytes()}};
  absl::Status s = RunPrimitive(op, views, outs, lanes, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// `t`'s one lane repeated `lanes` times.
Tensor Repeat(const Tensor& t, int64_t lanes) {
  Tensor out(t.type(), lanes);
  for (int64_t l = 0; l < lanes; ++l) out.CopyLaneFrom(t, 0, l);
  return out;
}

TEST(DataOpsTest, GatherClampsOutOfRangeIndices) {
  Tensor x = *Tensor::FromVector<double>({10, 20, 30}, {3});
  Tensor idx = *Tensor::FromVector<int64_t>({2, 0, -5, 7, 1, 1}, {3});  // two lanes
  Tensor out = RunWith(MakeOp(Primitive::kGather, 2), {&x, &idx}, {true, false},
                   Vector(DType::kF64, 3), 2);
  EXPECT_EQ(out.ToVector<double>(), (std::vector<double>{30, 10, 10, 30, 20, 20}));
  // An empty x gives zeros.
  Tensor empty(Vector(DType::kI64, 0), 1);
  Tensor idx1 = *Tensor::FromVector<int64_t>({4, -1}, {2});
  Tensor zeros = RunWith(MakeOp(Primitive::kGather, 2), {&empty, &idx1}, {true, false},
                     Vector(DType::kI64, 2), 1);
  EXPECT_EQ(zeros.ToVector<int64_t>(), (std::vector<int64_t>{0, 0}));
}

TEST(DataOpsTest, ScatterAddAccumulatesInIndexOrderAndClamps) {
  Attributes attrs;
  attrs.ints = {3};
  Tensor v = *Tensor::FromVector<double>({1, 2, 4, 8, 16}, {5});
  Tensor idx = *Tensor::FromVector<int64_t>({0, 2, 0, 9, -1}, {5});
  Tensor out = RunWith(MakeOp(Primitive::kScatterAdd, 2, attrs), {&v, &idx}, {false, true},
                   Vector(DType::kF64, 3), 1);
  EXPECT_EQ(out.ToVector<double>(), (std::vector<double>{1 + 4 + 16, 0, 2 + 8}));
  // The adjoint of gather: <gather(x, idx), v> == <x, scatter_add(v, idx)>.
  Tensor x = *Tensor::FromVector<double>({0.5, -3, 7}, {3});
  Tensor g = RunWith(MakeOp(Primitive::kGather, 2), {&x, &idx}, {false, false},
                 Vector(DType::kF64, 5), 1);
  double lhs = 0, rhs = 0;
  for (int i = 0; i < 5; ++i) lhs += g.data<double>()[i] * v.data<double>()[i];
  for (int j = 0; j < 3; ++j) rhs += x.data<double>()[j] * out.data<double>()[j];
  EXPECT_EQ(lhs, rhs);
}

TEST(DataOpsTest, MatVecInputAndItsTranspose) {
  // M = [[1, 2, 3], [4, 5, 6]], a uniform operand; two lanes of x and y.
  Tensor m = *Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor x = *Tensor::FromVector<double>({1, 0, -1, 0.5, 0.25, 2}, {3});
  Tensor mx = RunWith(MakeOp(Primitive::kMatVecInput, 2), {&m, &x}, {true, false},
                  Vector(DType::kF64, 2), 2);
  EXPECT_EQ(mx.ToVector<double>(), (std::vector<double>{-2, -2, 7, 15.25}));
  Tensor y = *Tensor::FromVector<double>({1, -1, 2, 0.5}, {2});
  Tensor mty = RunWith(MakeOp(Primitive::kMatVecTInput, 2), {&m, &y}, {true, false},
                   Vector(DType::kF64, 3), 2);
  EXPECT_EQ(mty.ToVector<double>(), (std::vector<double>{-3, -3, -3, 4, 6.5, 9}));
}

// Every built-in that takes a uniform operand gives the bits of that operand
// repeated in every lane: small ones (repeated into scratch) and large ones
// (run lane by lane) alike.
TEST(DataOpsTest, UniformOperandMatchesRepeatedOperand) {
  constexpr int64_t kLanes = 37;
  std::vector<double> varying;
  for (int64_t i = 0; i < kLanes * 100; ++i) varying.push_back(0.37 * static_cast<double>(i) - 11);
  for (int64_t n : {3, 100}) {  // 24 bytes (repeated) and 800 bytes (lane by lane)
    std::vector<double> u;
    for (int64_t i = 0; i < n; ++i) u.push_back(1.0 / static_cast<double>(i + 3));
    Tensor uniform = *Tensor::FromVector<double>(u, {n});
    Tensor repeated = Repeat(uniform, kLanes);
    std::vector<double> v(varying.begin(), varying.begin() + kLanes * n);
    Tensor lanes = *Tensor::FromVector<double>(v, {n});
    for (Primitive p : {Primitive::kSub, Primitive::kMul, Primitive::kDot, Primitive::kMax}) {
      const PrimOp op = MakeOp(p, 2);
      const TensorType out_type =
          p == Primitive::kDot ? Scalar(DType::kF64) : Vector(DType::kF64, n);
      Tensor a = RunWith(op, {&uniform, &lanes}, {true, false}, out_type, kLanes);
      Tensor b = RunWith(op, {&repeated, &lanes}, {false, false}, out_type, kLanes);
      EXPECT_EQ(a, b) << PrimitiveName(p) << " n=" << n;
    }
    // A uniform vector with a varying scalar.
    Tensor scalars = *Tensor::FromVector<double>(
        std::vector<double>(varying.begin(), varying.begin() + kLanes));
    Tensor a = RunWith(MakeOp(Primitive::kMul, 2), {&uniform, &scalars}, {true, false},
                   Vector(DType::kF64, n), kLanes);
    Tensor b = RunWith(MakeOp(Primitive::kMul, 2), {&repeated, &scalars}, {false, false},
                   Vector(DType::kF64, n), kLanes);
    EXPECT_EQ(a, b) << "n=" << n;
  }
}

// The GLM data of the tests below: X [rows, cols], y in {0, 1} but for
// row 5 (y = 2: -inf and no gradient), and `lanes` lanes of alpha and beta.
struct GlmData {
  Tensor x, y, alpha, beta;
};

GlmData MakeGlm(int64_t rows, int64_t cols, int64_t lanes) {
  std::vector<double> x, alpha, beta;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < rows * cols; ++i) x.push_back(std::sin(0.7 * static_cast<double>(i)));
  for (int64_t i = 0; i < rows; ++i) y.push_back(i == 5 ? 2 : (i * 7 + 3) % 5 < 2);
  for (int64_t l = 0; l < lanes; ++l) {
    alpha.push_back(0.3 - 0.05 * static_cast<double>(l));
    for (int64_t j = 0; j < cols; ++j) {
      beta.push_back(std::cos(1.3 * static_cast<double>(l * cols + j)) * (1 + l % 3));
    }
  }
  if (rows == 0) {  // FromVector cannot tell the lanes of an empty type
    return {Tensor(TensorType{DType::kF64, {0, cols}}, 1), Tensor(Vector(DType::kI64, 0), 1),
            *Tensor::FromVector<double>(alpha), *Tensor::FromVector<double>(beta, {cols})};
  }
  return {*Tensor::FromVector<double>(x, {rows, cols}), *Tensor::FromVector<int64_t>(y, {rows}),
          *Tensor::FromVector<double>(alpha), *Tensor::FromVector<double>(beta, {cols})};
}

// The GLM primitive (grad: its gradient) over the data's lanes [first,
// first + lanes); X and y uniform unless `repeat`.
Tensor RunGlmOp(Primitive prim, const GlmData& d, int64_t first, int64_t lanes, bool repeat = false,
                const uint8_t* active = nullptr) {
  const int64_t cols = d.beta.type().NumElements();
  Tensor alpha(d.alpha.type(), lanes), beta(d.beta.type(), lanes);
  for (int64_t l = 0; l < lanes; ++l) {
    alpha.CopyLaneFrom(d.alpha, first + l, l);
    beta.CopyLaneFrom(d.beta, first + l, l);
  }
  const Tensor x = Repeat(d.x, repeat ? lanes : 1), y = Repeat(d.y, repeat ? lanes : 1);
  std::vector<ConstLanesView> views = {{x.type(), x.bytes(), !repeat},
                                       {y.type(), y.bytes(), !repeat},
                                       {alpha.type(), alpha.bytes(), false},
                                       {beta.type(), beta.bytes(), false}};
  Tensor out(prim == Primitive::kBernoulliLogitGlm       ? Scalar(DType::kF64)
             : prim == Primitive::kBernoulliLogitGlmGrad ? Vector(DType::kF64, cols + 1)
                                                         : Vector(DType::kF64, cols + 2),
             lanes);
  std::vector<LanesView> outs = {{out.type(), out.bytes()}};
  absl::Status s = RunPrimitive(testing::MakeOp(prim, 4), views, outs, lanes, nullptr, active);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}
Tensor RunGlm(const GlmData& d, bool grad, int64_t first, int64_t lanes, bool repeat = false,
              const uint8_t* active = nullptr) {
  return RunGlmOp(grad ? Primitive::kBernoulliLogitGlmGrad : Primitive::kBernoulliLogitGlm, d,
                  first, lanes, repeat, active);
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Values and gradients against a plain transcription of the definition
// (ir/primitives.def) within 1e-13, rows summed in order; y = 2 gives -inf
// and no gradient from that row, a NaN alpha NaN and a NaN gradient.
TEST(DataOpsTest, BernoulliLogitGlmMatchesItsDefinition) {
  constexpr int64_t kRows = 77, kCols = 5, kLanes = 9;
  GlmData d = MakeGlm(kRows, kCols, kLanes);
  const Tensor value = RunGlm(d, /*grad=*/false, 0, kLanes);
  const Tensor grad = RunGlm(d, /*grad=*/true, 0, kLanes);
  for (int64_t l = 0; l < kLanes; ++l) {
    const double alpha = d.alpha.data<double>()[l];
    const double* beta = d.beta.data<double>() + l * kCols;
    double lp = 0;
    std::vector<double> g(kCols + 1, 0.0);
    for (int64_t i = 0; i < kRows; ++i) {
      double eta = alpha;
      for (int64_t j = 0; j < kCols; ++j) eta += d.x.data<double>()[i * kCols + j] * beta[j];
      const int64_t y = d.y.data<int64_t>()[i];
      if (y > 1) {
        lp = -std::numeric_limits<double>::infinity();
        continue;
      }
      const double r = y - 1 / (1 + std::exp(-eta));
      g[0] += r;
      for (int64_t j = 0; j < kCols; ++j) g[1 + j] += d.x.data<double>()[i * kCols + j] * r;
    }
    EXPECT_EQ(value.data<double>()[l], lp) << "lane " << l;
    ASSERT_TRUE(std::isinf(lp));
    for (int64_t j = 0; j <= kCols; ++j) {
      EXPECT_NEAR(grad.data<double>()[l * (kCols + 1) + j], g[j], 1e-13 * (1 + std::abs(g[j])))
          << "lane " << l << " element " << j;
    }
  }
  // Outcomes in {0, 1} give finite values: y = 0 everywhere.
  std::vector<int64_t> zeros(kRows, 0);
  d.y = *Tensor::FromVector<int64_t>(zeros, {kRows});
  const Tensor finite = RunGlm(d, /*grad=*/false, 0, kLanes);
  for (int64_t l = 0; l < kLanes; ++l) {
    const double alpha = d.alpha.data<double>()[l];
    const double* beta = d.beta.data<double>() + l * kCols;
    double lp = 0;
    for (int64_t i = 0; i < kRows; ++i) {
      double eta = alpha;
      for (int64_t j = 0; j < kCols; ++j) eta += d.x.data<double>()[i * kCols + j] * beta[j];
      lp += -std::log1p(std::exp(eta));
    }
    EXPECT_NEAR(finite.data<double>()[l], lp, 1e-13 * std::abs(lp)) << "lane " << l;
  }
  // A NaN linear predictor: NaN, and a NaN gradient.
  d.alpha.data<double>()[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(RunGlm(d, /*grad=*/false, 0, kLanes).data<double>()[2]));
  const Tensor nan_grad = RunGlm(d, /*grad=*/true, 0, kLanes);
  for (int64_t j = 0; j <= kCols; ++j) {
    EXPECT_TRUE(std::isnan(nan_grad.data<double>()[2 * (kCols + 1) + j])) << j;
  }
  // No rows: +0 and a zero gradient.
  GlmData empty = MakeGlm(0, kCols, 3);
  const Tensor e = RunGlm(empty, /*grad=*/false, 0, 3);
  for (int64_t l = 0; l < 3; ++l) EXPECT_TRUE(SameBits(e.data<double>()[l], 0.0));
}

// A lane's bits do not depend on the batch: batches of 1, 7, 23 and 64
// lanes from any offset (chunks of 16 and of 4 lanes, the last one padded), X and y uniform
// or repeated per lane, and with inactive lanes holding junk.
TEST(DataOpsTest, BernoulliLogitGlmIsBitStable) {
  constexpr int64_t kRows = 70, kCols = 24, kLanes = 64;
  const GlmData d = MakeGlm(kRows, kCols, kLanes);
  std::vector<int64_t> y01;
  for (int64_t i = 0; i < kRows; ++i) y01.push_back(i % 3 == 0);
  GlmData finite = d;
  finite.y = *Tensor::FromVector<int64_t>(y01, {kRows});
  for (bool grad : {false, true}) {
    for (const GlmData* data : std::vector<const GlmData*>{&d, &finite}) {
      const int64_t width = grad ? kCols + 1 : 1;
      const Tensor all = RunGlm(*data, grad, 0, kLanes);
      auto expect_lanes = [&](const Tensor& got, int64_t first, int64_t lanes, const char* what) {
        for (int64_t l = 0; l < lanes; ++l) {
          for (int64_t j = 0; j < width; ++j) {
            EXPECT_TRUE(SameBits(got.data<double>()[l * width + j],
                                 all.data<double>()[(first + l) * width + j]))
                << what << " grad=" << grad << " lane " << first + l << " element " << j;
          }
        }
      };
      for (int64_t first : {0, 3, 57}) expect_lanes(RunGlm(*data, grad, first, 1), first, 1, "1");
      for (int64_t first : {0, 5, 50}) expect_lanes(RunGlm(*data, grad, first, 7), first, 7, "7");
      // A chunk of 16, one of 4 and a padded one of 4.
      for (int64_t first : {0, 41}) expect_lanes(RunGlm(*data, grad, first, 23), first, 23, "23");
      expect_lanes(RunGlm(*data, grad, 0, kLanes, /*repeat=*/true), 0, kLanes, "repeated X");
      // Inactive lanes (every third) with NaN parameters.
      GlmData junk = *data;
      std::vector<uint8_t> active(kLanes, 1);
      for (int64_t l = 0; l < kLanes; l += 3) {
        active[static_cast<size_t>(l)] = 0;
        junk.alpha.data<double>()[l] = std::numeric_limits<double>::quiet_NaN();
        for (int64_t j = 0; j < kCols; ++j) junk.beta.data<double>()[l * kCols + j] = 1e300;
      }
      const Tensor masked = RunGlm(junk, grad, 0, kLanes, /*repeat=*/false, active.data());
      for (int64_t l = 1; l < kLanes; ++l) {
        if (l % 3 == 0) continue;
        for (int64_t j = 0; j < width; ++j) {
          EXPECT_TRUE(
              SameBits(masked.data<double>()[l * width + j], all.data<double>()[l * width + j]))
              << "inactive neighbours, grad=" << grad << " lane " << l;
        }
      }
    }
  }
}

// bernoulli_logit_glm_value_grad is [bernoulli_logit_glm, bernoulli_logit_glm_grad...]
// bit for bit: batches of 1, 7 and 64 lanes, inactive lanes with junk, y
// outside {0, 1}, a NaN alpha, etas far in both tails (exp underflows) and
// no rows.
TEST(DataOpsTest, BernoulliLogitGlmValueGradHasTheSeparateOpsBits) {
  constexpr int64_t kRows = 70, kCols = 24, kLanes = 64;
  GlmData d = MakeGlm(kRows, kCols, kLanes);
  std::vector<int64_t> y01;
  for (int64_t i = 0; i < kRows; ++i) y01.push_back(i % 3 == 0);
  GlmData finite = d;
  finite.y = *Tensor::FromVector<int64_t>(y01, {kRows});
  for (GlmData* data : {&d, &finite}) {
    data->alpha.data<double>()[4] = std::numeric_limits<double>::quiet_NaN();
    data->alpha.data<double>()[6] = 800.0;
    data->alpha.data<double>()[8] = -40.0;
    for (int64_t j = 0; j < kCols; ++j) data->beta.data<double>()[10 * kCols + j] *= 100.0;
  }
  GlmData empty = MakeGlm(0, kCols, kLanes);
  std::vector<uint8_t> active(kLanes, 1);
  for (int64_t l = 0; l < kLanes; l += 3) active[static_cast<size_t>(l)] = 0;
  for (const GlmData* data : std::vector<const GlmData*>{&d, &finite, &empty}) {
    for (int64_t lanes : {1, 7, 64}) {
      for (bool masked : {false, true}) {
        const uint8_t* act = masked ? active.data() : nullptr;
        const int64_t first = lanes == 64 ? 0 : 3;
        const Tensor value = RunGlm(*data, /*grad=*/false, first, lanes, false, act);
        const Tensor grad = RunGlm(*data, /*grad=*/true, first, lanes, false, act);
        const Tensor both =
            RunGlmOp(Primitive::kBernoulliLogitGlmValueGrad, *data, first, lanes, false, act);
        for (int64_t l = 0; l < lanes; ++l) {
          if (act != nullptr && act[l] == 0) continue;
          EXPECT_TRUE(SameBits(both.data<double>()[l * (kCols + 2)], value.data<double>()[l]))
              << "lanes " << lanes << " lane " << l << " value";
          for (int64_t j = 0; j <= kCols; ++j) {
            EXPECT_TRUE(SameBits(both.data<double>()[l * (kCols + 2) + 1 + j],
                                 grad.data<double>()[l * (kCols + 1) + j]))
                << "lanes " << lanes << " lane " << l << " element " << j;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace autobatch
