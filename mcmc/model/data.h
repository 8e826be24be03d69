// CmdStan-style JSON data, read and checked against a model's data declarations.
//
// A model declares its data (DataSpec: name, dtype, shape, bounds); users give
// the values as CmdStan JSON, an object from names to numbers or nested
// arrays: {"N": 3, "y": [1, 0, 1], "X": [[1.5, 2], [3, 4], [5, 6]]}.
//
// Layout: ROW-MAJOR, like the nesting of the JSON arrays: the last index
// varies fastest, so X[i][j] is element i * cols + j of the tensor's lane
// (backends/tensor.h: a lane is contiguous, and Tensor::FromEigen/ToEigen
// use the same order). Note the contrast with ParameterSpec (model.h), whose
// CSV order is column-major like CmdStan's output.
//
// What is accepted, following CmdStan (stan-dev/stan, src/stan/io/json:
// json_data_handler.hpp reads the values, json_data.hpp / var_context.hpp's
// validate_dims checks them against the declarations):
//   - A scalar declaration (shape {}) takes a bare number only: [3] for a
//     scalar is an error, and so is a bare 3 for shape {1} (CmdStan: "mismatch
//     in number dimensions declared and found in context").
//   - Integers (dtype i64) must be JSON integers: 3.0, 3e0 and 2.5 are errors,
//     as in CmdStan, whose reader turns any number written with a '.' or an
//     exponent into a real, which validate_dims then refuses for an int ("int
//     variable contained non-int values"). Integers must fit in int64 (Stan's
//     int is 32-bit; ours is wider).
//   - Reals (dtype f64) take any JSON number (integers convert exactly up to
//     2^53, then round to nearest) and, when allow_nonfinite is set, the
//     strings "inf", "+inf", "Inf", "Infinity" (+infinity), "-inf", "-Inf",
//     "-Infinity" (-infinity) and "NaN", exactly as spelled here: Stan's
//     reader accepts "Inf", "-Inf", "Infinity", "-Infinity", "NaN"; cmdstanpy
//     writes "+inf", "-inf", "NaN"; older CmdStan guides document "+inf",
//     "-inf". Stan's bare atoms Infinity / NaN are not JSON and are refused
//     as malformed JSON. "-0.0" gives negative zero; a bare "-0" is the
//     integer 0 and gives +0.0.
//   - Bounds are inclusive, like Stan's <lower=a, upper=b>; NaN is outside
//     every bound (Stan's bound checks fail on NaN); +-inf compare as usual.
//   - An empty array [] is accepted for any declaration with zero elements
//     (shape {0}, {3, 0}, {0, 3}, ...), as CmdStan does; so is the exact
//     nesting ([[], [], []] for {3, 0}).
//   - Booleans, null, objects and other strings are errors.
//   - Sizes from the data (Stan's `int<lower=0> N; vector[N] y;`): an extent
//     of a declaration may name an i64 scalar declared EARLIER (Extent
//     below); it takes the value read for that scalar, and the variable is
//     then checked against the resolved shape as any other. A size that
//     cannot be read (missing, malformed) leaves the variables sized by it
//     unchecked, with a line saying so; a negative size is an error naming
//     the size and the variable.
// Stricter than CmdStan: every declared name must be present (CmdStan lets a
// zero-size variable be left out) and no undeclared name may appear (CmdStan
// ignores extras), so a misspelled name is caught; a key given twice is an
// error (support/json_text.h).
//
// Errors are InvalidArgument. Every problem is reported, one per line, each
// line "<source_name>: <problem>" naming the variable (and the element, with
// 0-based JSON indices: X[3][24]), what was expected, what was found and what
// to do. A variable with a wrong shape gets one line (the first difference,
// outermost level first; a "ragged" array has rows of different lengths);
// a variable whose shape is right gets one line for each of its first
// kMaxValueProblemsPerVariable bad values, then a line counting the rest.
// Malformed JSON and a top level that is not an object stop the reading at
// once (one line).
#ifndef AUTOBATCH_MCMC_MODEL_DATA_H_
#define AUTOBATCH_MCMC_MODEL_DATA_H_

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "ir/types.h"

namespace autobatch::mcmc {

// One extent of a declared shape: a number (`vector[8]`), or the NAME of an
// i64 scalar data variable declared earlier (Stan's `vector[N] y;`), whose
// value it takes when the data are set. Both convert implicitly, so a shape
// reads as in Stan: `.shape = {8}`, `.shape = {"N"}`, `.shape = {"N", 3}`.
struct Extent {
  int64_t value = 0;      // the fixed extent (when name is empty)
  std::string name = "";  // the size variable, or "" for a fixed extent
  template <std::integral I>
  Extent(I n) : value(static_cast<int64_t>(n)) {}     // NOLINT(google-explicit-constructor)
  Extent(const char* size_name) : name(size_name) {}  // NOLINT(google-explicit-constructor)
  Extent(std::string size_name) : name(std::move(size_name)) {}  // NOLINT
  bool named() const { return !name.empty(); }
  std::string ToString() const;  // "8" or "N"
  friend bool operator==(const Extent&, const Extent&) = default;
};
// "[N, 3]".
std::string ShapeText(std::span<const Extent> shape);
// Whether any extent is a name.
bool HasNamedExtent(std::span<const Extent> shape);

// One data variable a model declares, like Stan's `int<lower=0> N;` or
// `matrix[N, K] X;`.
struct DataSpec {
  std::string name = "";           // "X"
  DType dtype = DType::kF64;       // kF64 (Stan real) or kI64 (Stan int)
  std::vector<Extent> shape = {};  // {} scalar, {8} or {"N"} vector, {"N", "K"} matrix, ...
  bool allow_nonfinite = false;    // f64 only: accept "inf", "-inf", "NaN", ...
  std::optional<double> lower = std::nullopt;  // inclusive; whole numbers for i64
  std::optional<double> upper = std::nullopt;  // inclusive; whole numbers for i64
};

// At most this many bad values are described per variable; the rest are
// counted on one more line.
inline constexpr int kMaxValueProblemsPerVariable = 5;

// Checks the declarations themselves (a programmer's mistake, reported as
// InvalidArgument, every problem on its own line "data declarations: ..."):
// an empty or repeated name, a dtype other than f64 or i64, a negative
// extent, more than 2^62 elements, allow_nonfinite on i64, a NaN bound,
// lower > upper, an i64 bound that is not a whole number within int64, an
// extent naming a variable that does not exist, is declared at or after the
// use, or is not an i64 scalar (ExtentNameProblems).
absl::Status ValidateDataSpecs(std::span<const DataSpec> specs);

// The problems of the NAMED extents of `shape`, one line each naming `who`
// ("data 'y'", "parameter 'beta'") and the extent: a name that is not one of
// `specs`, one declared at index >= `before` (Stan's rule: a size is declared
// before its use), one that is not an i64 scalar.
std::vector<std::string> ExtentNameProblems(std::span<const Extent> shape, std::string_view who,
                                            std::span<const DataSpec> specs, size_t before);

// `shape` with each name replaced by the value of that data variable:
// `values[i]` is the data of `specs[i]` (one lane, as ReadData returns), for
// i < values.size(). InvalidArgument naming `who` and the extent for an
// ExtentNameProblems problem (with before = values.size()) or a negative
// value ("parameter 'beta' has extent 'K', which is -1; ...").
absl::StatusOr<std::vector<int64_t>> ResolveShape(std::span<const Extent> shape,
                                                  std::string_view who,
                                                  std::span<const DataSpec> specs,
                                                  std::span<const Tensor> values);

// Reads CmdStan JSON `json_text` against `specs` (checked first: an error of
// ValidateDataSpecs is returned as it is). Returns one tensor per spec, in spec order, of one
// lane (batch 1) with type {spec.dtype, resolved shape}, values row-major. The
// tensors are not marked uniform; call set_uniform() to feed one to every
// lane of a batched program. `source_name` (a file name) starts every error
// line.
absl::StatusOr<std::vector<Tensor>> ReadData(std::string_view json_text,
                                             std::span<const DataSpec> specs,
                                             std::string_view source_name);

// ReadData on the contents of the file at `path` (named so in errors). A file
// that cannot be opened or read gives the errno's status.
absl::StatusOr<std::vector<Tensor>> ReadDataFile(const std::string& path,
                                                 std::span<const DataSpec> specs);

// CmdStan JSON for `tensors` (one per spec, each of one lane with the spec's
// type, its named extents resolved from `tensors`; anything else is a bug of the caller and trips
// AB_CHECK). One variable per line, rows of arrays of rank >= 2 on lines of their own. Reals are
// written in the shortest form that reads back to the same double (always with a '.' or an
// exponent, so -0.0 keeps its sign); non-finite reals as "inf", "-inf", "NaN".
// ReadData(WriteData(specs, t), specs) == t bit for bit, except that every NaN reads back as the
// default quiet NaN.
std::string WriteData(std::span<const DataSpec> specs, std::span<const Tensor> tensors);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_DATA_H_
