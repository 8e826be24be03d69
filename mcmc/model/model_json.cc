// Model files (mcmc/model/model_json.h).
#include "mcmc/model/model_json.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/json.h"
#include "support/json_text.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

constexpr char kFormat[] = "autobatch-model";
constexpr int kVersion = 1;

nlohmann::json Bound(const std::optional<double>& bound) {
  return bound ? nlohmann::json(*bound) : nlohmann::json(nullptr);
}

nlohmann::json ShapeJson(const std::vector<Extent>& shape) {
  nlohmann::json json = nlohmann::json::array();
  for (const Extent& e : shape) {
    if (e.named()) {
      json.push_back(e.name);
    } else {
      json.push_back(e.value);
    }
  }
  return json;
}

// Clears the declared type of each data input (the entry's last
// parameters) whose shape names a size, so the file reads data of any size:
// the type comes from the program input when it is linked.
void ForgetDataSizes(const ProgramModel& model, Program& program) {
  const std::vector<DataSpec>& specs = model.data_specs();
  Function& entry = program.module.function(program.entry);
  const size_t first = entry.params.size() - specs.size();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (HasNamedExtent(specs[i].shape)) program.module.var(entry.params[first + i]).type.reset();
  }
}

nlohmann::json TransformJson(const Transform& t) {
  using Kind = Transform::Kind;
  switch (t.kind) {
    case Kind::kIdentity:
      return {{"kind", "identity"}};
    case Kind::kLowerBound:
      return {{"kind", "lower"}, {"lower", t.lower}};
    case Kind::kUpperBound:
      return {{"kind", "upper"}, {"upper", t.upper}};
    case Kind::kBounded:
      return {{"kind", "bounded"}, {"lower", t.lower}, {"upper", t.upper}};
    case Kind::kSimplex:
      return {{"kind", "simplex"}};
    case Kind::kOrdered:
      return {{"kind", "ordered"}};
  }
  return nullptr;
}

// Reads the fields of one file, naming each problem by its path.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  absl::Status Error(const std::string& path, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", path, ": ", what));
  }
  absl::StatusOr<const nlohmann::json*> Field(const nlohmann::json& object, const std::string& path,
                                              const char* key) const {
    if (!object.is_object() || !object.contains(key)) {
      return Error(path, absl::StrCat("missing field '", key, "'"));
    }
    return &object.at(key);
  }
  absl::StatusOr<std::string> String(const nlohmann::json& object, const std::string& path,
                                     const char* key) const {
    AB_ASSIGN_OR_RETURN(const nlohmann::json* v, Field(object, path, key));
    if (!v->is_string()) return Error(Join(path, key), "should be a string");
    return v->get<std::string>();
  }
  absl::StatusOr<double> Number(const nlohmann::json& object, const std::string& path,
                                const char* key) const {
    AB_ASSIGN_OR_RETURN(const nlohmann::json* v, Field(object, path, key));
    if (!v->is_number()) return Error(Join(path, key), "should be a number");
    return v->get<double>();
  }
  absl::StatusOr<std::optional<double>> OptionalNumber(const nlohmann::json& object,
                                                       const std::string& path,
                                                       const char* key) const {
    if (!object.contains(key) || object.at(key).is_null()) return std::optional<double>();
    AB_ASSIGN_OR_RETURN(double v, Number(object, path, key));
    return std::optional<double>(v);
  }
  // Extents that are numbers or names of size variables (data.h Extent).
  absl::StatusOr<std::vector<Extent>> Shape(const nlohmann::json& object,
                                            const std::string& path) const {
    AB_ASSIGN_OR_RETURN(const nlohmann::json* v, Field(object, path, "shape"));
    if (!v->is_array()) return Error(Join(path, "shape"), "should be an array of extents");
    std::vector<Extent> shape;
    for (size_t i = 0; i < v->size(); ++i) {
      const nlohmann::json& e = (*v)[i];
      if (e.is_number_integer()) {
        shape.emplace_back(e.get<int64_t>());
      } else if (e.is_string() && !e.get<std::string>().empty()) {
        shape.emplace_back(e.get<std::string>());
      } else {
        return Error(absl::StrCat(path, ".shape[", i, "]"),
                     "should be an integer extent or the name of a size variable");
      }
    }
    return shape;
  }
  // Extents that are numbers only (the generated quantities').
  absl::StatusOr<std::vector<int64_t>> IntShape(const nlohmann::json& object,
                                                const std::string& path) const {
    AB_ASSIGN_OR_RETURN(const nlohmann::json* v, Field(object, path, "shape"));
    if (!v->is_array()) return Error(Join(path, "shape"), "should be an array of extents");
    std::vector<int64_t> shape;
    for (const nlohmann::json& e : *v) {
      if (!e.is_number_integer()) {
        return Error(Join(path, "shape"), "should be an array of integer extents");
      }
      shape.push_back(e.get<int64_t>());
    }
    return shape;
  }
  absl::StatusOr<Transform> TransformOf(const nlohmann::json& object,
                                        const std::string& path) const {
    AB_ASSIGN_OR_RETURN(const nlohmann::json* t, Field(object, path, "transform"));
    const std::string at = Join(path, "transform");
    AB_ASSIGN_OR_RETURN(std::string kind, String(*t, at, "kind"));
    if (kind == "identity") return Transform::Identity();
    if (kind == "simplex") return Transform::Simplex();
    if (kind == "ordered") return Transform::Ordered();
    if (kind == "lower") {
      AB_ASSIGN_OR_RETURN(double a, Number(*t, at, "lower"));
      return Transform::LowerBound(a);
    }
    if (kind == "upper") {
      AB_ASSIGN_OR_RETURN(double b, Number(*t, at, "upper"));
      return Transform::UpperBound(b);
    }
    if (kind == "bounded") {
      AB_ASSIGN_OR_RETURN(double a, Number(*t, at, "lower"));
      AB_ASSIGN_OR_RETURN(double b, Number(*t, at, "upper"));
      return Transform::Bounded(a, b);
    }
    return Error(Join(at, "kind"),
                 absl::StrCat("unknown transform '", kind,
                              "' (identity, lower, upper, bounded, simplex, ordered)"));
  }
  static std::string Join(const std::string& path, const char* key) {
    return absl::StrCat(path, ".", key);
  }

 private:
  std::string source_;
};

// The optional "generated_quantities" object into `model`.
absl::Status ReadGenerated(const Reader& r, const nlohmann::json& gq, ProgramModel& model) {
  const std::string at = "generated_quantities";
  if (!gq.is_object()) return r.Error(at, "should be an object");
  AB_ASSIGN_OR_RETURN(const nlohmann::json* quantities, r.Field(gq, at, "quantities"));
  if (!quantities->is_array()) return r.Error(at + ".quantities", "should be an array");
  for (size_t i = 0; i < quantities->size(); ++i) {
    const std::string path = absl::StrCat(at, ".quantities[", i, "]");
    const nlohmann::json& q = (*quantities)[i];
    AB_ASSIGN_OR_RETURN(std::string name, r.String(q, path, "name"));
    AB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, r.IntShape(q, path));
    model.AddGenerated(std::move(name), std::move(shape));
  }
  AB_ASSIGN_OR_RETURN(const nlohmann::json* program_json, r.Field(gq, at, "program"));
  absl::StatusOr<Program> program = ProgramFromJson(*program_json);
  if (!program.ok()) return r.Error(at + ".program", std::string(program.status().message()));
  const size_t want = 3 + model.data_specs().size();
  const size_t got = program->module.function(program->entry).params.size();
  if (got != want) {
    return r.Error(at + ".program",
                   absl::StrCat("its entry takes ", got,
                                " inputs; generated quantities take x, rng_key, rng_counter "
                                "then the ",
                                model.data_specs().size(), " data variables (", want, ")"));
  }
  model.SetGeneratedQuantitiesProgram(*std::move(program));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<nlohmann::json> ModelToJson(const ProgramModel& model) {
  absl::StatusOr<Program> built = model.LogDensityProgram();
  if (built.status().code() == absl::StatusCode::kFailedPrecondition) {
    return absl::FailedPreconditionError(absl::StrCat(
        built.status().message(),
        " (a model file fixes the parameters' sizes: it is written for the data set)"));
  }
  AB_ASSIGN_OR_RETURN(Program program, std::move(built));
  ForgetDataSizes(model, program);
  nlohmann::json parameters = nlohmann::json::array();
  for (const ParameterSpec& p : model.parameters()) {
    parameters.push_back(
        {{"name", p.name}, {"shape", p.shape}, {"transform", TransformJson(p.transform)}});
  }
  nlohmann::json data = nlohmann::json::array();
  for (const DataSpec& d : model.data_specs()) {
    data.push_back({{"name", d.name},
                    {"dtype", std::string(DTypeName(d.dtype))},
                    {"shape", ShapeJson(d.shape)},
                    {"lower", Bound(d.lower)},
                    {"upper", Bound(d.upper)},
                    {"allow_nonfinite", d.allow_nonfinite}});
  }
  nlohmann::json json{{"format", kFormat},       {"version", kVersion},
                      {"name", model.name()},    {"parameters", std::move(parameters)},
                      {"data", std::move(data)}, {"program", ProgramToJson(program)}};
  if (!model.generated().empty()) {
    AB_ASSIGN_OR_RETURN(Program generated_program, model.GeneratedQuantitiesProgram());
    ForgetDataSizes(model, generated_program);
    nlohmann::json quantities = nlohmann::json::array();
    for (const ProgramModel::GeneratedSpec& g : model.generated()) {
      quantities.push_back({{"name", g.name}, {"shape", g.shape}});
    }
    json["generated_quantities"] = {{"quantities", std::move(quantities)},
                                    {"program", ProgramToJson(generated_program)}};
  }
  return json;
}

absl::StatusOr<std::unique_ptr<ProgramModel>> ModelFromJson(std::string_view text,
                                                            std::string_view source_name) {
  const Reader r(source_name);
  absl::StatusOr<nlohmann::json> parsed = ParseJsonText(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(source_name), ": ", parsed.status().message()));
  }
  const nlohmann::json& json = *parsed;
  if (!json.is_object()) return r.Error("(top level)", "should be an object");
  AB_ASSIGN_OR_RETURN(std::string format, r.String(json, "(top level)", "format"));
  if (format != kFormat) {
    return r.Error("format", absl::StrCat("is '", format, "'; a model file says '", kFormat,
                                          "' (an IR program alone is not a model)"));
  }
  AB_ASSIGN_OR_RETURN(const nlohmann::json* version, r.Field(json, "(top level)", "version"));
  if (!version->is_number_integer() || version->get<int64_t>() != kVersion) {
    return r.Error("version",
                   absl::StrCat("is ", version->dump(), "; this reader reads version ", kVersion));
  }
  AB_ASSIGN_OR_RETURN(std::string name, r.String(json, "(top level)", "name"));
  auto model = std::make_unique<ProgramModel>(name);
  AB_ASSIGN_OR_RETURN(const nlohmann::json* parameters, r.Field(json, "(top level)", "parameters"));
  if (!parameters->is_array()) return r.Error("parameters", "should be an array");
  for (size_t i = 0; i < parameters->size(); ++i) {
    const std::string path = absl::StrCat("parameters[", i, "]");
    const nlohmann::json& p = (*parameters)[i];
    AB_ASSIGN_OR_RETURN(std::string pname, r.String(p, path, "name"));
    AB_ASSIGN_OR_RETURN(std::vector<Extent> shape, r.Shape(p, path));
    AB_ASSIGN_OR_RETURN(Transform transform, r.TransformOf(p, path));
    model->AddParameter(std::move(pname), std::move(shape), transform);
  }
  AB_ASSIGN_OR_RETURN(const nlohmann::json* data, r.Field(json, "(top level)", "data"));
  if (!data->is_array()) return r.Error("data", "should be an array");
  for (size_t i = 0; i < data->size(); ++i) {
    const std::string path = absl::StrCat("data[", i, "]");
    const nlohmann::json& d = (*data)[i];
    DataSpec spec;
    AB_ASSIGN_OR_RETURN(spec.name, r.String(d, path, "name"));
    AB_ASSIGN_OR_RETURN(std::string dtype, r.String(d, path, "dtype"));
    const std::optional<DType> parsed_dtype = DTypeFromName(dtype);
    if (!parsed_dtype) return r.Error(path + ".dtype", absl::StrCat("unknown dtype '", dtype, "'"));
    spec.dtype = *parsed_dtype;
    AB_ASSIGN_OR_RETURN(spec.shape, r.Shape(d, path));
    AB_ASSIGN_OR_RETURN(spec.lower, r.OptionalNumber(d, path, "lower"));
    AB_ASSIGN_OR_RETURN(spec.upper, r.OptionalNumber(d, path, "upper"));
    if (d.contains("allow_nonfinite")) {
      if (!d.at("allow_nonfinite").is_boolean()) {
        return r.Error(path + ".allow_nonfinite", "should be true or false");
      }
      spec.allow_nonfinite = d.at("allow_nonfinite").get<bool>();
    }
    model->AddData(std::move(spec));
  }
  AB_ASSIGN_OR_RETURN(const nlohmann::json* program_json, r.Field(json, "(top level)", "program"));
  absl::StatusOr<Program> program = ProgramFromJson(*program_json);
  if (!program.ok()) return r.Error("program", std::string(program.status().message()));
  const size_t want = 1 + data->size();
  const size_t got = program->module.function(program->entry).params.size();
  if (got != want) {
    return r.Error("program", absl::StrCat("its entry takes ", got,
                                           " inputs; a log density "
                                           "takes q then the ",
                                           data->size(), " data variables (", want, ")"));
  }
  model->SetLogDensityProgram(*std::move(program));
  if (json.contains("generated_quantities")) {
    AB_RETURN_IF_ERROR(ReadGenerated(r, json.at("generated_quantities"), *model));
  }
  if (absl::Status valid = model->Validate(); !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(source_name), ": ", valid.message()));
  }
  // Link once now, so a program that cannot be imported (user kernels, a
  // wrong stage, inputs that are not uniform) is an error of the file.
  // (Not when a parameter's size comes from the data: Link needs the data.)
  Context ctx;
  if (absl::StatusOr<ProgramModel::Linked> linked = model->Link(ctx);
      !linked.ok() && linked.status().code() != absl::StatusCode::kFailedPrecondition) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(source_name), ": ", linked.status().message()));
  }
  // The same for the generated quantities, and their types (they need no
  // data to compile).
  if (!model->generated().empty()) {
    if (absl::Status checked = model->CheckGenerated(); !checked.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source_name), ": generated_quantities: ", checked.message()));
    }
  }
  return model;
}

}  // namespace autobatch::mcmc
