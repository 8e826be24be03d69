// Checks a batch of input tensors against a program's entry parameters.
#include "vm/inputs.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch {

absl::Status CheckInputs(const Program& program, std::span<const Tensor> inputs) {
  const Module& module = program.module;
  if (!program.entry.valid() ||
      program.entry.value >= static_cast<int32_t>(module.functions.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the program's entry function index ", program.entry.value, " does not exist"));
  }
  const Function& entry = module.function(program.entry);
  auto param_name = [&](size_t i) -> std::string {
    VarId v = entry.params[i];
    if (!v.valid() || v.value >= static_cast<int32_t>(module.variables.size())) return "?";
    return module.var(v).name;
  };
  if (inputs.size() != entry.params.size()) {
    std::string names;
    for (size_t i = 0; i < entry.params.size(); ++i) {
      absl::StrAppend(&names, i ? ", " : "", param_name(i));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "'", entry.name, "' takes ", entry.params.size(), " input(s) (", names, ") but ",
        inputs.size(), " were given"));
  }
  int first_varying = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::optional<TensorType> declared;
    VarId v = entry.params[i];
    if (v.valid() && v.value < static_cast<int32_t>(module.variables.size())) {
      declared = module.var(v).type;
    }
    if (!declared && entry.signature && i < entry.signature->params.size()) {
      declared = entry.signature->params[i];
    }
    if (declared && *declared != inputs[i].type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " (parameter '", param_name(i), "' of '", entry.name, "') has type ",
          inputs[i].type().ToString(), " but the parameter is declared ",
          declared->ToString()));
    }
    if (IsUniformInput(program, i)) {
      if (inputs[i].batch() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " (parameter '", param_name(i), "' of '", entry.name,
            "') is uniform, so it is given once, as a tensor of ONE lane shared by every "
            "lane, but it has batch size ", inputs[i].batch(),
            "; pass one lane's value (no batch dimension to repeat)"));
      }
      continue;
    }
    if (first_varying < 0) first_varying = static_cast<int>(i);
    if (inputs[i].batch() != inputs[first_varying].batch()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " (parameter '", param_name(i), "') has batch size ", inputs[i].batch(),
          " but input ", first_varying, " (parameter '", param_name(first_varying),
          "') has batch size ", inputs[first_varying].batch(),
          "; every input needs the same batch size"));
    }
  }
  return absl::OkStatus();
}

bool IsUniformInput(const Program& program, size_t i) {
  const Module& module = program.module;
  if (!program.entry.valid() ||
      program.entry.value >= static_cast<int32_t>(module.functions.size())) {
    return false;
  }
  const Function& entry = module.function(program.entry);
  if (i >= entry.params.size()) return false;
  const VarId v = entry.params[i];
  return v.valid() && v.value < static_cast<int32_t>(module.variables.size()) &&
         module.var(v).uniform;
}

int64_t BatchOfInputs(const Program& program, std::span<const Tensor> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!IsUniformInput(program, i)) return inputs[i].batch();
  }
  return 1;
}

absl::Status CheckValueSize(const Module& module, VarId variable, const TensorType& type,
                            int64_t batch, int64_t max_bytes) {
  const int64_t elements = type.NumElements();
  const int64_t lanes = std::max<int64_t>(batch, 1);
  const int64_t dtype_bytes = DTypeSize(type.dtype);
  // elements * dtype_bytes * lanes > max_bytes, without overflowing.
  if (elements <= 0 || elements <= max_bytes / dtype_bytes / lanes) return absl::OkStatus();
  const Variable& var = module.var(variable);
  return absl::ResourceExhaustedError(absl::StrCat(
      "variable '", var.name, "' of function '", module.function(var.function).name,
      "' has type ", type.ToString(), ": ", lanes, " lane(s) of it take more than ",
      "max_value_bytes = ", max_bytes, " bytes; raise CallOptions::max_value_bytes if the ",
      "machine has the memory, or make the value smaller"));
}

absl::Status CheckValueSizes(const Program& program, int64_t batch, int64_t max_bytes) {
  for (size_t v = 0; v < program.module.variables.size(); ++v) {
    const Variable& var = program.module.variables[v];
    if (!var.type) continue;
    AB_RETURN_IF_ERROR(CheckValueSize(program.module, VarId(static_cast<int32_t>(v)),
                                      *var.type, var.uniform ? 1 : batch, max_bytes));
  }
  return absl::OkStatus();
}

double StartingBytesPerLane(const Program& program, int64_t frames_per_stack) {
  double bytes = 0;
  for (const Variable& var : program.module.variables) {
    if (!var.type || var.uniform || var.storage == StorageClass::kTape) continue;
    const double value = static_cast<double>(var.type->NumElements()) *
                         static_cast<double>(DTypeSize(var.type->dtype));
    bytes += var.storage == StorageClass::kFull ? value * static_cast<double>(frames_per_stack)
                                                : value;
  }
  return bytes;
}

}  // namespace autobatch
