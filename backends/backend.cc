// Backend: execution-mode names and the backend factory.
#include "backends/backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/eigen_backend.h"

namespace autobatch {

std::string_view ExecModeName(ExecMode mode) {
  switch (mode) {
    case ExecMode::kDense: return "dense";
    case ExecMode::kCompact: return "compact";
  }
  return "?";
}

std::span<const BackendKind> AllBackendKinds() {
  static constexpr BackendKind kKinds[] = {BackendKind::kEigen};
  return kKinds;
}

std::string_view BackendKindName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kEigen: return "eigen";
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
  }
  AB_CHECK(false, "MakeBackend: unknown BackendKind");
  return nullptr;
}

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name) {
  std::optional<BackendKind> kind = BackendKindFromName(name);
  if (!kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown backend '", std::string(name), "'; known backends: ",
        absl::StrJoin(KnownBackendNames(), ", ")));
  }
  return MakeBackend(*kind);
}

}  // namespace autobatch
