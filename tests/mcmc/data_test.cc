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

DataSpec Spec(std::string name, DType dtype, std::vector<Extent> shape) {
  DataSpec spec;
  spec.name = std::move(name);
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  return spec;
}
DataSpec Real(std::string name, std::vector<Extent> shape = {}) {
  return Spec(std::move(name), DType::kF64, std::move(shape));
}
DataSpec Int(std::string name, std::vector<Extent> shape = {}) {
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

// ---- Errors: the JSON itself -------------------------------------------

TEST(ReadDataErrorTest, MalformedJsonGivesLineAndColumn) {
  EXPECT_EQ(Error("{\"N\": 3,\n \"y\": [1,, 2]}", {Int("N"), Int("y", {2})}),
            "data.json: not valid JSON at byte 19 (the text has 23 bytes): "
            "[json.exception.parse_error.101] parse error at line 2, column 10: syntax error "
            "while parsing value - unexpected ','; expected '[', '{', or a literal");
  EXPECT_THAT(Error("{\"N\": 3", {Int("N")}),
              HasSubstr("data.json: not valid JSON: the text ends (after 7 bytes) before the JSON "
                        "does; the file looks truncated"));
  EXPECT_EQ(Error(R"({"N": 3, "N": 4})", {Int("N")}),
            "data.json: not valid JSON: the key \"N\" appears twice in the object at the top "
            "level; readers disagree on which one counts, so give each key once");
  // Stan's bare atoms are not JSON.
  EXPECT_THAT(Error(R"({"x": Infinity})", {Real("x")}),
              HasSubstr("data.json: not valid JSON at byte 7 (the text has 15 bytes): "
                        "[json.exception.parse_error.101] parse error at line 1, column 7"));
}

TEST(ReadDataErrorTest, TopLevelNotAnObject) {
  EXPECT_EQ(Error("[1, 2]", {Int("N")}),
            "data.json: the data is an array of 2 values, but CmdStan data is a JSON object from "
            "variable names to values, like {\"N\": 3, \"y\": [1, 0, 1]}");
  EXPECT_EQ(Error("3", {Int("N")}),
            "data.json: the data is the number 3, but CmdStan data is a JSON object from variable "
            "names to values, like {\"N\": 3, \"y\": [1, 0, 1]}");
}

// ---- Errors: names ------------------------------------------------------

TEST(ReadDataErrorTest, MissingNames) {
  EXPECT_EQ(Error("{}", {Int("N"), Real("X", {2, 3})}),
            "data.json: 'N' is missing; the model declares it as an integer, so add \"N\": "
            "<value> to the object\n"
            "data.json: 'X' is missing; the model declares it as real values of shape [2, 3], so "
            "add \"X\": [...] to the object");
}

TEST(ReadDataErrorTest, ExtraNamesListTheDeclaredOnes) {
  EXPECT_EQ(Error(R"({"N": 1, "y": [1, 2], "z": 2, "w": 3})", {Int("N"), Real("y", {2})}),
            "data.json: the data gives \"w\", \"z\", which the model does not declare; the model "
            "declares 'N', 'y' (remove the extra names or fix their spelling)");
  EXPECT_EQ(Error(R"({"N": 1})", {}),
            "data.json: the data gives \"N\", which the model does not declare; the model "
            "declares no data (remove the extra names or fix their spelling)");
}

// ---- Errors: shapes -----------------------------------------------------

TEST(ReadDataErrorTest, WrongExtent) {
  EXPECT_EQ(Error(R"({"X": [[1, 2], [3, 4], [5, 6]]})", {Real("X", {2, 2})}),
            "data.json: 'X' should have shape [2, 2] but it is an array of 3 entries, not 2");
  EXPECT_EQ(Error(R"({"X": [[1, 2, 3], [3, 4, 5]]})", {Real("X", {2, 2})}),
            "data.json: 'X' should have shape [2, 2] but every X[i] has 3 values, not 2");
  EXPECT_EQ(Error(R"({"y": []})", {Real("y", {2})}),
            "data.json: 'y' should have shape [2] but it is an array of 0 values, not 2");
  EXPECT_EQ(Error(R"({"y": [[]]})", {Real("y", {0})}),
            "data.json: 'y' should have shape [0] but it is an array of 1 value, not 0");
  EXPECT_EQ(Error(R"({"W": [[], []]})", {Real("W", {3, 0})}),
            "data.json: 'W' should have shape [3, 0] but it is an array of 2 entries, not 3");
}

TEST(ReadDataErrorTest, RaggedArrays) {
  EXPECT_EQ(Error(R"({"X": [[1, 2], [3, 4, 5]]})", {Real("X", {2, 2})}),
            "data.json: 'X' is ragged: X[0] has 2 values but X[1] has 3; every X[i] needs 2 "
            "values (shape [2, 2])");
  // A 1000 x 25 matrix whose row 3 has 24 values.
  std::string json = "{\"X\": [";
  for (int r = 0; r < 1000; ++r) {
    json += r ? ", [" : "[";
    for (int c = 0; c < (r == 3 ? 24 : 25); ++c) json += c ? ", 0.5" : "0.5";
    json += "]";
  }
  json += "]}";
  EXPECT_EQ(Error(json, {Real("X", {1000, 25})}),
            "data.json: 'X' is ragged: X[0] has 25 values but X[3] has 24; every X[i] needs 25 "
            "values (shape [1000, 25])");
  EXPECT_EQ(Error(R"({"A": [[[1, 2], [3, 4]], [[5, 6], [7]]]})", {Int("A", {2, 2, 2})}),
            "data.json: 'A' is ragged: A[0][0] has 2 values but A[1][1] has 1; every A[i][j] "
            "needs 2 values (shape [2, 2, 2])");
}

TEST(ReadDataErrorTest, WrongRank) {
  EXPECT_EQ(Error(R"({"X": [[1, 2], 3]})", {Real("X", {2, 2})}),
            "data.json: 'X' should have shape [2, 2] but X[1] is the number 3, not an array of 2 "
            "values; every X[i] needs 2 values (shape [2, 2])");
  EXPECT_EQ(Error(R"({"X": [1, 2, 3, 4]})", {Real("X", {2, 2})}),
            "data.json: 'X' should have shape [2, 2] but it is an array of 4 entries, not 2; it "
            "looks flat: nest it, one array per row ([[...], [...]])");
  EXPECT_EQ(Error(R"({"X": [[[1], [2]], [[3], [4]]]})", {Real("X", {2, 2})}),
            "data.json: 'X' should have shape [2, 2] but X[0][0] is an array of 1 value, not a "
            "single value; the arrays are nested too deeply");
  EXPECT_EQ(Error(R"({"X": 5})", {Real("X", {2, 2})}),
            "data.json: 'X' should have shape [2, 2] (real values of shape [2, 2]) but it is the "
            "number 5; write it as nested arrays of that shape");
  EXPECT_EQ(Error(R"({"y": "abc"})", {Real("y", {3})}),
            "data.json: 'y' should have shape [3] (real values of shape [3]) but it is the string "
            "\"abc\"; write it as an array of that shape");
}

TEST(ReadDataErrorTest, ScalarOnlyForShapeEmpty) {
  // As CmdStan: a bare number is not a 1-vector, and [3] is not a scalar.
  EXPECT_EQ(Error(R"({"y": 5})", {Real("y", {1})}),
            "data.json: 'y' should have shape [1] (real values of shape [1]) but it is the number "
            "5; write [5], not 5");
  EXPECT_EQ(Error(R"({"N": [3]})", {Int("N")}),
            "data.json: 'N' should be an integer (shape []) but it is an array of 1 value; write "
            "3, not [3]");
  EXPECT_EQ(Error(R"({"N": [3, 4]})", {Int("N")}),
            "data.json: 'N' should be an integer (shape []) but it is an array of 2 values; write "
            "a single value");
  EXPECT_EQ(Error(R"({"N": []})", {Int("N")}),
            "data.json: 'N' should be an integer (shape []) but it is an array of 0 values; write "
            "a single value");
}

// ---- Errors: values -----------------------------------------------------

TEST(ReadDataErrorTest, NonIntegersWhereI64IsDeclared) {
  EXPECT_EQ(
      Error(R"({"n": [2.5, 3.0, 3e0, 1e300, 9223372036854775808]})", {Int("n", {5})}),
      "data.json: 'n[0]' is 2.5, not a whole number, but 'n' is declared integer values of shape "
      "[5]; give integers, or declare it real\n"
      "data.json: 'n[1]' is 3.0, written as a real (with a '.' or an exponent), but 'n' is "
      "declared integer values of shape [5]; write integers without a decimal point or exponent "
      "(3, not 3.0), as CmdStan requires\n"
      "data.json: 'n[2]' is 3.0, written as a real (with a '.' or an exponent), but 'n' is "
      "declared integer values of shape [5]; write integers without a decimal point or exponent "
      "(3, not 3.0), as CmdStan requires\n"
      "data.json: 'n[3]' is 1e+300, outside the range of a 64-bit integer, and 'n' is declared "
      "integer values of shape [5]; give integers in [-9223372036854775808, "
      "9223372036854775807]\n"
      "data.json: 'n[4]' is 9223372036854775808, outside the range of a 64-bit integer, and 'n' "
      "is declared integer values of shape [5]; give integers in [-9223372036854775808, "
      "9223372036854775807]");
  EXPECT_EQ(Error(R"({"N": "inf"})", {Int("N")}),
            "data.json: 'N' is \"inf\", but 'N' is declared an integer, and integers cannot be "
            "infinite or NaN");
}

TEST(ReadDataErrorTest, StringsBooleansNullsObjects) {
  DataSpec x = Real("x", {3});
  x.allow_nonfinite = true;
  EXPECT_EQ(Error(R"({"x": ["nan", "-infinity", "1.5"]})", {x}),
            "data.json: 'x[0]' is the string \"nan\", but 'x' is declared real values of shape "
            "[3]; write a number or one of \"inf\", \"+inf\", \"Inf\", \"Infinity\", \"-inf\", "
            "\"-Inf\", \"-Infinity\", \"NaN\"\n"
            "data.json: 'x[1]' is the string \"-infinity\", but 'x' is declared real values of "
            "shape [3]; write a number or one of \"inf\", \"+inf\", \"Inf\", \"Infinity\", "
            "\"-inf\", \"-Inf\", \"-Infinity\", \"NaN\"\n"
            "data.json: 'x[2]' is the string \"1.5\", but 'x' is declared real values of shape "
            "[3]; write a number or one of \"inf\", \"+inf\", \"Inf\", \"Infinity\", \"-inf\", "
            "\"-Inf\", \"-Infinity\", \"NaN\"");
  EXPECT_EQ(Error(R"({"x": [true, null, "abc", {}]})", {Real("x", {4})}),
            "data.json: 'x[0]' is true, but 'x' is declared real values of shape [4]; write a "
            "number (1 for true, 0 for false)\n"
            "data.json: 'x[1]' is null, but 'x' is declared real values of shape [4]; write a "
            "number\n"
            "data.json: 'x[2]' is the string \"abc\", but 'x' is declared real values of shape "
            "[4]; write a number\n"
            "data.json: 'x[3]' is an object, but 'x' is declared real values of shape [4]; write "
            "a number");
  EXPECT_EQ(Error(R"({"N": false, "M": null, "K": {"a": 1}})", {Int("N"), Int("M"), Int("K")}),
            "data.json: 'N' is false, but 'N' is declared an integer; write an integer (1 for "
            "true, 0 for false)\n"
            "data.json: 'M' is null, but 'M' is declared an integer; write an integer\n"
            "data.json: 'K' is an object, but 'K' is declared an integer; write an integer");
}

TEST(ReadDataErrorTest, NonFiniteWhereNotAllowed) {
  EXPECT_EQ(Error(R"({"x": [1, "inf", "NaN"]})", {Real("x", {3})}),
            "data.json: 'x[1]' is \"inf\", but 'x' must be finite (its declaration does not "
            "allow inf or NaN); give a finite number\n"
            "data.json: 'x[2]' is \"NaN\", but 'x' must be finite (its declaration does not "
            "allow inf or NaN); give a finite number");
}

TEST(ReadDataErrorTest, OutsideBounds) {
  DataSpec n = Int("n", {4});
  n.lower = 0;
  n.upper = 5;
  DataSpec p = Real("p", {4});
  p.lower = 0;
  p.upper = 1;
  p.allow_nonfinite = true;
  DataSpec s = Real("s");
  s.lower = 0;
  EXPECT_EQ(
      Error(R"({"n": [-1, 6, 0, 5], "p": [-0.5, 1.5, "NaN", "inf"], "s": -1e-300})", {n, p, s}),
      "data.json: 'n[0]' is -1, outside the bounds: 'n' is declared integer values of shape "
      "[4] in [0, 5]\n"
      "data.json: 'n[1]' is 6, outside the bounds: 'n' is declared integer values of shape "
      "[4] in [0, 5]\n"
      "data.json: 'p[0]' is -0.5, outside the bounds: 'p' is declared real values of shape "
      "[4] in [0, 1]\n"
      "data.json: 'p[1]' is 1.5, outside the bounds: 'p' is declared real values of shape "
      "[4] in [0, 1]\n"
      "data.json: 'p[2]' is NaN, outside the bounds: 'p' is declared real values of shape "
      "[4] in [0, 1]\n"
      "data.json: 'p[3]' is inf, outside the bounds: 'p' is declared real values of shape "
      "[4] in [0, 1]\n"
      "data.json: 's' is -1e-300, outside the bounds: 's' is declared a real number in [0, "
      "inf)");
  DataSpec u = Real("u");
  u.upper = 2.5;
  EXPECT_EQ(Error(R"({"u": 3})", {u}),
            "data.json: 'u' is 3, outside the bounds: 'u' is declared a real number in (-inf, "
            "2.5]");
}

TEST(ReadDataErrorTest, ManyBadValuesAreCounted) {
  EXPECT_EQ(Error(R"({"y": [1, "a", "b", "c", "d", "e", "f", "g", 2]})", {Real("y", {9})}),
            "data.json: 'y[1]' is the string \"a\", but 'y' is declared real values of shape "
            "[9]; write a number\n"
            "data.json: 'y[2]' is the string \"b\", but 'y' is declared real values of shape "
            "[9]; write a number\n"
            "data.json: 'y[3]' is the string \"c\", but 'y' is declared real values of shape "
            "[9]; write a number\n"
            "data.json: 'y[4]' is the string \"d\", but 'y' is declared real values of shape "
            "[9]; write a number\n"
            "data.json: 'y[5]' is the string \"e\", but 'y' is declared real values of shape "
            "[9]; write a number\n"
            "data.json: 'y' has 2 more bad values (only the first 5 are described)");
}

TEST(ReadDataErrorTest, MatrixElementsAreNamedByRowAndColumn) {
  EXPECT_EQ(Error(R"({"X": [[1, 2, 3], [4, 5, true]]})", {Real("X", {2, 3})}),
            "data.json: 'X[1][2]' is true, but 'X' is declared real values of shape [2, 3]; "
            "write a number (1 for true, 0 for false)");
}

TEST(ReadDataErrorTest, EveryProblemIsReportedTogether) {
  EXPECT_EQ(Error(R"({"y": [1.5, 2, 3], "N": 3.0, "X": [[1], [2, 3]], "extra": 1})",
                  {Int("N"), Int("y", {3}), Real("X", {2, 2}), Real("Z")}),
            "data.json: the data gives \"extra\", which the model does not declare; the model "
            "declares 'N', 'y', 'X', 'Z' (remove the extra names or fix their spelling)\n"
            "data.json: 'N' is 3.0, written as a real (with a '.' or an exponent), but 'N' is "
            "declared an integer; write integers without a decimal point or exponent (3, not "
            "3.0), as CmdStan requires\n"
            "data.json: 'y[0]' is 1.5, not a whole number, but 'y' is declared integer values of "
            "shape [3]; give integers, or declare it real\n"
            "data.json: 'X' is ragged: X[0] has 1 value but X[1] has 2; every X[i] needs 2 values "
            "(shape [2, 2])\n"
            "data.json: 'Z' is missing; the model declares it as a real number, so add \"Z\": "
            "<value> to the object");
}

// ---- Declarations -------------------------------------------------------

TEST(ValidateDataSpecsTest, AcceptsGoodSpecs) {
  DataSpec n = Int("n", {0, 3});
  n.lower = -4;
  n.upper = 4;
  DataSpec x = Real("x");
  x.allow_nonfinite = true;
  x.lower = 0.5;
  x.upper = 0.5;
  EXPECT_TRUE(ValidateDataSpecs(std::vector{n, x}).ok());
  EXPECT_TRUE(ValidateDataSpecs({}).ok());
}

TEST(ValidateDataSpecsTest, ReportsEveryProblem) {
  DataSpec f32 = Spec("f", DType::kF32, {});
  DataSpec nonfinite_int = Int("k");
  nonfinite_int.allow_nonfinite = true;
  DataSpec half = Int("h");
  half.lower = 0.5;
  DataSpec nan = Real("q");
  nan.upper = std::nan("");
  DataSpec crossed = Real("c");
  crossed.lower = 2;
  crossed.upper = 1;
  absl::Status status = ValidateDataSpecs(std::vector{
      Real(""), Real("a"), Real("a"), f32, Real("neg", {3, -1}),
      Real("huge", {int64_t{1} << 40, int64_t{1} << 40}), nonfinite_int, half, nan, crossed});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "data declarations: declaration 0 has an empty name\n"
            "data declarations: 'a' is declared twice (declarations 1 and 2)\n"
            "data declarations: declaration 3 ('f') has dtype f32; data is f64 (Stan real) or "
            "i64 (Stan int)\n"
            "data declarations: declaration 4 ('neg') has shape [3, -1]; extents must be "
            "non-negative\n"
            "data declarations: declaration 5 ('huge') has shape [1099511627776, "
            "1099511627776], more than 2^62 elements\n"
            "data declarations: declaration 6 ('k') allows non-finite values but is i64; only "
            "f64 data can be inf or NaN\n"
            "data declarations: declaration 7 ('h') has lower bound 0.5; an i64 variable's "
            "bounds are whole numbers within int64\n"
            "data declarations: declaration 8 ('q') has a NaN upper bound\n"
            "data declarations: declaration 9 ('c') has lower bound 2 above its upper bound 1");
}

TEST(ValidateDataSpecsTest, ReadDataChecksTheSpecsFirst) {
  absl::StatusOr<std::vector<Tensor>> read =
      ReadData("{}", std::vector{Real("a"), Real("a")}, "data.json");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            "data declarations: 'a' is declared twice (declarations 0 and 1)");
}

// ---- Writing and the round trip -----------------------------------------

TEST(WriteDataTest, Format) {
  DataSpec x = Real("x", {3});
  x.allow_nonfinite = true;
  std::vector<DataSpec> specs = {Int("N"), x, Real("X", {2, 2}), Real("e", {0}),
                                 Int("A", {2, 1, 2})};
  std::vector<Tensor> tensors = Read(
      R"({"N": 3, "x": [0.1, "-inf", "NaN"], "X": [[1, -0.0], [2.5, 1e300]], "e": [],
          "A": [[[1, 2]], [[3, 4]]]})",
      specs);
  ASSERT_EQ(tensors.size(), specs.size());
  EXPECT_EQ(WriteData(specs, tensors),
            "{\n"
            "  \"N\": 3,\n"
            "  \"x\": [0.1, \"-inf\", \"NaN\"],\n"
            "  \"X\": [\n"
            "    [1.0, -0.0],\n"
            "    [2.5, 1e+300]\n"
            "  ],\n"
            "  \"e\": [],\n"
            "  \"A\": [\n"
            "    [\n"
            "      [1, 2]\n"
            "    ],\n"
            "    [\n"
            "      [3, 4]\n"
            "    ]\n"
            "  ]\n"
            "}\n");
  EXPECT_EQ(WriteData({}, {}), "{}\n");
}

TEST(WriteDataTest, RoundTripIsBitExact) {
  DataSpec x = Real("x", {12});
  x.allow_nonfinite = true;
  std::vector<DataSpec> specs = {x, Int("n", {2, 3}), Real("s"), Real("Z", {3, 0}),
                                 Real("M", {2, 2, 2})};
  const std::vector<double> xs = {0.1,
                                  -0.0,
                                  0.0,
                                  1.0 / 3.0,
                                  std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::max(),
                                  -std::numeric_limits<double>::min(),
                                  kInf,
                                  -kInf,
                                  std::numeric_limits<double>::quiet_NaN(),
                                  9007199254740993.0,
                                  -123456.789e-200};
  std::vector<Tensor> tensors;
  tensors.push_back(*Tensor::FromVector(xs, {12}));
  tensors.push_back(
      *Tensor::FromVector(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0, 1, 42,
                                               std::numeric_limits<int64_t>::max()},
                          {2, 3}));
  tensors.push_back(*Tensor::FromVector(std::vector<double>{std::exp(1.0)}));
  tensors.emplace_back(TensorType{DType::kF64, {3, 0}}, 1);
  std::vector<double> m(8);
  for (int i = 0; i < 8; ++i) m[i] = std::sqrt(i + 2.0) * (i % 2 ? -1 : 1);
  tensors.push_back(*Tensor::FromVector(m, {2, 2, 2}));

  const std::string json = WriteData(specs, tensors);
  absl::StatusOr<std::vector<Tensor>> back = ReadData(json, specs, "round trip");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
  ASSERT_EQ(back->size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_TRUE((*back)[i] == tensors[i]) << specs[i].name << "\n" << json;
  }
  // And the text is stable: writing what was read gives the same text.
  EXPECT_EQ(WriteData(specs, *back), json);
}

// Stan's `int N; int K; matrix[N, K] X; vector[N] y;`: the sizes are read
// first and the later variables checked against them.
TEST(ReadDataSizesTest, NamedExtentsTakeTheValuesOfEarlierSizes) {
  const std::vector<DataSpec> specs = {Int("N"), Int("K"), Real("X", {"N", "K"}), Real("y", {"N"}),
                                       Real("z", {"K", 2})};
  const std::string json = R"({"N": 2, "K": 1, "X": [[1], [2]], "y": [3, 4], "z": [[5, 6]]})";
  std::vector<Tensor> t = Read(json, specs);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[2].type(), (TensorType{DType::kF64, {2, 1}}));
  EXPECT_EQ(t[3].type(), (TensorType{DType::kF64, {2}}));
  EXPECT_EQ(t[4].type(), (TensorType{DType::kF64, {1, 2}}));
  // WriteData resolves the names from the tensors it writes.
  absl::StatusOr<std::vector<Tensor>> back = ReadData(WriteData(specs, t), specs, "back.json");
  ASSERT_TRUE(back.ok()) << back.status();
  // Other sizes, same declarations.
  std::vector<Tensor> empty = Read(R"({"N": 0, "K": 0, "X": [], "y": [], "z": []})", specs);
  EXPECT_EQ(empty[2].type(), (TensorType{DType::kF64, {0, 0}}));
  EXPECT_EQ(ShapeText(specs[2].shape), "[N, K]");
}

TEST(ReadDataSizesTest, ASizeThatDoesNotFitIsAClearError) {
  const std::vector<DataSpec> specs = {Int("N"), Real("y", {"N"})};
  EXPECT_THAT(Error(R"({"N": 3, "y": [1, 2]})", specs), HasSubstr("'y' should have shape [3]"));
  EXPECT_THAT(Error(R"({"N": -1, "y": []})", specs),
              HasSubstr("'y' has extent 'N', which is -1; a size must be non-negative"));
  EXPECT_THAT(Error(R"({"N": 1.5, "y": [1]})", specs),
              HasSubstr("'y' is not checked: its size 'N' could not be read"));
  EXPECT_THAT(Error(R"({"y": [1]})", specs),
              HasSubstr("'y' is not checked: its size 'N' could not be read"));
}

TEST(ReadDataSizesTest, BadSizeDeclarationsAreClearErrors) {
  const std::string missing(ValidateDataSpecs(std::vector{Real("y", {"N"})}).message());
  EXPECT_THAT(missing, HasSubstr("declaration 0 ('y') has extent 'N', but no data variable is "
                                 "named 'N'"));
  const std::string after(ValidateDataSpecs(std::vector{Real("y", {"N"}), Int("N")}).message());
  EXPECT_THAT(after, HasSubstr("declaration 0 ('y') has extent 'N', but 'N' is declared after it"));
  const std::string real(ValidateDataSpecs(std::vector{Real("N"), Real("y", {"N"})}).message());
  EXPECT_THAT(real, HasSubstr("declaration 1 ('y') has extent 'N', but 'N' is f64[]; a size is "
                              "an i64 scalar"));
  const std::string vector(
      ValidateDataSpecs(std::vector{Int("N", {2}), Real("y", {"N"})}).message());
  EXPECT_THAT(vector, HasSubstr("'N' is i64[2]; a size is an i64 scalar"));
  // ReadData checks the declarations first.
  EXPECT_THAT(Error(R"({"y": [1]})", {Real("y", {"N"})}), HasSubstr("no data variable is named"));
}

}  // namespace
}  // namespace autobatch::mcmc
