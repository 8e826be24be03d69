// Model: parameter bookkeeping, the default batched kernel and transforms.
#include "mcmc/model/model.h"

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch::mcmc {

int64_t Model::dimension() const {
  int64_t d = 0;
  for (const ParameterSpec& spec : parameters()) d += spec.unconstrained_size();
  return d;
}

int64_t Model::constrained_size() const {
  int64_t n = 0;
  for (const ParameterSpec& spec : parameters()) n += spec.size();
  return n;
}

void Model::LogDensityGradientBatch(const double* q, double* logp, double* grad, int64_t lanes,
                                    const uint8_t* active) const {
  const int64_t d = dimension();
  const size_t n = static_cast<size_t>(d);
  for (int64_t lane = 0; lane < lanes; ++lane) {
    if (active != nullptr && !active[lane]) continue;
    logp[lane] = LogDensityGradient(std::span<const double>(q + lane * d, n),
                                    std::span<double>(grad + lane * d, n));
  }
}

void Model::Generate(std::span<const double> /*q*/, std::span<double> /*out*/) const {}

absl::Status Model::GenerateBatch(const GeneratedDraws& draws, double* out,
                                  const CallOptions& /*call*/) const {
  const size_t d = static_cast<size_t>(dimension());
  const size_t g = generated_names().size();
  for (int64_t lane = 0; lane < draws.lanes; ++lane) {
    const size_t l = static_cast<size_t>(lane);
    Generate(std::span<const double>(draws.q + l * d, d), std::span<double>(out + l * g, g));
  }
  return absl::OkStatus();
}

absl::Status ValidateParameters(const Model& model) {
  const std::vector<ParameterSpec> specs = model.parameters();
  for (size_t i = 0; i < specs.size(); ++i) {
    absl::Status status = ValidateParameter(specs[i]);
    for (size_t j = 0; j < i && status.ok(); ++j) {
      if (specs[j].name == specs[i].name) {
        status = absl::InvalidArgumentError(
            absl::StrCat("parameter '", specs[i].name, "': parameters ", j + 1, " and ", i + 1,
                         " have this name; give each parameter its own name"));
      }
    }
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", model.name(), "': ", status.message()));
    }
  }
  return absl::OkStatus();
}

double Constrain(const Model& model, std::span<const double> q, std::span<double> constrained) {
  size_t i = 0, j = 0;
  double log_jacobian = 0;
  for (const ParameterSpec& spec : model.parameters()) {
    const auto m = static_cast<size_t>(spec.unconstrained_size());
    const auto n = static_cast<size_t>(spec.size());
    AB_CHECK(i + m <= q.size() && j + n <= constrained.size(),
             "q or constrained is shorter than the model's dimension() or "
             "constrained_size()");
    log_jacobian += ConstrainParameter(spec, q.subspan(i, m), constrained.subspan(j, n));
    i += m;
    j += n;
  }
  AB_CHECK(i == q.size() && j == constrained.size(),
           "q or constrained is longer than the model's dimension() or "
           "constrained_size()");
  return log_jacobian;
}

absl::Status Unconstrain(const Model& model, std::span<const double> constrained,
                         std::span<double> q) {
  size_t i = 0, j = 0;
  for (const ParameterSpec& spec : model.parameters()) {
    const auto m = static_cast<size_t>(spec.unconstrained_size());
    const auto n = static_cast<size_t>(spec.size());
    AB_CHECK(i + m <= q.size() && j + n <= constrained.size(),
             "q or constrained is shorter than the model's dimension() or "
             "constrained_size()");
    const absl::Status status =
        UnconstrainParameter(spec, constrained.subspan(j, n), q.subspan(i, m));
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", model.name(), "': ", status.message()));
    }
    i += m;
    j += n;
  }
  AB_CHECK(i == q.size() && j == constrained.size(),
           "q or constrained is longer than the model's dimension() or "
           "constrained_size()");
  return absl::OkStatus();
}

std::vector<std::string> UnconstrainedNames(const Model& model) {
  std::vector<std::string> names;
  for (const ParameterSpec& spec : model.parameters()) {
    const Transform::Kind kind = spec.transform.kind;
    const bool elementwise = kind != Transform::Kind::kSimplex && kind != Transform::Kind::kOrdered;
    for (int64_t k = 0; k < spec.unconstrained_size(); ++k) {
      names.push_back(elementwise ? ElementName(spec, k)
                                  : absl::StrCat(spec.name, ".", k + 1, " (unconstrained)"));
    }
  }
  return names;
}

std::vector<std::string> OutputColumnNames(const Model& model) {
  std::vector<std::string> names;
  for (const ParameterSpec& spec : model.parameters()) {
    for (int64_t k = 0; k < spec.size(); ++k) names.push_back(ElementName(spec, k));
  }
  for (std::string& name : model.generated_names()) names.push_back(std::move(name));
  return names;
}

}  // namespace autobatch::mcmc
