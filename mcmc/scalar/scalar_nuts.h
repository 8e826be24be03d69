// ScalarNuts: Stan's multinomial NUTS for one chain in plain C++ — the
// bit-for-bit oracle and the performance bar of the batched NUTS program.
//
// The algorithm is Stan's base_nuts (diag_e metric, explicit leapfrog) with
// the extra U-turn checks across merged subtrees (stan-dev/stan PR #2800),
// stated here as the exact sequence of operations the batched program must
// reproduce. m = inverse metric diagonal, d = dimension, eps = step size
// (after jitter; sampler_config.h), "dot" = SamplerDot (index order),
// LSE = SamplerLogSumExp, Exp = SamplerExp. Random draws are marked [R];
// sampler_config.h lists their order.
//
// Energy of a point (q, p) with log density logp:
//   p_sharp = m * p                       (elementwise)
//   H       = 0.5 * dot(p, p_sharp) - logp
//
// Leapfrog with signed step e (e = +eps forward, -eps backward):
//   half = 0.5 * e
//   p[i] = p[i] + half * grad[i]          for every i
//   q[i] = q[i] + e * (m[i] * p[i])       for every i (with the new p)
//   logp, grad = model.LogDensityGradient(q)
//   p[i] = p[i] + half * grad[i]          for every i
//
// Transition from (q0, logp0, grad0):
//   [R] z = NextNormals(d);  p0[i] = z[i] / sqrt(m[i])
//   H0 = energy of (q0, p0); the trajectory's two ends start at (q0, p0);
//   sample = (q0, logp0, grad0, energy H0); lsw = 0 (log sum of weights);
//   rho = p0; the four boundary momenta p_bck_bck, p_bck_fwd, p_fwd_bck,
//   p_fwd_fwd = p0 and their p_sharp = m * p0;
//   depth = 0, n_leapfrog = 0, sum_prob = 0, divergent = false
//   while depth < max_depth:
//     [R] u = NextUniform;  forward = u > 0.5
//     forward:  p_bck_fwd = p_fwd_fwd (and its p_sharp): the old trajectory
//               becomes the backward part; build a subtree of `depth` from
//               the forward end with e = +eps, writing p_fwd_bck (its
//               beginning, next to the old trajectory) and p_fwd_fwd (its end)
//     backward: p_fwd_bck = p_bck_bck (and its p_sharp); build from the
//               backward end with e = -eps, writing p_bck_fwd (beginning)
//               and p_bck_bck (end)
//     if the subtree is invalid: stop
//     depth = depth + 1
//     [R] u = NextUniform;  if u < Exp(lsw_sub - lsw): sample = subtree's proposal
//     lsw = LSE(lsw, lsw_sub)
//     rho_bck, rho_fwd = (old rho, rho_sub) forward, (rho_sub, old rho) backward
//     rho = rho_bck + rho_fwd (elementwise)
//     continue only if ALL of
//       U(p_sharp_bck_bck, p_sharp_fwd_fwd, rho)
//       U(p_sharp_bck_bck, p_sharp_fwd_bck, rho_bck + p_fwd_bck)
//       U(p_sharp_bck_fwd, p_sharp_fwd_fwd, rho_fwd + p_bck_fwd)
//     where U(a, b, r) = dot(b, r) > 0 && dot(a, r) > 0
//   the new state is `sample`'s (q, logp, grad)
//
// BuildTree(depth) from the current end (q, p, logp, grad) returns: valid,
// lsw_sub, proposal (q, logp, grad, H), rho_sub, p_beg / p_end (momenta at its
// first / last point) and their p_sharp.
//   depth 0 (a leaf): one leapfrog; n_leapfrog += 1
//     h = energy; if h is NaN: h = +inf
//     if h - H0 > max_delta_h: divergent = true
//     w = H0 - h;  sum_prob = sum_prob + (w > 0 ? 1 : Exp(w))
//     lsw_sub = w; proposal = the point; rho_sub = p; p_beg = p_end = p
//     valid = !divergent
//   depth k >= 1:
//     init  = BuildTree(k - 1); if !init.valid: return invalid
//     final = BuildTree(k - 1) (continuing from where init ended);
//     if !final.valid: return invalid
//     lsw_sub = LSE(init.lsw, final.lsw)
//     [R] u = NextUniform;  proposal = u < Exp(final.lsw - lsw_sub) ?
//                                     final.proposal : init.proposal
//     rho_sub = init.rho + final.rho
//     p_beg = init.p_beg, p_end = final.p_end
//     valid = U(init.p_sharp_beg, final.p_sharp_end, rho_sub)
//          && U(init.p_sharp_beg, final.p_sharp_beg, init.rho + final.p_beg)
//          && U(init.p_sharp_end, final.p_sharp_end, final.rho + init.p_end)
//
// Drawing every uniform (instead of Stan's shortcut that skips the draw when
// the weight ratio is >= 1) changes no decision — Exp(x) >= 1 > u there — and
// keeps the stream position a function of the tree's shape alone.
//
// Per-draw statistics (DrawStats): lp__ = sample's logp; accept_stat__ =
// sum_prob / n_leapfrog (over every leapfrog, including those of a final
// invalid subtree); stepsize__ = eps; treedepth__ = depth; n_leapfrog__;
// divergent__; energy__ = the sample's energy (H0 when the chain stays).
#ifndef AUTOBATCH_MCMC_SCALAR_SCALAR_NUTS_H_
#define AUTOBATCH_MCMC_SCALAR_SCALAR_NUTS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "mcmc/chain_rng.h"
#include "mcmc/draw_stats.h"
#include "mcmc/model/model.h"
#include "mcmc/sampler_config.h"

namespace autobatch::mcmc {

class ScalarNuts {
 public:
  // Requires config.Validate(model.dimension()).ok() (checked: aborts
  // otherwise). Keeps a reference to `model`, which must outlive this
  // sampler. Allocates all workspace here: O(max_depth * dimension) doubles.
  ScalarNuts(const Model& model, SamplerConfig config);

  ScalarNuts(const ScalarNuts&) = delete;
  ScalarNuts& operator=(const ScalarNuts&) = delete;

  // One NUTS transition of the chain at `state`, drawing from `rng` in the
  // documented order (advancing rng.counter). `state` must hold dimension()
  // values of q and grad (checked) with logp and grad computed at q. Writes
  // the statistics to *stats if not null. Does not allocate (unless the
  // model does). Never crashes on NaN or infinite log densities: they make
  // the leapfrog divergent.
  void Transition(ChainState& state, ChainRng& rng, DrawStats* stats);

  // For warmup: the nominal step size (finite, > 0) and the inverse metric
  // (dimension() finite positive values). Checked; no allocation.
  void set_step_size(double step_size);
  void set_inv_metric(std::span<const double> inv_metric);

  const SamplerConfig& config() const { return config_; }
  int64_t dimension() const { return d_; }

 private:
  // A candidate point. Candidates live in a pool and move between slots by
  // swapping pointers, never by copying.
  struct Candidate {
    double* q;
    double* grad;
    double logp;
    double energy;
  };
  // A trajectory end being extended, integrated in place.
  struct End {
    double* q;
    double* p;
    double* grad;
    double logp;
  };
  // Where BuildTree writes its results.
  struct TreeOut {
    Candidate** proposal;
    double* p_sharp_beg;
    double* p_sharp_end;
    double* p_beg;
    double* p_end;
    double* rho;
  };
  // Scratch of the internal node at one depth (only one node per depth is
  // active at a time).
  struct Level {
    Candidate* proposal_final;
    double* p_init_end;
    double* p_sharp_init_end;
    double* p_final_beg;
    double* p_sharp_final_beg;
    double* rho_init;
    double* rho_final;
  };
  // Per-transition accumulators.
  struct Walk {
    ChainRng* rng;
    double step;  // signed step size of the subtree being built
    double h0;
    int64_t n_leapfrog;
    double sum_prob;
    bool divergent;
  };

  bool BuildTree(int depth, End& end, Walk& walk, const TreeOut& out, double* lsw);
  // One leapfrog from `end`; writes the new point to *proposal, its momentum
  // to p and m * p to p_sharp, and its weight H0 - H to *lsw. False if
  // divergent (then only *lsw is written).
  bool Leaf(End& end, Walk& walk, Candidate* proposal, double* p_sharp, double* p,
            double* lsw);
  // Multinomial merge of two valid subtrees (draws one uniform): returns the
  // merged log weight; moves the second proposal into *proposal if chosen.
  double Merge(double lsw_a, double lsw_b, Walk& walk, Candidate** proposal,
               Candidate*& proposal_b);

  const Model& model_;
  SamplerConfig config_;
  int64_t d_;
  std::vector<double> inv_metric_;       // m
  std::vector<double> sqrt_inv_metric_;  // sqrt(m)

  std::vector<double> storage_;          // every vector below points into it
  std::vector<Candidate> candidates_;    // the pool
  std::vector<Level> levels_;            // index = depth (0 unused)
  End fwd_{}, bck_{};
  Candidate* sample_ = nullptr;
  Candidate* proposal_ = nullptr;
  double* p_fwd_fwd_ = nullptr;
  double* p_fwd_bck_ = nullptr;
  double* p_bck_fwd_ = nullptr;
  double* p_bck_bck_ = nullptr;
  double* p_sharp_fwd_fwd_ = nullptr;
  double* p_sharp_fwd_bck_ = nullptr;
  double* p_sharp_bck_fwd_ = nullptr;
  double* p_sharp_bck_bck_ = nullptr;
  double* rho_ = nullptr;
  double* rho_sub_ = nullptr;
  double* normals_ = nullptr;
};

// Draws of chains run one after another by a scalar sampler.
struct ScalarChainResult {
  uint64_t chain_id = 0;
  int64_t dimension = 0;
  // num_draws x dimension, row-major: draw n's unconstrained point at
  // draws[n * dimension].
  std::vector<double> draws;
  std::vector<DrawStats> stats;  // num_draws
  ChainState final_state;
  ChainRng final_rng;  // the stream after the last transition
};

struct ScalarRunOptions {
  Algorithm algorithm = Algorithm::kNuts;
  // Starting points: empty = each chain initializes itself with
  // InitializeChain (initialize.h, default InitOptions) from its own stream
  // at counter 0, then samples from the counter that leaves; otherwise one
  // unconstrained point per chain (in chain_ids order) and sampling starts
  // at counter 0.
  std::vector<std::vector<double>> inits;
};

// Runs `num_draws` transitions (no warmup, no adaptation: the config's step
// size and metric are used as given) of each chain in `chain_ids`,
// sequentially, with chain c's stream MakeChainRng(seed, c). A chain's
// results depend only on (model, config, seed, its id, its init), never on
// the other chains. Errors: InvalidArgument for a bad config, num_draws < 0,
// or a wrong number or size of inits; initialization errors as returned by
// initialize.h / MakeChainState, prefixed with the chain id.
absl::StatusOr<std::vector<ScalarChainResult>> RunScalarChains(
    const Model& model, const SamplerConfig& config, uint64_t seed,
    std::span<const uint64_t> chain_ids, int64_t num_draws,
    const ScalarRunOptions& options = {});

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_SCALAR_SCALAR_NUTS_H_
