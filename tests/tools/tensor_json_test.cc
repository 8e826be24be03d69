// Reading inputs files (tools/tensor_json): bad values, shapes and nesting are
// errors naming the input, never a crash, a huge allocation or a wrapped value.
#include "tools/tensor_json.h"

#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

// Reads `text` as an inputs file, as `autobatch run --inputs` does.
absl::StatusOr<std::vector<Tensor>> ReadInputs(
    const std::string& name, const std::string& text,
    const std::vector<std::optional<TensorType>>& expected = {}) {
  const std::string path = ::testing::TempDir() + "tensor_json_" + name;
  std::ofstream(path) << text;
  return ReadInputsFile(path, expected);
}

// The message of `result`'s error (a test failure if there is none).
template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& result) {
  EXPECT_FALSE(result.ok()) << "expected an error";
  if (result.ok()) return "";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

// `depth` nested empty arrays.
std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(TensorJsonTest, DeeplyNestedValuesAreAnErrorNotAStackOverflow) {
  const std::string text = "{\"inputs\":[" + Nested(50000) + "]}";
  EXPECT_THAT(
      ErrorOf(ReadInputs("deep_values.json", text)),
      AllOf(HasSubstr("inputs[0][0]: more than 32 dimensions"), HasSubstr("check the nesting")));
  // A scalar parameter: the deep lane is quoted, cut short.
  const std::string error =
      ErrorOf(ReadInputs("deep_values.json", text, {TensorType{DType::kI64, {}}}));
  EXPECT_THAT(error, HasSubstr("inputs[0][0]: expected a number, got [[[["));
  EXPECT_LT(error.size(), 500u) << error;
}

TEST(TensorJsonTest, DeepValueInAnErrorIsCutShort) {
  const std::string error =
      ErrorOf(ReadInputs("deep_lane.json", "{\"inputs\":[[1, " + Nested(100000) + "]]}"));
  EXPECT_THAT(error,
              AllOf(HasSubstr("inputs[0][1]: expected a number, got [[[["), HasSubstr("...")));
  EXPECT_LT(error.size(), 500u) << error;
  // The same for a field quoted in an error.
  const std::string dtype = ErrorOf(TensorFromJson(
      Json::parse("{\"dtype\":" + Nested(100000) + ",\"values\":[1]}"), "inputs[0]"));
  EXPECT_THAT(dtype, AllOf(HasSubstr("inputs[0].dtype: unknown dtype [[[["),
                           HasSubstr("use f64, f32, i64, i32, bool or u64")));
  EXPECT_LT(dtype.size(), 500u) << dtype;
}

TEST(TensorJsonTest, HugeShapeIsAnErrorNotAnAllocation) {
  EXPECT_THAT(
      ErrorOf(ReadInputs("huge_shape.json",
                         R"({"inputs":[{"dtype":"i64","shape":[1000000000000],"values":[[]]}]})")),
      AllOf(HasSubstr("inputs[0].shape: dimension 1000000000000 is more than the limit of "
                      "4294967296 elements per lane"),
            HasSubstr("check the dimensions")));
  // Each dimension is allowed, their product overflows int64_t.
  EXPECT_THAT(ErrorOf(ReadInputs(
                  "overflow_shape.json",
                  R"({"inputs":[{"dtype":"f64","shape":[3037000500,3037000500],"values":[]}]})")),
              HasSubstr("inputs[0].shape: shape [3037000500,3037000500] has more than 4294967296 "
                        "elements per lane"));
  // A shape within the limits still needs its values.
  EXPECT_THAT(ErrorOf(ReadInputs("short_lane.json",
                                 R"({"inputs":[{"dtype":"i64","shape":[3],"values":[[1, 2]]}]})")),
              HasSubstr("inputs[0][0]: expected an array of 3 elements, got [1,2]"));
}

TEST(TensorJsonTest, IntegersAboveI64MaxAreAnErrorNotWrapped) {
  const std::string text = R"({"inputs":[[9223372036854775808, 18446744073709551615]]})";
  // Inferred as i64, and declared i64 by the program.
  for (const std::vector<std::optional<TensorType>>& expected :
       {std::vector<std::optional<TensorType>>{},
        std::vector<std::optional<TensorType>>{TensorType{DType::kI64, {}}}}) {
    EXPECT_THAT(ErrorOf(ReadInputs("above_i64.json", text, expected)),
                AllOf(HasSubstr("inputs[0] element 0: 9223372036854775808 does not fit dtype "
                                "i64"),
                      HasSubstr("\"u64\"")));
  }
  EXPECT_THAT(ErrorOf(ReadInputs("u64_max.json", R"({"inputs":[[18446744073709551615]]})")),
              HasSubstr("inputs[0] element 0: 18446744073709551615 does not fit dtype i64"));
}

TEST(TensorJsonTest, NegativeU64IsAnErrorNotWrapped) {
  EXPECT_THAT(
      ErrorOf(ReadInputs("negative_u64.json", R"({"inputs":[{"dtype":"u64","values":[-1]}]})")),
      AllOf(HasSubstr("inputs[0] element 0: -1 does not fit dtype u64"), HasSubstr("\"i64\"")));
}

TEST(TensorJsonTest, OutOfRangeErrorShowsTheValueAsWritten) {
  const std::string error = ErrorOf(ReadInputs(
      "above_i32.json", R"({"inputs":[{"dtype":"i32","values":[9223372036854775808]}]})"));
  EXPECT_THAT(error, HasSubstr("inputs[0] element 0: 9223372036854775808 does not fit dtype i32"));
  EXPECT_THAT(error, Not(HasSubstr("-9223372036854775808")));
}

TEST(TensorJsonTest, FiniteValueBeyondF32IsAnErrorNotInf) {
  for (const char* value : {"1e300", "-1e300", "3.5e38"}) {
    EXPECT_THAT(ErrorOf(ReadInputs(
                    "beyond_f32.json",
                    std::string(R"({"inputs":[{"dtype":"f32","values":[)") + value + "]}]}")),
                AllOf(HasSubstr("inputs[0] element 0: "),
                      HasSubstr(" is outside the range of dtype f32"), HasSubstr("use dtype f64")))
        << value;
  }
}

TEST(TensorJsonTest, NonIntegerForAnIntegerDtypeIsAnError) {
  for (const char* dtype : {"i64", "i32", "u64"}) {
    EXPECT_THAT(ErrorOf(ReadInputs("fraction.json", std::string(R"({"inputs":[{"dtype":")") +
                                                        dtype + R"(","values":[1.5]}]})")),
                HasSubstr(std::string("inputs[0] element 0: expected an integer for dtype ") +
                          dtype + ", got 1.5"))
        << dtype;
  }
}

TEST(TensorJsonTest, ShapeWithoutDtypeIsUsed) {
  EXPECT_THAT(ErrorOf(ReadInputs("shape_only.json", R"({"inputs":[{"values":[1],"shape":[2]}]})")),
              HasSubstr("inputs[0][0]: expected an array of 2 elements, got 1"));
  absl::StatusOr<Tensor> pair =
      TensorFromJson(Json::parse(R"({"values":[[1, 2]],"shape":[2]})"), "inputs[0]");
  ASSERT_TRUE(pair.ok()) << pair.status();
  EXPECT_EQ(pair->type().ToString(), "i64[2]");
  EXPECT_EQ(pair->ToVector<int64_t>(), (std::vector<int64_t>{1, 2}));
  // No lanes to infer the shape from.
  absl::StatusOr<Tensor> none =
      TensorFromJson(Json::parse(R"({"values":[],"shape":[2]})"), "inputs[0]");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->type().ToString(), "i64[2]");
  EXPECT_EQ(none->batch(), 0);
  // The dtype from the parameter, the shape as declared.
  absl::StatusOr<Tensor> typed = TensorFromJson(Json::parse(R"({"values":[[1.5, 2]],"shape":[2]})"),
                                                "inputs[0]", TensorType{DType::kF64, {3}});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(typed->type().ToString(), "f64[2]");
}

TEST(TensorJsonTest, ValuesAtTheLimitsOfEachDtypeAreRead) {
  absl::StatusOr<std::vector<Tensor>> inputs = ReadInputs(
      "limits.json",
      R"({"inputs":[{"dtype":"u64","values":[0, 18446744073709551615]},)"
      R"({"dtype":"i64","values":[-9223372036854775808, 9223372036854775807]},)"
      R"({"dtype":"i32","values":[-2147483648, 2147483647]},)"
      R"({"dtype":"f32","values":[3.4028235e38, -3.4028235e38, "inf", "-inf", 1e-50]}]})");
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  ASSERT_EQ(inputs->size(), 4u);
  EXPECT_EQ((*inputs)[0].ToVector<uint64_t>(),
            (std::vector<uint64_t>{0, std::numeric_limits<uint64_t>::max()}));
  EXPECT_EQ((*inputs)[1].ToVector<int64_t>(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ((*inputs)[2].ToVector<int32_t>(),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max()}));
  // 3.4028235e38 is above the largest f32 but rounds to it.
  const float kMax = std::numeric_limits<float>::max();
  const float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ((*inputs)[3].ToVector<float>(), (std::vector<float>{kMax, -kMax, kInf, -kInf, 0.0f}));
}

}  // namespace
}  // namespace autobatch
