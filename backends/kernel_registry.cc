// User kernels: registration and binding checks.
#include "backends/kernel_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace autobatch {
namespace {

std::string SignatureString(const KernelSignature& s) {
  auto types = [](const std::vector<TensorType>& ts) {
    return absl::StrJoin(ts, ", ", [](std::string* out, const TensorType& t) {
      out->append(t.ToString());
    });
  };
  return absl::StrCat("(", types(s.inputs), ") -> (", types(s.outputs), ")",
                      s.bit_stable ? "" : " [not bit-stable]");
}

}  // namespace

absl::Status KernelRegistry::Register(std::string name, KernelSignature signature,
                                      KernelFn fn) {
  if (name.empty()) {
    return absl::InvalidArgumentError(
        "KernelRegistry::Register: a user kernel needs a non-empty name");
  }
  if (!fn) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KernelRegistry::Register: user kernel '", name,
        "' has no implementation; pass a callable KernelFn"));
  }
  if (kernels_.count(name) != 0) {
    return absl::AlreadyExistsError(absl::StrCat(
        "KernelRegistry::Register: user kernel '", name,
        "' is already registered; choose another name"));
  }
  kernels_.emplace(std::move(name), UserKernel{std::move(signature), std::move(fn)});
  return absl::OkStatus();
}

const UserKernel* KernelRegistry::Find(std::string_view name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : &it->second;
}

absl::Status KernelRegistry::CheckBound(const Module& module) const {
  std::vector<std::string> problems;
  absl::StatusCode code = absl::StatusCode::kOk;
  for (const auto& [name, signature] : module.kernels) {
    const UserKernel* kernel = Find(name);
    if (kernel == nullptr) {
      problems.push_back(absl::StrCat(
          "user kernel '", name, "' (", SignatureString(signature),
          ") is used by the program but not registered; register it with "
          "KernelRegistry::Register before running"));
      code = absl::StatusCode::kNotFound;
    } else if (!(kernel->signature == signature)) {
      problems.push_back(absl::StrCat(
          "user kernel '", name, "' is registered as ",
          SignatureString(kernel->signature), " but the program declares ",
          SignatureString(signature), "; make the two signatures agree"));
      if (code == absl::StatusCode::kOk) code = absl::StatusCode::kInvalidArgument;
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::Status(code, absl::StrJoin(problems, "\n"));
}

}  // namespace autobatch
