// Tests for the pass registry (passes/registry.h).
#include "passes/registry.h"

#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;

TEST(RegistryTest, EveryPassHasAUniqueNameAndAOneLineDescription) {
  std::set<std::string_view> names;
  for (const PassInfo& pass : AllPasses()) {
    EXPECT_TRUE(names.insert(pass.name).second) << pass.name;
    EXPECT_FALSE(pass.description.empty()) << pass.name;
    EXPECT_EQ(pass.description.find('\n'), std::string_view::npos) << pass.name;
    EXPECT_LE(pass.description.size(), 90u) << pass.name;
    absl::StatusOr<const PassInfo*> found = FindPass(pass.name);
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(*found, &pass);
  }
  EXPECT_GE(names.size(), 17u);
}

TEST(RegistryTest, AnUnknownNameListsEveryPass) {
  absl::StatusOr<const PassInfo*> found = FindPass("thread_jump");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  const std::string message(found.status().message());
  EXPECT_THAT(message, ::testing::StartsWith("no pass is called 'thread_jump'; the passes are: "));
  for (const PassInfo& pass : AllPasses()) EXPECT_THAT(message, HasSubstr(pass.name));
}

// Every pass, given a program at every stage, either works (and its output
// verifies) or says which stages it takes: never a crash.
TEST(RegistryTest, EveryPassAtEveryStageWorksOrSaysWhatItNeeds) {
  const std::vector<TensorType> types = {Scalar(DType::kI64)};
  const Program untyped = testing::MakeEvenOddNonTailProgram();
  const std::vector<Program> programs = {untyped, testing::Typed(untyped, types),
                                         testing::Allocated(untyped, types),
                                         testing::Lowered(untyped, types)};
  int refused = 0;
  for (const PassInfo& pass : AllPasses()) {
    for (const Program& program : programs) {
      for (const PassContext& context : {PassContext{}, PassContext{.input_types = types}}) {
        SCOPED_TRACE(absl::StrCat(std::string(pass.name), " on stage ",
                                  std::string(StageName(program.stage)), " with ",
                                  context.input_types.size(), " input types"));
        absl::StatusOr<Program> out = pass.run(program, context);
        if (out.ok()) {
          EXPECT_TRUE(VerifyProgram(*out).ok()) << VerifyProgram(*out);
          continue;
        }
        ++refused;
        EXPECT_THAT(out.status().code(),
                    ::testing::AnyOf(absl::StatusCode::kInvalidArgument,
                                     absl::StatusCode::kFailedPrecondition))
            << out.status();
        EXPECT_THAT(std::string(out.status().message()),
                    ::testing::AnyOf(HasSubstr("stage"), HasSubstr("input type")))
            << out.status();
      }
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace autobatch
