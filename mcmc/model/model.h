// Model: the interface between a user's target density and the samplers.
//
// A model lives on an UNCONSTRAINED space R^d where the samplers move.
// Constrained parameters (what users see) map from it through per-parameter
// transforms; the log density a model returns is on the unconstrained space
// and already includes the log-Jacobian of the transforms.
#ifndef AUTOBATCH_MCMC_MODEL_MODEL_H_
#define AUTOBATCH_MCMC_MODEL_MODEL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mcmc/model/constraint.h"
#include "vm/options.h"

namespace autobatch::mcmc {

class ProgramModel;

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string name() const = 0;
  // The parameters in order (valid: ValidateParameters).
  virtual std::vector<ParameterSpec> parameters() const = 0;
  // The unconstrained dimension d: the sum of unconstrained_size().
  int64_t dimension() const;
  // The number of constrained values: the sum of size() (a simplex of K
  // counts K here, K - 1 in dimension()).
  int64_t constrained_size() const;

  // Log density at unconstrained point q (dimension() values), including the
  // transforms' log-Jacobians, up to a constant; writes its gradient. Must be
  // a pure, deterministic function of q (same bits for the same q), must not
  // allocate in the hot path, and must tolerate any q (return -inf or NaN,
  // never crash). This per-lane routine is what the scalar reference sampler
  // and the default batched kernel both call, which is what makes them agree
  // bit for bit.
  virtual double LogDensityGradient(std::span<const double> q, std::span<double> grad) const = 0;

  // Batched form: q is lanes x d (lane-major: lane l's point at q + l * d),
  // logp has `lanes` entries, grad is lanes x d. `active` (null = all) marks
  // the lanes whose results are wanted. Default: LogDensityGradient per
  // active lane. Override (e.g. with one matrix product over the lanes) and
  // set batch_bit_stable() to false when a lane's bits then depend on the
  // batch.
  virtual void LogDensityGradientBatch(const double* q, double* logp, double* grad, int64_t lanes,
                                       const uint8_t* active) const;
  virtual bool batch_bit_stable() const { return true; }

  // A model written as a program (program_model.h) returns itself: the
  // batched samplers then link its log density into their program instead
  // of calling LogDensityGradientBatch through a user kernel.
  virtual const ProgramModel* AsProgram() const { return nullptr; }

  // Generated quantities computed from each draw (e.g. eight schools'
  // theta_j); names flattened in CSV style ("theta.1").
  virtual std::vector<std::string> generated_names() const { return {}; }
  // Writes generated_names().size() values for unconstrained point q (a
  // hand-written model's deterministic quantities).
  virtual void Generate(std::span<const double> q, std::span<double> out) const;

  // Sample() computes the generated quantities of many draws at once after
  // sampling them: GenerateBatch(draws, out, call) writes
  // generated_names().size() values of lane l at out + l * that. A lane's
  // values must depend on its own point, constrained values and stream only
  // (not on the other lanes, the batch size or call.shards). Its random
  // stream (key, counter) is its own (mcmc/chain_rng.h
  // GeneratedQuantitiesRng), never the sampler's, so generated quantities
  // never change the draws. Default: Generate(q) per lane.
  struct GeneratedDraws {
    int64_t lanes = 0;
    const double* q = nullptr;            // lanes x dimension()
    const double* constrained = nullptr;  // lanes x constrained_size()
    const uint64_t* rng_keys = nullptr;   // lanes
    const uint64_t* rng_counters = nullptr;
  };
  virtual absl::Status GenerateBatch(const GeneratedDraws& draws, double* out,
                                     const CallOptions& call) const;
  // Compiles now what GenerateBatch(..., call) would compile on its first
  // call (its program and, with call.jit_fused_blocks, the fused blocks):
  // Sample() calls it before warmup, so that a compile failure costs no
  // run. Default: nothing to compile.
  virtual absl::Status PrepareGenerate(const CallOptions& call) const {
    (void)call;
    return absl::OkStatus();
  }
  // Checked by Sample() before any work, so that a mistake in the generated
  // quantities does not cost a run: OK, or what GenerateBatch would fail
  // with whatever the draws.
  virtual absl::Status CheckGenerated() const { return absl::OkStatus(); }
};

// OK, or InvalidArgument ("model 'm': parameter 'theta': ...") for the
// first parameter that fails ValidateParameter (constraint.h) or whose name
// an earlier parameter already has.
absl::Status ValidateParameters(const Model& model);

// Constrained values of every parameter at q (constraint.h's forward maps),
// flattened in parameters() order; returns the sum of their log|J| (each
// parameter's added in order). Requires q.size() == dimension() and
// constrained.size() == constrained_size() (checked) and valid parameters.
double Constrain(const Model& model, std::span<const double> q, std::span<double> constrained);
// The inverse of Constrain: unconstrained q for constrained values (user
// initial values, exact draws of a known target). Requires the sizes as
// Constrain. InvalidArgument "model 'm': value ... of parameter theta.3 is
// outside its support: ..." when a value is outside its transform's open
// support (constraint.h UnconstrainParameter).
absl::Status Unconstrain(const Model& model, std::span<const double> constrained,
                         std::span<double> q);
// Names of the unconstrained coordinates (dimension() of them), for
// messages about q: the element's name for the elementwise transforms,
// "theta.k (unconstrained)" for a simplex's or ordered vector's k-th
// coordinate.
std::vector<std::string> UnconstrainedNames(const Model& model);
// Column names of the constrained parameters (constrained_size() of them)
// then the generated quantities, CmdStan style ("mu", "theta.1", ...; a
// simplex of K has K columns).
std::vector<std::string> OutputColumnNames(const Model& model);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_MODEL_H_
