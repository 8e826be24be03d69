// Calls over processes (CallOptions::communicator) under mpirun (2 and 3
// ranks), through RunProgram and BatchFunction::Run: rank 0's outputs are
// one process's, bit for bit, for any batch (including fewer lanes than
// ranks); a lane's error on one rank is every rank's, naming the rank and
// lanes.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/context.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/peanuts/peanuts.h"
#include "support/communicator.h"
#include "tests/frontend/peanuts_inputs.h"
#include "tests/support/mpi_test_main.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

TEST(RunMpiTest, RankZeroGetsOneProcesssOutputs) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> program = ctx.Program(fib);
  ASSERT_TRUE(program.ok()) << program.status();
  for (int64_t batch : {0, 1, 2, 7, 64, 1000}) {
    std::vector<int64_t> n;
    for (int64_t i = 0; i < batch; ++i) n.push_back((i * 7919) % 13);
    std::vector<Tensor> in = {*Tensor::FromVector(n)};
    for (Vm vm : {Vm::kStack, Vm::kStackless}) {
      const CallOptions options{.vm = vm, .shards = 2};
      absl::StatusOr<std::vector<Tensor>> one =
          RunProgram(*program, in, &ctx.kernels(), options);
      ASSERT_TRUE(one.ok()) << one.status();
      CallOptions over_ranks = options;
      over_ranks.communicator = &MpiWorld();
      // Through RunProgram and through the function's own call (compiled
      // and cached by the Context, run from its block plan).
      for (const absl::StatusOr<std::vector<Tensor>>& many :
           {RunProgram(*program, in, &ctx.kernels(), over_ranks), fib.Run(in, over_ranks)}) {
        ASSERT_TRUE(many.ok()) << many.status();
        if (MpiWorld().rank() == 0) {
          EXPECT_EQ(*many, *one) << "batch " << batch;
        } else {
          const auto [first, last] = RankRange(batch, MpiWorld().rank(), MpiWorld().size());
          ASSERT_EQ(many->size(), 1u);
          EXPECT_EQ((*many)[0].batch(), last - first);
        }
      }
    }
  }
}

TEST(RunMpiTest, FloatingPointLanesKeepTheirBits) {
  Context ctx;
  BatchFunction peanuts = samples::DefinePeaNuts(ctx, {.dimension = 8, .max_depth = 4});
  absl::StatusOr<Program> program = ctx.Program(peanuts);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::vector<Tensor> in = PeaNutsInputs(37);
  absl::StatusOr<std::vector<Tensor>> one = RunProgram(*program, in, &ctx.kernels(), {});
  ASSERT_TRUE(one.ok()) << one.status();
  absl::StatusOr<std::vector<Tensor>> many =
      RunProgram(*program, in, &ctx.kernels(), {.communicator = &MpiWorld()});
  ASSERT_TRUE(many.ok()) << many.status();
  if (MpiWorld().rank() == 0) {
    EXPECT_EQ(*many, *one);
  }
}

// Lanes of the last rank recurse past the stack limit; every rank reports it.
TEST(RunMpiTest, AnErrorOnOneRankIsEveryRanksError) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> program = ctx.Program(fib);
  ASSERT_TRUE(program.ok()) << program.status();
  const int64_t batch = 12;
  const int last = MpiWorld().size() - 1;
  const auto [first, end] = RankRange(batch, last, MpiWorld().size());
  std::vector<int64_t> n(batch, 5);
  n[static_cast<size_t>(end - 1)] = 40;
  std::vector<Tensor> in = {*Tensor::FromVector(n)};
  const absl::Status status =
      RunProgram(*program, in, &ctx.kernels(),
                 {.max_stack_depth = 20, .communicator = &MpiWorld()})
          .status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat("rank ", last, ": lanes ", first, " to ", end - 1)));
}

}  // namespace
}  // namespace autobatch
