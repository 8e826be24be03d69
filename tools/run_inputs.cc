// The inputs of `autobatch run`, checked against the program's parameters.
#include "tools/run_inputs.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/pipeline.h"
#include "support/status.h"
#include "tools/tensor_json.h"

namespace autobatch {
namespace {

// The entry function's parameters, for messages.
class Params {
 public:
  explicit Params(const Program& program)
      : module_(program.module), entry_(program.entry_function()) {}

  size_t size() const { return entry_.params.size(); }
  const std::string& name(size_t i) const { return module_.var(entry_.params[i]).name; }

  // "parameter 'x' (1 of 2) of 'newton'".
  std::string Label(size_t i) const {
    return absl::StrCat("parameter '", name(i), "' (", i + 1, " of ", size(), ") of '",
                        entry_.name, "'");
  }

  // "'newton' takes 2 parameters (x, tol)".
  std::string Takes() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < size(); ++i) names.push_back(name(i));
    return absl::StrCat("'", entry_.name, "' takes ", size(), " parameter",
                        size() == 1 ? "" : "s", " (", absl::StrJoin(names, ", "), ")");
  }

  // The type the program declares for parameter i: its variable's, else the
  // entry's signature's.
  std::optional<TensorType> Declared(size_t i) const {
    const std::optional<TensorType>& own = module_.var(entry_.params[i]).type;
    if (own) return own;
    if (entry_.signature && i < entry_.signature->params.size()) {
      return entry_.signature->params[i];
    }
    return std::nullopt;
  }

 private:
  const Module& module_;
  const Function& entry_;
};

std::string TypesFlag(std::span<const TensorType> types) {
  std::vector<std::string> names;
  for (const TensorType& t : types) names.push_back(t.ToString());
  return absl::StrCat("--types ", absl::StrJoin(names, ","));
}

// The parameters' expected types: --types (checked against the declared
// ones) or the declared ones. `from[i]` says where type i came from.
absl::StatusOr<std::vector<std::optional<TensorType>>> ExpectedTypes(
    const Params& params, std::span<const TensorType> types, std::vector<std::string>& from) {
  std::vector<std::optional<TensorType>> expected(params.size());
  from.assign(params.size(), "");
  if (!types.empty() && types.size() != params.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--types gives ", types.size(), " type", types.size() == 1 ? "" : "s", " but ",
        params.Takes(), ": give one type per parameter, in order"));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const std::optional<TensorType> declared = params.Declared(i);
    if (!types.empty() && declared && *declared != types[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--types gives ", types[i].ToString(), " for ", params.Label(i),
          " but the program declares it ", declared->ToString(), ": give ",
          declared->ToString(), " there, or drop --types"));
    }
    if (!types.empty()) {
      expected[i] = types[i];
      from[i] = "as --types gives";
    } else if (declared) {
      expected[i] = declared;
      from[i] = "as the program declares";
    }
  }
  return expected;
}

}  // namespace

absl::StatusOr<RunInputs> ReadRunInputs(const std::string& path, const Program& program,
                                        std::span<const TensorType> types) {
  const Params params(program);
  std::vector<std::string> from;
  AB_ASSIGN_OR_RETURN(const std::vector<std::optional<TensorType>> expected,
                      ExpectedTypes(params, types, from));
  AB_ASSIGN_OR_RETURN(const nlohmann::json list, ReadInputsList(path));
  if (list.size() != params.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": holds ", list.size(), " input", list.size() == 1 ? "" : "s", " but ",
        params.Takes(), ": write one entry of \"inputs\" per parameter, in order"));
  }
  RunInputs out;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& input = list[i];
    const std::string where = absl::StrCat(path, ": inputs[", i, "]");
    const std::string expects =
        expected[i] ? absl::StrCat(", which is ", expected[i]->ToString(), " ", from[i]) : "";
    absl::StatusOr<Tensor> tensor = TensorFromJson(input, where, expected[i]);
    if (!tensor.ok()) {
      return absl::Status(tensor.status().code(),
                          absl::StrCat(tensor.status().message(), " (inputs[", i, "] is for ",
                                       params.Label(i), expects, ")"));
    }
    if (expected[i] && tensor->type() != *expected[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " is ", tensor->type().ToString(),
          " (its \"dtype\" or \"shape\" says so) but it is for ", params.Label(i), expects,
          ": write \"dtype\": \"", std::string(DTypeName(expected[i]->dtype)),
          "\", \"shape\": [", absl::StrJoin(expected[i]->shape, ", "),
          "] there, or drop both"));
    }
    out.uniform.push_back(input.is_object() && input.contains("uniform"));
    out.guessed.push_back(!expected[i] && !DeclaresDType(input));
    out.tensors.push_back(*std::move(tensor));
  }
  return out;
}

absl::Status ExplainGuessedTypes(const std::string& path, const Program& program,
                                 std::span<const TensorType> types,
                                 const std::vector<bool>& guessed, const absl::Status& error) {
  bool any_guessed = false;
  for (bool g : guessed) any_guessed |= g;
  if (!any_guessed || program.stage != Stage::kUntyped ||
      error.code() != absl::StatusCode::kInvalidArgument ||
      CheckProgram(program, std::vector<TensorType>(types.begin(), types.end())).ok()) {
    return error;
  }
  // Integers were read as i64: does the program type-check with f64 for one
  // of them, or for all of them?
  std::vector<size_t> integers;
  for (size_t i = 0; i < types.size(); ++i) {
    if (guessed[i] && types[i].dtype == DType::kI64) integers.push_back(i);
  }
  std::vector<std::vector<size_t>> tries;
  for (size_t i : integers) tries.push_back({i});
  if (integers.size() > 1) tries.push_back(integers);
  const Params params(program);
  for (const std::vector<size_t>& flip : tries) {
    std::vector<TensorType> floats(types.begin(), types.end());
    for (size_t i : flip) floats[i].dtype = DType::kF64;
    if (!CheckProgram(program, floats).ok()) continue;
    const size_t i = flip.front();
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": inputs[", i, "] holds only integers, so it was read as i64, but it is for ",
        params.Label(i), ", which the program needs as f64",
        flip.size() > 1 ? " (and so do the other integer inputs)" : "",
        ": write its values as floats (2.0, not 2), declare \"dtype\": \"f64\" on it, or "
        "pass ", TypesFlag(floats)));
  }
  std::vector<std::string> read;
  for (size_t i = 0; i < types.size(); ++i) {
    if (guessed[i]) read.push_back(absl::StrCat("'", params.name(i), "' ", types[i].ToString()));
  }
  return absl::Status(
      error.code(),
      absl::StrCat(error.message(), "\n(the input types were read from the values in ", path,
                   ": ", absl::StrJoin(read, ", "),
                   "; if the program expects other types, pass --types or declare \"dtype\" "
                   "in the file)"));
}

}  // namespace autobatch
