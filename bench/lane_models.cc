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
// lane's sums in row order. X is read once per chunk.
class LogisticRegressionLanes final : public LaneModel {
 public:
  static constexpr int64_t kChunk = 16;
  static constexpr int64_t kRows = 32;
  static_assert(kLaneModelMultiple % kChunk == 0);

  explicit LogisticRegressionLanes(const LogisticRegression& target)
      : data_(target.data()), prior_precision_(target.prior_precision()) {
    const size_t k = static_cast<size_t>(data_.features);
    beta_.resize(k * kChunk);
    grad_beta_.resize(k * kChunk);
  }

  void LogDensityGradient(const double* q, int64_t n, int64_t stride, double* grad,
                          double* logp) override {
    for (int64_t c = 0; c < n; c += kChunk) Chunk(q + c, stride, grad + c, logp + c);
  }

 private:
  void Chunk(const double* q, int64_t stride, double* grad, double* logp) {
    constexpr int64_t W = kChunk;
    const int64_t k = data_.features;
    const double pp = prior_precision_;
    double* __restrict beta = beta_.data();
    double* __restrict grad_beta = grad_beta_.data();
    alignas(64) double alpha[W], lp[W], grad_alpha[W], res[W * kRows];
    alignas(64) double s[W * kRows], t[W * kRows], r[W * kRows];
    #pragma GCC ivdep
    for (int64_t l = 0; l < W; ++l) {
      alpha[l] = q[l];
      lp[l] = -alpha[l] * alpha[l];
      grad_alpha[l] = -alpha[l] * pp;
    }
    for (int64_t j = 0; j < k; ++j) {
      const double* b = q + (1 + j) * stride;
      #pragma GCC ivdep
      for (int64_t l = 0; l < W; ++l) {
        beta[j * W + l] = b[l];
        lp[l] -= b[l] * b[l];
        grad_beta[j * W + l] = -b[l] * pp;
      }
    }
    #pragma GCC ivdep
    for (int64_t l = 0; l < W; ++l) lp[l] *= 0.5 * pp;
    for (int64_t first = 0; first < data_.rows; first += kRows) {
      const int64_t rows = std::min(kRows, data_.rows - first);
      const double* x0 = data_.x.data() + first * k;
      for (int64_t i = 0; i < rows; ++i) {
        const double* x = x0 + i * k;
        double eta[W];
        #pragma GCC ivdep
        for (int64_t l = 0; l < W; ++l) eta[l] = alpha[l];
        for (int64_t j = 0; j < k; ++j) {
          const double xj = x[j];
          #pragma GCC ivdep
          for (int64_t l = 0; l < W; ++l) eta[l] += xj * beta[j * W + l];
        }
        // y log s(eta) + (1 - y) log s(-eta): softplus and logistic of s.
        const bool one = data_.y[static_cast<size_t>(first + i)] != 0;
        #pragma GCC ivdep
        for (int64_t l = 0; l < W; ++l) {
          const double si = one ? -eta[l] : eta[l];
          s[i * W + l] = si;
          t[i * W + l] = -std::fabs(si);
        }
      }
      math::Eval(math::Fn::kExp, t, t, rows * W);
      math::Eval(math::Fn::kLog1p, t, r, rows * W);
      for (int64_t i = 0; i < rows; ++i) {
        const bool one = data_.y[static_cast<size_t>(first + i)] != 0;
        #pragma GCC ivdep
        for (int64_t l = 0; l < W; ++l) {
          const double si = s[i * W + l], ti = t[i * W + l];
          const double softplus = si > 0 ? si + r[i * W + l] : r[i * W + l];
          const double logistic = si >= 0 ? 1.0 / (1.0 + ti) : ti / (1.0 + ti);
          lp[l] -= softplus;
          const double residual = one ? logistic : -logistic;
          res[i * W + l] = residual;
          grad_alpha[l] += residual;
        }
      }
      for (int64_t j = 0; j < k; ++j) {
        double acc[W];
        #pragma GCC ivdep
        for (int64_t l = 0; l < W; ++l) acc[l] = grad_beta[j * W + l];
        for (int64_t i = 0; i < rows; ++i) {
          const double xij = x0[i * k + j];
          #pragma GCC ivdep
          for (int64_t l = 0; l < W; ++l) acc[l] += res[i * W + l] * xij;
        }
        #pragma GCC ivdep
        for (int64_t l = 0; l < W; ++l) grad_beta[j * W + l] = acc[l];
      }
    }
    #pragma GCC ivdep
    for (int64_t l = 0; l < W; ++l) {
      logp[l] = lp[l];
      grad[l] = grad_alpha[l];
    }
    for (int64_t j = 0; j < k; ++j) {
      double* g = grad + (1 + j) * stride;
      #pragma GCC ivdep
      for (int64_t l = 0; l < W; ++l) g[l] = grad_beta[j * W + l];
    }
  }

  const LogisticRegression::Data& data_;
  double prior_precision_;
  std::vector<double> beta_, grad_beta_;  // features x kChunk
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
    const double lp = model.LogDensityGradient(
        std::span<const double>(p, static_cast<size_t>(d)), want);
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
