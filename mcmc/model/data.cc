// CmdStan-style JSON data: a shape pass then a value pass per declared
// variable, collecting every problem.
#include "mcmc/model/data.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "support/json_text.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

using Json = nlohmann::json;

// A declaration with its named extents resolved: what the readers and the
// writer work on (the fields of DataSpec, the shape a number per extent).
struct Resolved {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  bool allow_nonfinite;
  std::optional<double> lower;
  std::optional<double> upper;
};

Resolved WithShape(const DataSpec& spec, std::vector<int64_t> shape) {
  return {spec.name, spec.dtype, std::move(shape), spec.allow_nonfinite, spec.lower, spec.upper};
}

// The index of the declaration named `name`, or specs.size().
size_t IndexOf(std::span<const DataSpec> specs, const std::string& name) {
  return static_cast<size_t>(
      std::find_if(specs.begin(), specs.end(), [&](const DataSpec& s) { return s.name == name; }) -
      specs.begin());
}

// The problem of one named extent, or "" (see ExtentNameProblems).
std::string ExtentNameProblem(const Extent& e, std::string_view who,
                              std::span<const DataSpec> specs, size_t before) {
  const std::string use = absl::StrCat(std::string(who), " has extent '", e.name, "'");
  const size_t j = IndexOf(specs, e.name);
  if (j == specs.size()) {
    return absl::StrCat(use, ", but no data variable is named '", e.name, "' (declare it, `int ",
                        e.name, "`, as data before its use)");
  }
  if (j >= before) {
    return absl::StrCat(use, ", but '", e.name,
                        "' is declared after it (declare a size before its use, as in Stan)");
  }
  if (specs[j].dtype != DType::kI64 || !specs[j].shape.empty()) {
    return absl::StrCat(use, ", but '", e.name, "' is ", std::string(DTypeName(specs[j].dtype)),
                        ShapeText(specs[j].shape), "; a size is an i64 scalar (Stan's int)");
  }
  return "";
}

// How many names a line lists before "and N more".
constexpr size_t kMaxNamesListed = 10;
// 2^63 as a double: int64 holds [-2^63, 2^63).
constexpr double kTwoPow63 = 9223372036854775808.0;

std::string ShapeText(std::span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// The shortest text that reads back to `v` ("0.1", "3", "1e+300").
std::string NumberText(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  AB_CHECK(ec == std::errc(), "NumberText: to_chars failed");
  return std::string(buffer, end);
}

// NumberText with a '.' or an exponent, so that it reads back as a real
// ("2.0", "-0.0"; a bare -0 would read as the integer 0).
std::string RealText(double v) {
  std::string text = NumberText(v);
  if (std::isfinite(v) && text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// "1 value", "3 values".
std::string Count(int64_t n, std::string_view unit) {
  return absl::StrCat(n, " ", std::string(unit), n == 1 ? "" : "s");
}

std::string BoundText(double bound, DType dtype) {
  if (dtype == DType::kI64) return absl::StrCat(static_cast<int64_t>(bound));
  return NumberText(bound);
}

// "a real number", "integer values of shape [3] in [0, inf)", ...
std::string Describe(const Resolved& spec) {
  const bool is_int = spec.dtype == DType::kI64;
  std::string text = spec.shape.empty() ? std::string(is_int ? "an integer" : "a real number")
                                        : absl::StrCat(is_int ? "integer" : "real",
                                                       " values of shape ", ShapeText(spec.shape));
  if (spec.lower || spec.upper) {
    absl::StrAppend(&text, " in ", spec.lower ? "[" : "(",
                    spec.lower ? BoundText(*spec.lower, spec.dtype) : "-inf", ", ",
                    spec.upper ? BoundText(*spec.upper, spec.dtype) : "inf",
                    spec.upper ? "]" : ")");
  }
  return text;
}

// What a JSON value is, for "but it is ...".
std::string Kind(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return j.get<bool>() ? "true" : "false";
    case Json::value_t::string:
      return absl::StrCat("the string ", QuotedExcerpt(j.get_ref<const std::string&>()));
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return absl::StrCat("an array of ", Count(static_cast<int64_t>(j.size()), "value"));
    default:
      return absl::StrCat("the number ", j.dump());
  }
}

// name[i][j]... for a list of indices.
std::string Path(std::string_view name, std::span<const int64_t> indices) {
  std::string path(name);
  for (int64_t i : indices) absl::StrAppend(&path, "[", i, "]");
  return path;
}

// name[i], name[i][j], ...: every array at `depth` (0 = the value itself).
std::string PatternAt(std::string_view name, int depth) {
  static constexpr std::string_view kLetters = "ijklmnpqrs";
  std::string path(name);
  for (int d = 0; d < depth; ++d) {
    absl::StrAppend(
        &path, "[",
        d < static_cast<int>(kLetters.size()) ? std::string(kLetters.substr(d, 1)) : "..", "]");
  }
  return path;
}

// One pass over a variable's JSON value along its declared shape: per level,
// the lengths its arrays have and the first non-array; below the last level,
// the first array (too deep). Never descends more than rank levels, whatever
// the nesting of the JSON.
class ShapeScan {
 public:
  explicit ShapeScan(const Resolved& spec) : spec_(spec), levels_(spec.shape.size()) {}

  // Empty if the value has the declared shape; else the one problem to report.
  std::string Check(const Json& value) {
    const int64_t elements = TensorType{spec_.dtype, spec_.shape}.NumElements();
    // CmdStan accepts [] for any declaration without elements.
    if (elements == 0 && value.is_array() && value.empty() && !spec_.shape.empty()) return "";
    Walk(value, 0);
    return Diagnose(value);
  }
  // The values, row-major; meaningful once Check returned "".
  const std::vector<const Json*>& leaves() const { return leaves_; }

 private:
  struct Level {
    // length -> (first index path with it, order seen)
    std::map<int64_t, std::pair<std::vector<int64_t>, int>> lengths;
    std::optional<std::vector<int64_t>> not_array;  // first element that is not an array
    const Json* not_array_value = nullptr;
  };

  void Walk(const Json& j, int depth) {
    if (depth == static_cast<int>(spec_.shape.size())) {
      if (j.is_array() && !too_deep_) {
        too_deep_ = index_;
        too_deep_value_ = &j;
      }
      leaves_.push_back(&j);
      return;
    }
    Level& level = levels_[depth];
    if (!j.is_array()) {
      if (!level.not_array) {
        level.not_array = index_;
        level.not_array_value = &j;
      }
      return;
    }
    const int64_t n = static_cast<int64_t>(j.size());
    level.lengths.try_emplace(n, index_, seen_++);
    for (int64_t i = 0; i < n; ++i) {
      index_.push_back(i);
      Walk(j[static_cast<size_t>(i)], depth + 1);
      index_.pop_back();
    }
  }

  std::string Diagnose(const Json& value) const {
    const std::string& name = spec_.name;
    const int rank = static_cast<int>(spec_.shape.size());
    const std::string expected =
        absl::StrCat("'", name, "' should have shape ", ShapeText(spec_.shape));
    for (int d = 0; d < rank; ++d) {
      const Level& level = levels_[d];
      const int64_t want = spec_.shape[d];
      // What level d's arrays hold: values at the last level, arrays above.
      auto count = [&](int64_t n) {
        return d + 1 == rank ? Count(n, "value") : absl::StrCat(n, n == 1 ? " entry" : " entries");
      };
      const std::string every = absl::StrCat("; every ", PatternAt(name, d), " needs ", count(want),
                                             " (shape ", ShapeText(spec_.shape), ")");
      if (level.not_array) {
        if (d == 0) {
          std::string hint =
              rank == 1 && want == 1 && value.is_number()
                  ? absl::StrCat("; write [", value.dump(), "], not ", value.dump())
                  : absl::StrCat("; write it as ", rank == 1 ? "an array" : "nested arrays",
                                 " of that shape");
          return absl::StrCat(expected, " (", Describe(spec_), ") but it is ", Kind(value), hint);
        }
        return absl::StrCat(expected, " but ", Path(name, *level.not_array), " is ",
                            Kind(*level.not_array_value), ", not an array of ", count(want), every);
      }
      if (level.lengths.size() > 1) {
        // Ragged: name the first two lengths met, in the order met.
        std::vector<std::pair<int, std::pair<int64_t, const std::vector<int64_t>*>>> met;
        for (const auto& [length, first] : level.lengths) {
          met.push_back({first.second, {length, &first.first}});
        }
        std::sort(met.begin(), met.end());
        return absl::StrCat("'", name, "' is ragged: ", Path(name, *met[0].second.second), " has ",
                            count(met[0].second.first), " but ", Path(name, *met[1].second.second),
                            " has ", met[1].second.first, every);
      }
      if (level.lengths.size() == 1 && level.lengths.begin()->first != want) {
        const int64_t got = level.lengths.begin()->first;
        if (d > 0) {
          return absl::StrCat(expected, " but every ", PatternAt(name, d), " has ", count(got),
                              ", not ", want);
        }
        // A flat list of all the values: say to nest it.
        const bool flat = rank >= 2 && levels_[1].not_array &&
                          got == TensorType{spec_.dtype, spec_.shape}.NumElements();
        return absl::StrCat(
            expected, " but it is an array of ", count(got), ", not ", want,
            flat ? "; it looks flat: nest it, one array per row ([[...], [...]])" : "");
      }
    }
    if (too_deep_) {
      if (rank == 0) {
        std::string hint =
            value.is_array() && value.size() == 1 && (value[0].is_number() || value[0].is_string())
                ? absl::StrCat("; write ", value[0].dump(), ", not ", value.dump())
                : "; write a single value";
        return absl::StrCat("'", name, "' should be ", Describe(spec_), " (shape []) but it is ",
                            Kind(value), hint);
      }
      return absl::StrCat(expected, " but ", Path(name, *too_deep_), " is ", Kind(*too_deep_value_),
                          ", not a single value; the arrays are nested ", "too deeply");
    }
    return "";
  }

  const Resolved& spec_;
  std::vector<Level> levels_;
  std::optional<std::vector<int64_t>> too_deep_;
  const Json* too_deep_value_ = nullptr;
  std::vector<int64_t> index_;
  int seen_ = 0;
  std::vector<const Json*> leaves_;
};

// The non-finite spellings (see data.h).
std::optional<double> NonFinite(const std::string& s) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (s == "inf" || s == "+inf" || s == "Inf" || s == "Infinity") return kInf;
  if (s == "-inf" || s == "-Inf" || s == "-Infinity") return -kInf;
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

constexpr std::string_view kNonFiniteList =
    "\"inf\", \"+inf\", \"Inf\", \"Infinity\", \"-inf\", \"-Inf\", \"-Infinity\", \"NaN\"";

// The subject of a value's problem: 'N' for a scalar, 'y[2]' for an element.
std::string Subject(const Resolved& spec, int64_t flat) {
  if (spec.shape.empty()) return absl::StrCat("'", spec.name, "'");
  std::vector<int64_t> index(spec.shape.size());
  for (int d = static_cast<int>(spec.shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % spec.shape[d];
    flat /= spec.shape[d];
  }
  return absl::StrCat("'", Path(spec.name, index), "'");
}

std::string OutOfRange(const std::string& subject, const Json& v, const std::string& declared) {
  return absl::StrCat(subject, " is ", v.dump(), ", outside the range of a 64-bit integer, and ",
                      declared, "; give integers in [", std::numeric_limits<int64_t>::min(), ", ",
                      std::numeric_limits<int64_t>::max(), "]");
}

// Converts one value into `out`; returns the problem ("" if none).
std::string ConvertI64(const Resolved& spec, const Json& v, const std::string& subject,
                       int64_t* out) {
  const std::string declared = absl::StrCat("'", spec.name, "' is declared ", Describe(spec));
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    *out = v.get<int64_t>();
  } else if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return OutOfRange(subject, v, declared);
    }
    *out = static_cast<int64_t>(u);
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d != std::floor(d)) {
      return absl::StrCat(subject, " is ", v.dump(), ", not a whole number, but ", declared,
                          "; give integers, or declare it real");
    }
    if (d < -kTwoPow63 || d >= kTwoPow63) return OutOfRange(subject, v, declared);
    return absl::StrCat(subject, " is ", v.dump(),
                        ", written as a real (with a '.' or an exponent), but ", declared,
                        "; write integers without a decimal point or exponent (",
                        static_cast<int64_t>(d), ", not ", v.dump(), "), as CmdStan requires");
  } else if (v.is_string() && NonFinite(v.get_ref<const std::string&>())) {
    return absl::StrCat(subject, " is ", QuotedExcerpt(v.get_ref<const std::string&>()), ", but ",
                        declared, ", and integers cannot be infinite or NaN");
  } else {
    return absl::StrCat(subject, " is ", Kind(v), ", but ", declared, "; write an integer",
                        v.is_boolean() ? " (1 for true, 0 for false)" : "");
  }
  if ((spec.lower && *out < static_cast<int64_t>(*spec.lower)) ||
      (spec.upper && *out > static_cast<int64_t>(*spec.upper))) {
    return absl::StrCat(subject, " is ", *out, ", outside the bounds: ", declared);
  }
  return "";
}

std::string ConvertF64(const Resolved& spec, const Json& v, const std::string& subject,
                       double* out) {
  const std::string declared = absl::StrCat("'", spec.name, "' is declared ", Describe(spec));
  if (v.is_number()) {
    *out = v.get<double>();
  } else if (v.is_string() && NonFinite(v.get_ref<const std::string&>())) {
    if (!spec.allow_nonfinite) {
      return absl::StrCat(subject, " is ", QuotedExcerpt(v.get_ref<const std::string&>()),
                          ", but '", spec.name,
                          "' must be finite (its declaration does not allow inf or NaN); give a "
                          "finite number");
    }
    *out = *NonFinite(v.get_ref<const std::string&>());
  } else if (v.is_string()) {
    return absl::StrCat(
        subject, " is ", Kind(v), ", but ", declared, "; write a number",
        spec.allow_nonfinite ? absl::StrCat(" or one of ", std::string(kNonFiniteList)) : "");
  } else {
    return absl::StrCat(subject, " is ", Kind(v), ", but ", declared, "; write a number",
                        v.is_boolean() ? " (1 for true, 0 for false)" : "");
  }
  const double x = *out;
  if ((spec.lower && !(x >= *spec.lower)) || (spec.upper && !(x <= *spec.upper))) {
    return absl::StrCat(subject, " is ",
                        std::isnan(x)   ? "NaN"
                        : v.is_number() ? v.dump()
                                        : RealText(x),
                        ", outside the bounds: ", declared);
  }
  return "";
}

// The variable's tensor from its leaves; appends the values' problems.
Tensor ConvertValues(const Resolved& spec, const std::vector<const Json*>& leaves,
                     std::vector<std::string>& problems) {
  Tensor tensor(TensorType{spec.dtype, spec.shape}, /*batch=*/1);
  int bad = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const std::string subject = Subject(spec, static_cast<int64_t>(i));
    std::string problem = spec.dtype == DType::kI64
                              ? ConvertI64(spec, *leaves[i], subject, tensor.data<int64_t>() + i)
                              : ConvertF64(spec, *leaves[i], subject, tensor.data<double>() + i);
    if (problem.empty()) continue;
    if (++bad <= kMaxValueProblemsPerVariable) problems.push_back(std::move(problem));
  }
  if (bad > kMaxValueProblemsPerVariable) {
    problems.push_back(absl::StrCat("'", spec.name, "' has ", bad - kMaxValueProblemsPerVariable,
                                    " more bad values (only the first ",
                                    kMaxValueProblemsPerVariable, " are described)"));
  }
  return tensor;
}

// "'a', 'b', 'c'" or "'a', ..., and 7 more".
template <typename Names>
std::string ListNames(const Names& names, bool quote_json) {
  std::vector<std::string> shown;
  for (const auto& name : names) {
    if (shown.size() == kMaxNamesListed) break;
    shown.push_back(quote_json ? QuotedExcerpt(name) : absl::StrCat("'", name, "'"));
  }
  std::string text = absl::StrJoin(shown, ", ");
  if (names.size() > kMaxNamesListed) {
    absl::StrAppend(&text, " and ", names.size() - kMaxNamesListed, " more");
  }
  return text;
}

// One line per problem, each starting with `source`.
absl::Status Problems(std::string_view source, const std::vector<std::string>& problems) {
  std::vector<std::string> lines;
  for (const std::string& p : problems) lines.push_back(absl::StrCat(std::string(source), ": ", p));
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

// Appends `spec`'s value (the lane at `values`) as JSON, rows of rank >= 2
// arrays on their own lines indented past `indent`.
void WriteValue(const Resolved& spec, const Tensor& t, size_t dim, int64_t& flat, int indent,
                std::string& out) {
  if (dim == spec.shape.size()) {
    if (spec.dtype == DType::kI64) {
      absl::StrAppend(&out, t.data<int64_t>()[flat++]);
    } else {
      const double v = t.data<double>()[flat++];
      absl::StrAppend(&out, std::isfinite(v) ? RealText(v) : absl::StrCat("\"", RealText(v), "\""));
    }
    return;
  }
  const int64_t n = spec.shape[dim];
  const bool inline_row = dim + 1 == spec.shape.size() || n == 0;
  out += '[';
  for (int64_t i = 0; i < n; ++i) {
    if (inline_row) {
      if (i > 0) out += ", ";
    } else {
      absl::StrAppend(&out, i > 0 ? "," : "", "\n", std::string(indent + 2, ' '));
    }
    WriteValue(spec, t, dim + 1, flat, indent + 2, out);
  }
  if (!inline_row) absl::StrAppend(&out, "\n", std::string(indent, ' '));
  out += ']';
}

}  // namespace

std::string Extent::ToString() const { return named() ? name : absl::StrCat(value); }

std::string ShapeText(std::span<const Extent> shape) {
  std::vector<std::string> parts;
  for (const Extent& e : shape) parts.push_back(e.ToString());
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

bool HasNamedExtent(std::span<const Extent> shape) {
  return std::any_of(shape.begin(), shape.end(), [](const Extent& e) { return e.named(); });
}

std::vector<std::string> ExtentNameProblems(std::span<const Extent> shape, std::string_view who,
                                            std::span<const DataSpec> specs, size_t before) {
  std::vector<std::string> problems;
  for (const Extent& e : shape) {
    if (!e.named()) continue;
    std::string problem = ExtentNameProblem(e, who, specs, before);
    if (!problem.empty()) problems.push_back(std::move(problem));
  }
  return problems;
}

absl::StatusOr<std::vector<int64_t>> ResolveShape(std::span<const Extent> shape,
                                                  std::string_view who,
                                                  std::span<const DataSpec> specs,
                                                  std::span<const Tensor> values) {
  std::vector<int64_t> out;
  for (const Extent& e : shape) {
    if (!e.named()) {
      out.push_back(e.value);
      continue;
    }
    std::string problem = ExtentNameProblem(e, who, specs, values.size());
    if (!problem.empty()) return absl::InvalidArgumentError(problem);
    const Tensor& t = values[IndexOf(specs, e.name)];
    if (t.type() != Scalar(DType::kI64) || t.batch() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(who), " has extent '", e.name, "', but the data of '", e.name, "' is ",
          t.type().ToString(), " x ", t.batch(), " lanes; a size is one i64 scalar"));
    }
    const int64_t v = t.data<int64_t>()[0];
    if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(who), " has extent '", e.name, "', which is ", v,
                       "; a size must be non-negative (declare it `int<lower=0> ", e.name, "`)"));
    }
    out.push_back(v);
  }
  return out;
}

absl::Status ValidateDataSpecs(std::span<const DataSpec> specs) {
  std::vector<std::string> problems;
  std::map<std::string, size_t> first_index;
  for (size_t i = 0; i < specs.size(); ++i) {
    const DataSpec& s = specs[i];
    const std::string who = absl::StrCat("declaration ", i, " ('", s.name, "')");
    if (s.name.empty()) problems.push_back(absl::StrCat("declaration ", i, " has an empty name"));
    if (!s.name.empty()) {
      auto [it, inserted] = first_index.try_emplace(s.name, i);
      if (!inserted) {
        problems.push_back(absl::StrCat("'", s.name, "' is declared twice (declarations ",
                                        it->second, " and ", i, ")"));
      }
    }
    if (s.dtype != DType::kF64 && s.dtype != DType::kI64) {
      problems.push_back(absl::StrCat(who, " has dtype ", std::string(DTypeName(s.dtype)),
                                      "; data is f64 (Stan real) or i64 (Stan int)"));
    }
    for (std::string& p : ExtentNameProblems(s.shape, who, specs, i)) {
      problems.push_back(std::move(p));
    }
    int64_t elements = 1;
    for (const Extent& e : s.shape) {
      if (e.named()) continue;  // checked when the data are read
      const int64_t extent = e.value;
      if (extent < 0) {
        problems.push_back(
            absl::StrCat(who, " has shape ", ShapeText(s.shape), "; extents must be non-negative"));
        elements = 0;
        break;
      }
      if (extent > 0 && elements > (int64_t{1} << 62) / extent) {
        problems.push_back(
            absl::StrCat(who, " has shape ", ShapeText(s.shape), ", more than 2^62 elements"));
        break;
      }
      elements *= extent;
    }
    if (s.allow_nonfinite && s.dtype != DType::kF64) {
      problems.push_back(absl::StrCat(who, " allows non-finite values but is ",
                                      std::string(DTypeName(s.dtype)),
                                      "; only f64 data can be inf or NaN"));
    }
    for (const auto& [bound, what] : {std::pair{s.lower, "lower"}, std::pair{s.upper, "upper"}}) {
      if (!bound) continue;
      if (std::isnan(*bound)) {
        problems.push_back(absl::StrCat(who, " has a NaN ", what, " bound"));
      } else if (s.dtype == DType::kI64 &&
                 (*bound != std::floor(*bound) || *bound < -kTwoPow63 || *bound >= kTwoPow63)) {
        problems.push_back(absl::StrCat(who, " has ", what, " bound ", NumberText(*bound),
                                        "; an i64 variable's bounds are whole numbers within "
                                        "int64"));
      }
    }
    if (s.lower && s.upper && *s.lower > *s.upper) {
      problems.push_back(absl::StrCat(who, " has lower bound ", NumberText(*s.lower),
                                      " above its upper bound ", NumberText(*s.upper)));
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return Problems("data declarations", problems);
}

absl::StatusOr<std::vector<Tensor>> ReadData(std::string_view json_text,
                                             std::span<const DataSpec> specs,
                                             std::string_view source_name) {
  AB_RETURN_IF_ERROR(ValidateDataSpecs(specs));
  absl::StatusOr<Json> parsed = ParseJsonText(json_text);
  if (!parsed.ok()) {
    if (parsed.status().code() != absl::StatusCode::kInvalidArgument) return parsed.status();
    return Problems(source_name, {std::string(parsed.status().message())});
  }
  const Json& json = *parsed;
  if (!json.is_object()) {
    return Problems(
        source_name,
        {absl::StrCat("the data is ", Kind(json),
                      ", but CmdStan data is a JSON object from variable names to values, like "
                      "{\"N\": 3, \"y\": [1, 0, 1]}")});
  }
  std::vector<std::string> problems;
  std::vector<std::string> extras;
  std::set<std::string_view> declared;
  for (const DataSpec& spec : specs) declared.insert(spec.name);
  for (const auto& [key, value] : json.items()) {
    if (!declared.contains(key)) extras.push_back(key);
  }
  if (!extras.empty()) {
    std::vector<std::string> names;
    for (const DataSpec& spec : specs) names.push_back(spec.name);
    problems.push_back(
        absl::StrCat("the data gives ", ListNames(extras, /*quote_json=*/true),
                     ", which the model does not declare; the model declares ",
                     names.empty() ? "no data" : ListNames(names, /*quote_json=*/false),
                     " (remove the extra names or fix their spelling)"));
  }
  std::vector<Tensor> tensors;
  tensors.reserve(specs.size());
  // The values read by declaration, which the named extents of later
  // declarations take (read_ok[j]: specs[j] was read without a problem).
  std::vector<Tensor> read(specs.size());
  std::vector<bool> read_ok(specs.size(), false);
  for (size_t i = 0; i < specs.size(); ++i) {
    const DataSpec& declaration = specs[i];
    std::vector<int64_t> shape;
    std::string unread_size;
    bool negative = false;
    for (const Extent& e : declaration.shape) {
      if (!e.named()) {
        shape.push_back(e.value);
        continue;
      }
      const size_t j = IndexOf(specs, e.name);  // an earlier i64 scalar (validated)
      if (!read_ok[j]) {
        unread_size = e.name;
        break;
      }
      const int64_t v = read[j].data<int64_t>()[0];
      if (v < 0) {
        problems.push_back(
            absl::StrCat("'", declaration.name, "' has extent '", e.name, "', which is ", v,
                         "; a size must be non-negative (declare it `int<lower=0> ", e.name, "`)"));
        negative = true;
        break;
      }
      shape.push_back(v);
    }
    if (negative) continue;
    if (!unread_size.empty()) {
      problems.push_back(absl::StrCat("'", declaration.name, "' is not checked: its size '",
                                      unread_size, "' could not be read"));
      continue;
    }
    int64_t elements = 1;
    bool too_big = false;
    for (int64_t extent : shape) {
      too_big = too_big || (extent > 0 && elements > (int64_t{1} << 62) / extent);
      if (!too_big) elements *= extent;
    }
    if (too_big) {
      problems.push_back(absl::StrCat("'", declaration.name, "' has shape ", ShapeText(shape),
                                      " (from its sizes), more than 2^62 elements"));
      continue;
    }
    const Resolved spec = WithShape(declaration, std::move(shape));
    auto it = json.find(spec.name);
    if (it == json.end()) {
      problems.push_back(absl::StrCat(
          "'", spec.name, "' is missing; the model declares it as ", Describe(spec), ", so add \"",
          spec.name, "\": ", spec.shape.empty() ? "<value>" : "[...]", " to the object"));
      continue;
    }
    ShapeScan scan(spec);
    std::string shape_problem = scan.Check(*it);
    if (!shape_problem.empty()) {
      problems.push_back(std::move(shape_problem));
      continue;
    }
    const size_t problems_before = problems.size();
    Tensor t = ConvertValues(spec, scan.leaves(), problems);
    read_ok[i] = problems.size() == problems_before;
    read[i] = t;
    tensors.push_back(std::move(t));
  }
  if (!problems.empty()) return Problems(source_name, problems);
  return tensors;
}

absl::StatusOr<std::vector<Tensor>> ReadDataFile(const std::string& path,
                                                 std::span<const DataSpec> specs) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open data file '", path, "'"));
  }
  std::string text;
  char buffer[1 << 16];
  size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, read);
  const int read_errno = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (read_errno != 0) {
    return absl::ErrnoToStatus(read_errno, absl::StrCat("cannot read data file '", path, "'"));
  }
  return ReadData(text, specs, path);
}

std::string WriteData(std::span<const DataSpec> specs, std::span<const Tensor> tensors) {
  AB_CHECK(ValidateDataSpecs(specs).ok(), "WriteData: invalid data declarations");
  AB_CHECK(specs.size() == tensors.size(), "WriteData: one tensor per declaration");
  std::string out = "{";
  for (size_t i = 0; i < specs.size(); ++i) {
    absl::StatusOr<std::vector<int64_t>> shape =
        ResolveShape(specs[i].shape, specs[i].name, specs, tensors.first(i));
    AB_CHECK(shape.ok(), "WriteData: a size of the tensors is not valid");
    const Resolved spec = WithShape(specs[i], *std::move(shape));
    const Tensor& t = tensors[i];
    AB_CHECK(t.batch() == 1 && t.type() == (TensorType{spec.dtype, spec.shape}),
             "WriteData: a tensor's type differs from its declaration or it has several lanes");
    absl::StrAppend(&out, i > 0 ? ",\n  " : "\n  ", Json(spec.name).dump(), ": ");
    int64_t flat = 0;
    WriteValue(spec, t, 0, flat, /*indent=*/2, out);
  }
  out += specs.empty() ? "}\n" : "\n}\n";
  return out;
}

}  // namespace autobatch::mcmc
