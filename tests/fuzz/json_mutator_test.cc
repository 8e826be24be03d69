// Tests of the fuzzer's structure-aware JSON mutator.
#include "tests/fuzz/json_mutator.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"
#include "ir/json.h"

namespace autobatch {
namespace {

std::string ReadSeed(const std::string& name) {
  std::ifstream in(std::string(AUTOBATCH_SOURCE_DIR "/tests/fuzz/corpus/") + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(JsonMutatorTest, NotJsonIsLeftToTheByteMutator) {
  EXPECT_EQ(MutateJsonProgram("{\"format\": ", 1), std::nullopt);
  EXPECT_EQ(MutateJsonProgram("", 1), std::nullopt);
}

TEST(JsonMutatorTest, MutantsAreJsonDeterministicAndOftenStillPrograms) {
  const std::string seed = ReadSeed("sample_fibonacci.untyped.json");
  ASSERT_TRUE(LoadProgramJson(seed).ok());
  std::set<std::string> distinct;
  int loadable = 0;
  for (uint32_t s = 0; s < 300; ++s) {
    std::optional<std::string> mutant = MutateJsonProgram(seed, s);
    if (!mutant) continue;
    ASSERT_TRUE(nlohmann::json::accept(*mutant)) << *mutant;
    EXPECT_EQ(MutateJsonProgram(seed, s), mutant) << "seed " << s;
    distinct.insert(*mutant);
    loadable += LoadProgramJson(*mutant).ok() ? 1 : 0;
  }
  // Most edits change something, and a fair share keep the program
  // loadable (that is the point: byte flips almost never do).
  EXPECT_GE(distinct.size(), 150u);
  EXPECT_GE(loadable, 30) << "of " << distinct.size();
  EXPECT_LT(loadable, 300);
}

TEST(JsonMutatorTest, EdgeIntegersDoNotOverflow) {
  // INT64_MAX / INT64_MIN nudged by one must not overflow (UBSan would say).
  for (uint32_t s = 0; s < 200; ++s) {
    std::optional<std::string> mutant =
        MutateJsonProgram("[9223372036854775807, -9223372036854775808]", s);
    if (mutant) {
      EXPECT_TRUE(nlohmann::json::accept(*mutant));
    }
  }
}

}  // namespace
}  // namespace autobatch
