// AR(1) Gaussian target: tridiagonal, dense and GEMM-batched variants.
#include "mcmc/model/targets/ar1.h"

#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch::mcmc {

absl::StatusOr<std::unique_ptr<Ar1Gaussian>> Ar1Gaussian::Create(Variant variant,
                                                                 const Options& options) {
  const bool dense = variant != Variant::kTridiagonal;
  const char* name = variant == Variant::kTridiagonal ? "ar1"
                     : variant == Variant::kDense     ? "ar1_dense"
                                                      : "ar1_batched";
  AB_RETURN_IF_ERROR(target_internal::CheckDimension(
      name, options.dimension, 1,
      dense ? kMaxDenseDimension : target_internal::kMaxDimension));
  if (!(options.rho > -1 && options.rho < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": rho must be in (-1, 1), got ", options.rho));
  }
  return std::unique_ptr<Ar1Gaussian>(new Ar1Gaussian(variant, options));
}

Ar1Gaussian::Ar1Gaussian(Variant variant, const Options& options)
    : variant_(variant), options_(options) {
  if (variant_ == Variant::kTridiagonal) return;
  const int64_t d = options_.dimension;
  const double rho = options_.rho;
  const double c = 1.0 / (1.0 - rho * rho);
  precision_.assign(d * d, 0.0);
  if (d == 1) {
    precision_[0] = 1.0;
    return;
  }
  for (int64_t i = 0; i < d; ++i) {
    const bool end = i == 0 || i == d - 1;
    precision_[i * d + i] = end ? c : (1.0 + rho * rho) * c;
    if (i + 1 < d) {
      precision_[i * d + i + 1] = -rho * c;
      precision_[(i + 1) * d + i] = -rho * c;
    }
  }
}

std::string Ar1Gaussian::name() const {
  switch (variant_) {
    case Variant::kTridiagonal: return "ar1";
    case Variant::kDense: return "ar1_dense";
    case Variant::kBatched: return "ar1_batched";
  }
  return "ar1";
}

std::vector<ParameterSpec> Ar1Gaussian::parameters() const {
  return {{"x", {options_.dimension}, Transform::kIdentity}};
}

double Ar1Gaussian::LogDensityGradient(std::span<const double> q,
                                       std::span<double> grad) const {
  return variant_ == Variant::kTridiagonal ? TridiagonalLogDensity(q, grad)
                                           : DenseLogDensity(q, grad);
}

double Ar1Gaussian::TridiagonalLogDensity(std::span<const double> q,
                                          std::span<double> grad) const {
  // With r_i = (x_i - rho x_{i-1}) / (1 - rho^2) (r_0 unused, r_d = 0):
  // d/dx_0 = -x_0 + rho r_1, d/dx_i = -r_i + rho r_{i+1}.
  const int64_t d = options_.dimension;
  const double rho = options_.rho;
  const double c = 1.0 / (1.0 - rho * rho);
  double innovations = 0;  // sum_{i>=1} (x_i - rho x_{i-1})^2
  double r_next = 0;
  for (int64_t i = d - 1; i >= 1; --i) {
    const double e = q[i] - rho * q[i - 1];
    innovations += e * e;
    const double r = c * e;
    grad[i] = -r + rho * r_next;
    r_next = r;
  }
  grad[0] = -q[0] + rho * r_next;
  return -0.5 * q[0] * q[0] - 0.5 * c * innovations;
}

double Ar1Gaussian::DenseLogDensity(std::span<const double> q,
                                    std::span<double> grad) const {
  // grad = -P q accumulated column by column (P is symmetric, so column j
  // is row j): each grad_i sums over j in increasing order whatever the
  // vectorization of the inner loop.
  const int64_t d = options_.dimension;
  const double* p = precision_.data();
  for (int64_t i = 0; i < d; ++i) grad[i] = 0.0;
  for (int64_t j = 0; j < d; ++j) {
    const double qj = q[j];
    const double* column = p + j * d;
    for (int64_t i = 0; i < d; ++i) grad[i] -= column[i] * qj;
  }
  double quadratic = 0;  // q.(P q) = -q.grad
  for (int64_t i = 0; i < d; ++i) quadratic -= q[i] * grad[i];
  return -0.5 * quadratic;
}

void Ar1Gaussian::LogDensityGradientBatch(const double* q, double* logp, double* grad,
                                          int64_t lanes, const uint8_t* active) const {
  if (variant_ != Variant::kBatched) {
    Model::LogDensityGradientBatch(q, logp, grad, lanes, active);
    return;
  }
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  const int64_t d = options_.dimension;
  // Row-major P is its own transpose, so mapping it column-major is P too.
  Eigen::Map<const Matrix> p(precision_.data(), d, d);
  int64_t count = lanes;
  if (active != nullptr) {
    count = 0;
    for (int64_t l = 0; l < lanes; ++l) count += active[l] ? 1 : 0;
  }
  if (count == 0) return;
  // Lane-major storage is a column-major d x lanes matrix.
  const double* x = q;
  double* g = grad;
  thread_local std::vector<double> gathered_x, gathered_g;
  if (count != lanes) {
    gathered_x.resize(count * d);
    gathered_g.resize(count * d);
    int64_t k = 0;
    for (int64_t l = 0; l < lanes; ++l) {
      if (!active[l]) continue;
      std::copy(q + l * d, q + (l + 1) * d, gathered_x.begin() + k * d);
      ++k;
    }
    x = gathered_x.data();
    g = gathered_g.data();
  }
  Eigen::Map<const Matrix> xs(x, d, count);
  Eigen::Map<Matrix> gs(g, d, count);
  gs.noalias() = p * xs;
  gs = -gs;
  int64_t k = 0;
  for (int64_t l = 0; l < lanes; ++l) {
    if (active != nullptr && !active[l]) continue;
    const double* xl = x + k * d;
    const double* gl = g + k * d;
    double quadratic = 0;
    for (int64_t i = 0; i < d; ++i) quadratic -= xl[i] * gl[i];
    logp[l] = -0.5 * quadratic;
    if (count != lanes) std::copy(gl, gl + d, grad + l * d);
    ++k;
  }
}

KnownMoments Ar1Gaussian::known_moments() const {
  return {std::vector<double>(options_.dimension, 0.0),
          std::vector<double>(options_.dimension, 1.0)};
}

void Ar1Gaussian::ExactDraw(std::span<const double> normals, std::span<double> q) const {
  const double rho = options_.rho;
  const double s = std::sqrt(1.0 - rho * rho);
  q[0] = normals[0];
  for (int64_t i = 1; i < options_.dimension; ++i) q[i] = rho * q[i - 1] + s * normals[i];
}

}  // namespace autobatch::mcmc
