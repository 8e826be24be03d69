// The versioned JSON form of the IR (format documented in ir/json.h).
#include "ir/json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/control_ops.h"
#include "support/json_text.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

using Json = nlohmann::json;

// The spellings of the control ops of `form` (ir/control_ops.def), each
// between `quote`s, as "a, b or c".
std::string SpellingList(ControlForm form, std::string_view quote) {
  std::vector<std::string_view> spellings;
  for (const ControlOpInfo& info : AllControlOps()) {
    if (info.form == form) spellings.push_back(info.spelling);
  }
  std::string out;
  for (size_t i = 0; i < spellings.size(); ++i) {
    const char* separator = i == 0 ? "" : i + 1 == spellings.size() ? " or " : ", ";
    absl::StrAppend(&out, separator, std::string(quote), std::string(spellings[i]),
                    std::string(quote));
  }
  return out;
}

// ---------------------------------------------------------------- writing --
// The writer is a template so that DumpProgramJson can keep the documented
// field order (ordered_json) while ProgramToJson returns a plain json.

template <typename J>
J FloatToJson(double value) {
  if (std::isnan(value)) return J("nan");
  if (std::isinf(value)) return J(value > 0 ? "inf" : "-inf");
  return J(value);
}

template <typename J, typename Tag>
J IdsToJson(const std::vector<Id<Tag>>& ids) {
  J out = J::array();
  for (Id<Tag> id : ids) out.push_back(id.value);
  return out;
}

template <typename J>
J TypesToJson(const std::vector<TensorType>& types) {
  J out = J::array();
  for (const TensorType& t : types) out.push_back(t.ToString());
  return out;
}

template <typename J>
void PutLoc(J& object, const SourceLoc& loc) {
  if (loc == SourceLoc{}) return;
  J j = J::object();
  j["file"] = loc.file;
  j["line"] = loc.line;
  object["loc"] = std::move(j);
}

template <typename J>
J LiteralToJson(const Literal& literal) {
  J j = J::object();
  j["dtype"] = std::string(DTypeName(literal.type.dtype));
  j["shape"] = literal.type.shape;
  J values = J::array();
  if (IsFloat(literal.type.dtype)) {
    for (double d : literal.floats) values.push_back(FloatToJson<J>(d));
  } else if (literal.type.dtype == DType::kU64) {
    for (int64_t i : literal.ints) values.push_back(static_cast<uint64_t>(i));
  } else {
    for (int64_t i : literal.ints) values.push_back(i);
  }
  j["values"] = std::move(values);
  return j;
}

template <typename J>
void PutAttributes(J& op, const Attributes& attrs) {
  J j = J::object();
  if (attrs.literal) j["literal"] = LiteralToJson<J>(*attrs.literal);
  if (attrs.dtype) j["dtype"] = std::string(DTypeName(*attrs.dtype));
  if (!attrs.ints.empty()) j["ints"] = attrs.ints;
  if (attrs.matrix) {
    J m = J::object();
    m["rows"] = attrs.matrix->rows;
    m["cols"] = attrs.matrix->cols;
    J data = J::array();
    for (double d : attrs.matrix->data) data.push_back(FloatToJson<J>(d));
    m["data"] = std::move(data);
    j["matrix"] = std::move(m);
  }
  if (!attrs.kernel.empty()) j["kernel"] = attrs.kernel;
  if (!j.empty()) op["attrs"] = std::move(j);
}

template <typename J>
J OpToJson(const Op& op) {
  J j = J::object();
  std::visit(Overloaded{
                 [&](const PrimOp& o) {
                   AB_DCHECK(static_cast<int>(o.prim) >= 0 &&
                                 o.prim <= Primitive::kUserKernel,
                             "PrimOp with an out-of-range Primitive value");
                   j["kind"] = "prim";
                   j["prim"] = std::string(Info(o.prim).name);
                   j["inputs"] = IdsToJson<J>(o.inputs);
                   j["outputs"] = IdsToJson<J>(o.outputs);
                   PutAttributes(j, o.attrs);
                   if (!o.in_place.empty()) j["in_place"] = IdsToJson<J>(o.in_place);
                 },
                 [&](const CallOp& o) {
                   j["kind"] = std::string(Info(KindOf(o)).spelling);
                   j["callee"] = o.callee.value;
                   j["args"] = IdsToJson<J>(o.args);
                   j["results"] = IdsToJson<J>(o.results);
                 },
                 [&](const PopOp& o) {
                   j["kind"] = std::string(Info(KindOf(o)).spelling);
                   j["vars"] = IdsToJson<J>(o.vars);
                 },
                 [&](const TapePushOp& o) {
                   j["kind"] = std::string(Info(KindOf(o)).spelling);
                   j["tape"] = o.tape.value;
                   j["value"] = o.value.value;
                 },
                 [&](const TapePopOp& o) {
                   j["kind"] = std::string(Info(KindOf(o)).spelling);
                   j["tape"] = o.tape.value;
                   j["result"] = o.result.value;
                 },
             },
             op);
  PutLoc(j, LocOf(op));
  return j;
}

template <typename J>
J TerminatorToJson(const Terminator& t) {
  J j = J::object();
  j["kind"] = std::string(Info(KindOf(t)).spelling);
  std::visit(Overloaded{
                 [&](const Branch& b) {
                   j["cond"] = b.cond.value;
                   j["then"] = b.then_block.value;
                   j["else"] = b.else_block.value;
                 },
                 [&](const Goto& g) { j["target"] = g.target.value; },
                 [](const Return&) {},
                 [&](const PushGoto& p) {
                   j["callee"] = p.callee.value;
                   j["return_to"] = p.return_to.value;
                 },
                 [](const IndirectGoto&) {},
                 [](const Halt&) {},
             },
             t);
  return j;
}

template <typename J>
J FunctionToJson(const Module& module, const Function& f) {
  J j = J::object();
  j["name"] = f.name;
  j["params"] = IdsToJson<J>(f.params);
  j["results"] = IdsToJson<J>(f.results);
  if (f.signature) {
    J sig = J::object();
    sig["params"] = TypesToJson<J>(f.signature->params);
    sig["results"] = TypesToJson<J>(f.signature->results);
    j["signature"] = std::move(sig);
  }
  if (f.gradient_of) {
    J grad = J::object();
    const int32_t primal = f.gradient_of->function.value;
    // By name (names are unique, verifier P2); an index out of range, which
    // the reader refuses, is written as the number.
    if (primal >= 0 && static_cast<size_t>(primal) < module.functions.size()) {
      grad["function"] = module.functions[primal].name;
    } else {
      grad["function"] = primal;
    }
    J wrt = J::array();
    for (int32_t i : f.gradient_of->wrt) wrt.push_back(i);
    grad["wrt"] = std::move(wrt);
    j["gradient_of"] = std::move(grad);
  }
  PutLoc(j, f.loc);
  J blocks = J::array();
  for (const Block& block : f.blocks) {
    J b = J::object();
    if (!block.label.empty()) b["label"] = block.label;
    J ops = J::array();
    for (const Op& op : block.ops) ops.push_back(OpToJson<J>(op));
    b["ops"] = std::move(ops);
    b["terminator"] = TerminatorToJson<J>(block.terminator);
    PutLoc(b, block.loc);
    blocks.push_back(std::move(b));
  }
  j["blocks"] = std::move(blocks);
  return j;
}

template <typename J>
J ToJson(const Program& program) {
  J root = J::object();
  root["format"] = std::string(kJsonFormatName);
  root["version"] = kJsonFormatVersion;
  root["stage"] = std::string(StageName(program.stage));
  root["entry"] = program.entry.value;
  // Storage classes mean something from stage allocated on; earlier, only a
  // class that differs from the default needs writing.
  bool allocated = program.stage == Stage::kAllocated || program.stage == Stage::kLowered;
  J variables = J::array();
  for (const Variable& v : program.module.variables) {
    J j = J::object();
    j["name"] = v.name;
    j["function"] = v.function.value;
    if (v.type) j["type"] = v.type->ToString();
    if (allocated || v.storage != StorageClass::kFull) {
      j["storage"] = std::string(StorageClassName(v.storage));
    }
    if (v.uniform) j["uniform"] = true;
    variables.push_back(std::move(j));
  }
  root["variables"] = std::move(variables);
  J functions = J::array();
  for (const Function& f : program.module.functions) {
    functions.push_back(FunctionToJson<J>(program.module, f));
  }
  root["functions"] = std::move(functions);
  J kernels = J::array();
  for (const auto& [name, sig] : program.module.kernels) {
    J k = J::object();
    k["name"] = name;
    k["inputs"] = TypesToJson<J>(sig.inputs);
    k["outputs"] = TypesToJson<J>(sig.outputs);
    k["bit_stable"] = sig.bit_stable;
    k["pure"] = sig.pure;
    if (!sig.vjp.empty()) k["vjp"] = sig.vjp;
    kernels.push_back(std::move(k));
  }
  root["kernels"] = std::move(kernels);
  return root;
}

// ---------------------------------------------------------------- reading --

std::string At(const std::string& path, std::string_view key) {
  return absl::StrCat(path, "/", std::string(key));
}
std::string At(const std::string& path, size_t index) {
  return absl::StrCat(path, "/", index);
}

absl::Status Invalid(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid autobatch IR JSON at ", path.empty() ? "/" : path, ": ",
                   std::string(what)));
}

absl::Status WrongKind(const Json& j, const std::string& path, std::string_view expected) {
  return Invalid(path, absl::StrCat("expected ", std::string(expected), ", got ",
                                    j.type_name()));
}

absl::Status ExpectObject(const Json& j, const std::string& path) {
  return j.is_object() ? absl::OkStatus() : WrongKind(j, path, "an object");
}
absl::Status ExpectArray(const Json& j, const std::string& path) {
  return j.is_array() ? absl::OkStatus() : WrongKind(j, path, "an array");
}

// `object` must be an object. A missing required field is reported at the
// path the field would have.
absl::StatusOr<const Json*> Required(const Json& object, const std::string& path,
                                     std::string_view key) {
  auto it = object.find(key);
  if (it == object.end()) return Invalid(At(path, key), "required field is missing");
  return &*it;
}

// nullptr if the optional field is absent or null.
const Json* Optional(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<std::string> ReadString(const Json& j, const std::string& path) {
  if (!j.is_string()) return WrongKind(j, path, "a string");
  return j.get_ref<const Json::string_t&>();
}

absl::StatusOr<bool> ReadBool(const Json& j, const std::string& path) {
  if (!j.is_boolean()) return WrongKind(j, path, "true or false");
  return j.get<bool>();
}

absl::StatusOr<int64_t> ReadInt(const Json& j, const std::string& path) {
  if (j.is_number_unsigned()) {
    auto value = j.get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Invalid(path, absl::StrCat("integer ", value, " is out of range"));
    }
    return static_cast<int64_t>(value);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return WrongKind(j, path, "an integer");
}

absl::StatusOr<int> ReadInt32(const Json& j, const std::string& path) {
  AB_ASSIGN_OR_RETURN(int64_t value, ReadInt(j, path));
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    return Invalid(path, absl::StrCat("integer ", value, " does not fit in 32 bits"));
  }
  return static_cast<int>(value);
}

absl::StatusOr<int64_t> ReadNonNegative(const Json& j, const std::string& path) {
  AB_ASSIGN_OR_RETURN(int64_t value, ReadInt(j, path));
  if (value < 0) return Invalid(path, absl::StrCat("expected a size >= 0, got ", value));
  return value;
}

// An index into a table of `size` entries; `table` says which, for the
// message (e.g. "the program has 3 functions").
absl::StatusOr<int32_t> ReadIndex(const Json& j, const std::string& path, size_t size,
                                  std::string_view what, std::string_view table) {
  AB_ASSIGN_OR_RETURN(int64_t value, ReadInt(j, path));
  if (value < 0 || static_cast<uint64_t>(value) >= size) {
    return Invalid(path, absl::StrCat(std::string(what), " index ", value,
                                      " is out of range: ", std::string(table)));
  }
  return static_cast<int32_t>(value);
}

absl::StatusOr<double> ReadFloat(const Json& j, const std::string& path) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const Json::string_t&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    return Invalid(path, absl::StrCat("expected a number, \"nan\", \"inf\" or \"-inf\", got ",
                                      QuotedExcerpt(s)));
  }
  return WrongKind(j, path, "a number, \"nan\", \"inf\" or \"-inf\"");
}

absl::StatusOr<std::vector<int64_t>> ReadInts(const Json& j, const std::string& path) {
  AB_RETURN_IF_ERROR(ExpectArray(j, path));
  std::vector<int64_t> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    AB_ASSIGN_OR_RETURN(int64_t value, ReadInt(j[i], At(path, i)));
    out.push_back(value);
  }
  return out;
}

// Number of elements of `shape`, or nullopt if it overflows int64.
std::optional<int64_t> CheckedNumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

absl::StatusOr<DType> ReadDType(const Json& j, const std::string& path) {
  AB_ASSIGN_OR_RETURN(std::string name, ReadString(j, path));
  std::optional<DType> dtype = DTypeFromName(name);
  if (!dtype) {
    return Invalid(path, absl::StrCat("unknown dtype ", QuotedExcerpt(name),
                                      "; known dtypes are f64, f32, i64, i32, bool, u64"));
  }
  return *dtype;
}

absl::StatusOr<TensorType> ReadType(const Json& j, const std::string& path) {
  AB_ASSIGN_OR_RETURN(std::string text, ReadString(j, path));
  std::string dtype_name = text.substr(0, text.find('['));
  if (!DTypeFromName(dtype_name)) {
    return Invalid(path, absl::StrCat("unknown dtype ", QuotedExcerpt(dtype_name), " in type ",
                                      QuotedExcerpt(text),
                                      "; known dtypes are f64, f32, i64, i32, bool, u64"));
  }
  std::optional<TensorType> type = ParseTensorType(text);
  if (!type) {
    return Invalid(path, absl::StrCat("malformed type ", QuotedExcerpt(text),
                                      "; expected a dtype and optional shape such as "
                                      "\"f64\" or \"i64[2,3]\""));
  }
  if (!CheckedNumElements(type->shape)) {
    return Invalid(path, absl::StrCat("type ", QuotedExcerpt(text), " has too many elements"));
  }
  return *std::move(type);
}

absl::StatusOr<std::vector<TensorType>> ReadTypes(const Json& j, const std::string& path) {
  AB_RETURN_IF_ERROR(ExpectArray(j, path));
  std::vector<TensorType> out;
  for (size_t i = 0; i < j.size(); ++i) {
    AB_ASSIGN_OR_RETURN(TensorType t, ReadType(j[i], At(path, i)));
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<SourceLoc> ReadOptionalLoc(const Json& object, const std::string& path) {
  const Json* j = Optional(object, "loc");
  if (j == nullptr) return SourceLoc{};
  std::string loc_path = At(path, "loc");
  AB_RETURN_IF_ERROR(ExpectObject(*j, loc_path));
  SourceLoc loc;
  AB_ASSIGN_OR_RETURN(const Json* file, Required(*j, loc_path, "file"));
  AB_ASSIGN_OR_RETURN(loc.file, ReadString(*file, At(loc_path, "file")));
  AB_ASSIGN_OR_RETURN(const Json* line, Required(*j, loc_path, "line"));
  AB_ASSIGN_OR_RETURN(loc.line, ReadInt32(*line, At(loc_path, "line")));
  return loc;
}

class ProgramReader {
 public:
  absl::StatusOr<Program> Read(const Json& root) {
    const std::string path;
    AB_RETURN_IF_ERROR(ExpectObject(root, path));
    AB_RETURN_IF_ERROR(ReadHeader(root));

    AB_ASSIGN_OR_RETURN(const Json* stage_json, Required(root, path, "stage"));
    AB_ASSIGN_OR_RETURN(std::string stage_name, ReadString(*stage_json, "/stage"));
    std::optional<Stage> stage = StageFromName(stage_name);
    if (!stage) {
      return Invalid("/stage", absl::StrCat("unknown stage ", QuotedExcerpt(stage_name),
                                            "; expected untyped, typed, allocated or lowered"));
    }
    program_.stage = *stage;

    AB_ASSIGN_OR_RETURN(const Json* functions, Required(root, path, "functions"));
    AB_RETURN_IF_ERROR(ExpectArray(*functions, "/functions"));
    AB_ASSIGN_OR_RETURN(const Json* variables, Required(root, path, "variables"));
    AB_RETURN_IF_ERROR(ExpectArray(*variables, "/variables"));
    num_functions_ = functions->size();
    num_variables_ = variables->size();

    AB_ASSIGN_OR_RETURN(const Json* entry, Required(root, path, "entry"));
    AB_ASSIGN_OR_RETURN(int32_t entry_index, FunctionIndex(*entry, "/entry"));
    program_.entry = FunctionId(entry_index);

    if (const Json* kernels = Optional(root, "kernels")) {
      AB_RETURN_IF_ERROR(ReadKernels(*kernels, "/kernels"));
    }
    for (size_t i = 0; i < variables->size(); ++i) {
      AB_RETURN_IF_ERROR(ReadVariable((*variables)[i], At("/variables", i)));
    }
    for (size_t i = 0; i < functions->size(); ++i) {
      AB_RETURN_IF_ERROR(ReadFunction((*functions)[i], At("/functions", i)));
    }
    for (size_t i = 0; i < functions->size(); ++i) {
      if (const Json* grad = Optional((*functions)[i], "gradient_of")) {
        AB_RETURN_IF_ERROR(ReadGradientOf(*grad, At(At("/functions", i), "gradient_of"),
                                          program_.module.functions[i]));
      }
    }
    return std::move(program_);
  }

 private:
  absl::Status ReadHeader(const Json& root) {
    AB_ASSIGN_OR_RETURN(const Json* format, Required(root, "", "format"));
    AB_ASSIGN_OR_RETURN(std::string name, ReadString(*format, "/format"));
    if (name != kJsonFormatName) {
      return Invalid("/format", absl::StrCat("unknown format ", QuotedExcerpt(name),
                                             "; expected \"", std::string(kJsonFormatName), "\""));
    }
    AB_ASSIGN_OR_RETURN(const Json* version_json, Required(root, "", "version"));
    AB_ASSIGN_OR_RETURN(int64_t version, ReadInt(*version_json, "/version"));
    if (version != kJsonFormatVersion) {
      return Invalid("/version",
                     absl::StrCat("unsupported version ", version, "; this build reads version ",
                                  kJsonFormatVersion, " (a newer autobatch may read it)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int32_t> FunctionIndex(const Json& j, const std::string& path) const {
    return ReadIndex(j, path, num_functions_, "function",
                     absl::StrCat("the program has ", num_functions_, " functions"));
  }

  absl::StatusOr<VarId> VarIndex(const Json& j, const std::string& path) const {
    AB_ASSIGN_OR_RETURN(int32_t index,
                        ReadIndex(j, path, num_variables_, "variable",
                                  absl::StrCat("the program has ", num_variables_, " variables")));
    return VarId(index);
  }

  // The variable index in field `key` of `object` (required).
  absl::StatusOr<VarId> VarField(const Json& object, const std::string& path,
                                 std::string_view key) const {
    AB_ASSIGN_OR_RETURN(const Json* j, Required(object, path, key));
    return VarIndex(*j, At(path, key));
  }

  absl::StatusOr<std::vector<VarId>> VarList(const Json& object, const std::string& path,
                                             std::string_view key) const {
    AB_ASSIGN_OR_RETURN(const Json* j, Required(object, path, key));
    std::string list_path = At(path, key);
    AB_RETURN_IF_ERROR(ExpectArray(*j, list_path));
    std::vector<VarId> out;
    out.reserve(j->size());
    for (size_t i = 0; i < j->size(); ++i) {
      AB_ASSIGN_OR_RETURN(VarId id, VarIndex((*j)[i], At(list_path, i)));
      out.push_back(id);
    }
    return out;
  }

  absl::Status ReadKernels(const Json& kernels, const std::string& path) {
    AB_RETURN_IF_ERROR(ExpectArray(kernels, path));
    for (size_t i = 0; i < kernels.size(); ++i) {
      const Json& k = kernels[i];
      std::string k_path = At(path, i);
      AB_RETURN_IF_ERROR(ExpectObject(k, k_path));
      AB_ASSIGN_OR_RETURN(const Json* name_json, Required(k, k_path, "name"));
      AB_ASSIGN_OR_RETURN(std::string name, ReadString(*name_json, At(k_path, "name")));
      KernelSignature sig;
      AB_ASSIGN_OR_RETURN(const Json* inputs, Required(k, k_path, "inputs"));
      AB_ASSIGN_OR_RETURN(sig.inputs, ReadTypes(*inputs, At(k_path, "inputs")));
      AB_ASSIGN_OR_RETURN(const Json* outputs, Required(k, k_path, "outputs"));
      AB_ASSIGN_OR_RETURN(sig.outputs, ReadTypes(*outputs, At(k_path, "outputs")));
      if (const Json* stable = Optional(k, "bit_stable")) {
        AB_ASSIGN_OR_RETURN(sig.bit_stable, ReadBool(*stable, At(k_path, "bit_stable")));
      }
      if (const Json* pure = Optional(k, "pure")) {
        AB_ASSIGN_OR_RETURN(sig.pure, ReadBool(*pure, At(k_path, "pure")));
      }
      if (const Json* vjp = Optional(k, "vjp")) {
        AB_ASSIGN_OR_RETURN(sig.vjp, ReadString(*vjp, At(k_path, "vjp")));
      }
      if (!program_.module.kernels.emplace(name, std::move(sig)).second) {
        return Invalid(At(k_path, "name"), absl::StrCat("duplicate kernel ", QuotedExcerpt(name)));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadVariable(const Json& j, const std::string& path) {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    Variable v;
    AB_ASSIGN_OR_RETURN(const Json* name, Required(j, path, "name"));
    AB_ASSIGN_OR_RETURN(v.name, ReadString(*name, At(path, "name")));
    AB_ASSIGN_OR_RETURN(const Json* function, Required(j, path, "function"));
    AB_ASSIGN_OR_RETURN(int32_t f, FunctionIndex(*function, At(path, "function")));
    v.function = FunctionId(f);
    if (const Json* type = Optional(j, "type")) {
      AB_ASSIGN_OR_RETURN(v.type, ReadType(*type, At(path, "type")));
    }
    if (const Json* storage = Optional(j, "storage")) {
      std::string s_path = At(path, "storage");
      AB_ASSIGN_OR_RETURN(std::string s, ReadString(*storage, s_path));
      std::optional<StorageClass> storage_class = StorageClassFromName(s);
      if (!storage_class) {
        return Invalid(s_path, absl::StrCat("unknown storage class ", QuotedExcerpt(s),
                                            "; expected null, temp, register or full"));
      }
      v.storage = *storage_class;
    }
    if (const Json* uniform = Optional(j, "uniform")) {
      AB_ASSIGN_OR_RETURN(v.uniform, ReadBool(*uniform, At(path, "uniform")));
    }
    program_.module.variables.push_back(std::move(v));
    return absl::OkStatus();
  }

  absl::StatusOr<Literal> ReadLiteral(const Json& j, const std::string& path) const {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    Literal literal;
    AB_ASSIGN_OR_RETURN(const Json* dtype, Required(j, path, "dtype"));
    AB_ASSIGN_OR_RETURN(literal.type.dtype, ReadDType(*dtype, At(path, "dtype")));
    AB_ASSIGN_OR_RETURN(const Json* shape, Required(j, path, "shape"));
    std::string shape_path = At(path, "shape");
    AB_ASSIGN_OR_RETURN(literal.type.shape, ReadInts(*shape, shape_path));
    std::optional<int64_t> num_elements = CheckedNumElements(literal.type.shape);
    if (!num_elements) {
      return Invalid(shape_path, "expected dimensions >= 0 whose product fits in 64 bits");
    }
    AB_ASSIGN_OR_RETURN(const Json* values, Required(j, path, "values"));
    std::string values_path = At(path, "values");
    AB_RETURN_IF_ERROR(ExpectArray(*values, values_path));
    if (values->size() != static_cast<uint64_t>(*num_elements)) {
      return Invalid(values_path,
                     absl::StrCat("a literal of type ", literal.type.ToString(), " needs ",
                                  *num_elements, " values, got ", values->size()));
    }
    for (size_t i = 0; i < values->size(); ++i) {
      const Json& v = (*values)[i];
      std::string v_path = At(values_path, i);
      if (IsFloat(literal.type.dtype)) {
        AB_ASSIGN_OR_RETURN(double d, ReadFloat(v, v_path));
        literal.floats.push_back(d);
      } else if (literal.type.dtype == DType::kU64) {
        if (v.is_number_unsigned()) {
          literal.ints.push_back(static_cast<int64_t>(v.get<uint64_t>()));
        } else if (v.is_number_integer() && v.get<int64_t>() >= 0) {
          literal.ints.push_back(v.get<int64_t>());
        } else {
          return WrongKind(v, v_path, "an integer in [0, 2^64)");
        }
      } else if (literal.type.dtype == DType::kBool && v.is_boolean()) {
        literal.ints.push_back(v.get<bool>() ? 1 : 0);
      } else {
        AB_ASSIGN_OR_RETURN(int64_t value, ReadInt(v, v_path));
        literal.ints.push_back(value);
      }
    }
    return literal;
  }

  absl::StatusOr<std::shared_ptr<const DenseMatrix>> ReadMatrix(const Json& j,
                                                                const std::string& path) const {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    auto m = std::make_shared<DenseMatrix>();
    AB_ASSIGN_OR_RETURN(const Json* rows, Required(j, path, "rows"));
    AB_ASSIGN_OR_RETURN(m->rows, ReadNonNegative(*rows, At(path, "rows")));
    AB_ASSIGN_OR_RETURN(const Json* cols, Required(j, path, "cols"));
    AB_ASSIGN_OR_RETURN(m->cols, ReadNonNegative(*cols, At(path, "cols")));
    AB_ASSIGN_OR_RETURN(const Json* data, Required(j, path, "data"));
    std::string data_path = At(path, "data");
    AB_RETURN_IF_ERROR(ExpectArray(*data, data_path));
    int64_t size = 0;
    if (__builtin_mul_overflow(m->rows, m->cols, &size) ||
        static_cast<uint64_t>(size) != data->size()) {
      return Invalid(data_path, absl::StrCat("a ", m->rows, "x", m->cols,
                                             " matrix needs rows * cols values, got ",
                                             data->size()));
    }
    m->data.reserve(data->size());
    for (size_t i = 0; i < data->size(); ++i) {
      AB_ASSIGN_OR_RETURN(double d, ReadFloat((*data)[i], At(data_path, i)));
      m->data.push_back(d);
    }
    return std::shared_ptr<const DenseMatrix>(std::move(m));
  }

  absl::StatusOr<Attributes> ReadAttributes(const Json& j, const std::string& path) const {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    Attributes attrs;
    if (const Json* literal = Optional(j, "literal")) {
      AB_ASSIGN_OR_RETURN(attrs.literal, ReadLiteral(*literal, At(path, "literal")));
    }
    if (const Json* dtype = Optional(j, "dtype")) {
      AB_ASSIGN_OR_RETURN(attrs.dtype, ReadDType(*dtype, At(path, "dtype")));
    }
    if (const Json* ints = Optional(j, "ints")) {
      AB_ASSIGN_OR_RETURN(attrs.ints, ReadInts(*ints, At(path, "ints")));
    }
    if (const Json* matrix = Optional(j, "matrix")) {
      AB_ASSIGN_OR_RETURN(attrs.matrix, ReadMatrix(*matrix, At(path, "matrix")));
    }
    if (const Json* kernel = Optional(j, "kernel")) {
      AB_ASSIGN_OR_RETURN(attrs.kernel, ReadString(*kernel, At(path, "kernel")));
    }
    return attrs;
  }

  absl::StatusOr<PrimOp> ReadPrimOp(const Json& j, const std::string& path) const {
    PrimOp op;
    AB_ASSIGN_OR_RETURN(const Json* prim_json, Required(j, path, "prim"));
    std::string prim_path = At(path, "prim");
    AB_ASSIGN_OR_RETURN(std::string prim_name, ReadString(*prim_json, prim_path));
    if (prim_name == Info(Primitive::kUserKernel).name) {
      op.prim = Primitive::kUserKernel;
    } else if (std::optional<Primitive> prim = PrimitiveFromName(prim_name)) {
      op.prim = *prim;
    } else {
      return Invalid(prim_path, absl::StrCat("unknown primitive ", QuotedExcerpt(prim_name),
                                             "; the built-in primitives are listed in "
                                             "ir/primitives.def, user kernels use \"",
                                             std::string(Info(Primitive::kUserKernel).name), "\""));
    }
    AB_ASSIGN_OR_RETURN(op.inputs, VarList(j, path, "inputs"));
    AB_ASSIGN_OR_RETURN(op.outputs, VarList(j, path, "outputs"));
    if (op.prim != Primitive::kUserKernel) {
      int arity = Info(op.prim).num_inputs;
      if (arity >= 0 && op.inputs.size() != static_cast<size_t>(arity)) {
        return Invalid(At(path, "inputs"),
                       absl::StrCat("primitive ", QuotedExcerpt(prim_name), " takes ", arity,
                                    " inputs, got ", op.inputs.size()));
      }
      if (arity < 0 && op.inputs.empty()) {
        return Invalid(At(path, "inputs"), absl::StrCat("primitive ", QuotedExcerpt(prim_name),
                                                        " takes one or more inputs, got 0"));
      }
      if (op.outputs.size() != 1) {
        return Invalid(At(path, "outputs"),
                       absl::StrCat("primitive ", QuotedExcerpt(prim_name),
                                    " has exactly one output, got ", op.outputs.size()));
      }
    }
    if (const Json* attrs = Optional(j, "attrs")) {
      AB_ASSIGN_OR_RETURN(op.attrs, ReadAttributes(*attrs, At(path, "attrs")));
    }
    if (Optional(j, "in_place") != nullptr) {
      AB_ASSIGN_OR_RETURN(op.in_place, VarList(j, path, "in_place"));
    }
    AB_ASSIGN_OR_RETURN(op.loc, ReadOptionalLoc(j, path));
    return op;
  }

  absl::StatusOr<Op> ReadOp(const Json& j, const std::string& path) const {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    AB_ASSIGN_OR_RETURN(const Json* kind_json, Required(j, path, "kind"));
    AB_ASSIGN_OR_RETURN(std::string kind, ReadString(*kind_json, At(path, "kind")));
    if (kind == "prim") return ReadPrimOp(j, path);
    if (kind == Info(ControlOp::kCallOp).spelling) {
      CallOp op;
      AB_ASSIGN_OR_RETURN(const Json* callee, Required(j, path, "callee"));
      AB_ASSIGN_OR_RETURN(int32_t f, FunctionIndex(*callee, At(path, "callee")));
      op.callee = FunctionId(f);
      AB_ASSIGN_OR_RETURN(op.args, VarList(j, path, "args"));
      AB_ASSIGN_OR_RETURN(op.results, VarList(j, path, "results"));
      AB_ASSIGN_OR_RETURN(op.loc, ReadOptionalLoc(j, path));
      return op;
    }
    if (kind == Info(ControlOp::kPopOp).spelling) {
      PopOp op;
      AB_ASSIGN_OR_RETURN(op.vars, VarList(j, path, "vars"));
      AB_ASSIGN_OR_RETURN(op.loc, ReadOptionalLoc(j, path));
      return op;
    }
    if (kind == Info(ControlOp::kTapePushOp).spelling) {
      TapePushOp op;
      AB_ASSIGN_OR_RETURN(op.tape, VarField(j, path, "tape"));
      AB_ASSIGN_OR_RETURN(op.value, VarField(j, path, "value"));
      AB_ASSIGN_OR_RETURN(op.loc, ReadOptionalLoc(j, path));
      return op;
    }
    if (kind == Info(ControlOp::kTapePopOp).spelling) {
      TapePopOp op;
      AB_ASSIGN_OR_RETURN(op.tape, VarField(j, path, "tape"));
      AB_ASSIGN_OR_RETURN(op.result, VarField(j, path, "result"));
      AB_ASSIGN_OR_RETURN(op.loc, ReadOptionalLoc(j, path));
      return op;
    }
    return Invalid(At(path, "kind"), absl::StrCat("unknown op kind ", QuotedExcerpt(kind),
                                                  "; expected \"prim\", ",
                                                  SpellingList(ControlForm::kOp, "\"")));
  }

  absl::StatusOr<Terminator> ReadTerminator(const Json& j, const std::string& path,
                                            const std::string& function_name,
                                            size_t num_blocks) const {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    auto block = [&](std::string_view key) -> absl::StatusOr<BlockId> {
      AB_ASSIGN_OR_RETURN(const Json* b, Required(j, path, key));
      AB_ASSIGN_OR_RETURN(int32_t index,
                          ReadIndex(*b, At(path, key), num_blocks, "block",
                                    absl::StrCat("function ", QuotedExcerpt(function_name), " has ",
                                                 num_blocks, " blocks")));
      return BlockId(index);
    };
    AB_ASSIGN_OR_RETURN(const Json* kind_json, Required(j, path, "kind"));
    AB_ASSIGN_OR_RETURN(std::string kind, ReadString(*kind_json, At(path, "kind")));
    if (kind == Info(ControlOp::kBranch).spelling) {
      Branch t;
      AB_ASSIGN_OR_RETURN(const Json* cond, Required(j, path, "cond"));
      AB_ASSIGN_OR_RETURN(t.cond, VarIndex(*cond, At(path, "cond")));
      AB_ASSIGN_OR_RETURN(t.then_block, block("then"));
      AB_ASSIGN_OR_RETURN(t.else_block, block("else"));
      return t;
    }
    if (kind == Info(ControlOp::kGoto).spelling) {
      Goto t;
      AB_ASSIGN_OR_RETURN(t.target, block("target"));
      return t;
    }
    if (kind == Info(ControlOp::kReturn).spelling) return Return{};
    if (kind == Info(ControlOp::kPushGoto).spelling) {
      PushGoto t;
      AB_ASSIGN_OR_RETURN(const Json* callee, Required(j, path, "callee"));
      AB_ASSIGN_OR_RETURN(int32_t f, FunctionIndex(*callee, At(path, "callee")));
      t.callee = FunctionId(f);
      AB_ASSIGN_OR_RETURN(t.return_to, block("return_to"));
      return t;
    }
    if (kind == Info(ControlOp::kIndirectGoto).spelling) return IndirectGoto{};
    if (kind == Info(ControlOp::kHalt).spelling) return Halt{};
    return Invalid(At(path, "kind"), absl::StrCat("unknown terminator kind ", QuotedExcerpt(kind),
                                                  "; expected ",
                                                  SpellingList(ControlForm::kTerminator, "")));
  }

  absl::Status ReadFunction(const Json& j, const std::string& path) {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    Function f;
    AB_ASSIGN_OR_RETURN(const Json* name, Required(j, path, "name"));
    AB_ASSIGN_OR_RETURN(f.name, ReadString(*name, At(path, "name")));
    AB_ASSIGN_OR_RETURN(f.params, VarList(j, path, "params"));
    AB_ASSIGN_OR_RETURN(f.results, VarList(j, path, "results"));
    if (const Json* sig = Optional(j, "signature")) {
      std::string sig_path = At(path, "signature");
      AB_RETURN_IF_ERROR(ExpectObject(*sig, sig_path));
      Signature signature;
      AB_ASSIGN_OR_RETURN(const Json* params, Required(*sig, sig_path, "params"));
      AB_ASSIGN_OR_RETURN(signature.params, ReadTypes(*params, At(sig_path, "params")));
      AB_ASSIGN_OR_RETURN(const Json* results, Required(*sig, sig_path, "results"));
      AB_ASSIGN_OR_RETURN(signature.results, ReadTypes(*results, At(sig_path, "results")));
      f.signature = std::move(signature);
    }
    AB_ASSIGN_OR_RETURN(f.loc, ReadOptionalLoc(j, path));
    AB_ASSIGN_OR_RETURN(const Json* blocks, Required(j, path, "blocks"));
    std::string blocks_path = At(path, "blocks");
    AB_RETURN_IF_ERROR(ExpectArray(*blocks, blocks_path));
    for (size_t b = 0; b < blocks->size(); ++b) {
      const Json& bj = (*blocks)[b];
      std::string b_path = At(blocks_path, b);
      AB_RETURN_IF_ERROR(ExpectObject(bj, b_path));
      Block block;
      if (const Json* label = Optional(bj, "label")) {
        AB_ASSIGN_OR_RETURN(block.label, ReadString(*label, At(b_path, "label")));
      }
      AB_ASSIGN_OR_RETURN(const Json* ops, Required(bj, b_path, "ops"));
      std::string ops_path = At(b_path, "ops");
      AB_RETURN_IF_ERROR(ExpectArray(*ops, ops_path));
      for (size_t i = 0; i < ops->size(); ++i) {
        AB_ASSIGN_OR_RETURN(Op op, ReadOp((*ops)[i], At(ops_path, i)));
        block.ops.push_back(std::move(op));
      }
      AB_ASSIGN_OR_RETURN(const Json* terminator, Required(bj, b_path, "terminator"));
      AB_ASSIGN_OR_RETURN(block.terminator,
                          ReadTerminator(*terminator, At(b_path, "terminator"), f.name,
                                         blocks->size()));
      AB_ASSIGN_OR_RETURN(block.loc, ReadOptionalLoc(bj, b_path));
      f.blocks.push_back(std::move(block));
    }
    program_.module.functions.push_back(std::move(f));
    return absl::OkStatus();
  }

  // After every function is read: the primal is named, and may come later.
  absl::Status ReadGradientOf(const Json& j, const std::string& path, Function& f) {
    AB_RETURN_IF_ERROR(ExpectObject(j, path));
    AB_ASSIGN_OR_RETURN(const Json* name_json, Required(j, path, "function"));
    const std::string name_path = At(path, "function");
    AB_ASSIGN_OR_RETURN(std::string name, ReadString(*name_json, name_path));
    std::vector<int32_t> matches;
    for (size_t g = 0; g < program_.module.functions.size(); ++g) {
      if (program_.module.functions[g].name == name) matches.push_back(static_cast<int32_t>(g));
    }
    if (matches.size() != 1) {
      return Invalid(name_path,
                     matches.empty()
                         ? absl::StrCat("unknown function ", QuotedExcerpt(name),
                                        "; name the function this one is the gradient of")
                         : absl::StrCat(matches.size(), " functions are named ",
                                        QuotedExcerpt(name), "; function names must be unique"));
    }
    const Function& primal = program_.module.functions[matches[0]];
    AB_ASSIGN_OR_RETURN(const Json* wrt, Required(j, path, "wrt"));
    const std::string wrt_path = At(path, "wrt");
    AB_RETURN_IF_ERROR(ExpectArray(*wrt, wrt_path));
    GradientOf grad{FunctionId(matches[0]), {}};
    for (size_t k = 0; k < wrt->size(); ++k) {
      AB_ASSIGN_OR_RETURN(
          int32_t index,
          ReadIndex((*wrt)[k], At(wrt_path, k), primal.params.size(), "parameter",
                    absl::StrCat("function ", QuotedExcerpt(name), " has ",
                                 primal.params.size(), " params")));
      grad.wrt.push_back(index);
    }
    f.gradient_of = std::move(grad);
    return absl::OkStatus();
  }

  Program program_;
  size_t num_functions_ = 0;
  size_t num_variables_ = 0;
};

}  // namespace

Json ProgramToJson(const Program& program) { return ToJson<Json>(program); }

std::string DumpProgramJson(const Program& program, int indent) {
  return ToJson<nlohmann::ordered_json>(program).dump(
      indent, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
}

absl::StatusOr<Program> ProgramFromJson(const Json& json) {
  // The reader checks every value's kind before reading it, so nlohmann never
  // throws here; if it does anyway, that is our bug, reported as such.
  try {
    return ProgramReader().Read(json);
  } catch (const Json::exception& e) {
    return absl::InternalError(absl::StrCat(
        "autobatch internal error while reading IR JSON (please report it): ", e.what()));
  }
}

absl::StatusOr<Program> LoadProgramJson(std::string_view text) {
  absl::StatusOr<Json> json = ParseJsonText(text);
  if (!json.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed autobatch IR JSON: ", json.status().message()));
  }
  return ProgramFromJson(*json);
}

}  // namespace autobatch
