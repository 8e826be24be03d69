// The memory limit of a call (CallOptions::max_memory_bytes) on every
// executor: values that each fit max_value_bytes but not together, a
// recursion that keeps a big value per frame, shards and backend threads
// sharing one budget, and memory the system refuses, all ResourceExhausted
// instead of std::bad_alloc.
#include <cstdint>
#include <new>
#include <ostream>
#include <string>
#include <vector>

#include "frontend/context.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMiB = int64_t{1} << 20;
// Doubles in a value of one megabyte a lane.
constexpr int64_t kWide = kMiB / 8;

struct Executor {
  std::string name;
  CallOptions options;
};

std::vector<Executor> Executors() {
  return {
      {"Stack", {.vm = Vm::kStack}},
      {"Stackless", {.vm = Vm::kStackless}},
      {"Reference", {.dry_run = true}},
      {"StackThreaded", {.vm = Vm::kStack, .backend = "threaded:2"}},
      {"StackShards", {.vm = Vm::kStack, .shards = 2}},
      {"StacklessShards", {.vm = Vm::kStackless, .shards = 2}},
  };
}

void PrintTo(const Executor& executor, std::ostream* os) { *os << executor.name; }

class MemoryLimitTest : public ::testing::TestWithParam<Executor> {
 protected:
  // Six values of a megabyte a lane, all live until the end.
  BatchFunction SixWideValues() {
    return ctx_.Batch("six_wide")([](Builder&, Value x) {
      std::vector<Value> values;
      for (int k = 0; k < 6; ++k) values.push_back(broadcast(x + static_cast<double>(k), {kWide}));
      Value total = reduce_sum(values[0]);
      for (int k = 1; k < 6; ++k) total = total + reduce_sum(values[k] * values[k - 1]);
      return total;
    });
  }

  // deep(n, x) keeps a value of 400 KB a lane in each of its n frames.
  BatchFunction DeepFrames() {
    BatchFunction deep = ctx_.Declare("deep", {.param_names = {"n", "x"}});
    ctx_.Batch(deep)([deep](Builder& b, Value n, Value x) {
      Var ans = b.Local("ans");
      b.If(n > 0)
          .Then([&] {
            Value kept = broadcast(x, {50000}) + 1.0;
            Value below = deep(n - 1, x);
            ans = below + reduce_sum(kept);
          })
          .Else([&] { ans = x; });
      return ans;
    });
    return deep;
  }

  CallOptions Options(int64_t max_memory_bytes) const {
    CallOptions options = GetParam().options;
    options.max_memory_bytes = max_memory_bytes;
    return options;
  }

  static void ExpectPastTheLimit(const absl::StatusOr<std::vector<Tensor>>& out,
                                 int64_t limit) {
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
    EXPECT_THAT(out.status().message(),
                HasSubstr(absl::StrCat("memory limit, max_memory_bytes = ", limit)));
    EXPECT_THAT(out.status().message(), HasSubstr("raise CallOptions::max_memory_bytes"));
  }

  Context ctx_;
};

// Each value takes 1 MiB a lane, within max_value_bytes, but the six of
// them do not fit the limit together: 8 lanes need 48 MiB on the batched
// VMs (two shards of 4 lanes: 24 MiB each, the call's 48 together), one
// lane at a time 6 MiB on the reference interpreter.
TEST_P(MemoryLimitTest, ValuesThatFitEachButNotTogether) {
  BatchFunction six = SixWideValues();
  const std::vector<Tensor> in = {*Tensor::FromVector(std::vector<double>(8, 0.5))};
  const int64_t limit = GetParam().options.dry_run ? 4 * kMiB : 32 * kMiB;
  CallOptions options = Options(limit);
  options.max_value_bytes = 8 * kMiB;
  ExpectPastTheLimit(six.Run(in, options), limit);
  // With room, the same call runs.
  absl::StatusOr<std::vector<Tensor>> out = six.Run(in, Options(256 * kMiB));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].batch(), 8);
}

// 20 lanes recursing 200 deep keep 200 frames of 400 KB a lane: 1.6 GB on
// the batched VMs, 80 MB one lane at a time; the limit stops every
// executor long before. Recursing 3 deep fits four times the limit (the
// stack VM's stacks start with room for 5 frames of each variable).
TEST_P(MemoryLimitTest, ARecursionThatKeepsABigValuePerFrame) {
  BatchFunction deep = DeepFrames();
  const std::vector<Tensor> in = {*Tensor::FromVector(std::vector<int64_t>(20, 200)),
                                  *Tensor::FromVector(std::vector<double>(20, 0.25))};
  const int64_t limit = 64 * kMiB;
  ExpectPastTheLimit(deep.Run(in, Options(limit)), limit);
  const std::vector<Tensor> shallow = {*Tensor::FromVector(std::vector<int64_t>(20, 3)),
                                       *Tensor::FromVector(std::vector<double>(20, 0.25))};
  absl::StatusOr<std::vector<Tensor>> out = deep.Run(shallow, Options(4 * limit));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<double>()[0], 0.25 + 3 * 50000 * 1.25);
}

// Memory the system refuses (here a user kernel's std::bad_alloc, as an
// allocation under `ulimit -v` throws) is ResourceExhausted too, also when
// the kernel runs on a shard's or a backend worker's thread.
TEST_P(MemoryLimitTest, MemoryTheSystemRefuses) {
  Kernel refuse = ctx_.RegisterKernel(
      "refuse", KernelSignature{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, /*bit_stable=*/true},
      [](const KernelCall&) -> absl::Status { throw std::bad_alloc(); });
  BatchFunction f = ctx_.Batch("f")([refuse](Value x) { return refuse(x) + 1.0; });
  const std::vector<Tensor> in = {*Tensor::FromVector(std::vector<double>(4096, 0.5))};
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, Options(0));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("ran out of memory"));
}

TEST(MemoryLimitOptionsTest, ANegativeLimitIsInvalidArgument) {
  Context ctx;
  BatchFunction f = ctx.Batch("f")([](Value x) { return x + 1.0; });
  absl::StatusOr<std::vector<Tensor>> out =
      f.Run({*Tensor::FromVector(std::vector<double>{1})}, {.max_memory_bytes = -1});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("CallOptions::max_memory_bytes is -1"));
}

INSTANTIATE_TEST_SUITE_P(Executors, MemoryLimitTest, ::testing::ValuesIn(Executors()),
                         [](const ::testing::TestParamInfo<Executor>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace autobatch
