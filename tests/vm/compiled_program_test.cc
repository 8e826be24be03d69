// Compiled programs (codegen/codegen.h EmitCompiledProgram, vm/fused_blocks.h
// CompiledRuntime): the test programs and the eight-schools samplers,
// compiled whole at build time (emit_fused_test_blocks --whole-program), give
// the stack VM's bits, profile counters and errors on every program, executor
// variant and batch size; the VM refuses a compiled program of another
// program and one that lacks blocks.
#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/codegen.h"
#include "codegen/jit.h"
#include "frontend/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/json.h"
#include "mcmc/batched/batched_sampler.h"
#include "tests/testing/profiles.h"
#include "tests/vm/fused_test_programs.h"
#include "vm/fused_blocks.h"
#include "vm/stack/stack_vm.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

// The code generated at build time for the program or sampler `name`.
const FusedProgram& CompiledFor(const std::string& name) {
  const FusedProgram* code = testing::GeneratedCode(name);
  if (code == nullptr) {
    ADD_FAILURE() << "no generated code for " << name;
    code = testing::GeneratedCode("all_ops");
  }
  return *code;
}

const std::vector<testing::FusedTestProgram>& Programs() {
  static const auto* programs =
      new std::vector<testing::FusedTestProgram>(testing::FusedTestPrograms());
  return *programs;
}

// The stack VM's variants, each run interpreted and compiled.
std::vector<std::pair<std::string, CallOptions>> Variants() {
  std::vector<std::pair<std::string, CallOptions>> out;
  for (const char* backend : {"eigen", "threaded"}) {
    const std::string b(backend);
    out.push_back({b, {.vm = Vm::kStack, .backend = b}});
    out.push_back({b + "/most-lanes",
                   {.vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes, .backend = b}});
    out.push_back({b + "/frames",
                   {.vm = Vm::kStack, .backend = b, .frame_stack_min_lane_bytes = 1}});
    out.push_back({b + "/deadline",
                   {.vm = Vm::kStack, .backend = b, .timeout_seconds = 1e6}});
    out.push_back({b + "/shards", {.vm = Vm::kStack, .backend = b, .shards = 3}});
    // Every op the runtime runs, dense (over the whole batch).
    out.push_back({b + "/dense", {.vm = Vm::kStack, .backend = b, .dense_fraction = 0.0,
                                  .dense_fraction_heavy = 0.0}});
  }
  return out;
}

class CompiledProgramTest : public ::testing::TestWithParam<std::tuple<int, int64_t>> {};

TEST_P(CompiledProgramTest, GivesTheInterpretersBitsAndCounters) {
  const auto [index, batch] = GetParam();
  const testing::FusedTestProgram& p = Programs()[static_cast<size_t>(index)];
  SCOPED_TRACE(p.name + " batch " + std::to_string(batch));
  const FusedProgram& compiled = CompiledFor(p.name);
  const std::vector<Tensor> inputs = p.inputs(batch, static_cast<uint64_t>(batch) + 17);
  for (auto [name, options] : Variants()) {
    SCOPED_TRACE(name);
    Profile expected_profile;
    absl::StatusOr<std::vector<Tensor>> expected =
        RunProgram(p.lowered, inputs, &p.context->kernels(), options, &expected_profile);
    ASSERT_TRUE(expected.ok()) << expected.status();
    options.fused_blocks = &compiled;
    Profile profile;
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(p.lowered, inputs, &p.context->kernels(), options, &profile);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(testing::BitIdentical(*got, *expected));
    EXPECT_EQ(testing::CounterDifference(expected_profile, profile), "");
  }
}

INSTANTIATE_TEST_SUITE_P(ProgramsAndBatches, CompiledProgramTest,
                         ::testing::Combine(::testing::Range(0, 8),
                                            ::testing::Values<int64_t>(1, 7, 64, 1000)));

TEST(CompiledProgramsTest, TheTestProgramsAreTheGeneratedOnes) {
  for (const testing::FusedTestProgram& p : Programs()) {
    SCOPED_TRACE(p.name);
    const FusedProgram& compiled = CompiledFor(p.name);
    EXPECT_TRUE(CheckFusedProgram(compiled, p.lowered).ok());
    size_t blocks = 0;
    for (const Function& fn : p.lowered.module.functions) blocks += fn.blocks.size();
    EXPECT_EQ(compiled.blocks.size(), blocks);
    EXPECT_TRUE(compiled.segments.empty());
  }
}

// Every primitive the emitter can write runs inline: in all_ops, each op
// but those on values too large for locals and the user kernel.
TEST(CompiledProgramsTest, AllOpsRunsTheFusablePrimitivesInline) {
  const testing::FusedTestProgram& p = Programs()[0];
  ASSERT_EQ(p.name, "all_ops");
  const FusedProgram& compiled = CompiledFor(p.name);
  size_t inline_ops = 0;
  for (const CompiledBlock& block : compiled.blocks) inline_ops += block.inline_ops.size();
  size_t fused_ops = 0;
  for (const SegmentPlan& plan : PlanFusedSegments(p.lowered)) {
    fused_ops += static_cast<size_t>(plan.end_op - plan.first_op);
  }
  EXPECT_GE(inline_ops, fused_ops);
}

// Draws of every chain of the three samplers, bit for bit.
TEST(CompiledSamplersTest, EightSchoolsDrawsAreBitIdentical) {
  const std::pair<mcmc::Algorithm, const FusedProgram*> samplers[] = {
      {mcmc::Algorithm::kNuts, &CompiledFor("nuts_eight_schools")},
      {mcmc::Algorithm::kHmc, &CompiledFor("hmc_eight_schools")},
      {mcmc::Algorithm::kRwmh, &CompiledFor("rwmh_eight_schools")},
  };
  for (const auto& [algorithm, compiled] : samplers) {
    SCOPED_TRACE(std::string(mcmc::AlgorithmName(algorithm)));
    testing::FusedTestSampler sampler = testing::EightSchoolsSampler(algorithm);
    ASSERT_TRUE(CheckFusedProgram(*compiled, *sampler.lowered).ok());
    const std::vector<mcmc::BatchedChain> chains =
        testing::StartingChains(sampler, 64, /*seed=*/7);
    for (CallOptions options : {CallOptions{.vm = Vm::kStack},
                                CallOptions{.vm = Vm::kStack,
                                            .block_policy = BlockPolicy::kMostLanes,
                                            .backend = "threaded", .shards = 2}}) {
      absl::StatusOr<mcmc::BatchedRunResult> expected = sampler.sampler->Run(chains, 20, options);
      ASSERT_TRUE(expected.ok()) << expected.status();
      options.fused_blocks = compiled;
      absl::StatusOr<mcmc::BatchedRunResult> got = sampler.sampler->Run(chains, 20, options);
      ASSERT_TRUE(got.ok()) << got.status();
      testing::ExpectSameDraws(*got, *expected);
    }
  }
}

// The same status, code and message, from both, and the same counters up
// to the error (`counters`: not where the clock stopped the run).
void ExpectSameError(const testing::FusedTestProgram& p, const std::vector<Tensor>& inputs,
                     CallOptions options, bool counters = true) {
  Profile expected_profile;
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(p.lowered, inputs, &p.context->kernels(), options, &expected_profile);
  ASSERT_FALSE(expected.ok());
  options.fused_blocks = &CompiledFor(p.name);
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> got =
      RunProgram(p.lowered, inputs, &p.context->kernels(), options, &profile);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status(), expected.status());
  if (counters) {
    EXPECT_EQ(testing::CounterDifference(expected_profile, profile), "");
  }
}

const testing::FusedTestProgram& TestProgram(const std::string& name) {
  for (const testing::FusedTestProgram& p : Programs()) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no test program " << name;
  return Programs()[0];
}

TEST(CompiledProgramsTest, StackOverflowIsTheInterpretersError) {
  const testing::FusedTestProgram& p = TestProgram("fibonacci");
  const std::vector<Tensor> inputs = p.inputs(64, 3);
  // The return addresses' stacks, then a variable's (frames: the values'
  // stacks are the ones that bind first).
  ExpectSameError(p, inputs, {.vm = Vm::kStack, .max_stack_depth = 4});
  ExpectSameError(p, inputs, {.vm = Vm::kStack, .max_stack_depth = 4,
                              .frame_stack_min_lane_bytes = 1});
  ExpectSameError(p, inputs, {.vm = Vm::kStack, .max_stack_bytes = 64 * 40});
}

TEST(CompiledProgramsTest, BudgetsAreTheInterpreters) {
  const testing::FusedTestProgram& p = TestProgram("collatz");
  const std::vector<Tensor> inputs = p.inputs(64, 3);
  {
    SCOPED_TRACE("steps");
    ExpectSameError(p, inputs, {.vm = Vm::kStack, .max_steps = 10});
  }
  {
    SCOPED_TRACE("time");
    ExpectSameError(p, inputs, {.vm = Vm::kStack, .timeout_seconds = 1e-9},
                    /*counters=*/false);
  }
  {
    SCOPED_TRACE("cancelled");
    const std::atomic<bool> cancel{true};
    ExpectSameError(p, inputs, {.vm = Vm::kStack, .cancel = &cancel});
  }
  {
    SCOPED_TRACE("memory");
    ExpectSameError(TestProgram("fibonacci"), TestProgram("fibonacci").inputs(1000, 3),
                    {.vm = Vm::kStack, .max_memory_bytes = 200 << 10});
  }
}

TEST(CompiledProgramsTest, RefusesAnotherProgramsOrOneWithoutEveryBlock) {
  const testing::FusedTestProgram& fib = TestProgram("fibonacci");
  const testing::FusedTestProgram& collatz = TestProgram("collatz");
  const std::vector<Tensor> inputs = collatz.inputs(8, 3);
  absl::StatusOr<std::vector<Tensor>> other =
      RunProgram(collatz.lowered, inputs, &collatz.context->kernels(),
                 {.vm = Vm::kStack, .fused_blocks = &CompiledFor(fib.name)});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.status().message(), HasSubstr("another program"));

  const FusedProgram& whole = CompiledFor(collatz.name);
  ASSERT_GE(whole.blocks.size(), 2u);
  const FusedProgram partial{whole.fingerprint, {}, whole.blocks.first(whole.blocks.size() - 1)};
  absl::StatusOr<std::vector<Tensor>> missing =
      RunProgram(collatz.lowered, inputs, &collatz.context->kernels(),
                 {.vm = Vm::kStack, .fused_blocks = &partial});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("compile it again"));
}

TEST(CompiledProgramsTest, OnlyTheStackVmRunsThem) {
  const testing::FusedTestProgram& p = TestProgram("fibonacci");
  absl::StatusOr<std::vector<Tensor>> stackless =
      RunProgram(p.lowered, p.inputs(4, 1), &p.context->kernels(),
                 {.vm = Vm::kStackless, .jit_compiled_program = true});
  ASSERT_FALSE(stackless.ok());
  EXPECT_EQ(stackless.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(stackless.status().message(), HasSubstr("stackless VM drop it"));
  // The stack VM itself does not compile: asked for a compiled program it
  // was not given, it says where one comes from.
  std::unique_ptr<Backend> backend = MakeBackend(BackendKind::kEigen);
  absl::StatusOr<std::vector<Tensor>> direct =
      RunStackVm(p.lowered, p.inputs(4, 1), &p.context->kernels(), *backend,
                 {.vm = Vm::kStack, .jit_compiled_program = true});
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(direct.status().message(), HasSubstr("EmitCompiledProgram"));
}

TEST(CompiledProgramsTest, GenerationRefusesAnUnloweredProgramAndABadSymbol) {
  const testing::FusedTestProgram& p = TestProgram("fibonacci");
  Program untyped = p.lowered;
  untyped.stage = Stage::kUntyped;
  absl::StatusOr<std::string> unlowered = EmitCompiledProgram(untyped, "Blocks");
  ASSERT_FALSE(unlowered.ok());
  EXPECT_THAT(unlowered.status().message(), HasSubstr("LowerProgram"));
  absl::StatusOr<std::string> keyword = EmitCompiledProgram(p.lowered, "while");
  ASSERT_FALSE(keyword.ok());
  EXPECT_THAT(keyword.status().message(), HasSubstr("keyword"));
}

}  // namespace
}  // namespace autobatch
