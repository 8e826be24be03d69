// The backend conformance suite: every backend in KnownBackendNames() (and
// the threaded backend at several thread counts, splitting every op; see
// backends_under_test.h) must run every primitive, for every dtype its type rule allows, in dense and
// compact mode, exactly like RunPrimitive on each lane alone; and must move,
// stack and query lanes as the Backend contract says.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "backends/kernel_registry.h"
#include "backends/kernels.h"
#include "backends/lane_copy.h"
#include "backends/lane_set.h"
#include "backends/tensor.h"
#include "backends/threaded_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/backends/backends_under_test.h"
#include "tests/backends/op_cases.h"
#include "tests/backends/test_util.h"

namespace autobatch {
namespace {

using ::autobatch::testing::AllCases;
using ::autobatch::testing::BackendParamName;
using ::autobatch::testing::BackendsUnderTest;
using ::autobatch::testing::LaneHex;
using ::autobatch::testing::LaneSetKind;
using ::autobatch::testing::MakeBackendUnderTest;
using ::autobatch::testing::MakeLanes;
using ::autobatch::testing::MakeOp;
using ::autobatch::testing::OpCase;
using ::autobatch::testing::SumAndProduct;
using ::autobatch::testing::SumAndProductSignature;
using ::autobatch::testing::ValueGen;
using ::testing::HasSubstr;

// Checks that every primitive case is present: a new primitive in
// ir/primitives.def must be added to AllCases.
TEST(ConformanceCasesTest, EveryPrimitiveAndDTypeIsCovered) {
  std::vector<int> seen(NumBuiltinPrimitives() + 1, 0);
  for (const OpCase& c : AllCases()) seen[static_cast<int>(c.op.prim)]++;
  for (int p = 0; p <= NumBuiltinPrimitives(); ++p) {
    EXPECT_GT(seen[p], 0) << PrimitiveName(static_cast<Primitive>(p)) << " has no case";
  }
}

class BackendConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Backend>> backend = MakeBackendUnderTest(GetParam());
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

TEST_P(BackendConformanceTest, ASelectMayWriteOneOfItsOperands) {
  // x = select(c, y, x) and x = select(c, x, y) on values wider than 8 bytes
  // (which backends write straight into the running lanes) and on scalars.
  for (int64_t width : {1, 3, 10}) {
    for (bool x_first : {false, true}) {
      for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
        for (int64_t batch : {1, 7, 64, 1000}) {
          std::mt19937_64 rng(static_cast<uint64_t>(batch * width));
          for (LaneSetKind kind : {LaneSetKind::kHalf, LaneSetKind::kSparse, LaneSetKind::kFull}) {
            const LaneSet lanes = MakeLanes(kind, batch, rng);
            ValueGen gen(static_cast<uint64_t>(batch) + 29);
            const TensorType type = width == 1 ? TensorType{DType::kF64, {}}
                                               : Vector(DType::kF64, width);
            Tensor c = backend_->Allocate(TensorType{DType::kBool, {}}, batch);
            Tensor x = backend_->Allocate(type, batch);
            Tensor y = backend_->Allocate(type, batch);
            gen.FillTensor(&x, std::vector<uint8_t>(batch, 0));
            gen.FillTensor(&y, std::vector<uint8_t>(batch, 0));
            for (int64_t l = 0; l < batch; ++l) c.bytes()[l] = rng() % 3 == 0 ? std::byte{0} : std::byte{1};
            const Tensor x0 = x;
            const PrimOp select = MakeOp(Primitive::kSelect, 3);
            const Tensor* ins[] = {&c, x_first ? &x : &y, x_first ? &y : &x};
            Tensor* outs[] = {&x};
            ASSERT_TRUE(backend_->RunOp(select, ins, outs, lanes, mode, nullptr).ok());
            for (int64_t l = 0; l < batch; ++l) {
              const bool take_y = lanes.Contains(l) && ((c.bytes()[l] != std::byte{0}) != x_first);
              ASSERT_TRUE(testing::LaneBytesEqual(x, l, (take_y ? y : x0).lane_bytes_ptr(l)))
                  << "width " << width << (x_first ? " select(c, x, y) " : " select(c, y, x) ")
                  << ExecModeName(mode) << " batch " << batch << " lane " << l;
            }
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
  // A backend may split the lanes into several calls (on several threads).
  KernelRegistry registry;
  std::mutex mu;
  std::vector<std::pair<int64_t, bool>> calls;  // (num_lanes, had mask)
  ASSERT_TRUE(registry
                  .Register("probe", {{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true},
                            [&](const KernelCall& call) {
                              std::lock_guard<std::mutex> lock(mu);
                              calls.push_back({call.num_lanes, call.active != nullptr});
                              return absl::OkStatus();
                            })
                  .ok());
  auto lanes_and_masks = [&] {
    std::pair<int64_t, int64_t> total{0, 0};  // (lanes, calls with a mask)
    for (const auto& [num_lanes, masked] : calls) {
      total.first += num_lanes;
      total.second += masked ? 1 : 0;
    }
    calls.clear();
    return total;
  };
  Attributes attrs;
  attrs.kernel = "probe";
  Tensor x = backend_->Allocate(Scalar(DType::kF64), 10);
  Tensor out = backend_->Allocate(Scalar(DType::kF64), 10);
  const Tensor* ins[] = {&x};
  Tensor* outs[] = {&out};
  const LaneSet lanes = LaneSet::FromIndices(10, std::vector<int64_t>{2, 5, 7});
  ASSERT_TRUE(backend_->RunOp(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs, lanes,
                              ExecMode::kCompact, &registry).ok());
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(lanes_and_masks(), (std::pair<int64_t, int64_t>{3, 0}));
  ASSERT_TRUE(backend_->RunOp(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs, lanes,
                              ExecMode::kDense, &registry).ok());
  const int64_t dense_calls = static_cast<int64_t>(calls.size());
  ASSERT_GT(dense_calls, 0);
  EXPECT_EQ(lanes_and_masks(), (std::pair<int64_t, int64_t>{10, dense_calls}));
}

// ---------------------------------------------------------------------------
// Data movement, stacks and lane queries.

Tensor Iota(const TensorType& type, int64_t batch, int64_t start) {
  Tensor t(type, batch);
  for (int64_t i = 0; i < t.batch() * t.lane_elements(); ++i) {
    VisitDType(type.dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, bool>) {
        // The low byte, junk included: lanes move as bytes, whatever they hold.
        reinterpret_cast<uint8_t*>(t.bytes())[i] = static_cast<uint8_t>(start + i);
      } else {
        t.data<T>()[i] = static_cast<T>(start + i);
      }
    });
  }
  return t;
}

// Every dtype as a scalar, a vector and with shape [0] (lanes of no bytes,
// in tensors with no storage); and lanes of every size class that
// WithLaneCopy (backends/lane_copy.h) dispatches on: the fixed sizes 1, 2, 4,
// 8, 16 and 32 bytes, a word loop for other multiples of 8 (24, 40, 4096),
// memcpy for the rest (3, 12).
std::vector<TensorType> LaneMovementTypes() {
  std::vector<TensorType> types;
  for (DType d : kAllDTypes) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, std::vector<int64_t>{3}, std::vector<int64_t>{0}}) {
      types.push_back({d, shape});
    }
  }
  types.push_back(Vector(DType::kBool, 2));
  for (int64_t n : {2, 4, 5, 512}) types.push_back(Vector(DType::kF64, n));
  return types;
}

constexpr LaneSetKind kMovementLaneSets[] = {LaneSetKind::kHalf,   LaneSetKind::kSparse,
                                             LaneSetKind::kFull,   LaneSetKind::kEmpty,
                                             LaneSetKind::kSingle, LaneSetKind::kEveryThird};

TEST_P(BackendConformanceTest, MaskedUpdateGatherScatterAndCopyLanes) {
  for (const TensorType& type : LaneMovementTypes()) {
    for (int64_t batch : {1, 7, 64, 1000}) {
      std::mt19937_64 rng(static_cast<uint64_t>(batch));
      for (LaneSetKind kind : kMovementLaneSets) {
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

// MaskedCopyLaneBytes reads wide lanes' mask eight bytes at a time: any
// nonzero byte (not just 1) selects its lane, and ranges that start and end
// anywhere are exact.
TEST(MaskedCopyLaneBytesTest, CopiesExactlyTheLanesWithANonzeroMaskByte) {
  std::mt19937_64 rng(7);
  constexpr uint8_t kSetBytes[] = {1, 2, 0x7F, 0x80, 0x81, 0xFF};
  for (int64_t lane_bytes : {1, 3, 4, 8, 12, 24, 80}) {
    const int64_t batch = 77;
    std::vector<uint8_t> mask(batch);
    for (uint8_t& m : mask) {
      m = rng() % 2 == 0 ? 0 : kSetBytes[rng() % std::size(kSetBytes)];
    }
    std::vector<std::byte> src(static_cast<size_t>(batch * lane_bytes));
    for (std::byte& b : src) b = static_cast<std::byte>(rng());
    for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, batch}, {3, 70}, {9, 16}, {5, 5}}) {
      std::vector<std::byte> dst(src.size(), std::byte{0xAB});
      MaskedCopyLaneBytes(src.data(), dst.data(), lane_bytes, mask.data(), begin, end);
      for (int64_t l = 0; l < batch; ++l) {
        const bool copied = l >= begin && l < end && mask[static_cast<size_t>(l)] != 0;
        for (int64_t k = 0; k < lane_bytes; ++k) {
          const size_t i = static_cast<size_t>(l * lane_bytes + k);
          ASSERT_EQ(dst[i], copied ? src[i] : std::byte{0xAB})
              << "lane_bytes " << lane_bytes << " range [" << begin << ", " << end
              << ") lane " << l;
        }
      }
    }
  }
}

// A copy op runs as MaskedUpdate (IsPlainCopy in backends/backend.h): in both
// modes it must write exactly the running lanes, for lanes of every size.
TEST_P(BackendConformanceTest, CopyOpMovesLanesOfEverySize) {
  std::vector<OpCase> cases;
  for (const TensorType& type : LaneMovementTypes()) {
    testing::AddCase(cases, MakeOp(Primitive::kCopy, 1), {type}, type);
  }
  std::mt19937_64 rng(11);
  uint64_t seed = 1;
  for (const OpCase& c : cases) {
    for (int64_t batch : {1, 7, 64, 1000}) {
      for (LaneSetKind kind : kMovementLaneSets) {
        CheckCase(c, batch, MakeLanes(kind, batch, rng), seed++);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Push and Pop save and restore lanes of every size, for interleaved lane
// sets, and leave the lanes outside the set alone. The model keeps each
// lane's frames as indices into `frames`: frame k of lane l is lane l of
// Iota(type, batch, 1000 * k), written to the top after the k-th push.
TEST_P(BackendConformanceTest, PushAndPopMoveLanesOfEverySize) {
  for (const TensorType& type : LaneMovementTypes()) {
    for (int64_t batch : {1, 7, 64, 1000}) {
      std::mt19937_64 rng(static_cast<uint64_t>(batch));
      const LaneSet all = LaneSet::All(batch);
      const LaneSet third = MakeLanes(LaneSetKind::kEveryThird, batch, rng);
      // One lane outside `third` (except at batch 1).
      const LaneSet one =
          LaneSet::FromIndices(batch, std::vector<int64_t>{std::max<int64_t>(batch - 2, 0)});
      struct Step {
        bool push;
        const LaneSet* lanes;
      };
      // Every lane ends where it started, at depth 0.
      const Step steps[] = {{true, &all},   {true, &third},  {true, &one},
                            {true, &third}, {false, &third}, {false, &one},
                            {true, &all},   {false, &all},   {false, &third},
                            {false, &all}};
      LaneStack stack = backend_->AllocateStack(type, batch, /*initial_capacity=*/1);
      std::vector<Tensor> frames = {Iota(type, batch, 0)};
      CopyBytes(stack.top.bytes(), frames[0].bytes(), frames[0].size_bytes());
      std::vector<std::vector<size_t>> model(static_cast<size_t>(batch), {0});
      for (const Step& step : steps) {
        const std::string where = absl::StrCat(type.ToString(), " batch ", batch, " step ",
                                               &step - steps);
        if (step.push) {
          const absl::Status pushed = backend_->Push(*step.lanes, /*max_depth=*/8, &stack);
          ASSERT_TRUE(pushed.ok()) << where << ": " << pushed;
          frames.push_back(Iota(type, batch, 1000 * static_cast<int64_t>(frames.size())));
          for (int64_t l : step.lanes->indices()) {
            // Push leaves the top as it was: check it before overwriting it.
            ASSERT_TRUE(testing::LaneBytesEqual(stack.top, l,
                                                frames[model[l].back()].lane_bytes_ptr(l)))
                << where << " lane " << l;
            CopyBytes(stack.top.lane_bytes_ptr(l), frames.back().lane_bytes_ptr(l),
                      stack.top.lane_bytes());
            model[l].push_back(frames.size() - 1);
          }
        } else {
          const absl::Status popped = backend_->Pop(*step.lanes, &stack);
          ASSERT_TRUE(popped.ok()) << where << ": " << popped;
          for (int64_t l : step.lanes->indices()) model[l].pop_back();
        }
        for (int64_t l = 0; l < batch; ++l) {
          ASSERT_EQ(stack.depth[l], static_cast<int32_t>(model[l].size()) - 1)
              << where << " lane " << l;
          ASSERT_TRUE(testing::LaneBytesEqual(stack.top, l,
                                              frames[model[l].back()].lane_bytes_ptr(l)))
              << where << " lane " << l << " is "
              << LaneHex(stack.top.lane_bytes_ptr(l), stack.top.lane_bytes());
        }
      }
    }
  }
}

// Values with no elements (f64[0]) have no storage: running ops on them,
// in both modes, and pushing and popping them moves no bytes and must not
// hand memcpy a null pointer (the sanitizer builds catch that; fuzzer
// finding F5 in docs/FUZZING.md).
TEST_P(BackendConformanceTest, ZeroElementValuesRunAndStack) {
  const TensorType empty_vector{DType::kF64, {0}};
  for (int64_t batch : {1, 7, 64, 1000}) {
    std::mt19937_64 rng(static_cast<uint64_t>(batch));
    for (LaneSetKind kind : {LaneSetKind::kHalf, LaneSetKind::kSparse, LaneSetKind::kFull}) {
      const LaneSet lanes = MakeLanes(kind, batch, rng);
      for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
        const Tensor x = backend_->Allocate(empty_vector, batch);
        Tensor sum = backend_->Allocate(empty_vector, batch);
        const Tensor* ins[] = {&x, &x};
        Tensor* outs[] = {&sum};
        ASSERT_TRUE(backend_->RunOp(MakeOp(Primitive::kAdd, 2), ins, outs, lanes, mode,
                                    nullptr).ok());
        Tensor copy = backend_->Allocate(empty_vector, batch);
        const Tensor* copy_ins[] = {&x};
        Tensor* copy_outs[] = {&copy};
        ASSERT_TRUE(backend_->RunOp(MakeOp(Primitive::kCopy, 1), copy_ins, copy_outs, lanes,
                                    mode, nullptr).ok());
        EXPECT_TRUE(sum == Tensor(empty_vector, batch));
        EXPECT_TRUE(copy == Tensor(empty_vector, batch));
      }
      LaneStack stack = backend_->AllocateStack(empty_vector, batch, /*initial_capacity=*/0);
      for (int depth = 0; depth < 3; ++depth) {
        ASSERT_TRUE(backend_->Push(lanes, /*max_depth=*/3, &stack).ok());
      }
      for (int depth = 0; depth < 3; ++depth) ASSERT_TRUE(backend_->Pop(lanes, &stack).ok());
      for (int64_t l = 0; l < batch; ++l) EXPECT_EQ(stack.depth[static_cast<size_t>(l)], 0);
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
  EXPECT_EQ(stack.depth, (CountedVector<int32_t>{2, 6, 2, 6, 2}));
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
  EXPECT_EQ(stack.depth, (CountedVector<int32_t>{0, 0, 0, 0, 0}));
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
                         ::testing::ValuesIn(BackendsUnderTest()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return BackendParamName(info.param);
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
  EXPECT_THAT(bad.status().message(), HasSubstr("threaded"));
}

TEST(MakeBackendTest, ThreadedTakesAThreadCount) {
  for (int n : {1, 2, 3, 8, 256}) {
    const std::string name = "threaded:" + std::to_string(n);
    absl::StatusOr<std::unique_ptr<Backend>> backend = MakeBackend(name);
    ASSERT_TRUE(backend.ok()) << backend.status();
    EXPECT_EQ((*backend)->name(), name);
    auto* threaded = dynamic_cast<ThreadedBackend*>(backend->get());
    ASSERT_NE(threaded, nullptr);
    EXPECT_EQ(threaded->threads(), n);
  }
  absl::StatusOr<std::unique_ptr<Backend>> by_kind = MakeBackend(BackendKind::kThreaded);
  auto* threaded = dynamic_cast<ThreadedBackend*>(by_kind->get());
  ASSERT_NE(threaded, nullptr);
  EXPECT_EQ(threaded->threads(),
            std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  for (const char* bad : {"threaded:", "threaded:0", "threaded:-1", "threaded:+2", "threaded:x",
                          "threaded:2x", "threaded: 2", "threaded:257", "threaded:1000",
                          "threaded:99999999999999999999"}) {
    absl::StatusOr<std::unique_ptr<Backend>> backend = MakeBackend(bad);
    EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(backend.status().message(), HasSubstr(std::string("'") + bad + "'"));
    EXPECT_THAT(backend.status().message(), HasSubstr("from 1 to 256"));
  }
  EXPECT_FALSE(BackendKindFromName("threaded:2").has_value());
  EXPECT_EQ(MakeBackend("eigen:2").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace autobatch
