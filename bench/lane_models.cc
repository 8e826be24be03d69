// Hand-written targets' log density and gradient across lanes (see the header).
#include "bench/lane_models.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "mcmc/model/targets/eight_schools.h"
#include "mcmc/model/targets/logistic_regression.h"
#include "support/math/math.h"

namespace autobatch::mcmc {
namespace {

// EightSchools::LogDensityGradient, every lane's statements in its order, the
// lanes innermost; exp and log1p across all n lanes at once.
class EightSchoolsLanes final : public LaneModel {
 public:
  void LogDensityGradient(const double* q, int64_t n, int64_t stride, double* grad,
                          double* logp) override {
    for (auto* v : {&tau_, &tt_, &log1p_, &d_mu_, &d_tau_}) v->resize(static_cast<size_t>(n));
    double* __restrict tau = tau_.data();
    double* __restrict tt = tt_.data();
    double* __restrict lg = log1p_.data();
    double* __restrict d_mu = d_mu_.data();
    double* __restrict d_tau = d_tau_.data();
    double* __restrict lp = logp;
    const double* mu = q;
    const double* u = q + stride;
    math::Eval(math::Fn::kExp, u, tau, n);
#pragma GCC ivdep
    for (int64_t l = 0; l < n; ++l) {
      const double t = tau[l] / 5.0;
      tt[l] = t * t;
    }
    math::Eval(math::Fn::kLog1p, tt, lg, n);
#pragma GCC ivdep
    for (int64_t l = 0; l < n; ++l) {
      double logp_l = -mu[l] * mu[l] / 50.0;
      logp_l += -lg[l] + u[l];
      lp[l] = logp_l;
      d_mu[l] = -mu[l] / 25.0;
      d_tau[l] = -2.0 * tau[l] / (25.0 + tau[l] * tau[l]);
    }
    for (int j = 0; j < 8; ++j) {
      const double y = EightSchools::kY[j];
      const double inv_var = 1.0 / (EightSchools::kSigma[j] * EightSchools::kSigma[j]);
      const double* eta = q + (2 + j) * stride;
      double* __restrict g = grad + (2 + j) * stride;
#pragma GCC ivdep
      for (int64_t l = 0; l < n; ++l) {
        const double residual = y - (mu[l] + tau[l] * eta[l]);
        lp[l] += -0.5 * eta[l] * eta[l] - 0.5 * residual * residual * inv_var;
        const double r = residual * inv_var;
        d_mu[l] += r;
        d_tau[l] += r * eta[l];
        g[l] = -eta[l] + r * tau[l];
      }
    }
    double* __restrict g0 = grad;
    double* __restrict g1 = grad + stride;
#pragma GCC ivdep
    for (int64_t l = 0; l < n; ++l) {
      g0[l] = d_mu[l];
      g1[l] = d_tau[l] * tau[l] + 1.0;
    }
  }

 private:
  std::vector<double> tau_, tt_, log1p_, d_mu_, d_tau_;
};

// LogisticRegression::LogDensityGradient for chunks of kChunk lanes (the
// chunk's coefficients and gradient accumulators stay in L1), the rows in
// blocks of kRows: the block's linear predictors X·B (per lane, alpha then
// the features in order), one exp and one log1p across the block's rows and
// lanes, softplus and logistic from them (support/math's formulas for
// log1p_exp and logistic share t = exp(-|s|)), then the adjoint Xᵀ·r, each
// lane's sums in row order. X is read once per chunk. Written with GCC's
// vector types, 4 lanes each (plain lane loops let the compiler vectorize
// across rows with shuffles instead): element-wise IEEE operations, the
// same bits as the scalar ones.
class LogisticRegressionLanes final : public LaneModel {
 public:
  static constexpr int64_t kChunk = 16;
  static constexpr int64_t kRows = 32;
  static_assert(kLaneModelMultiple % kChunk == 0);

  explicit LogisticRegressionLanes(const LogisticRegression& target)
      : data_(target.data()), prior_precision_(target.prior_precision()) {
    const size_t k = static_cast<size_t>(data_.features);
    beta_.resize(k * kVectors);
    grad_beta_.resize(k * kVectors);
  }

  void LogDensityGradient(const double* q, int64_t n, int64_t stride, double* grad,
                          double* logp) override {
    for (int64_t c = 0; c < n; c += kChunk) Chunk(q + c, stride, grad + c, logp + c);
  }

 private:
  using V = double __attribute__((vector_size(32)));
  static constexpr int64_t kVectors = kChunk / 4;

  static V Load(const double* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void Store(V v, double* p) { std::memcpy(p, &v, sizeof v); }

  void Chunk(const double* q, int64_t stride, double* grad, double* logp) {
    constexpr int64_t W = kVectors;
    const int64_t k = data_.features;
    const double pp = prior_precision_;
    V* beta = beta_.data();
    V* grad_beta = grad_beta_.data();
    V alpha[W], lp[W], grad_alpha[W];
    V s[W * kRows], t[W * kRows], r[W * kRows], res[W * kRows];
    for (int64_t v = 0; v < W; ++v) {
      alpha[v] = Load(q + 4 * v);
      lp[v] = -alpha[v] * alpha[v];
      grad_alpha[v] = -alpha[v] * pp;
    }
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t v = 0; v < W; ++v) {
        const V b = Load(q + (1 + j) * stride + 4 * v);
        beta[j * W + v] = b;
        lp[v] -= b * b;
        grad_beta[j * W + v] = -b * pp;
      }
    }
    for (int64_t v = 0; v < W; ++v) lp[v] *= 0.5 * pp;
    for (int64_t first = 0; first < data_.rows; first += kRows) {
      const int64_t rows = std::min(kRows, data_.rows - first);
      const double* x0 = data_.x.data() + first * k;
      for (int64_t i = 0; i < rows; ++i) {
        const double* x = x0 + i * k;
        V eta[W];
        for (int64_t v = 0; v < W; ++v) eta[v] = alpha[v];
        for (int64_t j = 0; j < k; ++j) {
          const double xj = x[j];
          for (int64_t v = 0; v < W; ++v) eta[v] += xj * beta[j * W + v];
        }
        // y log s(eta) + (1 - y) log s(-eta): softplus and logistic of s.
        const bool one = data_.y[static_cast<size_t>(first + i)] != 0;
        for (int64_t v = 0; v < W; ++v) {
          const V si = one ? -eta[v] : eta[v];
          s[i * W + v] = si;
          t[i * W + v] = si > 0 ? -si : si;  // -|s|
        }
      }
      double* t_flat = reinterpret_cast<double*>(t);
      math::Eval(math::Fn::kExp, t_flat, t_flat, rows * kChunk);
      math::Eval(math::Fn::kLog1p, t_flat, reinterpret_cast<double*>(r), rows * kChunk);
      for (int64_t i = 0; i < rows; ++i) {
        const bool one = data_.y[static_cast<size_t>(first + i)] != 0;
        for (int64_t v = 0; v < W; ++v) {
          const V si = s[i * W + v], ti = t[i * W + v], ri = r[i * W + v];
          const V softplus = si > 0 ? si + ri : ri;
          const V logistic = si >= 0 ? 1.0 / (1.0 + ti) : ti / (1.0 + ti);
          lp[v] -= softplus;
          const V residual = one ? logistic : -logistic;
          res[i * W + v] = residual;
          grad_alpha[v] += residual;
        }
      }
      for (int64_t j = 0; j < k; ++j) {
        V acc[W];
        for (int64_t v = 0; v < W; ++v) acc[v] = grad_beta[j * W + v];
        for (int64_t i = 0; i < rows; ++i) {
          const double xij = x0[i * k + j];
          for (int64_t v = 0; v < W; ++v) acc[v] += res[i * W + v] * xij;
        }
        for (int64_t v = 0; v < W; ++v) grad_beta[j * W + v] = acc[v];
      }
    }
    for (int64_t v = 0; v < W; ++v) {
      Store(lp[v], logp + 4 * v);
      Store(grad_alpha[v], grad + 4 * v);
    }
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t v = 0; v < W; ++v) Store(grad_beta[j * W + v], grad + (1 + j) * stride + 4 * v);
    }
  }

  const LogisticRegression::Data& data_;
  double prior_precision_;
  std::vector<V> beta_, grad_beta_;  // features x kVectors
};

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

std::unique_ptr<LaneModel> MakeLaneModel(const Model& model) {
  if (dynamic_cast<const EightSchools*>(&model) != nullptr) {
    return std::make_unique<EightSchoolsLanes>();
  }
  if (const auto* lr = dynamic_cast<const LogisticRegression*>(&model)) {
    return std::make_unique<LogisticRegressionLanes>(*lr);
  }
  return nullptr;
}

std::string CheckLaneModel(const Model& model, LaneModel& lane_model,
                           const std::vector<const double*>& points) {
  const int64_t d = model.dimension();
  const int64_t count = static_cast<int64_t>(points.size());
  const int64_t n = (count + kLaneModelMultiple - 1) / kLaneModelMultiple * kLaneModelMultiple;
  std::vector<double> q(static_cast<size_t>(d * n), 0.0), grad(q.size()),
      logp(static_cast<size_t>(n));
  for (int64_t l = 0; l < count; ++l) {
    for (int64_t i = 0; i < d; ++i) q[i * n + l] = points[static_cast<size_t>(l)][i];
  }
  lane_model.LogDensityGradient(q.data(), n, n, grad.data(), logp.data());
  std::vector<double> want(static_cast<size_t>(d));
  for (int64_t l = 0; l < count; ++l) {
    const double* p = points[static_cast<size_t>(l)];
    const double lp =
        model.LogDensityGradient(std::span<const double>(p, static_cast<size_t>(d)), want);
    bool same = SameBits(lp, logp[l]);
    for (int64_t i = 0; i < d; ++i) same = same && SameBits(want[i], grad[i * n + l]);
    if (!same) {
      return "point " + std::to_string(l) + ": log density " + std::to_string(lp) +
             " across lanes " + std::to_string(logp[l]) + ", or the gradient differs";
    }
  }
  return "";
}

}  // namespace autobatch::mcmc
