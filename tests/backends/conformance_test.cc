// The backend conformance suite: every backend in KnownBackendNames() must
// run every primitive, for every dtype its type rule allows, in dense and
// compact mode, exactly like RunPrimitive on each lane alone; and must move,
// stack and query lanes as the Backend contract says.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "backends/kernel_registry.h"
#include "backends/kernels.h"
#include "backends/lane_set.h"
#include "backends/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/backends/test_util.h"

namespace autobatch {
namespace {

using ::autobatch::testing::LaneHex;
using ::autobatch::testing::MakeOp;
using ::autobatch::testing::ValueGen;
using ::testing::HasSubstr;

constexpr DType kNumeric[] = {DType::kF64, DType::kF32, DType::kI64, DType::kI32, DType::kU64};
constexpr DType kFloats[] = {DType::kF64, DType::kF32};

// One op to test: the op, its operand types and its result types.
struct OpCase {
  std::string name;
  PrimOp op;
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
};

std::string Name(const PrimOp& op, const std::vector<TensorType>& inputs) {
  std::string name(op.prim == Primitive::kUserKernel ? op.attrs.kernel : PrimitiveName(op.prim));
  for (const TensorType& t : inputs) absl::StrAppend(&name, " ", t.ToString());
  return name;
}

void Add(std::vector<OpCase>& cases, PrimOp op, std::vector<TensorType> inputs,
         TensorType output) {
  std::string name = Name(op, inputs);
  cases.push_back({std::move(name), std::move(op), std::move(inputs), {std::move(output)}});
}

Literal LiteralFor(DType d, int64_t n) {
  Literal lit{TensorType{d, n == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{n}}, {}, {}};
  for (int64_t i = 0; i < n; ++i) {
    if (IsFloat(d)) {
      lit.floats.push_back(i % 2 ? -0.1 * static_cast<double>(i) : 1.5);
    } else {
      lit.ints.push_back(i % 2 ? -3 - i : 7);
    }
  }
  return lit;
}

// Every primitive, for every dtype its type rule allows, with the shape
// combinations its rule allows (scalar, vector, scalar broadcast).
std::vector<OpCase> AllCases() {
  std::vector<OpCase> cases;
  const std::vector<int64_t> kS = {};
  const std::vector<int64_t> kV = {3};
  auto shape_pairs = [&](DType d) {
    const TensorType s{d, kS}, v{d, kV};
    return std::vector<std::pair<TensorType, TensorType>>{{s, s}, {v, v}, {s, v}, {v, s}};
  };
  auto out_shape = [](const TensorType& a, const TensorType& b) {
    return a.IsScalar() ? b.shape : a.shape;
  };
  for (DType d : kAllDTypes) {
    const TensorType s{d, kS}, v{d, kV};
    for (int64_t n : {1, 3}) {
      Attributes attrs;
      attrs.literal = LiteralFor(d, n);
      Add(cases, MakeOp(Primitive::kConstant, 0, attrs), {}, attrs.literal->type);
    }
    for (DType lit : {DType::kF64, DType::kI64, DType::kBool}) {
      Attributes attrs;
      attrs.literal = LiteralFor(lit, 1);
      Add(cases, MakeOp(Primitive::kFillLike, 1, attrs), {v}, v);
    }
    Add(cases, MakeOp(Primitive::kCopy, 1), {v}, v);
    Add(cases, MakeOp(Primitive::kCopy, 1), {s}, s);
    const TensorType cs = Scalar(DType::kBool), cv = Vector(DType::kBool, 3);
    Add(cases, MakeOp(Primitive::kSelect, 3), {cs, s, s}, s);
    Add(cases, MakeOp(Primitive::kSelect, 3), {cs, v, v}, v);
    Add(cases, MakeOp(Primitive::kSelect, 3), {cv, v, v}, v);
    for (DType to : kAllDTypes) {
      Attributes attrs;
      attrs.dtype = to;
      Add(cases, MakeOp(Primitive::kCast, 1, attrs), {v}, TensorType{to, kV});
    }
    Attributes bshape;
    bshape.ints = {2, 3};
    Add(cases, MakeOp(Primitive::kBroadcast, 1, bshape), {s}, TensorType{d, {2, 3}});
    Attributes slice;
    slice.ints = {1, 3};
    Add(cases, MakeOp(Primitive::kSlice, 1, slice), {TensorType{d, {5}}}, TensorType{d, kV});
    Add(cases, MakeOp(Primitive::kConcat, 3), {s, TensorType{d, {2}}, v}, TensorType{d, {6}});
    Add(cases, MakeOp(Primitive::kConcat, 1), {s}, TensorType{d, {1}});
    for (Primitive p : {Primitive::kLt, Primitive::kLe, Primitive::kGt, Primitive::kGe,
                        Primitive::kEq, Primitive::kNe}) {
      for (const auto& [a, b] : shape_pairs(d)) {
        Add(cases, MakeOp(p, 2), {a, b}, TensorType{DType::kBool, out_shape(a, b)});
      }
    }
  }
  for (DType d : kNumeric) {
    const TensorType s{d, kS}, v{d, kV}, w{d, {4}};
    for (Primitive p : {Primitive::kAdd, Primitive::kSub, Primitive::kMul, Primitive::kDiv,
                        Primitive::kMod, Primitive::kMin, Primitive::kMax}) {
      for (const auto& [a, b] : shape_pairs(d)) {
        Add(cases, MakeOp(p, 2), {a, b}, TensorType{d, out_shape(a, b)});
      }
    }
    for (Primitive p : {Primitive::kNeg, Primitive::kAbs}) {
      Add(cases, MakeOp(p, 1), {v}, v);
      Add(cases, MakeOp(p, 1), {s}, s);
    }
    Add(cases, MakeOp(Primitive::kReduceSum, 1), {w}, s);
    Add(cases, MakeOp(Primitive::kReduceSum, 1), {s}, s);
    Add(cases, MakeOp(Primitive::kSquaredNorm, 1), {w}, s);
    Add(cases, MakeOp(Primitive::kDot, 2), {w, w}, s);
  }
  for (DType d : kFloats) {
    const TensorType s{d, kS}, v{d, kV};
    for (Primitive p : {Primitive::kExp, Primitive::kLog, Primitive::kLog1p, Primitive::kExpm1,
                        Primitive::kSqrt, Primitive::kTanh, Primitive::kFloor}) {
      Add(cases, MakeOp(p, 1), {v}, v);
      Add(cases, MakeOp(p, 1), {s}, s);
    }
    for (const auto& [a, b] : shape_pairs(d)) {
      Add(cases, MakeOp(Primitive::kPow, 2), {a, b}, TensorType{d, out_shape(a, b)});
    }
    auto m = std::make_shared<DenseMatrix>();
    m->rows = 4;
    m->cols = 3;
    for (int i = 0; i < 12; ++i) m->data.push_back(0.25 * i - 1.3);
    Attributes attrs;
    attrs.matrix = m;
    Add(cases, MakeOp(Primitive::kMatVec, 1, attrs), {v}, TensorType{d, {4}});
    Add(cases, MakeOp(Primitive::kMatVecBatched, 1, attrs), {v}, TensorType{d, {4}});
  }
  {
    const TensorType s = Scalar(DType::kBool), v = Vector(DType::kBool, 3);
    for (Primitive p : {Primitive::kAnd, Primitive::kOr}) {
      for (const auto& [a, b] : shape_pairs(DType::kBool)) {
        Add(cases, MakeOp(p, 2), {a, b}, TensorType{DType::kBool, out_shape(a, b)});
      }
    }
    Add(cases, MakeOp(Primitive::kNot, 1), {v}, v);
    Add(cases, MakeOp(Primitive::kNot, 1), {s}, s);
  }
  const TensorType u64 = Scalar(DType::kU64);
  for (Primitive p : {Primitive::kRandomUniform, Primitive::kRandomNormal}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, std::vector<int64_t>{5}}) {
      Attributes attrs;
      attrs.ints = shape;
      Add(cases, MakeOp(p, 2, attrs), {u64, u64}, TensorType{DType::kF64, shape});
    }
  }
  // A user kernel with two inputs and two outputs that skips inactive lanes.
  Attributes kernel;
  kernel.kernel = "sum_and_product";
  PrimOp op = MakeOp(Primitive::kUserKernel, 2, kernel);
  op.outputs.push_back(VarId(3));
  cases.push_back({"sum_and_product", op, {Scalar(DType::kF64), Vector(DType::kF64, 2)},
                   {Vector(DType::kF64, 2), Vector(DType::kF64, 2)}});
  return cases;
}

KernelSignature SumAndProductSignature() {
  return {{Scalar(DType::kF64), Vector(DType::kF64, 2)},
          {Vector(DType::kF64, 2), Vector(DType::kF64, 2)},
          true};
}

absl::Status SumAndProduct(const KernelCall& call) {
  const double* a = reinterpret_cast<const double*>(call.inputs[0].data);
  const double* b = reinterpret_cast<const double*>(call.inputs[1].data);
  double* sum = reinterpret_cast<double*>(call.outputs[0].data);
  double* product = reinterpret_cast<double*>(call.outputs[1].data);
  for (int64_t l = 0; l < call.num_lanes; ++l) {
    if (!call.IsActive(l)) continue;
    for (int j = 0; j < 2; ++j) {
      sum[2 * l + j] = a[l] + b[2 * l + j];
      product[2 * l + j] = a[l] * b[2 * l + j];
    }
  }
  return absl::OkStatus();
}

// Checks that every primitive case is present: a new primitive in
// ir/primitives.def must be added to AllCases.
TEST(ConformanceCasesTest, EveryPrimitiveAndDTypeIsCovered) {
  std::vector<int> seen(NumBuiltinPrimitives() + 1, 0);
  for (const OpCase& c : AllCases()) seen[static_cast<int>(c.op.prim)]++;
  for (int p = 0; p <= NumBuiltinPrimitives(); ++p) {
    EXPECT_GT(seen[p], 0) << PrimitiveName(static_cast<Primitive>(p)) << " has no case";
  }
}

enum class LaneSetKind { kHalf, kSparse, kFull, kEmpty, kSingle };

LaneSet MakeLanes(LaneSetKind kind, int64_t batch, std::mt19937_64& rng) {
  switch (kind) {
    case LaneSetKind::kFull: return LaneSet::All(batch);
    case LaneSetKind::kEmpty: return LaneSet(batch);
    case LaneSetKind::kSingle: {
      LaneSet set(batch);
      set.Append(static_cast<int64_t>(rng() % static_cast<uint64_t>(batch)));
      return set;
    }
    case LaneSetKind::kHalf:
    case LaneSetKind::kSparse: {
      const uint64_t modulus = kind == LaneSetKind::kHalf ? 2 : 10;
      std::vector<uint8_t> mask(static_cast<size_t>(batch));
      for (auto& m : mask) m = rng() % modulus == 0;
      return LaneSet::FromMask(mask);
    }
  }
  return LaneSet(batch);
}

class BackendConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Backend>> backend = MakeBackend(GetParam());
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = *std::move(backend);
    ASSERT_TRUE(registry_.Register("sum_and_product", SumAndProductSignature(), SumAndProduct).ok());
  }

  // Runs one case at one batch size and lane set in both modes and checks
  // every lane of every output.
  void CheckCase(const OpCase& c, int64_t batch, const LaneSet& lanes, uint64_t seed) {
    ValueGen gen(seed);
    std::vector<uint8_t> junk(static_cast<size_t>(batch));
    for (int64_t l = 0; l < batch; ++l) junk[l] = !lanes.Contains(l);
    const bool batched_gemm = c.op.prim == Primitive::kMatVecBatched;
    std::vector<Tensor> ins;
    for (const TensorType& t : c.inputs) {
      ins.push_back(backend_->Allocate(t, batch));
      gen.FillTensor(&ins.back(), junk);
      if (batched_gemm) MakeActiveLanesModerate(&ins.back(), lanes);
    }
    std::vector<const Tensor*> in_ptrs;
    for (const Tensor& t : ins) in_ptrs.push_back(&t);
    // The oracle: each active lane alone.
    std::vector<Tensor> want;
    for (const TensorType& t : c.outputs) want.emplace_back(t, batch);
    for (int64_t lane : lanes.indices()) {
      std::vector<ConstLanesView> in_views;
      for (const Tensor& t : ins) in_views.push_back({t.type(), t.lane_bytes_ptr(lane)});
      std::vector<LanesView> out_views;
      for (Tensor& t : want) out_views.push_back({t.type(), t.lane_bytes_ptr(lane)});
      absl::Status s = RunPrimitive(c.op, in_views, out_views, 1, &registry_);
      ASSERT_TRUE(s.ok()) << c.name << ": " << s;
    }
    for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
      std::vector<Tensor> before, outs;
      for (const TensorType& t : c.outputs) {
        outs.push_back(backend_->Allocate(t, batch));
        gen.FillBytes(&outs.back());
        before.push_back(outs.back());
      }
      std::vector<Tensor*> out_ptrs;
      for (Tensor& t : outs) out_ptrs.push_back(&t);
      std::vector<Tensor> inputs_before = ins;
      absl::Status s = backend_->RunOp(c.op, in_ptrs, out_ptrs, lanes, mode, &registry_);
      ASSERT_TRUE(s.ok()) << c.name << ": " << s;
      for (size_t i = 0; i < ins.size(); ++i) {
        ASSERT_TRUE(ins[i] == inputs_before[i]) << c.name << ": input " << i << " changed";
      }
      for (size_t k = 0; k < outs.size(); ++k) {
        int reported = 0;
        for (int64_t l = 0; l < batch; ++l) {
          const bool active = lanes.Contains(l);
          const Tensor& expected = active ? want[k] : before[k];
          bool ok = testing::LaneBytesEqual(outs[k], l, expected.lane_bytes_ptr(l));
          if (active && batched_gemm) ok = CloseTo(outs[k], want[k], ins[0], l, c.op);
          if (!ok && reported++ < 3) {
            ADD_FAILURE() << GetParam() << " " << ExecModeName(mode) << " " << c.name
                          << " batch " << batch << " lanes " << lanes.size() << ": output "
                          << k << " lane " << l << (active ? " (active)" : " (inactive)")
                          << " is " << LaneHex(outs[k].lane_bytes_ptr(l), outs[k].lane_bytes())
                          << ", expected "
                          << LaneHex(expected.lane_bytes_ptr(l), outs[k].lane_bytes());
          }
        }
      }
    }
  }

  // matvec_batched is compared with a tolerance, on finite moderate inputs.
  static void MakeActiveLanesModerate(Tensor* t, const LaneSet& lanes) {
    for (int64_t lane : lanes.indices()) {
      for (int64_t i = 0; i < t->lane_elements(); ++i) {
        const int64_t k = lane * t->lane_elements() + i;
        if (t->dtype() == DType::kF64) {
          double& x = t->data<double>()[k];
          if (!std::isfinite(x) || std::abs(x) > 1e100) x = 0.5;
        } else {
          float& x = t->data<float>()[k];
          if (!std::isfinite(x) || std::abs(x) > 1e10f) x = 0.5f;
        }
      }
    }
  }

  static bool CloseTo(const Tensor& got, const Tensor& want, const Tensor& x, int64_t lane,
                      const PrimOp& op) {
    const DenseMatrix& m = *op.attrs.matrix;
    const bool f64 = got.dtype() == DType::kF64;
    for (int64_t i = 0; i < m.rows; ++i) {
      double scale = 0;
      for (int64_t j = 0; j < m.cols; ++j) {
        const double xj = f64 ? x.data<double>()[lane * m.cols + j]
                              : x.data<float>()[lane * m.cols + j];
        scale += std::abs(m.data[i * m.cols + j] * xj);
      }
      const double g = f64 ? got.data<double>()[lane * m.rows + i] : got.data<float>()[lane * m.rows + i];
      const double w = f64 ? want.data<double>()[lane * m.rows + i] : want.data<float>()[lane * m.rows + i];
      const double tolerance = (f64 ? 1e-12 : 1e-5) * scale + 1e-300;
      if (!(std::abs(g - w) <= tolerance)) return false;
    }
    return true;
  }

  std::unique_ptr<Backend> backend_;
  KernelRegistry registry_;
};

TEST_P(BackendConformanceTest, EveryPrimitiveMatchesEachLaneAloneInBothModes) {
  const std::vector<OpCase> cases = AllCases();
  std::mt19937_64 rng(2024);
  uint64_t seed = 1;
  for (const OpCase& c : cases) {
    for (int64_t batch : {1, 7, 64, 1000}) {
      for (LaneSetKind kind : {LaneSetKind::kHalf, LaneSetKind::kSparse, LaneSetKind::kFull,
                               LaneSetKind::kEmpty, LaneSetKind::kSingle}) {
        CheckCase(c, batch, MakeLanes(kind, batch, rng), seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(BackendConformanceTest, AnOutputMayBeAnInput) {
  // x = x + y and x = -x, in place, in both modes.
  for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
    for (int64_t batch : {1, 7, 64, 1000}) {
      std::mt19937_64 rng(static_cast<uint64_t>(batch));
      for (LaneSetKind kind : {LaneSetKind::kHalf, LaneSetKind::kFull}) {
        const LaneSet lanes = MakeLanes(kind, batch, rng);
        ValueGen gen(static_cast<uint64_t>(batch) + 17);
        Tensor x = backend_->Allocate(Vector(DType::kF64, 3), batch);
        Tensor y = backend_->Allocate(Vector(DType::kF64, 3), batch);
        gen.FillTensor(&x, std::vector<uint8_t>(batch, 0));
        gen.FillTensor(&y, std::vector<uint8_t>(batch, 0));
        const Tensor x0 = x;
        const PrimOp add = MakeOp(Primitive::kAdd, 2);
        const Tensor* ins[] = {&x, &y};
        Tensor* outs[] = {&x};
        ASSERT_TRUE(backend_->RunOp(add, ins, outs, lanes, mode, nullptr).ok());
        for (int64_t l = 0; l < batch; ++l) {
          for (int j = 0; j < 3; ++j) {
            const double a = x0.data<double>()[l * 3 + j], b = y.data<double>()[l * 3 + j];
            const double want = lanes.Contains(l) ? (std::isnan(a + b) ? NAN : a + b) : a;
            const double got = x.data<double>()[l * 3 + j];
            ASSERT_TRUE(std::memcmp(&got, &want, 8) == 0 || (std::isnan(got) && std::isnan(want)))
                << ExecModeName(mode) << " batch " << batch << " lane " << l;
          }
        }
      }
    }
  }
}

TEST_P(BackendConformanceTest, ErrorsLeaveOutputsUntouched) {
  const int64_t batch = 64;
  std::mt19937_64 rng(5);
  const LaneSet lanes = MakeLanes(LaneSetKind::kHalf, batch, rng);
  Attributes attrs;
  attrs.kernel = "not_registered";
  const PrimOp op = MakeOp(Primitive::kUserKernel, 1, attrs);
  Tensor x = backend_->Allocate(Scalar(DType::kF64), batch);
  Tensor out = backend_->Allocate(Scalar(DType::kF64), batch);
  ValueGen(3).FillBytes(&out);
  const Tensor before = out;
  const Tensor* ins[] = {&x};
  Tensor* outs[] = {&out};
  for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
    absl::Status s = backend_->RunOp(op, ins, outs, lanes, mode, &registry_);
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(s.message(), HasSubstr("not_registered"));
    EXPECT_TRUE(out == before);
  }
  absl::Status s = backend_->RunOp(MakeOp(Primitive::kExp, 1), ins, outs, LaneSet::All(batch),
                                   ExecMode::kDense, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  Tensor ints = backend_->Allocate(Scalar(DType::kI64), batch);
  const Tensor* bad_ins[] = {&ints};
  s = backend_->RunOp(MakeOp(Primitive::kExp, 1), bad_ins, outs, lanes, ExecMode::kCompact, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(BackendConformanceTest, DenseModePassesTheMaskToUserKernels) {
  KernelRegistry registry;
  std::vector<std::pair<int64_t, bool>> calls;  // (num_lanes, had mask)
  ASSERT_TRUE(registry
                  .Register("probe", {{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true},
                            [&](const KernelCall& call) {
                              calls.push_back({call.num_lanes, call.active != nullptr});
                              return absl::OkStatus();
                            })
                  .ok());
  Attributes attrs;
  attrs.kernel = "probe";
  Tensor x = backend_->Allocate(Scalar(DType::kF64), 10);
  Tensor out = backend_->Allocate(Scalar(DType::kF64), 10);
  const Tensor* ins[] = {&x};
  Tensor* outs[] = {&out};
  const LaneSet lanes = LaneSet::FromIndices(10, std::vector<int64_t>{2, 5, 7});
  ASSERT_TRUE(backend_->RunOp(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs, lanes,
                              ExecMode::kCompact, &registry).ok());
  ASSERT_TRUE(backend_->RunOp(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs, lanes,
                              ExecMode::kDense, &registry).ok());
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], (std::pair<int64_t, bool>{3, false}));
  EXPECT_EQ(calls[1], (std::pair<int64_t, bool>{10, true}));
}

// ---------------------------------------------------------------------------
// Data movement, stacks and lane queries.

Tensor Iota(const TensorType& type, int64_t batch, int64_t start) {
  Tensor t(type, batch);
  for (int64_t i = 0; i < t.batch() * t.lane_elements(); ++i) {
    VisitDType(type.dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, bool>) {
        reinterpret_cast<uint8_t*>(t.bytes())[i] = static_cast<uint8_t>((start + i) & 1);
      } else {
        t.data<T>()[i] = static_cast<T>(start + i);
      }
    });
  }
  return t;
}

TEST_P(BackendConformanceTest, MaskedUpdateGatherScatterAndCopyLanes) {
  for (DType d : kAllDTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, std::vector<int64_t>{3}}) {
      const TensorType type{d, shape};
      for (int64_t batch : {1, 7, 64, 1000}) {
        std::mt19937_64 rng(static_cast<uint64_t>(batch));
        for (LaneSetKind kind : {LaneSetKind::kHalf, LaneSetKind::kSparse, LaneSetKind::kFull,
                                 LaneSetKind::kEmpty}) {
          const LaneSet lanes = MakeLanes(kind, batch, rng);
          const Tensor src = Iota(type, batch, 1000);
          const Tensor dst0 = Iota(type, batch, 5);
          Tensor dst = dst0;
          backend_->MaskedUpdate(src, lanes, &dst);
          for (int64_t l = 0; l < batch; ++l) {
            const Tensor& want = lanes.Contains(l) ? src : dst0;
            ASSERT_TRUE(testing::LaneBytesEqual(dst, l, want.lane_bytes_ptr(l)))
                << type.ToString() << " batch " << batch << " lane " << l;
          }
          Tensor packed = Iota(type, std::max<int64_t>(lanes.size(), 1), 77);
          const Tensor packed0 = packed;
          backend_->Gather(src, lanes, &packed);
          for (int64_t i = 0; i < lanes.size(); ++i) {
            ASSERT_TRUE(testing::LaneBytesEqual(packed, i, src.lane_bytes_ptr(lanes.indices()[i])));
          }
          if (lanes.empty()) {
            ASSERT_TRUE(packed == packed0);
          }
          Tensor back = dst0;
          backend_->Scatter(packed, lanes, &back);
          for (int64_t l = 0; l < batch; ++l) {
            const Tensor& want = lanes.Contains(l) ? src : dst0;
            ASSERT_TRUE(testing::LaneBytesEqual(back, l, want.lane_bytes_ptr(l)));
          }
        }
        Tensor src = Iota(type, batch, 0);
        Tensor dst = Iota(type, 2 * batch, 500);
        const Tensor dst0 = dst;
        std::vector<int64_t> from, to;
        for (int64_t l = 0; l < batch; l += 2) {
          from.push_back(l);
          to.push_back(2 * batch - 1 - l);
        }
        backend_->CopyLanes(src, from, &dst, to);
        for (int64_t l = 0; l < 2 * batch; ++l) {
          const auto it = std::find(to.begin(), to.end(), l);
          const std::byte* want = it == to.end() ? dst0.lane_bytes_ptr(l)
                                                 : src.lane_bytes_ptr(from[it - to.begin()]);
          ASSERT_TRUE(testing::LaneBytesEqual(dst, l, want)) << "CopyLanes lane " << l;
        }
      }
    }
  }
}

TEST_P(BackendConformanceTest, FillLanesCastsTheValue) {
  const LaneSet lanes = LaneSet::FromIndices(5, std::vector<int64_t>{0, 3});
  Tensor i = Iota(Vector(DType::kI32, 2), 5, 10);
  backend_->FillLanes(-4, lanes, &i);
  EXPECT_EQ(i.ToVector<int32_t>(), (std::vector<int32_t>{-4, -4, 12, 13, 14, 15, -4, -4, 18, 19}));
  Tensor f = Iota(Scalar(DType::kF64), 5, 0);
  backend_->FillLanes(7, lanes, &f);
  EXPECT_EQ(f.ToVector<double>(), (std::vector<double>{7, 1, 2, 7, 4}));
  Tensor b(Scalar(DType::kBool), 5);
  backend_->FillLanes(42, lanes, &b);
  EXPECT_EQ(b.ToVector<bool>(), (std::vector<bool>{true, false, false, true, false}));
  Tensor u(Scalar(DType::kU64), 5);
  backend_->FillLanes(-1, lanes, &u);
  EXPECT_EQ(u.ToVector<uint64_t>()[3], ~uint64_t{0});
}

TEST_P(BackendConformanceTest, PushAndPopSaveAndRestorePerLane) {
  const int64_t batch = 5;
  LaneStack stack = backend_->AllocateStack(Vector(DType::kI64, 2), batch, /*initial_capacity=*/1);
  EXPECT_EQ(stack.capacity(), 1);
  const LaneSet all = LaneSet::All(batch);
  const LaneSet odd = LaneSet::FromIndices(batch, std::vector<int64_t>{1, 3});
  auto top = [&](int64_t lane) { return stack.top.data<int64_t>()[2 * lane]; };
  // Lane l's value is 100 * depth + l.
  backend_->FillLanes(0, all, &stack.top);
  for (int64_t l = 0; l < batch; ++l) stack.top.data<int64_t>()[2 * l] = l;
  for (int depth = 1; depth <= 6; ++depth) {
    const LaneSet& lanes = depth <= 2 ? all : odd;
    ASSERT_TRUE(backend_->Push(lanes, /*max_depth=*/6, &stack).ok());
    for (int64_t l : lanes.indices()) stack.top.data<int64_t>()[2 * l] = 100 * depth + l;
  }
  EXPECT_GE(stack.capacity(), 6);
  EXPECT_EQ(stack.depth, (std::vector<int32_t>{2, 6, 2, 6, 2}));
  EXPECT_EQ(top(0), 200);
  EXPECT_EQ(top(1), 601);
  // Overflow: an error naming the lane, nothing changed.
  const LaneStack before_overflow = stack;
  absl::Status s = backend_->Push(all, /*max_depth=*/6, &stack);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("lane 1"));
  EXPECT_EQ(stack.depth, before_overflow.depth);
  EXPECT_TRUE(stack.top == before_overflow.top);
  // Pop everything back in reverse.
  for (int depth = 6; depth >= 1; --depth) {
    const LaneSet& lanes = depth <= 2 ? all : odd;
    ASSERT_TRUE(backend_->Pop(lanes, &stack).ok());
    for (int64_t l : lanes.indices()) ASSERT_EQ(top(l), 100 * (depth - 1) + l) << depth;
  }
  EXPECT_EQ(stack.depth, (std::vector<int32_t>{0, 0, 0, 0, 0}));
  const Tensor top_before = stack.top;
  s = backend_->Pop(odd, &stack);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("lane 1"));
  EXPECT_TRUE(stack.top == top_before);
  // Max depth 0 refuses any push.
  EXPECT_EQ(backend_->Push(odd, 0, &stack).code(), absl::StatusCode::kResourceExhausted);
}

TEST_P(BackendConformanceTest, LaneQueries) {
  const int64_t batch = 9;
  Tensor cond(Scalar(DType::kBool), batch);
  const uint8_t kCond[] = {0, 3, 0, 1, 0, 0, 255, 0, 1};  // junk bytes count as true
  std::memcpy(cond.bytes(), kCond, batch);
  const LaneSet all = LaneSet::All(batch);
  const LaneSet evens = LaneSet::FromIndices(batch, std::vector<int64_t>{0, 2, 4, 6});
  const LaneSet none = LaneSet::FromIndices(batch, std::vector<int64_t>{0, 2, 4});
  EXPECT_TRUE(backend_->Any(cond, all));
  EXPECT_TRUE(backend_->Any(cond, evens));
  EXPECT_FALSE(backend_->Any(cond, none));
  EXPECT_FALSE(backend_->Any(cond, LaneSet(batch)));
  LaneSet yes(3), no;  // wrong batches: Split resets them
  backend_->Split(cond, evens, &yes, &no);
  EXPECT_EQ(std::vector<int64_t>(yes.indices().begin(), yes.indices().end()),
            (std::vector<int64_t>{6}));
  EXPECT_EQ(std::vector<int64_t>(no.indices().begin(), no.indices().end()),
            (std::vector<int64_t>{0, 2, 4}));
  EXPECT_TRUE(yes.IsConsistent() && no.IsConsistent());
  backend_->Split(cond, all, &yes, &no);  // reused sets
  EXPECT_EQ(yes.size(), 4);
  EXPECT_EQ(no.size(), 5);
  EXPECT_TRUE(yes.IsConsistent() && no.IsConsistent());
  for (DType d : {DType::kI64, DType::kI32}) {
    Tensor pc(Scalar(d), batch);
    const int64_t kPc[] = {5, 3, 7, 3, -2, 9, 3, 4, 8};
    for (int64_t l = 0; l < batch; ++l) {
      if (d == DType::kI64) {
        pc.data<int64_t>()[l] = kPc[l];
      } else {
        pc.data<int32_t>()[l] = static_cast<int32_t>(kPc[l]);
      }
    }
    EXPECT_EQ(backend_->Min(pc, all), -2);
    EXPECT_EQ(backend_->Min(pc, evens), -2);
    EXPECT_EQ(backend_->Min(pc, LaneSet::FromIndices(batch, std::vector<int64_t>{0, 2, 8})), 5);
    EXPECT_EQ(backend_->Min(pc, LaneSet(batch)), std::nullopt);
    LaneSet at;
    backend_->LanesEqual(pc, 3, all, &at);
    EXPECT_EQ(std::vector<int64_t>(at.indices().begin(), at.indices().end()),
              (std::vector<int64_t>{1, 3, 6}));
    backend_->LanesEqual(pc, 3, evens, &at);
    EXPECT_EQ(std::vector<int64_t>(at.indices().begin(), at.indices().end()),
              (std::vector<int64_t>{6}));
    EXPECT_TRUE(at.IsConsistent());
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendConformanceTest,
                         ::testing::ValuesIn(KnownBackendNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(MakeBackendTest, KnownAndUnknownNames) {
  for (const std::string& name : KnownBackendNames()) {
    absl::StatusOr<std::unique_ptr<Backend>> backend = MakeBackend(name);
    ASSERT_TRUE(backend.ok()) << backend.status();
    EXPECT_EQ((*backend)->name(), name);
    ASSERT_TRUE(BackendKindFromName(name).has_value());
    EXPECT_EQ(BackendKindName(*BackendKindFromName(name)), name);
  }
  absl::StatusOr<std::unique_ptr<Backend>> bad = MakeBackend("cuda");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'cuda'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("eigen"));
}

}  // namespace
}  // namespace autobatch
