// Backend: execution-mode names and the backend factory.
#include "backends/backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/eigen_backend.h"
#include "backends/threaded_backend.h"
#include "support/memory.h"

namespace autobatch {

std::string_view ExecModeName(ExecMode mode) {
  switch (mode) {
    case ExecMode::kDense: return "dense";
    case ExecMode::kCompact: return "compact";
  }
  return "?";
}

std::span<const BackendKind> AllBackendKinds() {
  static constexpr BackendKind kKinds[] = {BackendKind::kEigen, BackendKind::kThreaded};
  return kKinds;
}

std::string_view BackendKindName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kEigen: return "eigen";
    case BackendKind::kThreaded: return "threaded";
  }
  return "?";
}

std::optional<BackendKind> BackendKindFromName(std::string_view name) {
  for (BackendKind kind : AllBackendKinds()) {
    if (BackendKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

std::vector<std::string> KnownBackendNames() {
  std::vector<std::string> names;
  for (BackendKind kind : AllBackendKinds()) names.emplace_back(BackendKindName(kind));
  return names;
}

std::unique_ptr<Backend> MakeBackend(BackendKind kind) {
  switch (kind) {
    case BackendKind::kEigen: return std::make_unique<EigenBackend>();
    case BackendKind::kThreaded: return std::make_unique<ThreadedBackend>();
  }
  AB_CHECK(false, "MakeBackend: unknown BackendKind");
  return nullptr;
}

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name) {
  constexpr std::string_view kThreadedPrefix = "threaded:";
  if (name.substr(0, kThreadedPrefix.size()) == kThreadedPrefix) {
    const std::string_view digits = name.substr(kThreadedPrefix.size());
    // Parsed by hand: at most 3 digits, so no overflow and no sign or spaces.
    int threads = 0;
    bool ok = !digits.empty() && digits.size() <= 3;
    for (char ch : digits) {
      ok = ok && ch >= '0' && ch <= '9';
      if (!ok) break;
      threads = threads * 10 + (ch - '0');
    }
    if (!ok || threads < 1 || threads > ThreadedBackend::kMaxThreads) {
      return absl::InvalidArgumentError(absl::StrCat(
          "backend '", std::string(name), "': the thread count after 'threaded:' must be ",
          "an integer from 1 to ", ThreadedBackend::kMaxThreads,
          " (e.g. 'threaded:4'); use 'threaded' for one thread per hardware thread"));
    }
    // Its workers start here: a thread the system will not start is an error.
    return CatchResourceErrors(
        "the threaded backend", [&]() -> absl::StatusOr<std::unique_ptr<Backend>> {
          return std::make_unique<ThreadedBackend>(ThreadedBackendOptions{.num_threads = threads});
        });
  }
  std::optional<BackendKind> kind = BackendKindFromName(name);
  if (!kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown backend '", std::string(name), "'; known backends: ",
        absl::StrJoin(KnownBackendNames(), ", "), " (and threaded:N for N threads)"));
  }
  return CatchResourceErrors("the backend", [&]() -> absl::StatusOr<std::unique_ptr<Backend>> {
    return MakeBackend(*kind);
  });
}

bool HasUniformOperand(std::span<const Tensor* const> inputs,
                       std::span<Tensor* const> outputs) {
  for (const Tensor* in : inputs) {
    if (in->uniform()) return true;
  }
  for (const Tensor* out : outputs) {
    if (out->uniform()) return true;
  }
  return false;
}

bool IsPlainCopy(const PrimOp& op, std::span<const Tensor* const> inputs,
                 std::span<Tensor* const> outputs) {
  if (HasUniformOperand(inputs, outputs)) return false;
  return op.prim == Primitive::kCopy && inputs.size() == 1 && outputs.size() == 1 &&
         inputs[0]->type() == outputs[0]->type();
}

bool IsWideLaneSelect(const PrimOp& op, std::span<const Tensor* const> inputs,
                      std::span<Tensor* const> outputs) {
  if (op.prim != Primitive::kSelect || inputs.size() != 3 || outputs.size() != 1) return false;
  if (HasUniformOperand(inputs, outputs)) return false;
  const Tensor& cond = *inputs[0];
  const Tensor& out = *outputs[0];
  return cond.dtype() == DType::kBool && cond.lane_elements() == 1 &&
         inputs[1]->type() == out.type() && inputs[2]->type() == out.type() &&
         out.lane_bytes() > 8;
}

}  // namespace autobatch
