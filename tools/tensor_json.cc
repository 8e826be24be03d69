// Batched tensors to and from JSON, for the command-line tool.
#include "tools/tensor_json.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"

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

// Appends lane data of `shape` from nested arrays.
absl::Status Flatten(const nlohmann::json& j, const std::vector<int64_t>& shape,
                     size_t dim, const std::string& where,
                     std::vector<nlohmann::json>& out) {
  if (dim == shape.size()) {
    if (j.is_array() || j.is_object() || j.is_null()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected a number, got ", j.dump()));
    }
    out.push_back(j);
    return absl::OkStatus();
  }
  if (!j.is_array() || static_cast<int64_t>(j.size()) != shape[dim]) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": expected an array of ", shape[dim], " elements, got ", j.dump()));
  }
  for (size_t i = 0; i < j.size(); ++i) {
    AB_RETURN_IF_ERROR(
        Flatten(j[i], shape, dim + 1, absl::StrCat(where, "[", i, "]"), out));
  }
  return absl::OkStatus();
}

std::vector<int64_t> ShapeOf(const nlohmann::json& lane) {
  std::vector<int64_t> shape;
  const nlohmann::json* j = &lane;
  while (j->is_array()) {
    shape.push_back(static_cast<int64_t>(j->size()));
    if (j->empty()) break;
    j = &(*j)[0];
  }
  return shape;
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
      where, ": expected a number or \"nan\"/\"inf\"/\"-inf\", got ", j.dump()));
}

// Parses nothing: records the parser's description of the first syntax error
// (its position and what it expected), which a parse without exceptions does
// not give.
class SyntaxErrorFinder final : public nlohmann::json::json_sax_t {
 public:
  using Json = nlohmann::json;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(Json::number_integer_t) override { return true; }
  bool number_unsigned(Json::number_unsigned_t) override { return true; }
  bool number_float(Json::number_float_t, const Json::string_t&) override { return true; }
  bool string(Json::string_t&) override { return true; }
  bool binary(Json::binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(Json::string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& error) override {
    message_ = error.what();
    return false;
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

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
  std::optional<TensorType> type = expected;
  if (json.is_object()) {
    if (!json.contains("values") || !json["values"].is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": a tensor object needs a \"values\" array of lanes"));
    }
    lanes = &json["values"];
    if (json.contains("dtype")) {
      if (!json["dtype"].is_string() ||
          !DTypeFromName(json["dtype"].get<std::string>())) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ".dtype: unknown dtype ", json["dtype"].dump(),
            "; use f64, f32, i64, i32, bool or u64"));
      }
      TensorType declared{*DTypeFromName(json["dtype"].get<std::string>()), {}};
      if (json.contains("shape")) {
        if (!json["shape"].is_array()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ".shape: expected an array of dimensions"));
        }
        for (const auto& d : json["shape"]) {
          if (!d.is_number_integer() || d.get<int64_t>() < 0) {
            return absl::InvalidArgumentError(
                absl::StrCat(where, ".shape: dimensions are non-negative integers"));
          }
          declared.shape.push_back(d.get<int64_t>());
        }
      } else if (type) {
        declared.shape = type->shape;
      }
      type = declared;
    }
  }
  if (!lanes->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected an array with one value per lane"));
  }
  if (!type) {
    // Infer the dtype from the values.
    DType dtype = DType::kI64;
    bool all_bool = !lanes->empty();
    std::vector<int64_t> shape = lanes->empty() ? std::vector<int64_t>{}
                                                : ShapeOf((*lanes)[0]);
    std::vector<nlohmann::json> flat;
    for (size_t l = 0; l < lanes->size(); ++l) {
      AB_RETURN_IF_ERROR(Flatten((*lanes)[l], shape, 0, absl::StrCat(where, "[", l, "]"), flat));
    }
    for (const auto& v : flat) {
      if (!v.is_boolean()) all_bool = false;
      if (v.is_number_float() || v.is_string()) dtype = DType::kF64;
    }
    if (all_bool) dtype = DType::kBool;
    type = TensorType{dtype, shape};
  }
  Tensor out(*type, static_cast<int64_t>(lanes->size()));
  std::vector<nlohmann::json> flat;
  for (size_t l = 0; l < lanes->size(); ++l) {
    AB_RETURN_IF_ERROR(
        Flatten((*lanes)[l], type->shape, 0, absl::StrCat(where, "[", l, "]"), flat));
  }
  for (size_t i = 0; i < flat.size(); ++i) {
    const std::string at = absl::StrCat(where, " element ", i);
    const nlohmann::json& v = flat[i];
    absl::Status status = VisitDType(type->dtype, [&](auto zero) -> absl::Status {
      using T = decltype(zero);
      T* data = out.data<T>();
      if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) {
          return absl::InvalidArgumentError(absl::StrCat(at, ": expected true or false"));
        }
        data[i] = v.get<bool>();
      } else if constexpr (std::is_floating_point_v<T>) {
        AB_ASSIGN_OR_RETURN(double d, ToDouble(v, at));
        data[i] = static_cast<T>(d);
      } else {
        if (!v.is_number_integer()) {
          return absl::InvalidArgumentError(absl::StrCat(
              at, ": expected an integer for dtype ", std::string(DTypeName(type->dtype)),
              ", got ", v.dump()));
        }
        if constexpr (std::is_same_v<T, uint64_t>) {
          data[i] = v.get<uint64_t>();
        } else {
          int64_t x = v.get<int64_t>();
          if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
            return absl::InvalidArgumentError(absl::StrCat(
                at, ": ", x, " does not fit dtype ", std::string(DTypeName(type->dtype))));
          }
          data[i] = static_cast<T>(x);
        }
      }
      return absl::OkStatus();
    });
    AB_RETURN_IF_ERROR(status);
  }
  return out;
}

absl::StatusOr<std::vector<Tensor>> ReadInputsFile(
    const std::string& path, const std::vector<std::optional<TensorType>>& expected) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open inputs file '", path, "'"));
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str(), nullptr,
                                              /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    SyntaxErrorFinder finder;
    nlohmann::json::sax_parse(text.str(), &finder);
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not valid JSON (", finder.message(),
        "); expected {\"inputs\": [[lane values...], ...]}"));
  }
  const nlohmann::json* list = &json;
  if (json.is_object()) {
    if (!json.contains("inputs")) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": expected an object with an \"inputs\" array"));
    }
    list = &json["inputs"];
  }
  if (!list->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": \"inputs\" must be an array with one tensor per parameter"));
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < list->size(); ++i) {
    std::optional<TensorType> want =
        i < expected.size() ? expected[i] : std::optional<TensorType>();
    AB_ASSIGN_OR_RETURN(Tensor t, TensorFromJson((*list)[i],
                                                 absl::StrCat(path, ": inputs[", i, "]"), want));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace autobatch
