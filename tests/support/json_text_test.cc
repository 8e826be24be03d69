// Tests for ParseJsonText (support/json_text.h): positions, truncation, duplicate
// keys.
#include "support/json_text.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<nlohmann::json> parsed = ParseJsonText(text);
  EXPECT_FALSE(parsed.ok()) << text;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(JsonTextTest, ReadsValidJson) {
  absl::StatusOr<nlohmann::json> parsed =
      ParseJsonText(R"({"a": [1, {"b": 2, "c": [3]}, {"b": 4}], "d": {"b": 5}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)["a"][1]["c"][0], 3);
  EXPECT_EQ((*parsed)["d"]["b"], 5);
}

TEST(JsonTextTest, SyntaxErrorsGiveTheBytePosition) {
  EXPECT_THAT(ErrorOf("{\"a\": 1, ]"),
              StartsWith("not valid JSON at byte 10 (the text has 10 bytes): "));
  EXPECT_THAT(ErrorOf("{\"a\": 1, ]"), HasSubstr("line 1, column 10"));
}

TEST(JsonTextTest, TruncatedTextIsNamedAsSuch) {
  for (std::string_view text : {"", "[1, 2", "{\"a\": "}) {
    EXPECT_THAT(ErrorOf(text), StartsWith(std::string("not valid JSON: the text ends (after ") +
                                          std::to_string(text.size()) + " bytes)"));
  }
}

TEST(JsonTextTest, NumbersBeyondDoubleAreErrors) {
  EXPECT_THAT(ErrorOf("[1e999]"), AllOf(StartsWith("not valid JSON"), HasSubstr("1e999")));
}

TEST(JsonTextTest, DuplicateKeysAreErrorsWithTheirPath) {
  EXPECT_EQ(ErrorOf(R"({"inputs": [1], "inputs": [2]})"),
            "not valid JSON: the key \"inputs\" appears twice in the object at the top "
            "level; readers disagree on which one counts, so give each key once");
  EXPECT_THAT(ErrorOf(R"({"f": [{"x": 1}, [], {"y": 1, "y": 2}]})"),
              HasSubstr("the key \"y\" appears twice in the object at .\"f\"[2]; "));
  EXPECT_THAT(ErrorOf(R"({"a": {"b": {"c": 1, "c": 1}}})"),
              HasSubstr("at .\"a\".\"b\"; "));
  // Scalars and containers both count as array elements.
  EXPECT_THAT(ErrorOf(R"([1, "s", null, {"y": 1, "y": 2}])"), HasSubstr("object at [3]; "));
  EXPECT_THAT(ErrorOf(R"([[0, {"a": 1, "a": 1}]])"), HasSubstr("object at [0][1]; "));
  EXPECT_THAT(ErrorOf(R"({"a": [true, 2.5, [], {}, {"k": 0, "k": 0}]})"),
              HasSubstr("object at .\"a\"[4]; "));
  // The same key in different objects is fine.
  EXPECT_TRUE(ParseJsonText(R"([{"k": 1}, {"k": 2}, {"o": {"k": 3}}])").ok());
}

TEST(JsonTextTest, DeepPathsAreCut) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "[";
  text += R"({"x": 1, "x": 2})";
  for (int i = 0; i < 100000; ++i) text += "]";
  const std::string message = ErrorOf(text);
  EXPECT_LT(message.size(), 300u);
  EXPECT_THAT(message, HasSubstr("[0][0][0][0][0][0][0][0]...(99984 more)...[0][0]"));
}

TEST(JsonTextTest, LongOrControlKeysAreCut) {
  const std::string key(1000, 'k');
  const std::string message =
      ErrorOf("{\"" + key + "\": 1, \"" + key + "\": 2}");
  EXPECT_LT(message.size(), 300u);
  EXPECT_THAT(message, HasSubstr("kkk\" (cut; 1000 bytes)"));
  EXPECT_THAT(ErrorOf("{\"a\\nb\": 1, \"a\\nb\": 2}"), HasSubstr("\"a\\x0ab\""));
}

}  // namespace
}  // namespace autobatch
