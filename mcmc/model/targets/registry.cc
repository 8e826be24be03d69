// Target registry: name -> factory, with JSON parameter parsing.
#include "mcmc/model/targets/registry.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/json_text.h"
#include "support/status.h"
#include "mcmc/model/targets/ar1.h"
#include "mcmc/model/targets/banana.h"
#include "mcmc/model/targets/beta_bernoulli.h"
#include "mcmc/model/targets/bimodal.h"
#include "mcmc/model/targets/correlated_2d.h"
#include "mcmc/model/targets/eight_schools.h"
#include "mcmc/model/targets/funnel.h"
#include "mcmc/model/targets/iid_gaussian.h"
#include "mcmc/model/targets/ill_conditioned.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "mcmc/model/targets/mock_targets.h"

namespace autobatch::mcmc {
namespace {

using nlohmann::json;

// A value as an error message shows it: compact JSON, at most 200 bytes.
std::string Dump(const json& j) {
  constexpr size_t kMaxShown = 200;
  std::string text = j.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  if (text.size() <= kMaxShown) return text;
  return absl::StrCat(text.substr(0, kMaxShown), "... (cut; ", text.size(), " bytes)");
}

// Reads typed values out of a target's params object; a missing key leaves
// the default in place. Only non-throwing nlohmann calls are used.
class ParamReader {
 public:
  ParamReader(std::string_view target, const json& params)
      : target_(target), params_(params) {}

  absl::Status Int(std::string_view key, int64_t* value) const {
    const json* j = Find(key);
    if (j == nullptr) return absl::OkStatus();
    if (j->is_number_unsigned()) {
      if (j->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
        *value = static_cast<int64_t>(j->get<uint64_t>());
        return absl::OkStatus();
      }
    } else if (j->is_number_integer()) {
      *value = j->get<int64_t>();
      return absl::OkStatus();
    } else if (j->is_number_float()) {
      const double d = j->get<double>();
      if (d == std::floor(d) && std::abs(d) < 0x1p62) {
        *value = static_cast<int64_t>(d);
        return absl::OkStatus();
      }
    }
    return Bad(key, *j, "an integer");
  }

  absl::Status Uint(std::string_view key, uint64_t* value) const {
    const json* j = Find(key);
    if (j == nullptr) return absl::OkStatus();
    if (j->is_number_unsigned()) {
      *value = j->get<uint64_t>();
      return absl::OkStatus();
    }
    if (j->is_number_float()) {
      const double d = j->get<double>();
      if (d == std::floor(d) && d >= 0 && d < 0x1p63) {
        *value = static_cast<uint64_t>(d);
        return absl::OkStatus();
      }
    }
    return Bad(key, *j, "a non-negative integer");
  }

  absl::Status Double(std::string_view key, double* value) const {
    const json* j = Find(key);
    if (j == nullptr) return absl::OkStatus();
    if (!ToDouble(*j, value)) return Bad(key, *j, "a number");
    return absl::OkStatus();
  }

  absl::Status DoublePair(std::string_view key, std::array<double, 2>* value) const {
    const json* j = Find(key);
    if (j == nullptr) return absl::OkStatus();
    if (!j->is_array() || j->size() != 2 || !ToDouble((*j)[0], &(*value)[0]) ||
        !ToDouble((*j)[1], &(*value)[1])) {
      return Bad(key, *j, "an array of 2 numbers");
    }
    return absl::OkStatus();
  }

  // 0/1 data: integers or booleans; other integers are passed on for the
  // target to reject with its own message.
  absl::Status IntList(std::string_view key, std::vector<int>* value) const {
    const json* j = Find(key);
    if (j == nullptr) return absl::OkStatus();
    if (!j->is_array()) return Bad(key, *j, "an array of integers");
    std::vector<int> out;
    for (const json& e : *j) {
      int64_t v = 0;
      if (e.is_boolean()) {
        v = e.get<bool>() ? 1 : 0;
      } else if (e.is_number_integer() && !e.is_number_unsigned()) {
        v = e.get<int64_t>();
      } else if (e.is_number_unsigned() && e.get<uint64_t>() <= INT_MAX) {
        v = static_cast<int64_t>(e.get<uint64_t>());
      } else {
        return Bad(key, *j, "an array of integers");
      }
      if (v < INT_MIN || v > INT_MAX) return Bad(key, *j, "an array of small integers");
      out.push_back(static_cast<int>(v));
    }
    *value = std::move(out);
    return absl::OkStatus();
  }

 private:
  const json* Find(std::string_view key) const {
    if (!params_.is_object()) return nullptr;
    auto it = params_.find(std::string(key));
    return it == params_.end() ? nullptr : &*it;
  }

  static bool ToDouble(const json& j, double* value) {
    if (j.is_number()) {
      *value = j.get<double>();
      return true;
    }
    if (j.is_string()) {
      const std::string& s = j.get_ref<const std::string&>();
      if (s == "nan") *value = std::numeric_limits<double>::quiet_NaN();
      else if (s == "inf") *value = std::numeric_limits<double>::infinity();
      else if (s == "-inf") *value = -std::numeric_limits<double>::infinity();
      else return false;
      return true;
    }
    return false;
  }

  absl::Status Bad(std::string_view key, const json& j, std::string_view expected) const {
    return absl::InvalidArgumentError(absl::StrCat("target '", target_, "': parameter '",
                                              std::string(key), "' must be ",
                                              std::string(expected), ", got ", Dump(j)));
  }

  std::string target_;
  const json& params_;
};

using Factory =
    std::function<absl::StatusOr<std::unique_ptr<Target>>(const ParamReader& params)>;

struct Entry {
  TargetInfo info;
  Factory make;
};

// Converts Create's StatusOr<unique_ptr<Derived>> to the base.
template <typename T>
absl::StatusOr<std::unique_ptr<Target>> Upcast(absl::StatusOr<std::unique_ptr<T>> made) {
  if (!made.ok()) return made.status();
  return std::unique_ptr<Target>(std::move(made).value());
}

const TargetParamInfo kDimension100{"dimension", "integer >= 1 (default 100)"};
const TargetParamInfo kDimension2{"dimension", "integer >= 1 (default 2)"};
const TargetParamInfo kRho{"rho", "correlation in (-1, 1) (default 0.9)"};

Entry Ar1Entry(std::string name, Ar1Gaussian::Variant variant, std::string summary) {
  return {{std::move(name), std::move(summary),
           {variant == Ar1Gaussian::Variant::kTridiagonal
                ? kDimension100
                : TargetParamInfo{"dimension", "integer in [1, 4096] (default 100)"},
            kRho}},
          [variant](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
            Ar1Gaussian::Options o;
            AB_RETURN_IF_ERROR(p.Int("dimension", &o.dimension));
            AB_RETURN_IF_ERROR(p.Double("rho", &o.rho));
            return Upcast(Ar1Gaussian::Create(variant, o));
          }};
}

// Sorted by name.
std::vector<Entry> Entries() {
  std::vector<Entry> entries;
  entries.push_back(Ar1Entry("ar1", Ar1Gaussian::Variant::kTridiagonal,
                             "AR(1) Gaussian, Sigma_ij = rho^|i-j|: tridiagonal precision, O(d) per gradient; "
                             "varied tree depths (the divergent-control-flow workload)"));
  entries.push_back(Ar1Entry("ar1_batched", Ar1Gaussian::Variant::kBatched,
                             "AR(1) Gaussian whose gradient is one matrix product over the active "
                             "chains (a batched kernel: draws not bit-identical across "
                             "batch sizes)"));
  entries.push_back(Ar1Entry("ar1_dense", Ar1Gaussian::Variant::kDense,
                             "AR(1) Gaussian with a dense precision matrix: one matrix-vector "
                             "product per chain, O(d^2)"));
  entries.push_back(
      {{"banana", "banana: x0 ~ N(0, 10^2), x1 ~ N(curvature (x0^2 - 100), 1); a curved "
        "ridge",
        {{"curvature", "finite number (default 0.03)"}}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         Banana::Options o;
         AB_RETURN_IF_ERROR(p.Double("curvature", &o.curvature));
         return Upcast(Banana::Create(o));
       }});
  entries.push_back(
      {{"beta_bernoulli", "Beta-Bernoulli: theta ~ Beta(a, b), y_i ~ Bernoulli(theta), sampled on "
        "the logit scale; closed-form posterior",
        {{"a", "positive number (default 1)"},
         {"b", "positive number (default 1)"},
         {"y", "array of 0/1 (default Stan's bernoulli data [0,1,0,0,0,0,0,0,0,1])"}}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         BetaBernoulli::Options o;
         AB_RETURN_IF_ERROR(p.Double("a", &o.a));
         AB_RETURN_IF_ERROR(p.Double("b", &o.b));
         AB_RETURN_IF_ERROR(p.IntList("y", &o.y));
         return Upcast(BetaBernoulli::Create(o));
       }});
  entries.push_back(
      {{"bimodal", "two Gaussian modes, 0.5 N(-offset, I) + 0.5 N(+offset, I): chains that "
        "start apart give R-hat > 1",
        {kDimension2, {"offset", "finite number (default 4)"}}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         Bimodal::Options o;
         AB_RETURN_IF_ERROR(p.Int("dimension", &o.dimension));
         AB_RETURN_IF_ERROR(p.Double("offset", &o.offset));
         return Upcast(Bimodal::Create(o));
       }});
  entries.push_back(
      {{"correlated_2d", "2-d correlated Gaussian, mean (0, 3), sd (1, 2), correlation 0.75",
        {{"mean", "array of 2 finite numbers (default [0, 3])"},
         {"sd", "array of 2 positive numbers (default [1, 2])"},
         {"rho", "correlation in (-1, 1) (default 0.75)"}}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         Correlated2d::Options o;
         AB_RETURN_IF_ERROR(p.DoublePair("mean", &o.mean));
         AB_RETURN_IF_ERROR(p.DoublePair("sd", &o.sd));
         AB_RETURN_IF_ERROR(p.Double("rho", &o.rho));
         return Upcast(Correlated2d::Create(o));
       }});
  entries.push_back(
      {{"eight_schools", "the non-centred eight schools hierarchical model: mu, tau, eta[8] "
        "(theta[8] generated); use --delta 0.9 or more", {}},
       [](const ParamReader&) -> absl::StatusOr<std::unique_ptr<Target>> {
         return std::unique_ptr<Target>(EightSchools::Create());
       }});
  entries.push_back(
      {{"energy_jump",
        "mock: log p = 0 at the origin, -height elsewhere, gradient 0 (divergence tests)",
        {kDimension2, {"height", "number, not infinite (default 1001)"}},
        /*test_only=*/true},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         EnergyJump::Options o;
         AB_RETURN_IF_ERROR(p.Int("dimension", &o.dimension));
         AB_RETURN_IF_ERROR(p.Double("height", &o.height));
         return Upcast(EnergyJump::Create(o));
       }});
  entries.push_back(
      {{"funnel", "Neal's funnel: x0 ~ N(0, 3^2), x_i ~ N(0, exp(x0/2)^2); hard for NUTS "
        "by design (divergences expected)",
        {{"dimension", "integer >= 1 (default 10)"}}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         Funnel::Options o;
         AB_RETURN_IF_ERROR(p.Int("dimension", &o.dimension));
         return Upcast(Funnel::Create(o));
       }});
  entries.push_back(
      {{"iid_gaussian", "standard Gaussian N(0, I): every chain takes the same tree depth",
        {kDimension100}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         IidGaussian::Options o;
         AB_RETURN_IF_ERROR(p.Int("dimension", &o.dimension));
         return Upcast(IidGaussian::Create(o));
       }});
  entries.push_back(
      {{"ill_conditioned", "diagonal Gaussian, sd log-spaced from min_sd to max_sd: tests metric "
        "adaptation",
        {kDimension100,
         {"min_sd", "positive number (default 1)"},
         {"max_sd", "positive number (default 100)"}}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         IllConditionedGaussian::Options o;
         AB_RETURN_IF_ERROR(p.Int("dimension", &o.dimension));
         AB_RETURN_IF_ERROR(p.Double("min_sd", &o.min_sd));
         AB_RETURN_IF_ERROR(p.Double("max_sd", &o.max_sd));
         return Upcast(IllConditionedGaussian::Create(o));
       }});
  entries.push_back(
      {{"logistic_regression", "Bayesian logistic regression (intercept + features) on synthetic data "
        "from a fixed seed",
        {{"rows", "integer in [1, 1000000] (default 200)"},
         {"features", "integer in [1, 1000] (default 5)"},
         {"seed", "non-negative integer, the data seed (default 20240601)"},
         {"prior_sd", "positive number (default 2.5)"}}},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         LogisticRegression::Options o;
         AB_RETURN_IF_ERROR(p.Int("rows", &o.rows));
         AB_RETURN_IF_ERROR(p.Int("features", &o.features));
         AB_RETURN_IF_ERROR(p.Uint("seed", &o.seed));
         AB_RETURN_IF_ERROR(p.Double("prior_sd", &o.prior_sd));
         return Upcast(LogisticRegression::Create(o));
       }});
  entries.push_back(
      {{"never_uturn", "mock: flat density (gradient 0), trajectories never U-turn",
        {kDimension2},
        /*test_only=*/true},
       [](const ParamReader& p) -> absl::StatusOr<std::unique_ptr<Target>> {
         NeverUturn::Options o;
         AB_RETURN_IF_ERROR(p.Int("dimension", &o.dimension));
         return Upcast(NeverUturn::Create(o));
       }});
  return entries;
}

std::string DescribeParams(const TargetInfo& info) {
  if (info.params.empty()) return "it takes no parameters";
  std::vector<std::string> lines;
  for (const TargetParamInfo& p : info.params) {
    lines.push_back(absl::StrCat(p.name, ": ", p.description));
  }
  return absl::StrCat("its parameters are ", absl::StrJoin(lines, "; "));
}

}  // namespace

std::vector<std::string> TargetNames() {
  std::vector<std::string> names;
  for (const Entry& e : Entries()) names.push_back(e.info.name);
  return names;
}

std::vector<TargetInfo> TargetInfos() {
  std::vector<TargetInfo> infos;
  for (Entry& e : Entries()) infos.push_back(std::move(e.info));
  return infos;
}

std::vector<std::string> UserTargetNames() {
  std::vector<std::string> names;
  for (const Entry& e : Entries()) {
    if (!e.info.test_only) names.push_back(e.info.name);
  }
  return names;
}

absl::StatusOr<std::unique_ptr<Target>> MakeTarget(std::string_view name,
                                                   const json& params) {
  std::vector<Entry> entries = Entries();
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const Entry& e) { return e.info.name == name; });
  if (it == entries.end()) {
    std::vector<std::string> test_targets;
    for (const Entry& e : entries) {
      if (e.info.test_only) test_targets.push_back(e.info.name);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown target ", QuotedExcerpt(name), "; known targets: ",
        absl::StrJoin(UserTargetNames(), ", "), " (`autobatch targets` describes them; for the "
        "samplers' tests also ", absl::StrJoin(test_targets, ", "), ")"));
  }
  const TargetInfo& info = it->info;
  if (!params.is_null() && !params.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target '", info.name, "': parameters must be a JSON object such as "
        "{\"dimension\": 50}, got ", Dump(params)));
  }
  if (params.is_object()) {
    for (auto item = params.begin(); item != params.end(); ++item) {
      const std::string& key = item.key();
      bool known = std::any_of(info.params.begin(), info.params.end(),
                               [&](const TargetParamInfo& p) { return p.name == key; });
      if (!known) {
        return absl::InvalidArgumentError(absl::StrCat("target '", info.name,
                                                       "' has no parameter ", QuotedExcerpt(key),
                                                       "; ", DescribeParams(info)));
      }
    }
  }
  absl::StatusOr<std::unique_ptr<Target>> target = it->make(ParamReader(info.name, params));
  if (!target.ok()) {
    return absl::Status(target.status().code(),
                        absl::StrCat(target.status().message(), " (", DescribeParams(info),
                                     ")"));
  }
  return target;
}

absl::StatusOr<json> ParseTargetParams(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  if (text.empty()) return json::object();
  if (text.front() == '{') {
    absl::StatusOr<json> j = ParseJsonText(text);
    if (!j.ok() || !j->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target parameters are not a valid JSON object (",
          j.ok() ? "not an object" : std::string(j.status().message()),
          "); write e.g. {\"dimension\": 50, \"rho\": 0.9} or dimension=50,rho=0.9"));
    }
    return *std::move(j);
  }
  // key=value pairs split at commas outside brackets.
  json out = json::object();
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '[' || text[i] == '{') {
      ++depth;
    } else if ((text[i] == ']' || text[i] == '}') && depth > 0) {
      --depth;
    }
  }
  for (std::string_view part : parts) {
    while (!part.empty() && is_space(part.front())) part.remove_prefix(1);
    while (!part.empty() && is_space(part.back())) part.remove_suffix(1);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target parameters: '", std::string(part),
          "' is not key=value; write e.g. dimension=50,rho=0.9"));
    }
    std::string key(part.substr(0, eq));
    while (!key.empty() && is_space(key.back())) key.pop_back();
    std::string_view value = part.substr(eq + 1);
    while (!value.empty() && is_space(value.front())) value.remove_prefix(1);
    if (out.contains(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("target parameters: '", key, "' is given twice"));
    }
    // A value that is not JSON is a string (name=eight_schools); one that is
    // JSON must be valid JSON (no key given twice inside it).
    json parsed = json::parse(value, /*cb=*/nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      out[key] = json(std::string(value));
      continue;
    }
    absl::StatusOr<json> strict = ParseJsonText(value);
    if (!strict.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("target parameters: '", key,
                                                     "': ", strict.status().message()));
    }
    out[key] = *std::move(strict);
  }
  return out;
}

}  // namespace autobatch::mcmc
