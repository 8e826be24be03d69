// The data-indexed primitives (gather, scatter_add, matvec_input,
// matvec_t_input) and uniform inputs (stride-0 views) in RunPrimitive: exact
// values, out-of-range indices, and a uniform operand giving the bits of the
// same operand repeated in every lane.
#include <cstdint>
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

}  // namespace
}  // namespace autobatch
