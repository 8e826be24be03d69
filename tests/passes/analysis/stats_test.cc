// Tests of the op counts and memory estimate (passes/analysis/stats.h).
#include "passes/analysis/stats.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/json.h"
#include "ir/testing/fib_program.h"
#include "nlohmann/json.hpp"
#include "passes/infer_types.h"
#include "passes/pipeline.h"
#include "tests/passes/test_programs.h"
#include "tests/testing/golden.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const TensorType kI64 = Scalar(DType::kI64);

TEST(StatsTest, SmallLoweredProgram) {
  const Program program = testing::MakeSmallLoweredProgram();
  const ProgramStats stats = ComputeStats(program);
  EXPECT_EQ(stats.stage, Stage::kLowered);
  EXPECT_EQ(stats.functions, 2);
  EXPECT_EQ(stats.blocks, 3);
  EXPECT_EQ(stats.ops, 6);
  EXPECT_EQ(stats.variables, 6);
  EXPECT_EQ(stats.primitives,
            (std::map<std::string, int64_t>{{"copy", 3}, {"fill_like", 1}, {"mul", 1}}));
  EXPECT_EQ(stats.calls, 0);
  EXPECT_EQ(stats.pop_ops, 1);
  EXPECT_EQ(stats.terminators, (std::map<std::string, int64_t>{
                                   {"halt", 1}, {"indirect_goto", 1}, {"push_goto", 1}}));
  ASSERT_EQ(stats.per_block.size(), 3u);
  // main ^0: a = copy x pushes a (Full), push_goto pushes the PC.
  EXPECT_EQ(stats.per_block[0].ops, 1);
  EXPECT_EQ(stats.per_block[0].pushes, 2);
  EXPECT_EQ(stats.per_block[0].pops, 0);
  // main ^1: r (register) and dead (null) push nothing; pop a, b.
  EXPECT_EQ(stats.per_block[1].ops, 3);
  EXPECT_EQ(stats.per_block[1].pushes, 0);
  EXPECT_EQ(stats.per_block[1].pops, 2);
  // twice ^0: two is temporary, b is Full; indirect_goto pops the PC.
  EXPECT_EQ(stats.per_block[2].function, FunctionId(1));
  EXPECT_EQ(stats.per_block[2].pushes, 1);
  EXPECT_EQ(stats.per_block[2].pops, 1);

  ASSERT_TRUE(stats.memory.has_value()) << stats.memory_note;
  const MemoryEstimate& memory = *stats.memory;
  EXPECT_TRUE(memory.has_storage_classes);
  EXPECT_EQ(memory.variables, (std::array<int64_t, 5>{1, 1, 2, 2, 0}));  // null temp reg full tape
  EXPECT_EQ(memory.bytes, (std::array<int64_t, 5>{8, 8, 16, 16, 0}));
  EXPECT_EQ(memory.stored_bytes, 40);
  ASSERT_EQ(memory.frames.size(), 2u);
  EXPECT_EQ(memory.frames[0].full_bytes, 0);
  EXPECT_EQ(memory.frames[0].BytesPerDepth(), kPcEntryBytes);
  EXPECT_EQ(memory.frames[1].full_variables, 2);
  EXPECT_EQ(memory.frames[1].full_bytes, 16);
  EXPECT_EQ(memory.frames[1].BytesPerDepth(), 16 + kPcEntryBytes);
  EXPECT_FALSE(memory.frames[1].recursive);
  EXPECT_EQ(stats.memory_note, "");

  const std::string text = PrintStats(program, stats);
  EXPECT_TRUE(testing::MatchesGoldenFile(text, "tests/passes/analysis/golden", "small_lowered_stats"));
  EXPECT_THAT(text, HasSubstr("\n  @twice                           2           16      4           20\n"));
}

TEST(StatsTest, JsonHasTheSameNumbers) {
  const Program program = testing::MakeSmallLoweredProgram();
  const nlohmann::json json = nlohmann::json::parse(PrintStatsJson(program, ComputeStats(program)));
  EXPECT_EQ(json["stage"], "lowered");
  EXPECT_EQ(json["entry"], "main");
  EXPECT_EQ(json["ops"], 6);
  EXPECT_EQ(json["primitives"]["copy"], 3);
  EXPECT_EQ(json["pop_ops"], 1);
  EXPECT_EQ(json["terminators"]["push_goto"], 1);
  EXPECT_EQ(json["per_block"][1], nlohmann::json({{"function", "main"},
                                                   {"block", 1},
                                                   {"label", "resume"},
                                                   {"ops", 3},
                                                   {"pushes", 0},
                                                   {"pops", 2}}));
  EXPECT_EQ(json["memory"]["variables"]["full"], nlohmann::json({{"count", 2}, {"bytes", 16}}));
  EXPECT_EQ(json["memory"]["variables"]["null"], nlohmann::json({{"count", 1}, {"bytes", 8}}));
  EXPECT_EQ(json["memory"]["stored_bytes"], 40);
  EXPECT_EQ(json["memory"]["pc_entry_bytes"], kPcEntryBytes);
  EXPECT_EQ(json["memory"]["frames"][1],
            nlohmann::json({{"function", "twice"},
                            {"full_variables", 2},
                            {"full_bytes", 16},
                            {"bytes_per_depth", 20},
                            {"recursive", false}}));
  EXPECT_EQ(json["memory_note"], "");
}

TEST(StatsTest, UntypedProgramHasCountsAndNoMemoryEstimate) {
  const Program program = testing::MakeFibonacciProgram();
  const ProgramStats stats = ComputeStats(program);
  EXPECT_EQ(stats.calls, 3);
  EXPECT_EQ(stats.primitives.at("fill_like"), 3);
  EXPECT_EQ(stats.primitives.at("sub"), 2);
  EXPECT_EQ(stats.terminators.at("return"), 2);
  for (const BlockStats& b : stats.per_block) {
    EXPECT_EQ(b.pushes, 0);  // no storage classes yet
    EXPECT_EQ(b.pops, 0);
  }
  EXPECT_FALSE(stats.memory.has_value());
  EXPECT_THAT(stats.memory_note, HasSubstr("have no type yet"));
  EXPECT_THAT(stats.memory_note, HasSubstr("--types"));
  const std::string text = PrintStats(program, stats);
  EXPECT_THAT(text, HasSubstr("  call "));
  EXPECT_THAT(text, HasSubstr(stats.memory_note));
  EXPECT_THAT(text, Not(HasSubstr("memory per lane")));
  EXPECT_TRUE(nlohmann::json::parse(PrintStatsJson(program, stats))["memory"].is_null());
}

TEST(StatsTest, TypedProgramHasATotalButNoStorageClasses) {
  absl::StatusOr<Program> typed =
      InferTypes(testing::MakeFibonacciProgram(), std::vector<TensorType>{kI64});
  ASSERT_TRUE(typed.ok()) << typed.status();
  const ProgramStats stats = ComputeStats(*typed);
  ASSERT_TRUE(stats.memory.has_value());
  EXPECT_FALSE(stats.memory->has_storage_classes);
  int64_t bytes = 0;
  for (const Variable& v : typed->module.variables) {
    bytes += v.type->dtype == DType::kBool ? 1 : 8;  // i64 and bool scalars
  }
  EXPECT_EQ(stats.memory->stored_bytes, bytes);
  EXPECT_TRUE(stats.memory->frames.empty());
  EXPECT_THAT(stats.memory_note, HasSubstr("storage classes are chosen at stage allocated"));
  const nlohmann::json json = nlohmann::json::parse(PrintStatsJson(*typed, stats));
  EXPECT_EQ(json["memory"]["variables"]["total"]["bytes"], bytes);
}

TEST(StatsTest, RecursiveFunctionsAreMarked) {
  absl::StatusOr<Program> fib =
      CompileProgram(testing::MakeFibonacciProgram(), std::vector<TensorType>{kI64});
  ASSERT_TRUE(fib.ok()) << fib.status();
  ProgramStats stats = ComputeStats(*fib);
  ASSERT_TRUE(stats.memory.has_value());
  EXPECT_FALSE(stats.memory->frames[fib->module.FindFunction("main")->value].recursive);
  EXPECT_TRUE(stats.memory->frames[fib->module.FindFunction("fibonacci")->value].recursive);
  EXPECT_THAT(PrintStats(*fib, stats), HasSubstr("  recursive\n"));

  // is_even and is_odd call each other: both are on the cycle, main is not.
  absl::StatusOr<Program> even_odd =
      LowerProgram(testing::MakeEvenOddProgram(), std::vector<TensorType>{kI64});
  ASSERT_TRUE(even_odd.ok()) << even_odd.status();
  stats = ComputeStats(*even_odd);
  ASSERT_TRUE(stats.memory.has_value());
  for (const FrameStats& frame : stats.memory->frames) {
    EXPECT_EQ(frame.recursive, even_odd->module.function(frame.function).name != "main")
        << even_odd->module.function(frame.function).name;
  }
}

// Counts add up for every program of the fuzz corpus (every sample, the
// MCMC programs, at every stage).
TEST(StatsTest, CountsAddUpForEveryCorpusProgram) {
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(AUTOBATCH_SOURCE_DIR "/tests/fuzz/corpus"))) {
    std::stringstream text;
    text << std::ifstream(entry.path()).rdbuf();
    absl::StatusOr<Program> program = LoadProgramJson(text.str());
    ASSERT_TRUE(program.ok()) << entry.path() << ": " << program.status();
    ++programs;
    const ProgramStats stats = ComputeStats(*program);
    int64_t block_ops = 0;
    int64_t pushes = 0;
    int64_t pops = 0;
    for (const BlockStats& b : stats.per_block) {
      block_ops += b.ops;
      pushes += b.pushes;
      pops += b.pops;
    }
    int64_t kinds = stats.calls + stats.pop_ops + stats.tape_pushes + stats.tape_pops;
    for (const auto& [name, n] : stats.primitives) kinds += n;
    int64_t terminators = 0;
    for (const auto& [kind, n] : stats.terminators) terminators += n;
    EXPECT_EQ(block_ops, stats.ops) << entry.path();
    EXPECT_EQ(kinds, stats.ops) << entry.path();
    EXPECT_EQ(terminators, stats.blocks) << entry.path();
    EXPECT_EQ(static_cast<int64_t>(stats.per_block.size()), stats.blocks) << entry.path();
    if (stats.terminators.contains("push_goto")) {
      EXPECT_GT(pushes, 0) << entry.path();
      EXPECT_GT(pops, 0) << entry.path();
    }
    if (program->stage != Stage::kUntyped) {
      ASSERT_TRUE(stats.memory.has_value()) << entry.path() << ": " << stats.memory_note;
      const auto& count = stats.memory->variables;
      EXPECT_EQ(std::accumulate(count.begin(), count.end(), int64_t{0}), stats.variables);
    }
  }
  EXPECT_GE(programs, 20);
}

// Byte counts saturate instead of overflowing: each variable fits int64
// (the verifier's bound), their sum need not.
TEST(StatsTest, HugeVariablesSaturate) {
  Program program = testing::MakeSmallLoweredProgram();
  for (Variable& v : program.module.variables) v.type = Vector(DType::kF64, int64_t{1} << 59);
  const ProgramStats stats = ComputeStats(program);
  ASSERT_TRUE(stats.memory.has_value());
  EXPECT_EQ(stats.memory->stored_bytes, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(stats.memory->frames[1].full_bytes, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(stats.memory->frames[1].BytesPerDepth(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(stats.memory->bytes[static_cast<size_t>(StorageClass::kTemporary)],
            int64_t{1} << 62);
}

// Names are quoted and cut in the text, kept (as valid UTF-8) in the JSON.
TEST(StatsTest, HostileNames) {
  Program program = testing::MakeSmallLoweredProgram();
  program.module.functions[1].name = "tw\"i\nce\xff" + std::string(200, 'z');
  program.module.functions[0].blocks[1].label = "a b";
  const ProgramStats stats = ComputeStats(program);
  const std::string text = PrintStats(program, stats);
  EXPECT_THAT(text, HasSubstr("@\"tw\\x22i\\x0ace\\xff" + std::string(52, 'z') + "\" (cut; 208 bytes)"));
  EXPECT_THAT(text, HasSubstr("^1 \"a b\""));
  EXPECT_THAT(text, Not(HasSubstr("\n" + std::string("ce"))));
  const nlohmann::json json = nlohmann::json::parse(PrintStatsJson(program, stats));
  EXPECT_EQ(json["per_block"][2]["function"],
            "tw\"i\nce\xef\xbf\xbd" + std::string(200, 'z'));  // U+FFFD for \xff
  EXPECT_EQ(json["per_block"][1]["label"], "a b");
}

}  // namespace
}  // namespace autobatch
