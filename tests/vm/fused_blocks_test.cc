// Fused blocks (codegen/codegen.h, vm/fused_blocks.h): the code generated at build
// time for the test programs (emit_fused_test_blocks) gives the stack VM's
// bits on every program, executor variant and batch size; the VM refuses
// fused blocks of another program; the planner fuses what it may and only
// that.
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/primitives.h"
#include "mcmc/batched/batched_sampler.h"
#include "tests/backends/op_cases.h"
#include "passes/pipeline.h"
#include "tests/vm/fused_test_programs.h"
#include "codegen/codegen.h"
#include "vm/fused_blocks.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

// The code generated at build time for the program or sampler `name`.
const FusedProgram& FusedFor(const std::string& name) {
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

// The stack VM variants of the differential tests, without and with fused
// blocks.
std::vector<std::pair<std::string, CallOptions>> Variants() {
  std::vector<std::pair<std::string, CallOptions>> out;
  for (const char* backend : {"eigen", "threaded"}) {
    const std::string b(backend);
    out.push_back({b, {.vm = Vm::kStack, .backend = b}});
    out.push_back({b + "/most-lanes",
                   {.vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes, .backend = b}});
    out.push_back({b + "/tiled",
                   {.vm = Vm::kStack, .backend = b, .dense_fraction = 1.0,
                    .dense_fraction_heavy = 1.0, .time_dense_or_compact = false,
                    .tile_bytes = 1}});
    out.push_back({b + "/frames",
                   {.vm = Vm::kStack, .backend = b, .frame_stack_min_lane_bytes = 1}});
    // A deadline runs the segments in chunks of lanes (FusedCalls::Call).
    out.push_back({b + "/deadline",
                   {.vm = Vm::kStack, .backend = b, .timeout_seconds = 1e6}});
  }
  return out;
}

class FusedProgramTest : public ::testing::TestWithParam<std::tuple<int, int64_t>> {};

TEST_P(FusedProgramTest, GivesTheInterpretersBits) {
  const auto [index, batch] = GetParam();
  const testing::FusedTestProgram& p = Programs()[static_cast<size_t>(index)];
  SCOPED_TRACE(p.name + " batch " + std::to_string(batch));
  const FusedProgram& fused = FusedFor(p.name);
  // Fibonacci's and even_odd's blocks each compute one value (n > 1, n - 1,
  // a sum), which is not worth a segment; the other programs have some.
  ASSERT_EQ(fused.segments.empty(), p.name == "fibonacci" || p.name == "even_odd");
  const std::vector<Tensor> inputs = p.inputs(batch, static_cast<uint64_t>(batch) + 17);
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(p.lowered, inputs, &p.context->kernels(), {.vm = Vm::kStack});
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (auto [name, options] : Variants()) {
    SCOPED_TRACE(name);
    options.fused_blocks = &fused;
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(p.lowered, inputs, &p.context->kernels(), options);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(testing::BitIdentical(*got, *expected));
  }
}

INSTANTIATE_TEST_SUITE_P(ProgramsAndBatches, FusedProgramTest,
                         ::testing::Combine(::testing::Range(0, 8),
                                            ::testing::Values<int64_t>(1, 7, 64, 1000)));

TEST(FusedProgramsTest, TheTestProgramsAreTheGeneratedOnes) {
  ASSERT_EQ(Programs().size(), 8u);
  for (const testing::FusedTestProgram& p : Programs()) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(CheckFusedProgram(FusedFor(p.name), p.lowered).ok());
  }
}

// Segments that write nothing: if the VM runs them, results change, which
// shows the equality above comes from running the fused code.
void WriteNothing(const FusedArgs&) {}

// `fused` with every segment writing nothing.
struct SegmentsThatWriteNothing {
  explicit SegmentsThatWriteNothing(const FusedProgram& fused)
      : segments(fused.segments.begin(), fused.segments.end()) {
    for (FusedSegment& seg : segments) seg.run = &WriteNothing;
    program = {fused.fingerprint, segments};
  }
  std::vector<FusedSegment> segments;
  FusedProgram program;
};

TEST(FusedProgramsTest, TheVmRunsTheSegments) {
  const testing::FusedTestProgram& p = Programs()[0];  // all_ops
  ASSERT_EQ(p.name, "all_ops");
  const SegmentsThatWriteNothing broken(FusedFor(p.name));
  const std::vector<Tensor> inputs = p.inputs(64, 5);
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(p.lowered, inputs, nullptr, {.vm = Vm::kStack});
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::vector<Tensor>> got =
      RunProgram(p.lowered, inputs, nullptr, {.vm = Vm::kStack, .fused_blocks = &broken.program});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(testing::BitIdentical(*got, *expected));
}

// A dense block that some lanes are away from measures its segments against
// the kernels (vm/timed_choice.h), trying the segments first: compact_state's
// `then` block runs for the lanes with n > 0 only, and every block runs dense
// here. Segments that write nothing change its results, the real ones do not.
TEST(FusedProgramsTest, DenseBlocksWithLanesAwayRunTheSegmentsToo) {
  const testing::FusedTestProgram& p = Programs()[5];
  ASSERT_EQ(p.name, "compact_state");
  const FusedProgram& fused = FusedFor(p.name);
  const SegmentsThatWriteNothing broken(fused);
  const std::vector<Tensor> inputs = p.inputs(64, 3);
  const CallOptions dense{.vm = Vm::kStack,
                          .dense_fraction = 0,
                          .dense_fraction_heavy = 0,
                          .time_dense_or_compact = false};
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(p.lowered, inputs, &p.context->kernels(), dense);
  ASSERT_TRUE(expected.ok()) << expected.status();
  CallOptions options = dense;
  options.fused_blocks = &broken.program;
  absl::StatusOr<std::vector<Tensor>> got =
      RunProgram(p.lowered, inputs, &p.context->kernels(), options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(testing::BitIdentical(*got, *expected));

  options.fused_blocks = &fused;
  Profile profile;
  got = RunProgram(p.lowered, inputs, &p.context->kernels(), options, &profile);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(testing::BitIdentical(*got, *expected));
  int64_t partial_fused = 0;
  for (const std::vector<BlockCounters>& blocks : profile.blocks) {
    for (const BlockCounters& c : blocks) {
      if (c.active_lanes < c.lane_slots) partial_fused += c.dense_fused;
    }
  }
  EXPECT_GE(partial_fused, 1);
}

TEST(FusedProgramsTest, AllOpsFusesEveryFusablePrimitiveAndNothingElse) {
  const testing::FusedTestProgram& p = Programs()[0];
  ASSERT_EQ(p.name, "all_ops");
  const Function& fn = p.lowered.entry_function();
  std::set<std::string> fused, unfused;
  std::vector<bool> in_segment;
  for (const SegmentPlan& plan : PlanFusedSegments(p.lowered)) {
    ASSERT_EQ(plan.function, p.lowered.entry);
    const Block& block = fn.blocks[static_cast<size_t>(plan.block.value)];
    for (int32_t i = plan.first_op; i < plan.end_op; ++i) {
      const auto* prim = std::get_if<PrimOp>(&block.ops[static_cast<size_t>(i)]);
      ASSERT_NE(prim, nullptr);
      fused.insert(std::string(PrimitiveName(prim->prim)));
    }
  }
  EXPECT_FALSE(fused.count("matvec_batched"));
  for (const testing::OpCase& c : testing::AllCases()) {
    if (c.op.prim == Primitive::kUserKernel || c.op.prim == Primitive::kMatVecBatched) continue;
    // The data-indexed ops have no generated code yet: they mostly read
    // uniform operands, and an op touching a uniform value is never fused
    // (codegen's TouchesUniform); the VM's kernels run them.
    if (Info(c.op.prim).rule == TypeRule::kGather ||
        Info(c.op.prim).rule == TypeRule::kScatterAdd ||
        Info(c.op.prim).rule == TypeRule::kMatVecInput ||
        Info(c.op.prim).rule == TypeRule::kMatVecTInput ||
        Info(c.op.prim).rule == TypeRule::kBernoulliLogitGlm) {
      EXPECT_FALSE(fused.count(std::string(PrimitiveName(c.op.prim))));
      continue;
    }
    const std::string name(PrimitiveName(c.op.prim));
    EXPECT_TRUE(fused.count(name)) << name << " is never fused";
  }
}

TEST(FusedProgramsTest, RejectsFusedBlocksOfAnotherProgram) {
  const testing::FusedTestProgram& collatz = Programs()[3];
  ASSERT_EQ(collatz.name, "collatz");
  absl::StatusOr<std::vector<Tensor>> got =
      RunProgram(collatz.lowered, collatz.inputs(7, 1), nullptr,
                 {.vm = Vm::kStack, .fused_blocks = &FusedFor("fibonacci")});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("generated from another program"));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("autobatch compile"));
}

TEST(FusedProgramsTest, RejectsSegmentsOutsideTheProgram) {
  const testing::FusedTestProgram& fib = Programs()[4];
  ASSERT_EQ(fib.name, "peanuts");
  const FusedProgram& fused = FusedFor(fib.name);
  ASSERT_GE(fused.segments.size(), 2u);
  struct Case {
    const char* what;
    void (*edit)(FusedSegment&);
  };
  const Case cases[] = {
      {"no such function", [](FusedSegment& s) { s.function = 99; }},
      {"no such block", [](FusedSegment& s) { s.block = -1; }},
      {"op range", [](FusedSegment& s) { s.end_op = 1000; }},
      {"op range", [](FusedSegment& s) { s.end_op = s.first_op; }},
      {"no function to run", [](FusedSegment& s) { s.run = nullptr; }},
  };
  for (const Case& c : cases) {
    std::vector<FusedSegment> segments(fused.segments.begin(), fused.segments.end());
    c.edit(segments[0]);
    const FusedProgram bad{fused.fingerprint, segments};
    const absl::Status status = CheckFusedProgram(bad, fib.lowered);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << c.what;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.what));
    EXPECT_THAT(std::string(status.message()), HasSubstr("regenerate"));
  }
  const int32_t var = 1 << 20;
  std::vector<FusedSegment> segments(fused.segments.begin(), fused.segments.end());
  segments[0].inputs = std::span<const int32_t>(&var, 1);
  EXPECT_THAT(std::string(CheckFusedProgram({fused.fingerprint, segments}, fib.lowered).message()),
              HasSubstr("no variable 1048576"));
  std::vector<FusedSegment> swapped(fused.segments.begin(), fused.segments.end());
  std::swap(swapped[0], swapped[1]);
  EXPECT_THAT(std::string(CheckFusedProgram({fused.fingerprint, swapped}, fib.lowered).message()),
              HasSubstr("ascending"));
}

// Tape ops end segments (codegen/codegen.h): the tape programs have
// segments right before or after a tape op and none covering one, and a
// segment stretched over a tape op is refused.
TEST(FusedProgramsTest, TapeOpsEndSegments) {
  for (size_t index : {6u, 7u}) {
    const testing::FusedTestProgram& p = Programs()[index];
    ASSERT_EQ(p.name.rfind("tape_", 0), 0u);
    const FusedProgram& fused = FusedFor(p.name);
    int next_to_tape_op = 0;
    for (const FusedSegment& seg : fused.segments) {
      const std::vector<Op>& ops = p.lowered.module.functions[seg.function].blocks[seg.block].ops;
      for (int32_t i = seg.first_op; i < seg.end_op; ++i) EXPECT_FALSE(TapeOf(ops[i])) << p.name;
      const bool before = seg.first_op > 0 && TapeOf(ops[seg.first_op - 1]).has_value();
      const bool after =
          seg.end_op < static_cast<int32_t>(ops.size()) && TapeOf(ops[seg.end_op]).has_value();
      next_to_tape_op += before || after;
    }
    EXPECT_GE(next_to_tape_op, 1) << p.name;
  }
  // A segment stretched over the tape op after it is refused.
  const testing::FusedTestProgram& p = Programs()[6];
  const FusedProgram& fused = FusedFor(p.name);
  for (size_t k = 0; k < fused.segments.size(); ++k) {
    const FusedSegment& seg = fused.segments[k];
    const std::vector<Op>& ops = p.lowered.module.functions[seg.function].blocks[seg.block].ops;
    if (seg.end_op >= static_cast<int32_t>(ops.size()) || !TapeOf(ops[seg.end_op])) continue;
    std::vector<FusedSegment> segments(fused.segments.begin(), fused.segments.end());
    segments[k].end_op += 1;
    const absl::Status status = CheckFusedProgram({fused.fingerprint, segments}, p.lowered);
    EXPECT_THAT(std::string(status.message()), HasSubstr("the ops include a tape op"));
    return;
  }
  ADD_FAILURE() << "no segment of tape_loop ends at a tape op";
}

TEST(CodegenTest, RejectsAnUnloweredProgramAndABadSymbol) {
  const testing::FusedTestProgram& fib = Programs()[1];
  Program typed = fib.lowered;
  typed.stage = Stage::kTyped;
  absl::StatusOr<std::string> unlowered = EmitFusedBlocks(typed, "F");
  EXPECT_EQ(unlowered.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unlowered.status().message()), HasSubstr("LowerProgram"));
  for (const char* symbol : {"", "1x", "a-b", "a::b"}) {
    absl::StatusOr<std::string> bad = EmitFusedBlocks(fib.lowered, symbol);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << symbol;
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr("not a C++ identifier"));
  }
  absl::StatusOr<std::string> good = EmitFusedBlocks(fib.lowered, "Fib_2");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_THAT(*good, HasSubstr("const autobatch::FusedProgram& Fib_2()"));
}

// Names come from the program (perhaps a JSON file) and end up in comments
// of the generated source: a line end, a carriage return (a line end to
// GCC) or a backslash (a line splice) in one must not carry the rest of the
// name out of its comment and into the compiled code.
TEST(CodegenTest, NamesCannotLeaveTheirComments) {
  // The first test program with a fused segment (names go into its comment).
  const auto with_segments = std::find_if(
      Programs().begin(), Programs().end(),
      [](const testing::FusedTestProgram& p) { return !PlanFusedSegments(p.lowered).empty(); });
  ASSERT_NE(with_segments, Programs().end());
  Program hostile = with_segments->lowered;
  const std::string evil = "x\n#error from a name\r#error after a CR\\\n#error spliced";
  for (Function& fn : hostile.module.functions) {
    fn.name += evil;
    for (Block& block : fn.blocks) block.label += evil;
  }
  for (Variable& var : hostile.module.variables) var.name += evil;
  absl::StatusOr<std::string> source = EmitFusedBlocks(hostile, "Hostile");
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT(*source, HasSubstr("x?#error from a name?#error after a CR??#error spliced"));
  EXPECT_EQ(source->find('\r'), std::string::npos);
  for (absl::string_view line : absl::StrSplit(*source, '\n')) {
    EXPECT_FALSE(absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#error")) << line;
    EXPECT_FALSE(absl::EndsWith(line, "\\")) << line;
  }
}

// A segment's locals stay within kMaxSegmentLocalBytes, however many wide
// values its ops touch: a run of about 75 ops on f64[128] values (8 KiB per
// local for a chunk of lanes, 100 locals in all) is split into several
// segments, and all of it is still fused.
TEST(CodegenTest, SegmentsKeepTheirLocalsWithinTheBudget) {
  constexpr int64_t kElements = 128;
  Context ctx;
  BatchFunction f = ctx.Batch("wide_chain")([](Builder&, Value x) {
    Value y = x;
    for (int i = 0; i < 25; ++i) y = y * 1.5 + x;
    return y;
  });
  absl::StatusOr<Program> lowered =
      LowerProgram(*ctx.Program(f), {Vector(DType::kF64, kElements)});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::vector<SegmentPlan> plans = PlanFusedSegments(*lowered);
  EXPECT_GE(plans.size(), 3u);
  int64_t fused_ops = 0;
  for (const SegmentPlan& plan : plans) {
    const Block& block = lowered->module.function(plan.function)
                             .blocks[static_cast<size_t>(plan.block.value)];
    std::set<int32_t> vars;
    for (int32_t i = plan.first_op; i < plan.end_op; ++i) {
      const Op& op = block.ops[static_cast<size_t>(i)];
      if (std::holds_alternative<PopOp>(op)) continue;
      ++fused_ops;
      for (VarId v : OpReads(op)) vars.insert(v.value);
      for (VarId v : OpWrites(op)) vars.insert(v.value);
    }
    const int64_t bytes = static_cast<int64_t>(vars.size()) * kElements * 8 * kFusedChunk;
    EXPECT_LE(bytes, kMaxSegmentLocalBytes) << "ops " << plan.first_op << ".." << plan.end_op;
  }
  EXPECT_GE(fused_ops, 60);  // split, not dropped
}

// The plan of a block: a segment reads what it does not write first, and
// passes on what is read after it or outlives the block.
TEST(CodegenTest, SegmentsPassOnWhatIsReadAfterThem) {
  int plans = 0;
  for (const testing::FusedTestProgram& p : Programs()) {
  const Module& module = p.lowered.module;
  for (const SegmentPlan& plan : PlanFusedSegments(p.lowered)) {
    ++plans;
    const Block& block =
        module.function(plan.function).blocks[static_cast<size_t>(plan.block.value)];
    std::set<int32_t> written;
    for (int32_t i = plan.first_op; i < plan.end_op; ++i) {
      // The VM runs a segment's pops after it (codegen/codegen.h): what a
      // pop restores is not the segment's to pass on.
      if (std::holds_alternative<PopOp>(block.ops[static_cast<size_t>(i)])) continue;
      for (VarId v : OpReads(block.ops[static_cast<size_t>(i)])) {
        if (!written.count(v.value)) {
          EXPECT_TRUE(std::count(plan.inputs.begin(), plan.inputs.end(), v));
        }
      }
      for (VarId v : OpWrites(block.ops[static_cast<size_t>(i)])) written.insert(v.value);
    }
    for (int32_t v : written) {
      const StorageClass storage = module.var(VarId(v)).storage;
      const bool passed = std::count(plan.outputs.begin(), plan.outputs.end(), VarId(v)) > 0;
      if (storage == StorageClass::kRegister || storage == StorageClass::kFull) {
        EXPECT_TRUE(passed) << module.var(VarId(v)).name;
      }
      if (storage == StorageClass::kNull) {
        EXPECT_FALSE(passed);
      }
    }
  }
  }
  EXPECT_GE(plans, 10);
}

TEST(FusedNutsTest, EightSchoolsDrawsAreBitIdentical) {
  testing::FusedTestSampler nuts = testing::EightSchoolsNuts();
  const FusedProgram& fused = FusedFor("nuts_eight_schools");
  ASSERT_TRUE(CheckFusedProgram(fused, *nuts.lowered).ok());
  ASSERT_GE(fused.segments.size(), 10u);
  // The subtree merge (join5) is one segment up to its keep-or-replace
  // selects, across the pops of the values that die in it.
  int segments_with_pops = 0;
  for (const SegmentPlan& plan : PlanFusedSegments(*nuts.lowered)) {
    const Block& block = nuts.lowered->module.function(plan.function)
                             .blocks[static_cast<size_t>(plan.block.value)];
    for (int32_t i = plan.first_op; i < plan.end_op; ++i) {
      if (std::holds_alternative<PopOp>(block.ops[static_cast<size_t>(i)])) {
        ++segments_with_pops;
        break;
      }
    }
    if (block.label == "join5" && plan.first_op == 0) {
      EXPECT_GE(plan.end_op, 45) << "join5 is split";
    }
  }
  EXPECT_GE(segments_with_pops, 1);
  const std::vector<mcmc::BatchedChain> chains = testing::StartingChains(nuts, 64, /*seed=*/7);
  CallOptions plain{.vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes};
  absl::StatusOr<mcmc::BatchedRunResult> expected = nuts.sampler->Run(chains, 20, plain);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (const char* backend : {"eigen", "threaded"}) {
    SCOPED_TRACE(backend);
    CallOptions options = plain;
    options.backend = backend;
    options.fused_blocks = &fused;
    absl::StatusOr<mcmc::BatchedRunResult> got = nuts.sampler->Run(chains, 20, options);
    ASSERT_TRUE(got.ok()) << got.status();
    testing::ExpectSameDraws(*got, *expected);
  }
}

// The primitive table's fusable column (ir/primitives.def) is exactly what
// codegen fuses: a primitive marked fusable that codegen cannot generate
// fails here.
TEST(FusedProgramsTest, AllOpsFusesExactlyTheTablesFusablePrimitives) {
  const testing::FusedTestProgram& p = Programs()[0];
  ASSERT_EQ(p.name, "all_ops");
  const Function& fn = p.lowered.entry_function();
  std::set<Primitive> fused;
  for (const SegmentPlan& plan : PlanFusedSegments(p.lowered)) {
    const Block& block = fn.blocks[static_cast<size_t>(plan.block.value)];
    for (int32_t i = plan.first_op; i < plan.end_op; ++i) {
      if (const auto* prim = std::get_if<PrimOp>(&block.ops[static_cast<size_t>(i)])) {
        fused.insert(prim->prim);
      }
    }
  }
  for (const testing::OpCase& c : testing::AllCases()) {
    EXPECT_EQ(fused.count(c.op.prim) > 0, Info(c.op.prim).fusable) << c.name;
  }
}

}  // namespace
}  // namespace autobatch
