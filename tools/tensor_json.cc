// Batched tensors to and from JSON, for the command-line tool.
#include "tools/tensor_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/json_text.h"

namespace autobatch {
namespace {

nlohmann::json ElementToJson(const Tensor& t, int64_t index) {
  return VisitDType(t.dtype(), [&](auto zero) -> nlohmann::json {
    using T = decltype(zero);
    T v = t.data<T>()[index];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      return static_cast<double>(v);
    } else {
      return v;
    }
  });
}

// How much of a value an error message quotes.
constexpr size_t kExcerptChars = 200;

// Appends the JSON text of `j` to `out`, stopping once `out` holds
// kExcerptChars characters; returns false if it stopped early. Unlike
// nlohmann's dump(), whose recursion follows the nesting, every level here
// writes a bracket before descending, so it recurses at most kExcerptChars
// deep however deep `j` is.
bool AppendExcerpt(const nlohmann::json& j, std::string& out) {
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  if (out.size() >= kExcerptChars) return false;
  if (!j.is_array() && !j.is_object()) {
    out += j.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false, kReplace);
    return true;
  }
  out += j.is_array() ? '[' : '{';
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first) out += ',';
    first = false;
    if (j.is_object()) {
      out += nlohmann::json(it.key()).dump(/*indent=*/-1, /*indent_char=*/' ',
                                           /*ensure_ascii=*/false, kReplace);
      out += ':';
    }
    if (!AppendExcerpt(*it, out)) return false;
  }
  out += j.is_array() ? ']' : '}';
  return true;
}

// `j` as JSON text for an error message, cut to about kExcerptChars
// characters ("..." marks the cut).
std::string Excerpt(const nlohmann::json& j) {
  std::string out;
  if (AppendExcerpt(j, out) && out.size() <= kExcerptChars) return out;
  size_t cut = std::min(out.size(), kExcerptChars);
  // Not inside a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  out += "...";
  return out;
}

// Appends lane data of `shape` from nested arrays. Recurses at most
// shape.size() + 1 deep (CheckShape bounds it), however deep `j` is.
absl::Status Flatten(const nlohmann::json& j, const std::vector<int64_t>& shape,
                     size_t dim, const std::string& where,
                     std::vector<nlohmann::json>& out) {
  if (dim == shape.size()) {
    if (j.is_array() || j.is_object() || j.is_null()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected a number, got ", Excerpt(j)));
    }
    out.push_back(j);
    return absl::OkStatus();
  }
  if (!j.is_array() || static_cast<int64_t>(j.size()) != shape[dim]) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": expected an array of ", shape[dim], " elements, got ", Excerpt(j)));
  }
  for (size_t i = 0; i < j.size(); ++i) {
    AB_RETURN_IF_ERROR(
        Flatten(j[i], shape, dim + 1, absl::StrCat(where, "[", i, "]"), out));
  }
  return absl::OkStatus();
}

// The nesting of `lane` through its first elements, walked no deeper than
// kMaxJsonTensorRank + 1 levels (one more than CheckShape accepts).
std::vector<int64_t> ShapeOf(const nlohmann::json& lane) {
  std::vector<int64_t> shape;
  const nlohmann::json* j = &lane;
  while (j->is_array() && shape.size() <= static_cast<size_t>(kMaxJsonTensorRank)) {
    shape.push_back(static_cast<int64_t>(j->size()));
    if (j->empty()) break;
    j = &(*j)[0];
  }
  return shape;
}

// Rejects a shape no input may have: more than kMaxJsonTensorRank dimensions
// or more than kMaxJsonLaneElements elements per lane (counted without
// overflow; zero dimensions aside, so a zero cannot hide an overflow).
// `where` names where the shape came from.
absl::Status CheckShape(const std::vector<int64_t>& shape, const std::string& where) {
  if (shape.size() > static_cast<size_t>(kMaxJsonTensorRank)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": more than ", kMaxJsonTensorRank, " dimensions; an input has at most ",
        kMaxJsonTensorRank, " (check the nesting of the values' brackets, or \"shape\")"));
  }
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": shape [", absl::StrJoin(shape, ","),
          "] has a negative dimension; dimensions are non-negative integers"));
    }
    if (d > 0 && d > kMaxJsonLaneElements / elements) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": shape [", absl::StrJoin(shape, ","), "] has more than ",
          kMaxJsonLaneElements, " elements per lane, the limit for an input; check the "
          "dimensions"));
    }
    if (d > 0) elements *= d;
  }
  return absl::OkStatus();
}

absl::StatusOr<double> ToDouble(const nlohmann::json& j, const std::string& where) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      where, ": expected a number or \"nan\"/\"inf\"/\"-inf\", got ", Excerpt(j)));
}

}  // namespace

nlohmann::json TensorToJson(const Tensor& tensor) {
  nlohmann::json values = nlohmann::json::array();
  const int64_t n = tensor.lane_elements();
  for (int64_t lane = 0; lane < tensor.batch(); ++lane) {
    if (tensor.type().IsScalar()) {
      values.push_back(ElementToJson(tensor, lane));
      continue;
    }
    // Nest the flat lane by the event shape.
    std::vector<nlohmann::json> flat;
    for (int64_t i = 0; i < n; ++i) flat.push_back(ElementToJson(tensor, lane * n + i));
    for (int d = tensor.type().Rank() - 1; d >= 0; --d) {
      const int64_t size = tensor.type().shape[d];
      std::vector<nlohmann::json> grouped;
      for (size_t i = 0; i < flat.size(); i += static_cast<size_t>(size)) {
        nlohmann::json group = nlohmann::json::array();
        for (int64_t k = 0; k < size; ++k) group.push_back(flat[i + k]);
        grouped.push_back(std::move(group));
      }
      if (size == 0) grouped.assign(flat.empty() ? 1 : flat.size(), nlohmann::json::array());
      flat = std::move(grouped);
    }
    values.push_back(flat.empty() ? nlohmann::json::array() : flat.front());
  }
  return {{"dtype", std::string(DTypeName(tensor.dtype()))},
          {"shape", tensor.type().shape},
          {"values", std::move(values)}};
}

absl::StatusOr<Tensor> TensorFromJson(const nlohmann::json& json,
                                      const std::string& where,
                                      std::optional<TensorType> expected) {
  const nlohmann::json* lanes = &json;
  std::optional<DType> dtype;
  std::optional<std::vector<int64_t>> shape;
  if (expected) {
    dtype = expected->dtype;
    shape = expected->shape;
  }
  std::string shape_at = where;  // where the shape came from, for errors
  nlohmann::json one_lane;  // a uniform tensor's single lane
  if (json.is_object()) {
    if (json.contains("uniform")) {
      if (json.contains("values")) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": a tensor object has \"values\" (one per lane) or \"uniform\" (one "
            "value for every lane), not both"));
      }
      one_lane = nlohmann::json::array({json["uniform"]});
      lanes = &one_lane;
    } else if (!json.contains("values") || !json["values"].is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": a tensor object needs a \"values\" array of lanes (or a \"uniform\" "
          "value shared by every lane)"));
    } else {
      lanes = &json["values"];
    }
    if (json.contains("dtype")) {
      const nlohmann::json& name = json["dtype"];
      std::optional<DType> declared =
          name.is_string() ? DTypeFromName(name.get<std::string>()) : std::nullopt;
      if (!declared) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ".dtype: unknown dtype ", Excerpt(name),
            "; use f64, f32, i64, i32, bool or u64"));
      }
      dtype = declared;
      if (!shape) shape = std::vector<int64_t>{};
    }
    if (json.contains("shape")) {
      const nlohmann::json& dims = json["shape"];
      if (!dims.is_array()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".shape: expected an array of dimensions"));
      }
      std::vector<int64_t> declared;
      for (const auto& d : dims) {
        // nlohmann reads a literal >= 0 as unsigned and a negative one as
        // signed; get<int64_t>() of a huge unsigned one would wrap.
        if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0)) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ".shape: dimensions are non-negative integers, got ", Excerpt(d)));
        }
        if (d.get<uint64_t>() > static_cast<uint64_t>(kMaxJsonLaneElements)) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ".shape: dimension ", Excerpt(d),
              " is more than the limit of ", kMaxJsonLaneElements,
              " elements per lane; check the dimensions"));
        }
        declared.push_back(static_cast<int64_t>(d.get<uint64_t>()));
      }
      shape = std::move(declared);
      shape_at = absl::StrCat(where, ".shape");
    }
  }
  if (!lanes->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected an array with one value per lane"));
  }
  if (!shape) {
    shape = lanes->empty() ? std::vector<int64_t>{} : ShapeOf((*lanes)[0]);
    shape_at = absl::StrCat(where, "[0]");
  }
  // Before Flatten, whose recursion follows the shape.
  AB_RETURN_IF_ERROR(CheckShape(*shape, shape_at));
  std::vector<nlohmann::json> flat;
  for (size_t l = 0; l < lanes->size(); ++l) {
    AB_RETURN_IF_ERROR(
        Flatten((*lanes)[l], *shape, 0, absl::StrCat(where, "[", l, "]"), flat));
  }
  if (!dtype) {
    // Infer the dtype from the values.
    dtype = DType::kI64;
    bool all_bool = !lanes->empty();
    for (const auto& v : flat) {
      if (!v.is_boolean()) all_bool = false;
      if (v.is_number_float() || v.is_string()) dtype = DType::kF64;
    }
    if (all_bool) dtype = DType::kBool;
  }
  const TensorType type{*dtype, *shape};
  const std::string dtype_name(DTypeName(type.dtype));
  // Every lane matched the shape, so the tensor holds exactly the values read:
  // allocating it cannot be larger than the input.
  Tensor out(type, static_cast<int64_t>(lanes->size()));
  for (size_t i = 0; i < flat.size(); ++i) {
    const std::string at = absl::StrCat(where, " element ", i);
    const nlohmann::json& v = flat[i];
    absl::Status status = VisitDType(type.dtype, [&](auto zero) -> absl::Status {
      using T = decltype(zero);
      T* data = out.data<T>();
      if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) {
          return absl::InvalidArgumentError(absl::StrCat(at, ": expected true or false"));
        }
        data[i] = v.get<bool>();
      } else if constexpr (std::is_floating_point_v<T>) {
        AB_ASSIGN_OR_RETURN(double d, ToDouble(v, at));
        if constexpr (std::is_same_v<T, float>) {
          // FLT_MAX plus half its ulp, the smallest magnitude that rounds to
          // inf in f32: a finite value this large would silently become inf.
          constexpr double kF32Overflow = 0x1.ffffffp127;
          if (std::isfinite(d) && std::fabs(d) >= kF32Overflow) {
            return absl::InvalidArgumentError(absl::StrCat(
                at, ": ", Excerpt(v), " is outside the range of dtype f32 (largest ",
                std::numeric_limits<float>::max(),
                "); use dtype f64, or \"inf\"/\"-inf\" for an infinite value"));
          }
        }
        data[i] = static_cast<T>(d);
      } else {
        if (!v.is_number_integer()) {
          return absl::InvalidArgumentError(absl::StrCat(
              at, ": expected an integer for dtype ", dtype_name, ", got ", Excerpt(v),
              "; write whole numbers without a fraction or exponent, or use dtype f64"));
        }
        // nlohmann reads a literal >= 0 as uint64_t and a negative one as
        // int64_t; reading either as the other would wrap.
        const bool is_unsigned = v.is_number_unsigned();
        if (is_unsigned ? !std::in_range<T>(v.get<uint64_t>())
                        : !std::in_range<T>(v.get<int64_t>())) {
          std::string hint;
          if constexpr (std::is_same_v<T, int64_t>) {
            hint = "; declare \"dtype\": \"u64\" for integers above 9223372036854775807";
          } else if constexpr (std::is_same_v<T, uint64_t>) {
            hint = "; u64 holds no negative integers, declare \"dtype\": \"i64\" for them";
          }
          // The value as written, not as it would wrap.
          return absl::InvalidArgumentError(absl::StrCat(
              at, ": ", Excerpt(v), " does not fit dtype ", dtype_name, hint));
        }
        data[i] = is_unsigned ? static_cast<T>(v.get<uint64_t>())
                              : static_cast<T>(v.get<int64_t>());
      }
      return absl::OkStatus();
    });
    AB_RETURN_IF_ERROR(status);
  }
  return out;
}

absl::StatusOr<nlohmann::json> ReadInputsList(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open inputs file '", path, "'"));
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<nlohmann::json> parsed = ParseJsonText(text.str());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", parsed.status().message(),
        "; expected {\"inputs\": [[lane values...], ...]}"));
  }
  nlohmann::json& json = *parsed;
  if (json.is_object() && !json.contains("inputs")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected an object with an \"inputs\" array"));
  }
  nlohmann::json list = json.is_object() ? std::move(json.at("inputs")) : std::move(json);
  if (!list.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": \"inputs\" must be an array with one tensor per parameter"));
  }
  return list;
}

bool DeclaresDType(const nlohmann::json& input) {
  return input.is_object() && input.contains("dtype");
}

absl::StatusOr<std::vector<Tensor>> ReadInputsFile(
    const std::string& path, const std::vector<std::optional<TensorType>>& expected,
    std::vector<bool>* uniform) {
  if (uniform != nullptr) uniform->clear();
  AB_ASSIGN_OR_RETURN(const nlohmann::json inputs, ReadInputsList(path));
  const nlohmann::json* list = &inputs;
  std::vector<Tensor> out;
  for (size_t i = 0; i < list->size(); ++i) {
    std::optional<TensorType> want =
        i < expected.size() ? expected[i] : std::optional<TensorType>();
    AB_ASSIGN_OR_RETURN(Tensor t, TensorFromJson((*list)[i],
                                                 absl::StrCat(path, ": inputs[", i, "]"), want));
    if (uniform != nullptr) {
      uniform->push_back((*list)[i].is_object() && (*list)[i].contains("uniform"));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace autobatch
