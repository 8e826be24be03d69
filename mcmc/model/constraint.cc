// Stan's constraint transforms on the host: validation, forward and inverse.
#include "mcmc/model/constraint.h"

#include <cmath>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "support/math/math.h"
#include "support/status.h"

namespace autobatch::mcmc {
namespace {

using Kind = Transform::Kind;

// reduce_sum's order: the first term, then + each next one (0 when empty).
double ReduceSum(std::span<const double> terms) {
  if (terms.empty()) return 0;
  double sum = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) sum = sum + terms[i];
  return sum;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("{", absl::StrJoin(shape, ", "), "}");
}

absl::Status SpecError(const ParameterSpec& spec, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("parameter '", spec.name, "': ", what));
}

absl::Status Outside(const ParameterSpec& spec, int64_t k, double x, const std::string& support) {
  return absl::InvalidArgumentError(
      absl::StrCat("value ", x, " of parameter ", ElementName(spec, k),
                   " is outside its support: ", support, "; give a value inside the support"));
}

}  // namespace

std::string Transform::ToString() const {
  switch (kind) {
    case Kind::kIdentity:
      return "identity";
    case Kind::kLowerBound:
      return absl::StrCat("lower bound ", lower);
    case Kind::kUpperBound:
      return absl::StrCat("upper bound ", upper);
    case Kind::kBounded:
      return absl::StrCat("bounds (", lower, ", ", upper, ")");
    case Kind::kSimplex:
      return "simplex";
    case Kind::kOrdered:
      return "ordered";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, const Transform& transform) {
  return os << transform.ToString();
}

int64_t ParameterSpec::size() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

int64_t ParameterSpec::unconstrained_size() const {
  const int64_t n = size();
  if (transform.kind == Kind::kSimplex) return n >= 1 ? n - 1 : 0;
  return n;
}

absl::Status ValidateParameter(const ParameterSpec& spec) {
  for (int64_t extent : spec.shape) {
    if (extent < 0) {
      return SpecError(spec,
                       absl::StrCat("shape ", ShapeString(spec.shape), " has a negative extent"));
    }
  }
  const Transform& t = spec.transform;
  switch (t.kind) {
    case Kind::kIdentity:
      return absl::OkStatus();
    case Kind::kSimplex:
    case Kind::kOrdered: {
      const char* what = t.kind == Kind::kSimplex ? "a simplex" : "an ordered vector";
      if (spec.shape.size() != 1) {
        return SpecError(spec, absl::StrCat(what, " must be 1-D (shape {K}), got shape ",
                                            ShapeString(spec.shape)));
      }
      if (t.kind == Kind::kSimplex && spec.shape[0] < 1) {
        return SpecError(spec,
                         absl::StrCat("a simplex needs K >= 1 elements, got K = ", spec.shape[0]));
      }
      return absl::OkStatus();
    }
    case Kind::kLowerBound:
    case Kind::kUpperBound:
    case Kind::kBounded: {
      const bool has_lower = t.kind != Kind::kUpperBound;
      const bool has_upper = t.kind != Kind::kLowerBound;
      if (has_lower && !std::isfinite(t.lower)) {
        return SpecError(spec, absl::StrCat("lower bound ", t.lower,
                                            " is not finite; give a finite bound or none"));
      }
      if (has_upper && !std::isfinite(t.upper)) {
        return SpecError(spec, absl::StrCat("upper bound ", t.upper,
                                            " is not finite; give a finite bound or none"));
      }
      if (has_lower && has_upper) {
        if (!(t.lower < t.upper)) {
          return SpecError(spec, absl::StrCat("lower bound ", t.lower,
                                              " must be less than upper bound ", t.upper));
        }
        if (!std::isfinite(t.upper - t.lower)) {
          return SpecError(spec, absl::StrCat("the width of bounds (", t.lower, ", ", t.upper,
                                              ") overflows; give narrower bounds"));
        }
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

std::string ElementName(const ParameterSpec& spec, int64_t flat) {
  std::string name = spec.name;
  for (int64_t extent : spec.shape) {
    absl::StrAppend(&name, ".", flat % extent + 1);
    flat /= extent;
  }
  return name;
}

double ConstrainParameter(const ParameterSpec& spec, std::span<const double> y,
                          std::span<double> x) {
  const int64_t n = spec.size();
  const int64_t m = spec.unconstrained_size();
  AB_CHECK(static_cast<int64_t>(x.size()) == n && static_cast<int64_t>(y.size()) == m,
           "ConstrainParameter: x needs size() and y unconstrained_size() values");
  const Transform& t = spec.transform;
  std::vector<double> terms(static_cast<size_t>(m));
  switch (t.kind) {
    case Kind::kIdentity:
      for (int64_t i = 0; i < n; ++i) x[i] = y[i];
      return 0;
    case Kind::kLowerBound:
      for (int64_t i = 0; i < n; ++i) x[i] = t.lower + math::Exp(y[i]);
      return ReduceSum(y);
    case Kind::kUpperBound:
      for (int64_t i = 0; i < n; ++i) x[i] = t.upper - math::Exp(y[i]);
      return ReduceSum(y);
    case Kind::kBounded: {
      const double width = t.upper - t.lower;
      const double log_width = math::Log(width);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = t.lower + width * math::Logistic(y[i]);
        terms[i] = (log_width - math::Log1pExp(-y[i])) - math::Log1pExp(y[i]);
      }
      return ReduceSum(terms);
    }
    case Kind::kSimplex: {
      if (m == 0) {
        x[0] = 1.0;
        return 0;
      }
      double stick = 0;
      for (int64_t k = 0; k < m; ++k) {
        const double shift = y[k] - math::Log(static_cast<double>(m - k));
        const double z = math::Logistic(shift);
        const double one_minus_z = math::Logistic(-shift);
        x[k] = k == 0 ? z : stick * z;
        stick = k == 0 ? one_minus_z : stick * one_minus_z;
        terms[k] = math::Log1pExp(-shift) + static_cast<double>(m - k) * math::Log1pExp(shift);
      }
      x[m] = stick;
      return -ReduceSum(terms);
    }
    case Kind::kOrdered: {
      if (n == 0) return 0;
      x[0] = y[0];
      for (int64_t k = 1; k < n; ++k) x[k] = x[k - 1] + math::Exp(y[k]);
      return ReduceSum(y.subspan(1));
    }
  }
  return 0;
}

absl::Status UnconstrainParameter(const ParameterSpec& spec, std::span<const double> x,
                                  std::span<double> y) {
  const int64_t n = spec.size();
  const int64_t m = spec.unconstrained_size();
  AB_CHECK(static_cast<int64_t>(x.size()) == n && static_cast<int64_t>(y.size()) == m,
           "UnconstrainParameter: x needs size() and y unconstrained_size() values");
  const Transform& t = spec.transform;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return Outside(spec, i, x[i], "it must be finite");
  }
  switch (t.kind) {
    case Kind::kIdentity:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i];
      break;
    case Kind::kLowerBound:
      for (int64_t i = 0; i < n; ++i) {
        if (!(x[i] > t.lower)) {
          return Outside(spec, i, x[i], absl::StrCat("it must be > ", t.lower, " (lower bound)"));
        }
        y[i] = math::Log(x[i] - t.lower);
      }
      break;
    case Kind::kUpperBound:
      for (int64_t i = 0; i < n; ++i) {
        if (!(x[i] < t.upper)) {
          return Outside(spec, i, x[i], absl::StrCat("it must be < ", t.upper, " (upper bound)"));
        }
        y[i] = math::Log(t.upper - x[i]);
      }
      break;
    case Kind::kBounded: {
      const double width = t.upper - t.lower;
      for (int64_t i = 0; i < n; ++i) {
        if (!(x[i] > t.lower && x[i] < t.upper)) {
          return Outside(spec, i, x[i],
                         absl::StrCat("it must be in (", t.lower, ", ", t.upper, ") (bounds)"));
        }
        const double u = (x[i] - t.lower) / width;
        y[i] = math::Log(u) - math::Log1p(-u);
      }
      break;
    }
    case Kind::kSimplex: {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (x[i] < 0) {
          return Outside(spec, i, x[i], "a simplex's entries must be >= 0 and sum to 1");
        }
        sum += x[i];
      }
      if (!(std::abs(sum - 1) <= 1e-8)) {
        return absl::InvalidArgumentError(
            absl::StrCat("parameter ", spec.name,
                         " is outside its support: a simplex's entries must sum to 1 "
                         "(within 1e-8), these sum to ",
                         absl::StrFormat("%.12g", sum), "; give a value inside the support"));
      }
      // Stan's simplex_free: the stick summed from the end.
      double stick = x[m];
      for (int64_t k = m - 1; k >= 0; --k) {
        stick += x[k];
        const double z = x[k] / stick;
        y[k] = (math::Log(z) - math::Log1p(-z)) + math::Log(static_cast<double>(m - k));
      }
      break;
    }
    case Kind::kOrdered:
      for (int64_t k = 0; k < n; ++k) {
        if (k > 0 && !(x[k] > x[k - 1])) {
          return Outside(spec, k, x[k],
                         absl::StrCat("an ordered vector must be strictly increasing, and ",
                                      ElementName(spec, k - 1), " = ", x[k - 1]));
        }
        y[k] = k == 0 ? x[0] : math::Log(x[k] - x[k - 1]);
      }
      break;
  }
  for (int64_t i = 0; i < m; ++i) {
    if (!std::isfinite(y[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("value ", x[i], " of parameter ", ElementName(spec, i),
                       " is too close to the boundary of its support (", t.ToString(),
                       "): its unconstrained value is ", y[i], "; give a value further inside"));
    }
  }
  return absl::OkStatus();
}

}  // namespace autobatch::mcmc
