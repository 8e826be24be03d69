// Tests for CmdStan JSON data: every accepted form, every error with its text,
// and the WriteData/ReadData round trip.
#include "mcmc/model/data.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

DataSpec Spec(std::string name, DType dtype, std::vector<int64_t> shape) {
  DataSpec spec;
  spec.name = std::move(name);
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  return spec;
}
DataSpec Real(std::string name, std::vector<int64_t> shape = {}) {
  return Spec(std::move(name), DType::kF64, std::move(shape));
}
DataSpec Int(std::string name, std::vector<int64_t> shape = {}) {
  return Spec(std::move(name), DType::kI64, std::move(shape));
}

std::vector<Tensor> Read(std::string_view json, const std::vector<DataSpec>& specs) {
  absl::StatusOr<std::vector<Tensor>> read = ReadData(json, specs, "data.json");
  EXPECT_TRUE(read.ok()) << read.status();
  return read.ok() ? *std::move(read) : std::vector<Tensor>{};
}

// The error message of reading `json`; fails the test if it reads.
std::string Error(std::string_view json, const std::vector<DataSpec>& specs) {
  absl::StatusOr<std::vector<Tensor>> read = ReadData(json, specs, "data.json");
  EXPECT_FALSE(read.ok()) << json;
  if (read.ok()) return "";
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(read.status().message());
}

uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// ---- Accepted forms ----------------------------------------------------

TEST(ReadDataTest, ScalarsVectorsMatrices) {
  std::vector<Tensor> t =
      Read(R"({"N": 3, "y": [1, 0, 1], "X": [[1.5, 2], [3, 4], [5, 6]], "s": 2.5})",
           {Int("N"), Int("y", {3}), Real("X", {3, 2}), Real("s")});
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].type(), Scalar(DType::kI64));
  EXPECT_EQ(t[0].batch(), 1);
  EXPECT_EQ(t[0].ToVector<int64_t>(), std::vector<int64_t>{3});
  EXPECT_EQ(t[1].type(), (TensorType{DType::kI64, {3}}));
  EXPECT_EQ(t[1].ToVector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(t[2].type(), (TensorType{DType::kF64, {3, 2}}));
  // Row-major: X[i][j] is element i * 2 + j.
  EXPECT_EQ(t[2].ToVector<double>(), (std::vector<double>{1.5, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t[3].ToVector<double>(), std::vector<double>{2.5});
  EXPECT_FALSE(t[0].uniform());
}

TEST(ReadDataTest, ResultFollowsSpecOrderNotJsonOrder) {
  std::vector<Tensor> t = Read(R"({"b": 2, "a": 1})", {Int("b"), Int("a")});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].ToVector<int64_t>(), std::vector<int64_t>{2});
  EXPECT_EQ(t[1].ToVector<int64_t>(), std::vector<int64_t>{1});
}

TEST(ReadDataTest, ThreeDimensionalArrayIsRowMajor) {
  std::vector<Tensor> t =
      Read(R"({"A": [[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]]})", {Int("A", {2, 2, 3})});
  ASSERT_EQ(t.size(), 1u);
  std::vector<int64_t> want(12);
  for (int i = 0; i < 12; ++i) want[i] = i;
  EXPECT_EQ(t[0].ToVector<int64_t>(), want);
}

TEST(ReadDataTest, EmptyArrays) {
  std::vector<Tensor> t = Read(R"({"y": [], "Z": [], "W": [[], [], []], "V": []})",
                               {Real("y", {0}), Real("Z", {0, 3}), Int("W", {3, 0}),
                                Int("V", {3, 0})});  // [] for any zero-size shape, as CmdStan
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].type(), (TensorType{DType::kF64, {0}}));
  EXPECT_EQ(t[0].batch(), 1);
  EXPECT_EQ(t[0].lane_elements(), 0);
  EXPECT_EQ(t[1].type(), (TensorType{DType::kF64, {0, 3}}));
  EXPECT_EQ(t[2].type(), (TensorType{DType::kI64, {3, 0}}));
  EXPECT_EQ(t[3].type(), (TensorType{DType::kI64, {3, 0}}));
}

TEST(ReadDataTest, NoDataAtAll) { EXPECT_TRUE(Read("{}", {}).empty()); }

TEST(ReadDataTest, EveryNonFiniteSpellingWhereAllowed) {
  DataSpec x = Real("x", {8});
  x.allow_nonfinite = true;
  std::vector<Tensor> t =
      Read(R"({"x": ["inf", "+inf", "Inf", "Infinity", "-inf", "-Inf", "-Infinity", "NaN"]})", {x});
  ASSERT_EQ(t.size(), 1u);
  std::vector<double> v = t[0].ToVector<double>();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v[i], kInf) << i;
  for (int i = 4; i < 7; ++i) EXPECT_EQ(v[i], -kInf) << i;
  EXPECT_TRUE(std::isnan(v[7]));
}

TEST(ReadDataTest, NonFiniteMixesWithNumbersAndScalars) {
  DataSpec x = Real("x", {3});
  x.allow_nonfinite = true;
  DataSpec s = Real("s");
  s.allow_nonfinite = true;
  std::vector<Tensor> t = Read(R"({"x": [1, "-inf", 2.5], "s": "NaN"})", {x, s});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].ToVector<double>(), (std::vector<double>{1, -kInf, 2.5}));
  EXPECT_TRUE(std::isnan(t[1].ToVector<double>()[0]));
}

TEST(ReadDataTest, IntegersForI64) {
  std::vector<Tensor> t =
      Read(R"({"n": [0, -7, 9223372036854775807, -9223372036854775808, 12345678901234]})",
           {Int("n", {5})});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].ToVector<int64_t>(),
            (std::vector<int64_t>{0, -7, std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(), 12345678901234}));
}

TEST(ReadDataTest, NumbersForF64) {
  std::vector<Tensor> t = Read(R"({"x": [3, -2, 1e-3, 17.2e8, 0.1, 1e308]})", {Real("x", {6})});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].ToVector<double>(), (std::vector<double>{3, -2, 1e-3, 17.2e8, 0.1, 1e308}));
}

TEST(ReadDataTest, NegativeZero) {
  std::vector<Tensor> t = Read(R"({"z": [-0.0, 0.0, -0], "k": -0})", {Real("z", {3}), Int("k")});
  ASSERT_EQ(t.size(), 2u);
  std::vector<double> z = t[0].ToVector<double>();
  EXPECT_EQ(Bits(z[0]), Bits(-0.0));
  EXPECT_EQ(Bits(z[1]), Bits(0.0));
  EXPECT_EQ(Bits(z[2]), Bits(0.0));  // -0 is the JSON integer 0
  EXPECT_EQ(t[1].ToVector<int64_t>(), std::vector<int64_t>{0});
}

TEST(ReadDataTest, BoundsAreInclusive) {
  DataSpec n = Int("n", {3});
  n.lower = 0;
  n.upper = 5;
  DataSpec p = Real("p", {2});
  p.lower = 0;
  p.upper = 1;
  DataSpec big = Real("big");
  big.lower = 0;
  big.allow_nonfinite = true;
  std::vector<Tensor> t = Read(R"({"n": [0, 5, 3], "p": [0, 1.0], "big": "inf"})", {n, p, big});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].ToVector<int64_t>(), (std::vector<int64_t>{0, 5, 3}));
  EXPECT_EQ(t[2].ToVector<double>(), std::vector<double>{kInf});
}

TEST(ReadDataTest, ReadsAFile) {
  const std::string path = ::testing::TempDir() + "/data_test_reads_a_file.json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"N\": 2, \"y\": [1.5, 2]}\n", f);
  std::fclose(f);
  absl::StatusOr<std::vector<Tensor>> t = ReadDataFile(path, std::vector{Int("N"), Real("y", {2})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[1].ToVector<double>(), (std::vector<double>{1.5, 2}));
  std::remove(path.c_str());

  absl::StatusOr<std::vector<Tensor>> missing =
      ReadDataFile("/nonexistent/data.json", std::vector{Int("N")});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("cannot open data file '/nonexistent/data.json'"));
}

TEST(ReadDataTest, FileErrorsNameTheFile) {
  const std::string path = ::testing::TempDir() + "/data_test_file_errors.json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"N\": 2.5}", f);
  std::fclose(f);
  absl::StatusOr<std::vector<Tensor>> t = ReadDataFile(path, std::vector{Int("N")});
  std::remove(path.c_str());
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr(path + ": 'N' is 2.5, not a whole number"));
}

}  // namespace
}  // namespace autobatch::mcmc
