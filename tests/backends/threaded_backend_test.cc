// ThreadedBackend: bit-identical to EigenBackend for every primitive and
// thread count, user kernels split only when bit_stable, deterministic errors,
// the inline threshold, and a stress run of many small ops (run it under
// ThreadSanitizer too). The shared contract is in conformance_test.cc.
#include "backends/threaded_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/eigen_backend.h"
#include "backends/kernel_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/backends/op_cases.h"
#include "tests/backends/test_util.h"
#include "tests/testing/sanitizers.h"

namespace autobatch {
namespace {

using ::autobatch::testing::AllCases;
using ::autobatch::testing::LaneHex;
using ::autobatch::testing::LaneSetKind;
using ::autobatch::testing::MakeLanes;
using ::autobatch::testing::MakeOp;
using ::autobatch::testing::OpCase;
using ::autobatch::testing::SumAndProduct;
using ::autobatch::testing::SumAndProductSignature;
using ::autobatch::testing::ValueGen;
using ::testing::HasSubstr;

std::unique_ptr<ThreadedBackend> SplitAll(int threads) {
  return std::make_unique<ThreadedBackend>(
      ThreadedBackendOptions{.num_threads = threads, .min_chunk_cost = 0});
}

// Runs `op` on both backends from identical outputs and returns the first
// difference (empty if none). matvec_batched (not bit-stable) is compared
// within 1e-12 (f64) / 1e-5 (f32) relative on active lanes.
std::string Compare(Backend& threaded, EigenBackend& eigen, const PrimOp& op,
                    const std::vector<Tensor>& ins, const std::vector<Tensor>& outs0,
                    const LaneSet& lanes, ExecMode mode, const KernelRegistry* kernels) {
  std::vector<const Tensor*> in_ptrs;
  for (const Tensor& t : ins) in_ptrs.push_back(&t);
  std::vector<Tensor> got = outs0, want = outs0;
  std::vector<Tensor*> got_ptrs, want_ptrs;
  for (Tensor& t : got) got_ptrs.push_back(&t);
  for (Tensor& t : want) want_ptrs.push_back(&t);
  const absl::Status s1 = threaded.RunOp(op, in_ptrs, got_ptrs, lanes, mode, kernels);
  const absl::Status s2 = eigen.RunOp(op, in_ptrs, want_ptrs, lanes, mode, kernels);
  if (s1 != s2) return absl::StrCat("status ", s1.ToString(), " vs eigen's ", s2.ToString());
  for (size_t k = 0; k < got.size(); ++k) {
    for (int64_t l = 0; l < got[k].batch(); ++l) {
      if (testing::LaneBytesEqual(got[k], l, want[k].lane_bytes_ptr(l))) continue;
      if (op.prim == Primitive::kMatVecBatched && lanes.Contains(l)) {
        bool close = true;
        for (int64_t i = 0; i < got[k].lane_elements(); ++i) {
          const int64_t e = l * got[k].lane_elements() + i;
          const bool f64 = got[k].dtype() == DType::kF64;
          const double g = f64 ? got[k].data<double>()[e] : got[k].data<float>()[e];
          const double w = f64 ? want[k].data<double>()[e] : want[k].data<float>()[e];
          close = close && (g == w || (std::isnan(g) && std::isnan(w)) ||
                            std::abs(g - w) <= (f64 ? 1e-12 : 1e-5) * std::abs(w));
        }
        if (close) continue;
      }
      return absl::StrCat("output ", k, " lane ", l,
                          lanes.Contains(l) ? " (active)" : " (inactive)", " is ",
                          LaneHex(got[k].lane_bytes_ptr(l), got[k].lane_bytes()),
                          ", eigen's ",
                          LaneHex(want[k].lane_bytes_ptr(l), want[k].lane_bytes()));
    }
  }
  return "";
}

// Random inputs (junk in inactive lanes; matvec_batched's active lanes kept
// moderate) and random output bytes for one case.
void MakeOperands(const OpCase& c, const LaneSet& lanes, uint64_t seed,
                  std::vector<Tensor>* ins, std::vector<Tensor>* outs) {
  ValueGen gen(seed);
  const int64_t batch = lanes.batch();
  std::vector<uint8_t> junk(static_cast<size_t>(batch));
  for (int64_t l = 0; l < batch; ++l) junk[l] = !lanes.Contains(l);
  ins->clear();
  outs->clear();
  for (const TensorType& t : c.inputs) {
    ins->emplace_back(t, batch);
    gen.FillTensor(&ins->back(), junk);
    if (c.op.prim == Primitive::kMatVecBatched) {
      Tensor& x = ins->back();
      for (int64_t i = 0; i < x.batch() * x.lane_elements(); ++i) {
        if (x.dtype() == DType::kF64) {
          x.data<double>()[i] = gen.Uniform(-2, 2);
        } else {
          x.data<float>()[i] = static_cast<float>(gen.Uniform(-2, 2));
        }
      }
    }
  }
  for (const TensorType& t : c.outputs) {
    outs->emplace_back(t, batch);
    gen.FillBytes(&outs->back());
  }
}

TEST(ThreadedBackendTest, EveryPrimitiveIsBitIdenticalToEigenOnALargeBatch) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("sum_and_product", SumAndProductSignature(), SumAndProduct).ok());
  std::vector<std::unique_ptr<ThreadedBackend>> backends;
  // Under the sanitizers two of the four, with unequal chunks on more threads
  // and on fewer than the cores: the other two run the same splitting code,
  // and under TSan all four took 65 s (two: 41 s).
  const std::vector<int> thread_counts =
      autobatch::testing::kUnderSanitizer ? std::vector<int>{3, 8} : std::vector<int>{2, 3, 8};
  for (int threads : thread_counts) backends.push_back(SplitAll(threads));
  if (!autobatch::testing::kUnderSanitizer) {
    backends.push_back(std::make_unique<ThreadedBackend>());  // the measured threshold
  }
  EigenBackend eigen;
  // Chunks of unequal sizes (4099 before: under TSan the test took 140 s of
  // CI's sanitizer stage, and more lanes cover nothing more).
  const int64_t batch = 2053;
  for (const auto& backend : backends) {
    if (backend->min_chunk_cost() == 0) {
      EXPECT_EQ(backend->NumChunks(batch, 1), backend->threads());
    }
  }
  std::mt19937_64 rng(7);
  uint64_t seed = 1;
  int compared = 0;
  for (const OpCase& c : AllCases()) {
    for (LaneSetKind kind : {LaneSetKind::kHalf, LaneSetKind::kSparse, LaneSetKind::kFull}) {
      const LaneSet lanes = MakeLanes(kind, batch, rng);
      std::vector<Tensor> ins, outs;
      MakeOperands(c, lanes, seed++, &ins, &outs);
      for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
        for (const auto& backend : backends) {
          const std::string diff =
              Compare(*backend, eigen, c.op, ins, outs, lanes, mode, &registry);
          ASSERT_EQ(diff, "") << backend->name() << " " << ExecModeName(mode) << " " << c.name
                              << " lanes " << lanes.size();
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

// Records each call of a user kernel: its lanes, first lane value, thread.
struct CallLog {
  struct Call {
    int64_t num_lanes;
    double first;
    std::thread::id thread;
  };
  std::mutex mu;
  std::vector<Call> calls;
  std::vector<Call> Take() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(calls, {});
  }
};

KernelFn Negate(CallLog* log) {
  return [log](const KernelCall& call) {
    const double* x = reinterpret_cast<const double*>(call.inputs[0].data);
    double* y = reinterpret_cast<double*>(call.outputs[0].data);
    for (int64_t l = 0; l < call.num_lanes; ++l) y[l] = -x[l];
    std::lock_guard<std::mutex> lock(log->mu);
    log->calls.push_back({call.num_lanes, x[0], std::this_thread::get_id()});
    return absl::OkStatus();
  };
}

TEST(ThreadedBackendTest, UserKernelsAreSplitOnlyIfBitStable) {
  CallLog log;
  KernelRegistry registry;
  const KernelSignature stable{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true};
  const KernelSignature unstable{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, false};
  ASSERT_TRUE(registry.Register("stable", stable, Negate(&log)).ok());
  ASSERT_TRUE(registry.Register("unstable", unstable, Negate(&log)).ok());
  std::unique_ptr<ThreadedBackend> backend = SplitAll(3);
  const int64_t batch = 30;
  std::vector<double> values(batch);
  for (int64_t l = 0; l < batch; ++l) values[l] = static_cast<double>(l);
  Tensor x = *Tensor::FromVector(values);
  Tensor y(Scalar(DType::kF64), batch);
  const Tensor* ins[] = {&x};
  Tensor* outs[] = {&y};
  Attributes attrs;
  for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
    attrs.kernel = "stable";
    ASSERT_TRUE(backend->RunOp(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs,
                               LaneSet::All(batch), mode, &registry).ok());
    std::vector<CallLog::Call> calls = log.Take();
    ASSERT_EQ(calls.size(), 3u) << ExecModeName(mode);
    std::set<double> firsts;
    for (const CallLog::Call& call : calls) {
      EXPECT_EQ(call.num_lanes, 10);
      firsts.insert(call.first);
      // Chunk 0 runs on this thread; chunks 1 and 2 on whichever thread
      // claims them first (EveryChunkRunsOnceWhoeverClaimsIt checks that
      // workers do).
      if (call.first == 0) {
        EXPECT_EQ(call.thread, std::this_thread::get_id());
      }
    }
    EXPECT_EQ(firsts, (std::set<double>{0, 10, 20}));
    for (int64_t l = 0; l < batch; ++l) ASSERT_EQ(y.data<double>()[l], -values[l]);

    attrs.kernel = "unstable";
    y = Tensor(Scalar(DType::kF64), batch);
    ASSERT_TRUE(backend->RunOp(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs,
                               LaneSet::All(batch), mode, &registry).ok());
    calls = log.Take();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].num_lanes, batch);
    EXPECT_EQ(calls[0].thread, std::this_thread::get_id());
    for (int64_t l = 0; l < batch; ++l) ASSERT_EQ(y.data<double>()[l], -values[l]);
  }
}

TEST(ThreadedBackendTest, ErrorsComeFromTheLowestFailingChunk) {
  KernelRegistry registry;
  ASSERT_TRUE(registry
                  .Register("no_negatives", {{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true},
                            [](const KernelCall& call) {
                              const double* x = reinterpret_cast<const double*>(call.inputs[0].data);
                              double* y = reinterpret_cast<double*>(call.outputs[0].data);
                              for (int64_t l = 0; l < call.num_lanes; ++l) {
                                if (!call.IsActive(l)) continue;
                                if (x[l] < 0) {
                                  return absl::InvalidArgumentError(
                                      absl::StrCat("negative input ", x[l]));
                                }
                                y[l] = std::sqrt(x[l]);
                              }
                              return absl::OkStatus();
                            })
                  .ok());
  Attributes attrs;
  attrs.kernel = "no_negatives";
  const PrimOp op = MakeOp(Primitive::kUserKernel, 1, attrs);
  const int64_t batch = 30;  // 3 threads: lanes 0-9, 10-19, 20-29 in dense mode
  std::vector<uint8_t> mask(batch, 0);
  for (int64_t l = 0; l < batch; l += 2) mask[l] = 1;
  const LaneSet lanes = LaneSet::FromMask(mask);  // compact: positions 0-4, 5-9, 10-14
  EigenBackend eigen;
  std::unique_ptr<ThreadedBackend> threaded = SplitAll(3);
  // (failing lanes, the value the error must name)
  const std::vector<std::pair<std::vector<int64_t>, int>> scenarios = {
      {{24, 16}, -16}, {{26}, -26}, {{28, 14, 4}, -4}, {{12, 18}, -12}};
  for (const auto& [failing, named] : scenarios) {
    std::vector<double> values(batch);
    for (int64_t l = 0; l < batch; ++l) values[l] = static_cast<double>(l);
    for (int64_t l : failing) values[l] = -static_cast<double>(l);
    const Tensor x = *Tensor::FromVector(values);
    const Tensor* ins[] = {&x};
    for (ExecMode mode : {ExecMode::kDense, ExecMode::kCompact}) {
      for (int repeat = 0; repeat < 20; ++repeat) {
        Tensor out(Scalar(DType::kF64), batch);
        ValueGen(static_cast<uint64_t>(repeat)).FillBytes(&out);
        const Tensor before = out;
        Tensor* outs[] = {&out};
        absl::Status s = threaded->RunOp(op, ins, outs, lanes, mode, &registry);
        ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
        ASSERT_THAT(s.message(), HasSubstr(absl::StrCat("negative input ", named)))
            << ExecModeName(mode);
        EXPECT_THAT(s.message(), HasSubstr("user kernel 'no_negatives'"));
        // Eigen (one call) names the same lane: the lowest failing one.
        Tensor eigen_out = before;
        Tensor* eigen_outs[] = {&eigen_out};
        EXPECT_EQ(eigen.RunOp(op, ins, eigen_outs, lanes, mode, &registry), s);
        for (int64_t l = 1; l < batch; l += 2) {
          ASSERT_TRUE(testing::LaneBytesEqual(out, l, before.lane_bytes_ptr(l)))
              << "inactive lane " << l << " was written";
        }
      }
    }
  }
}

TEST(ThreadedBackendTest, SmallOpsRunInlineAndLargeOnesSplit) {
  ThreadedBackend backend(ThreadedBackendOptions{.num_threads = 2});
  EXPECT_EQ(backend.min_chunk_cost(), ThreadedBackend::kDefaultMinChunkCost);
  EXPECT_GT(ThreadedBackend::kDefaultMinChunkCost, 0);
  const double min = ThreadedBackend::kDefaultMinChunkCost;
  EXPECT_EQ(backend.NumChunks(1000000, 0.5 * min), 2);
  EXPECT_EQ(backend.NumChunks(2, min), 2);
  EXPECT_EQ(backend.NumChunks(1, 1e9), 1);
  EXPECT_EQ(backend.NumChunks(1, 1e9), 1);
  EXPECT_EQ(backend.NumChunks(3, 0.5 * min), 1);  // 1.5 chunks' worth
  EXPECT_EQ(backend.NumChunks(4, 0.5 * min), 2);
  EXPECT_EQ(ThreadedBackend(ThreadedBackendOptions{.num_threads = 1}).NumChunks(1 << 20, 1e6), 1);
  ThreadedBackend eight(ThreadedBackendOptions{.num_threads = 8});
  EXPECT_EQ(eight.NumChunks(1 << 20, min), 8);
  EXPECT_EQ(eight.NumChunks(5, min), 5);
  EXPECT_EQ(eight.NumChunks(100, 0.035 * min), 3);

  // LaneCost: elements, weighted.
  Tensor s(Scalar(DType::kF64), 1), v3(Vector(DType::kF64, 3), 1), v4(Vector(DType::kF64, 4), 1);
  Tensor u(Scalar(DType::kU64), 1);
  const Tensor* two_scalars[] = {&s, &s};
  Tensor* scalar_out[] = {&s};
  EXPECT_EQ(ThreadedBackend::LaneCost(MakeOp(Primitive::kAdd, 2), two_scalars, scalar_out), 3);
  const Tensor* one_v3[] = {&v3};
  Tensor* v3_out[] = {&v3};
  Tensor* v4_out[] = {&v4};
  EXPECT_GT(ThreadedBackend::LaneCost(MakeOp(Primitive::kExp, 1), one_v3, v3_out), 6);
  auto m = std::make_shared<DenseMatrix>();
  m->rows = 4;
  m->cols = 3;
  m->data.assign(12, 1.0);
  Attributes attrs;
  attrs.matrix = m;
  // 7 elements touched plus a multiple of rows * cols.
  const double matvec_cost =
      ThreadedBackend::LaneCost(MakeOp(Primitive::kMatVec, 1, attrs), one_v3, v4_out);
  EXPECT_GE(matvec_cost, 12 + 7);
  m->rows = 8;
  m->data.assign(24, 1.0);
  Tensor v8(Vector(DType::kF64, 8), 1);
  Tensor* v8_out[] = {&v8};
  EXPECT_DOUBLE_EQ(ThreadedBackend::LaneCost(MakeOp(Primitive::kMatVec, 1, attrs), one_v3, v8_out) - 11,
                   2 * (matvec_cost - 7));
  const Tensor* keys[] = {&u, &u};
  EXPECT_GT(ThreadedBackend::LaneCost(MakeOp(Primitive::kRandomNormal, 2), keys, v3_out), 5);

  // A cheap op on a small batch makes one call on this thread.
  CallLog log;
  KernelRegistry registry;
  ASSERT_TRUE(registry
                  .Register("negate", {{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true},
                            Negate(&log))
                  .ok());
  Attributes negate;
  negate.kernel = "negate";
  Tensor x(Scalar(DType::kF64), 8), y(Scalar(DType::kF64), 8);
  const Tensor* ins[] = {&x};
  Tensor* outs[] = {&y};
  ASSERT_TRUE(backend.RunOp(MakeOp(Primitive::kUserKernel, 1, negate), ins, outs,
                            LaneSet::All(8), ExecMode::kDense, &registry).ok());
  std::vector<CallLog::Call> calls = log.Take();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].num_lanes, 8);
  EXPECT_EQ(calls[0].thread, std::this_thread::get_id());
}

// A bit_stable kernel that counts, per lane, how often it computed it (the
// input holds the lane's index) and which threads ran it.
struct LaneCounts {
  explicit LaneCounts(int64_t batch) : counts(static_cast<size_t>(batch)) {}
  std::vector<std::atomic<int>> counts;
  std::atomic<int> worker_calls{0};
  std::thread::id main = std::this_thread::get_id();
};

KernelFn CountLanes(LaneCounts* counts) {
  return [counts](const KernelCall& call) {
    const double* x = reinterpret_cast<const double*>(call.inputs[0].data);
    double* y = reinterpret_cast<double*>(call.outputs[0].data);
    for (int64_t l = 0; l < call.num_lanes; ++l) {
      y[l] = x[l];
      counts->counts[static_cast<size_t>(x[l])].fetch_add(1, std::memory_order_relaxed);
    }
    if (std::this_thread::get_id() != counts->main) counts->worker_calls.fetch_add(1);
    return absl::OkStatus();
  };
}

// Chunks are claimed by whichever thread gets to them first (the calling
// thread takes what no worker has): every lane of every op must be computed
// exactly once, whether workers linger between ops or not, and workers must
// take part. A chunk run twice or dropped changes a count.
TEST(ThreadedBackendTest, EveryChunkRunsOnceWhoeverClaimsIt) {
  const int64_t batch = 64;
  for (int64_t linger : {int64_t{0}, ThreadedBackendOptions::kDefaultLingerMicroseconds}) {
    for (int threads : {2, 3}) {
      LaneCounts counts(batch);
      KernelRegistry registry;
      ASSERT_TRUE(registry
                      .Register("count", {{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true},
                                CountLanes(&counts))
                      .ok());
      ThreadedBackend backend(ThreadedBackendOptions{
          .num_threads = threads, .min_chunk_cost = 0, .linger_microseconds = linger});
      std::vector<double> index(batch);
      for (int64_t l = 0; l < batch; ++l) index[l] = static_cast<double>(l);
      const Tensor x = *Tensor::FromVector(index);
      Tensor y(Scalar(DType::kF64), batch);
      const Tensor* ins[] = {&x};
      Tensor* outs[] = {&y};
      Attributes attrs;
      attrs.kernel = "count";
      std::vector<int> want(batch, 0);
      std::mt19937_64 rng(static_cast<uint64_t>(linger + threads));
      // Until a worker has run a chunk (bounded: a worker that never runs
      // one fails the test), and at least 2000 ops.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      int ops = 0;
      for (; ops < 2000 || (counts.worker_calls.load() == 0 &&
                            std::chrono::steady_clock::now() < deadline);
           ++ops) {
        // Compact on a random set, or dense on the whole batch.
        const bool dense = rng() % 3 == 0;
        const LaneSet lanes = dense ? LaneSet::All(batch)
                                    : MakeLanes(rng() % 2 ? LaneSetKind::kHalf
                                                          : LaneSetKind::kEveryThird,
                                                batch, rng);
        ASSERT_TRUE(backend.RunOp(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs, lanes,
                                  dense ? ExecMode::kDense : ExecMode::kCompact, &registry)
                        .ok());
        for (int64_t l : lanes.indices()) ++want[static_cast<size_t>(l)];
      }
      for (int64_t l = 0; l < batch; ++l) {
        ASSERT_EQ(counts.counts[static_cast<size_t>(l)].load(), want[static_cast<size_t>(l)])
            << "lane " << l << ", " << threads << " threads, linger " << linger << " us, "
            << ops << " ops";
      }
      EXPECT_GT(counts.worker_calls.load(), 0) << threads << " threads, linger " << linger;
    }
  }
}

// A backend whose workers linger for up to a second after each op is torn
// down without waiting for that second (or hanging): the workers stop.
TEST(ThreadedBackendTest, TeardownDoesNotWaitForLingeringWorkers) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) {
    ThreadedBackend backend(ThreadedBackendOptions{
        .num_threads = 2, .min_chunk_cost = 0, .linger_microseconds = 1'000'000});
    const int64_t batch = 100;
    Tensor x(Scalar(DType::kF64), batch), y(Scalar(DType::kF64), batch);
    const Tensor* ins[] = {&x, &x};
    Tensor* outs[] = {&y};
    ASSERT_TRUE(backend.RunOp(MakeOp(Primitive::kAdd, 2), ins, outs, LaneSet::All(batch),
                              ExecMode::kDense, nullptr).ok());
  }
  // Three lingers would take 3 s; a generous bound for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
}

// Out-of-range lingers are clamped to [0, 1 s]: no overflow in the clock
// arithmetic (UBSan would report it), and the backend still computes.
TEST(ThreadedBackendTest, OutOfRangeLingersAreClamped) {
  for (int64_t linger : {int64_t{-5}, std::numeric_limits<int64_t>::max()}) {
    ThreadedBackend backend(ThreadedBackendOptions{
        .num_threads = 2, .min_chunk_cost = 0, .linger_microseconds = linger});
    Tensor x = *Tensor::FromVector(std::vector<double>{1, 2, 3, 4});
    Tensor y(Scalar(DType::kF64), 4);
    const Tensor* ins[] = {&x, &x};
    Tensor* outs[] = {&y};
    ASSERT_TRUE(backend.RunOp(MakeOp(Primitive::kAdd, 2), ins, outs, LaneSet::All(4),
                              ExecMode::kDense, nullptr).ok());
    EXPECT_EQ(y.data<double>()[3], 8.0) << linger;
  }
}

TEST(ThreadedBackendTest, DataMovementIsSplitLikeEigen) {
  EigenBackend eigen;
  for (int threads : {2, 3, 8}) {
    std::unique_ptr<ThreadedBackend> backend = SplitAll(threads);
    std::mt19937_64 rng(static_cast<uint64_t>(threads));
    for (const TensorType& type : {Scalar(DType::kF64), Scalar(DType::kI32), Scalar(DType::kBool),
                                   Vector(DType::kF32, 3), Vector(DType::kI64, 2)}) {
      for (LaneSetKind kind : {LaneSetKind::kHalf, LaneSetKind::kSparse, LaneSetKind::kFull,
                               LaneSetKind::kEmpty, LaneSetKind::kSingle}) {
        const int64_t batch = 1001;
        const LaneSet lanes = MakeLanes(kind, batch, rng);
        ValueGen gen(rng());
        Tensor src(type, batch), dst(type, batch);
        gen.FillBytes(&src);
        gen.FillBytes(&dst);
        Tensor got = dst, want = dst;
        backend->MaskedUpdate(src, lanes, &got);
        eigen.MaskedUpdate(src, lanes, &want);
        ASSERT_TRUE(got == want) << "MaskedUpdate " << type.ToString() << " " << threads;
        Tensor packed_got = dst, packed_want = dst;
        backend->Gather(src, lanes, &packed_got);
        eigen.Gather(src, lanes, &packed_want);
        ASSERT_TRUE(packed_got == packed_want) << "Gather " << type.ToString() << " " << threads;
        got = dst;
        want = dst;
        backend->Scatter(packed_got, lanes, &got);
        eigen.Scatter(packed_want, lanes, &want);
        ASSERT_TRUE(got == want) << "Scatter " << type.ToString() << " " << threads;
      }
    }
  }
}

// Many tiny ops on every thread count, every op split into chunks of a lane
// or two: checks results against eigen and that nothing deadlocks or races
// (this test is the one to run under ThreadSanitizer).
TEST(ThreadedBackendTest, StressManySmallOps) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register("sum_and_product", SumAndProductSignature(), SumAndProduct).ok());
  std::vector<OpCase> cases;
  for (const OpCase& c : AllCases()) {
    const bool f64 = !c.inputs.empty() && c.inputs[0].dtype == DType::kF64;
    if ((f64 && (c.op.prim == Primitive::kAdd || c.op.prim == Primitive::kExp ||
                 c.op.prim == Primitive::kMatVec || c.op.prim == Primitive::kSelect ||
                 c.op.prim == Primitive::kReduceSum)) ||
        c.op.prim == Primitive::kRandomNormal || c.op.prim == Primitive::kUserKernel) {
      cases.push_back(c);
    }
  }
  ASSERT_GE(cases.size(), 8u);
  EigenBackend eigen;
  std::mt19937_64 rng(99);
  int ops = 0;
  for (int round = 0; round < 4; ++round) {
    for (int threads : {2, 3, 8}) {
      // A fresh backend (and pool) each round: creation and teardown too.
      std::unique_ptr<ThreadedBackend> backend = SplitAll(threads);
      for (int i = 0; i < 400; ++i) {
        const OpCase& c = cases[rng() % cases.size()];
        const int64_t batch = 1 + static_cast<int64_t>(rng() % 24);
        const LaneSetKind kind = static_cast<LaneSetKind>(rng() % 5);
        const LaneSet lanes = MakeLanes(kind, batch, rng);
        std::vector<Tensor> ins, outs;
        MakeOperands(c, lanes, rng(), &ins, &outs);
        const ExecMode mode = rng() % 2 ? ExecMode::kDense : ExecMode::kCompact;
        const std::string diff = Compare(*backend, eigen, c.op, ins, outs, lanes, mode, &registry);
        ASSERT_EQ(diff, "") << backend->name() << " " << ExecModeName(mode) << " " << c.name
                            << " batch " << batch << " lanes " << lanes.size();
        Tensor moved = outs[0], moved_eigen = outs[0];
        backend->MaskedUpdate(outs[0], lanes, &moved);
        eigen.MaskedUpdate(outs[0], lanes, &moved_eigen);
        ASSERT_TRUE(moved == moved_eigen);
        ++ops;
      }
    }
  }
  EXPECT_EQ(ops, 4 * 3 * 400);
}

// LaneCost follows the primitive's cost class (ir/primitives.def): a linear
// primitive costs exactly the elements it reads and writes (at least 1),
// every other class more.
TEST(ThreadedBackendTest, LaneCostFollowsTheCostClass) {
  for (const OpCase& c : AllCases()) {
    std::vector<Tensor> ins, outs;
    double base = 0;
    for (const TensorType& t : c.inputs) ins.emplace_back(t, 1);
    for (const TensorType& t : c.outputs) outs.emplace_back(t, 1);
    std::vector<const Tensor*> in_ptrs;
    std::vector<Tensor*> out_ptrs;
    for (const Tensor& t : ins) {
      in_ptrs.push_back(&t);
      base += static_cast<double>(t.lane_elements());
    }
    for (Tensor& t : outs) {
      out_ptrs.push_back(&t);
      base += static_cast<double>(t.lane_elements());
    }
    const double cost = ThreadedBackend::LaneCost(c.op, in_ptrs, out_ptrs);
    if (Info(c.op.prim).cost == CostClass::kLinear) {
      EXPECT_EQ(cost, std::max(base, 1.0)) << c.name;
    } else if (base > 0) {
      EXPECT_GT(cost, base) << c.name;
    }
  }
}

}  // namespace
}  // namespace autobatch
