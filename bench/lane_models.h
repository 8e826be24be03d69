// Hand-written targets' log density and gradient across lanes, for the
// floor benchmark (nuts_bound): what a NUTS leaf can do when it evaluates the
// model for all its chains at once instead of once per chain.
//
// Layout: structure of arrays. Coordinate i of lane l is q[i * stride + l];
// the gradient is written the same way and the log density to logp[l]. The
// caller pads: n is a multiple of kLaneModelMultiple, every lane in [0, n)
// holds a point (padding lanes hold any finite point), stride >= n.
//
// Bits: per lane, every operation and its order are the scalar target's
// (Model::LogDensityGradient), the transcendental functions are
// support/math's vector path (the same bits as its scalar path), and the
// build has no FMA contraction, so each lane's log density and gradient equal
// the scalar target's bit for bit (nuts_bound checks the draws, and
// CheckLaneModel checks the values).
#ifndef AUTOBATCH_BENCH_LANE_MODELS_H_
#define AUTOBATCH_BENCH_LANE_MODELS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mcmc/model/model.h"

namespace autobatch::mcmc {

inline constexpr int64_t kLaneModelMultiple = 16;

class LaneModel {
 public:
  virtual ~LaneModel() = default;
  // See the layout above. Not thread-safe (scratch is a member).
  virtual void LogDensityGradient(const double* q, int64_t n, int64_t stride, double* grad,
                                  double* logp) = 0;
};

// The across-lanes form of `model` (eight_schools, logistic_regression), or
// nullptr if it has none. The result reads model's data: it must outlive it.
std::unique_ptr<LaneModel> MakeLaneModel(const Model& model);

// Evaluates `lane_model` on `points` (each model.dimension() long; any count)
// and compares with model.LogDensityGradient per point: empty if every value
// has the same bits, else the first difference.
std::string CheckLaneModel(const Model& model, LaneModel& lane_model,
                           const std::vector<const double*>& points);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_BENCH_LANE_MODELS_H_
