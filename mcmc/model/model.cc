// Model: parameter bookkeeping, the default batched kernel and transforms.
#include "mcmc/model/model.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

// "theta.2.1" for element `flat` (first index fastest) of a parameter.
std::string ElementName(const ParameterSpec& spec, int64_t flat) {
  std::string name = spec.name;
  for (int64_t extent : spec.shape) {
    absl::StrAppend(&name, ".", flat % extent + 1);
    flat /= extent;
  }
  return name;
}

}  // namespace

int64_t ParameterSpec::size() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

int64_t Model::dimension() const {
  int64_t d = 0;
  for (const ParameterSpec& spec : parameters()) d += spec.size();
  return d;
}

void Model::LogDensityGradientBatch(const double* q, double* logp, double* grad,
                                    int64_t lanes, const uint8_t* active) const {
  const int64_t d = dimension();
  const size_t n = static_cast<size_t>(d);
  for (int64_t lane = 0; lane < lanes; ++lane) {
    if (active != nullptr && !active[lane]) continue;
    logp[lane] = LogDensityGradient(std::span<const double>(q + lane * d, n),
                                    std::span<double>(grad + lane * d, n));
  }
}

void Model::Generate(std::span<const double> /*q*/, std::span<double> /*out*/) const {}

void Constrain(const Model& model, std::span<const double> q,
               std::span<double> constrained) {
  AB_CHECK(q.size() == constrained.size());
  size_t i = 0;
  for (const ParameterSpec& spec : model.parameters()) {
    const int64_t n = spec.size();
    AB_CHECK(i + static_cast<size_t>(n) <= q.size(),
             "q is shorter than the model's dimension()");
    for (int64_t k = 0; k < n; ++k, ++i) {
      switch (spec.transform) {
        case Transform::kIdentity: constrained[i] = q[i]; break;
        case Transform::kLog: constrained[i] = math::Exp(q[i]); break;
        case Transform::kLogit: constrained[i] = math::Logistic(q[i]); break;
      }
    }
  }
  AB_CHECK(i == q.size(), "q is longer than the model's dimension()");
}

absl::Status Unconstrain(const Model& model, std::span<const double> constrained,
                         std::span<double> q) {
  AB_CHECK(q.size() == constrained.size());
  size_t i = 0;
  for (const ParameterSpec& spec : model.parameters()) {
    const int64_t n = spec.size();
    AB_CHECK(i + static_cast<size_t>(n) <= q.size(),
             "constrained is shorter than the model's dimension()");
    for (int64_t k = 0; k < n; ++k, ++i) {
      const double x = constrained[i];
      bool in_support = false;
      const char* support = "";
      switch (spec.transform) {
        case Transform::kIdentity:
          in_support = std::isfinite(x);
          support = "finite";
          if (in_support) q[i] = x;
          break;
        case Transform::kLog:
          in_support = x > 0 && std::isfinite(x);
          support = "finite and > 0 (log transform)";
          if (in_support) q[i] = math::Log(x);
          break;
        case Transform::kLogit:
          in_support = x > 0 && x < 1;
          support = "in (0, 1) (logit transform)";
          if (in_support) q[i] = math::Log(x) - math::Log1p(-x);
          break;
      }
      if (!in_support) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", model.name(), "': value ", x, " of parameter ",
            ElementName(spec, k), " is outside its support: it must be ",
            support, "; give a value inside the support"));
      }
    }
  }
  AB_CHECK(i == q.size(), "constrained is longer than the model's dimension()");
  return absl::OkStatus();
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
