// The speed of light of program-counter batching on NUTS: the stack VM's
// execution model (a program counter and per-depth tree frames per chain;
// each step runs one block for the chains waiting there) written by hand for
// Stan's multinomial NUTS, with nothing interpreted, beside the scalar
// reference sampler (ScalarNuts) looped over the same chains. It asks whether
// "3x the scalar gradients per second on eight schools, 1.5x on AR(1)
// d = 100, 1024 chains, one thread" (issue 8) and "3x on eight schools and
// on logistic regression" (issue 27) are within reach of ANY executor of this
// model that keeps ScalarNuts's bits, calling the model once per chain and
// leapfrog or, where the target has a form across lanes (bench/lane_models.h:
// eight_schools, logistic_regression), once per leaf step for all its chains,
// and where such an executor spends its time.
//
// Usage: nuts_bound [--draws N] [--reps R] [--chains-list 64,256,1024]
//                   [--tile T] [--targets eight_schools,ar1,logistic_regression]
//                   [--only EXECUTOR]
//   (--only: run only the executors whose name contains EXECUTOR;
//   logistic_regression, 1000 rows x 24 features, step size 0.05 as in
//   nuts_bench, takes about 70 us per gradient on the scalar side, so a
//   default run takes minutes: give it few draws)
// Both sides run the same chains (ids 0..B-1, seed 20261122, initialized by
// InitializeChain from each chain's stream, as nuts_bench does), the same
// config (step size 0.3 for eight schools, 0.15 for ar1 with dimension 100,
// 0.05 for logistic regression; identity metric, max depth 10, no jitter, no
// warmup) and the same number of draws (default 10). Every run of every
// executor must give every chain's draws, statistics and final stream
// position bit for bit as ScalarNuts does; otherwise the program exits 1
// naming the first chain and draw that differ. Times are the best of R runs
// (default 3; the scalar loop is run once more untimed first). Rows per
// (target, chains):
//   scalar                ScalarNuts::Transition looped over the chains
//   scalar, the target with the C library's math
//                         the same on bench/libm_targets.h's target (eight
//                         schools, logistic regression; checked against the
//                         built-in one at every start), the "vs C lib"
//                         column's reference: issue 27's baseline
//   by hand, leaf-last    the hand-batched NUTS below, lane-major workspace,
//                         the lowest-numbered block first with the leaf block
//                         numbered last (each leaf step takes every chain that
//                         is not finished)
//   by hand, most-lanes   the same, the block with the most chains first
//   by hand, interleaved  leaf-last; the energies and pair checks of kGroup
//                         lanes at a time, their ordered sums interleaved
//   by hand, lane math    interleaved, and the merges' and progressive
//                         sampling's uniforms / exp / log-sum-exp and the
//                         leaves' Metropolis probabilities across lanes
//   ..., model across lanes  lane math, and the leaf evaluates the model for
//                         all its lanes in one call of the target's form across
//                         lanes (its points gathered into structure of arrays,
//                         the data read once per chunk of 16 lanes, the
//                         gradients scattered back; the same bits: the
//                         per-lane operations in the scalar target's order,
//                         support/math's vector path)
//   ..., tiles of T       the batch run as consecutive tiles of T chains (when
//                         T < chains), so that a tile's workspace stays in cache
//   model alone           Model::LogDensityGradient alone, as many calls as the
//                         run took gradients, back to back on 64 drawn points
//   model across lanes alone  the form across lanes alone, on as many lanes as
//                         chains (the 64 points repeated), as many gradients;
//                         its values checked bit for bit against the model's
// with ns per gradient (sum of n_leapfrog__), the ratio of gradients per
// second over the scalar loop's, steps, and mean lanes per leaf step; then one
// more run of each executor timed block by block (steady_clock around each
// block and each pass of the leaf block, so a little slower). Before the
// tables, per target: the cost per call of the per-lane math (Philox,
// exp, log1p, normals) and of two d-loops with 16 lanes side by side
// (structure of arrays, vectorized across lanes) against lane by lane.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "backends/random.h"
#include "bench/lane_models.h"
#include "bench/libm_targets.h"
#include "bench/scalar_loop.h"
#include "mcmc/chain_rng.h"
#include "mcmc/draw_stats.h"
#include "mcmc/model/model.h"
#include "mcmc/model/targets/registry.h"
#include "mcmc/sampler_config.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/scalar/u_turn.h"
#include "mcmc/warmup/initialize.h"
#include "nlohmann/json.hpp"
#include "support/math/math.h"

namespace autobatch::mcmc {
namespace {

constexpr uint64_t kSeed = 20261122;  // nuts_bench's
constexpr double kInf = std::numeric_limits<double>::infinity();

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "nuts_bound: %s\n", what.c_str());
  std::exit(1);
}

void Copy(const double* from, double* to, int64_t n) { std::copy(from, from + n, to); }

// A chain's starting point and stream (nuts_bench's BatchedChain).
struct Start {
  uint64_t chain_id = 0;
  ChainState state;
  ChainRng rng;
};

std::vector<Start> MakeStarts(const Model& model, int64_t chains) {
  std::vector<Start> starts(static_cast<size_t>(chains));
  for (int64_t c = 0; c < chains; ++c) {
    Start& s = starts[static_cast<size_t>(c)];
    s.chain_id = static_cast<uint64_t>(c);
    s.rng = MakeChainRng(kSeed, s.chain_id);
    absl::StatusOr<InitialPoint> init = InitializeChain(model, s.rng.key, &s.rng.counter);
    if (!init.ok()) Die("InitializeChain: " + init.status().ToString());
    s.state.q = std::move(init->q);
    s.state.logp = init->log_density;
    s.state.grad = std::move(init->gradient);
  }
  return starts;
}

// The same sums for kGroup independent lanes at once. Each lane's sum runs
// in index order, exactly as above (same bits); the lanes' dependency chains
// are interleaved so that the adds of one lane overlap those of the others
// instead of waiting out the add latency one after another.
constexpr int kGroup = 4;

// PairCheck of kGroup pairs.
struct PairInputs {
  const double* sharp_a;
  const double* sharp_b;
  const double* p_a;
  const double* p_b;
  double* rho_out;
};

void PairCheckGroup(const PairInputs* in, int64_t d, bool* ok) {
  double plus[kGroup], minus[kGroup];
#pragma GCC unroll 4
  for (int k = 0; k < kGroup; ++k) {
    const double r = in[k].p_a[0] + in[k].p_b[0];
    in[k].rho_out[0] = r;
    plus[k] = in[k].sharp_b[0] * r;
    minus[k] = in[k].sharp_a[0] * r;
  }
  for (int64_t i = 1; i < d; ++i) {
#pragma GCC unroll 4
    for (int k = 0; k < kGroup; ++k) {
      const double r = in[k].p_a[i] + in[k].p_b[i];
      in[k].rho_out[i] = r;
      plus[k] = plus[k] + in[k].sharp_b[i] * r;
      minus[k] = minus[k] + in[k].sharp_a[i] * r;
    }
  }
  for (int k = 0; k < kGroup; ++k) ok[k] = plus[k] > 0 && minus[k] > 0;
}

// SamplerLeapfrog's second half step followed by SamplerEnergy, for kGroup
// lanes: p[i] = p[i] + half * grad[i]; p_sharp[i] = m[i] * p[i];
// h = 0.5 * SamplerDot(p, p_sharp) - logp. Element i of p and p_sharp
// depends on element i alone, so one pass gives the bits of the three loops.
struct EnergyInputs {
  double* p;
  const double* grad;
  double* p_sharp;
  double half;
  double logp;
};

void HalfStepEnergyGroup(const double* m, const EnergyInputs* in, int64_t d, double* h) {
  double acc[kGroup];
#pragma GCC unroll 4
  for (int k = 0; k < kGroup; ++k) {
    const double p = in[k].p[0] + in[k].half * in[k].grad[0];
    const double ps = m[0] * p;
    in[k].p[0] = p;
    in[k].p_sharp[0] = ps;
    acc[k] = p * ps;
  }
  for (int64_t i = 1; i < d; ++i) {
#pragma GCC unroll 4
    for (int k = 0; k < kGroup; ++k) {
      const double p = in[k].p[i] + in[k].half * in[k].grad[i];
      const double ps = m[i] * p;
      in[k].p[i] = p;
      in[k].p_sharp[i] = ps;
      acc[k] = acc[k] + p * ps;
    }
  }
  for (int k = 0; k < kGroup; ++k) h[k] = 0.5 * acc[k] - in[k].logp;
}

// SamplerExp / SamplerLog1p across lanes: y[i] = SamplerExp(x[i]) for i < n,
// the same bits: the vector path of the same functions (support/math/math.h).
// The lane-math vectors hold n rounded up to kPacket entries.
constexpr int64_t kPacket = 8;

int64_t RoundUp(int64_t n) { return (n + kPacket - 1) / kPacket * kPacket; }

void ExpLanes(const double* x, double* y, int64_t n) { math::Eval(math::Fn::kExp, x, y, n); }

void Log1pLanes(const double* x, double* y, int64_t n) {
  math::Eval(math::Fn::kLog1p, x, y, n);
}

// Program-counter batching of ScalarNuts::Transition over B chains (lanes).
// Every lane owns a copy of ScalarNuts's workspace (the same vectors, moved
// between roles by swapping pointers) and one BuildTree frame per tree depth:
// a lane runs at most one node of each depth at a time, so per-lane per-depth
// slots are its call stack. The recursion becomes five blocks:
//   kStart        a transition's start (jitter, momentum, H0) and its first
//                 doubling (direction; descend to the subtree's first leaf)
//   kAfterSubtree a subtree returned to the transition: biased progressive
//                 sampling, the U-turn checks, then the next doubling, or the
//                 end of the transition (record the draw; the next transition
//                 waits at kStart, or the lane is done)
//   kAfterFinal   a node of depth >= 2 whose final child returned valid:
//                 multinomial merge and MergeChecks; return
//   kAfterInit    a node of depth >= 2 whose init child returned valid:
//                 descend to the first leaf of its final child
//   kLeaf         one leapfrog, energy, divergence, the candidate; then the
//                 leaf's own return: a depth-0 tree returns; the first leaf
//                 of a depth-1 node waits at kLeaf for the second; the second
//                 merges the pair (PairCheck) and the node returns
// Descending (BuildTree entry down to depth 0 or 1) is folded into the block
// that calls, and an invalid child returns straight to the transition (every
// ancestor returns invalid at once without drawing). A return goes to the
// parent's kAfterInit / kAfterFinal, or to kAfterSubtree from the subtree's
// root. Per lane, the arithmetic and the random draws are ScalarNuts's, in
// the same order.
class PcBatchedNuts {
 public:
  enum Block : int32_t {
    kStart = 0,
    kAfterSubtree = 1,
    kAfterFinal = 2,
    kAfterInit = 3,
    kLeaf = 4,
    kNumBlocks = 5
  };
  enum class Policy { kLeafLast, kMostLanes };
  static constexpr const char* kBlockNames[kNumBlocks] = {"start", "after-subtree",
                                                          "after-final", "after-init", "leaf"};
  // The leaf block's phases (see RunLeaves).
  static constexpr int kLeafPhases = 4;
  static constexpr const char* kLeafPhaseNames[kLeafPhases] = {
      "leaf: half step + drift", "leaf: model gradient", "leaf: half step + energy",
      "leaf: candidate, pair merge, return"};

  struct RunStats {
    int64_t steps = 0;
    int64_t leaf_steps = 0;
    int64_t leaf_lanes = 0;  // sum over leaf steps of the lanes run
    // Per-lane work, summed over lanes: subtree merges (Merge: one uniform,
    // one log-sum-exp, one exp, one U-turn check), doublings taken (the same
    // at the transition), transitions.
    int64_t merges = 0, doublings = 0, transitions = 0;
    double block_seconds[kNumBlocks] = {};
    double leaf_phase_seconds[kLeafPhases] = {};
  };

  // lane_model (may be null; then no run may set model_lanes): the model's
  // across-lanes form.
  PcBatchedNuts(const Model& model, LaneModel* lane_model, const SamplerConfig& config,
                int64_t batch)
      : model_(model),
        lane_model_(lane_model),
        config_(config),
        d_(model.dimension()),
        batch_(batch) {
    if (!config_.Validate(d_).ok()) Die("invalid sampler config");
    if (config_.inv_metric.empty()) config_.inv_metric.assign(static_cast<size_t>(d_), 1.0);
    inv_metric_ = config_.inv_metric;
    sqrt_inv_metric_.resize(inv_metric_.size());
    for (size_t i = 0; i < inv_metric_.size(); ++i) {
      sqrt_inv_metric_[i] = std::sqrt(inv_metric_[i]);
    }
    const int max_depth = config_.max_depth;
    const int64_t num_candidates = max_depth + 1;
    // ScalarNuts's vectors, plus the chain's q and grad.
    const int64_t num_vectors =
        6 + 2 * num_candidates + 6 * int64_t{max_depth - 1} + 10 + 2;
    // Lane-major: each lane's vectors are contiguous, each lane on a 64-byte boundary.
    const int64_t lane_doubles = (num_vectors * d_ + 7) / 8 * 8;
    storage_.assign(static_cast<size_t>(lane_doubles * batch_ + 8), 0.0);
    double* base = storage_.data();
    while (reinterpret_cast<uintptr_t>(base) % 64 != 0) ++base;
    lanes_.resize(static_cast<size_t>(batch_));
    for (int64_t l = 0; l < batch_; ++l) {
      Lane& lane = lanes_[static_cast<size_t>(l)];
      double* next = base + l * lane_doubles;
      auto take = [&] {
        double* v = next;
        next += d_;
        return v;
      };
      lane.fwd = End{take(), take(), take(), 0.0};
      lane.bck = End{take(), take(), take(), 0.0};
      lane.candidates.resize(static_cast<size_t>(num_candidates));
      for (Candidate& c : lane.candidates) c = Candidate{take(), take(), 0.0, 0.0};
      lane.sample = &lane.candidates[0];
      lane.proposal = &lane.candidates[1];
      lane.levels.resize(static_cast<size_t>(max_depth));
      for (int depth = 1; depth < max_depth; ++depth) {
        lane.levels[depth] = Level{&lane.candidates[depth + 1], take(), take(), take(), take(),
                                   take(), take()};
      }
      lane.p_fwd_fwd = take();
      lane.p_fwd_bck = take();
      lane.p_bck_fwd = take();
      lane.p_bck_bck = take();
      lane.p_sharp_fwd_fwd = take();
      lane.p_sharp_fwd_bck = take();
      lane.p_sharp_bck_fwd = take();
      lane.p_sharp_bck_bck = take();
      lane.rho = take();
      lane.rho_sub = take();
      lane.state_q = take();
      lane.state_grad = take();
      lane.out.resize(static_cast<size_t>(max_depth));
      lane.lsw_ret.resize(static_cast<size_t>(max_depth));
      lane.lsw_init.resize(static_cast<size_t>(max_depth));
      lane.phase.resize(static_cast<size_t>(max_depth));
    }
    for (auto& list : waiting_) list.resize(static_cast<size_t>(batch_));
    taken_.resize(static_cast<size_t>(batch_));
    const size_t padded = static_cast<size_t>(RoundUp(batch_));
    for (auto* v : {&a_, &b_, &lsw_, &hi_, &x_, &y_, &z_, &u_, &w_, &v_}) v->assign(padded, 0.0);
    take_.assign(padded, 0);
    for (auto* v : {&key_, &counter_, &bits0_, &bits1_}) v->assign(padded, 0);
    pair_in_.resize(static_cast<size_t>(batch_));
    pending_.resize(static_cast<size_t>(batch_));
    pad_.assign(static_cast<size_t>((kGroup + 2) * d_), 0.0);
    const int64_t model_lanes =
        (batch_ + kLaneModelMultiple - 1) / kLaneModelMultiple * kLaneModelMultiple;
    soa_q_.assign(static_cast<size_t>(d_ * model_lanes), 0.0);
    soa_grad_.assign(soa_q_.size(), 0.0);
    soa_logp_.assign(static_cast<size_t>(model_lanes), 0.0);
  }

  // How a run executes the same blocks.
  struct RunOptions {
    Policy policy = Policy::kLeafLast;
    // false: each block runs its lanes one after another, every ordered sum
    // (energy, U-turn checks) a chain of dependent adds per lane, as in
    // ScalarNuts. true: those sums run for kGroup lanes at once, each lane's
    // sum still in index order (the same bits), their chains interleaved.
    bool interleave = false;
    // true (with interleave): the multinomial merges' and the progressive
    // sampling's uniforms, exp and log-sum-exp, and the leaves' Metropolis
    // probabilities, run across the block's lanes (Philox rounds across
    // lanes, the vector path of exp and log1p; the same bits).
    bool lane_math = false;
    // Lanes run as consecutive tiles of this many lanes, one tile after
    // another (each tile to its end), so a tile's workspace can stay in
    // cache; 0 = the whole batch at once.
    int64_t tile = 0;
    // true: the leaf evaluates the model for all its lanes at once (the
    // lane model, structure of arrays: the leaf's points gathered, the
    // gradients scattered back; the same bits), else once per lane.
    bool model_lanes = false;
  };

  // Runs `draws` transitions of each chain (starts.size() == batch), writing
  // their draws and statistics to *out. With `timing`, adds up the time of
  // each block (two clock reads per step, five more per leaf step).
  RunStats Run(const std::vector<Start>& starts, int64_t draws, const RunOptions& options,
               bool timing, std::vector<ScalarChainResult>* out) {
    out->assign(static_cast<size_t>(batch_), ScalarChainResult{});
    results_ = out->data();
    num_draws_ = draws;
    for (int32_t b = 0; b < kNumBlocks; ++b) count_[b] = 0;
    for (int64_t l = 0; l < batch_; ++l) {
      Lane& lane = lanes_[static_cast<size_t>(l)];
      const Start& s = starts[static_cast<size_t>(l)];
      Copy(s.state.q.data(), lane.state_q, d_);
      Copy(s.state.grad.data(), lane.state_grad, d_);
      lane.state_logp = s.state.logp;
      lane.rng = s.rng;
      lane.draw = 0;
      ScalarChainResult& r = results_[l];
      r.chain_id = s.chain_id;
      r.dimension = d_;
      r.draws.resize(static_cast<size_t>(draws * d_));
      r.stats.resize(static_cast<size_t>(draws));
      r.final_rng = lane.rng;
    }
    RunStats stats;
    merges_ = doublings_ = transitions_ = 0;
    if (draws == 0) return stats;
    const int64_t tile = options.tile > 0 ? std::min(options.tile, batch_) : batch_;
    for (int64_t first = 0; first < batch_; first += tile) {
      for (int64_t l = first; l < std::min(batch_, first + tile); ++l) Push(kStart, l);
      RunTile(options, timing, &stats);
    }
    stats.merges = merges_;
    stats.doublings = doublings_;
    stats.transitions = transitions_;
    return stats;
  }

 private:
  void RunTile(const RunOptions& options, bool timing, RunStats* stats) {
    const bool grouped = options.interleave || options.lane_math;
    const bool lane_math = options.lane_math;
    for (;;) {
      int32_t block = kNumBlocks;
      if (options.policy == Policy::kLeafLast) {
        block = 0;
        while (block < kNumBlocks && count_[block] == 0) ++block;
      } else {
        int64_t most = 0;
        for (int32_t b = 0; b < kNumBlocks; ++b) {
          if (count_[b] > most) {
            most = count_[b];
            block = b;
          }
        }
      }
      if (block == kNumBlocks) break;
      ++stats->steps;
      const int64_t count = count_[block];
      std::swap(taken_, waiting_[block]);
      count_[block] = 0;
      const double start = timing ? Now() : 0.0;
      switch (block) {
        case kStart:
          for (int64_t i = 0; i < count; ++i) StartTransition(taken_[i]);
          break;
        case kAfterSubtree:
          if (lane_math) {
            AfterSubtreeLanes(count);
          } else {
            for (int64_t i = 0; i < count; ++i) AfterSubtree(taken_[i]);
          }
          break;
        case kAfterFinal:
          if (lane_math) {
            AfterFinalLanes(count);
          } else {
            for (int64_t i = 0; i < count; ++i) AfterFinal(taken_[i]);
          }
          break;
        case kAfterInit:
          for (int64_t i = 0; i < count; ++i) AfterInit(taken_[i]);
          break;
        case kLeaf:
          ++stats->leaf_steps;
          stats->leaf_lanes += count;
          RunLeaves(count, grouped, lane_math, options.model_lanes, timing,
                    stats->leaf_phase_seconds);
          break;
      }
      if (timing) stats->block_seconds[block] += Now() - start;
    }
  }

  struct Candidate {
    double* q;
    double* grad;
    double logp;
    double energy;
  };
  struct End {
    double* q;
    double* p;
    double* grad;
    double logp;
  };
  struct TreeOut {
    Candidate** proposal;
    double* p_sharp_beg;
    double* p_sharp_end;
    double* p_beg;
    double* p_end;
    double* rho;
  };
  struct Level {
    Candidate* proposal_final;
    double* p_init_end;
    double* p_sharp_init_end;
    double* p_final_beg;
    double* p_sharp_final_beg;
    double* rho_init;
    double* rho_final;
  };
  // The leaf's role in its tree: the only leaf of a depth-0 tree, or the
  // first or second leaf of a depth-1 node.
  enum Role : int8_t { kSingle, kFirstOfPair, kSecondOfPair };

  struct Lane {
    // ScalarNuts's workspace.
    std::vector<Candidate> candidates;
    std::vector<Level> levels;  // index = depth (0 unused)
    End fwd{}, bck{};
    Candidate* sample = nullptr;
    Candidate* proposal = nullptr;
    double *p_fwd_fwd = nullptr, *p_fwd_bck = nullptr, *p_bck_fwd = nullptr,
           *p_bck_bck = nullptr;
    double *p_sharp_fwd_fwd = nullptr, *p_sharp_fwd_bck = nullptr,
           *p_sharp_bck_fwd = nullptr, *p_sharp_bck_bck = nullptr;
    double *rho = nullptr, *rho_sub = nullptr;
    // The chain.
    ChainRng rng;
    double* state_q = nullptr;
    double* state_grad = nullptr;
    double state_logp = 0;
    int64_t draw = 0;  // transitions done
    // Transition's locals (and its Walk).
    double eps = 0, h0 = 0, sum_prob = 0, lsw = 0, lsw_subtree = 0, step = 0;
    int64_t n_leapfrog = 0;
    bool divergent = false, moved = false, forward = false, valid = false;
    int depth = 0;  // doublings done
    End* end = nullptr;
    // BuildTree frames, index = node depth: the node's outputs, its init
    // child's log weight, the log weight it returns, and whether it is
    // building its init (0) or final (1) child.
    std::vector<TreeOut> out;
    std::vector<double> lsw_init, lsw_ret;
    std::vector<uint8_t> phase;
    int node = 0;  // depth of the node a waiting lane continues
    Role role = kSingle;
    double lsw_first = 0;  // the first leaf's weight in a depth-1 node
    double h = 0;          // the energy of the point a leaf reached
    double prob = 0;       // its SamplerMetropolisProb (lane-parallel math)
    double lsw_second = 0;  // the second leaf's weight in a depth-1 node
  };

  void Push(int32_t block, int64_t lane) { waiting_[block][count_[block]++] = lane; }

  // BuildTree(k, out) entered: record the frames down to depth 1 or 0 (every
  // node builds its init child first) and wait at the first leaf.
  void Descend(int64_t l, int k, TreeOut out) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    while (k >= 2) {
      lane.out[k] = out;
      lane.phase[k] = 0;
      const Level& level = lane.levels[k];
      out = TreeOut{out.proposal, out.p_sharp_beg, level.p_sharp_init_end,
                    out.p_beg,    level.p_init_end, level.rho_init};
      --k;
    }
    lane.out[k] = out;
    lane.node = k;
    lane.role = k == 0 ? kSingle : kFirstOfPair;
    Push(kLeaf, l);
  }

  // Node of depth k returns `valid` (its log weight in lsw_ret[k]).
  void Return(int64_t l, int k, bool valid) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    if (!valid || k == lane.depth) {
      lane.valid = valid;
      lane.lsw_subtree = lane.lsw_ret[k];
      Push(kAfterSubtree, l);
      return;
    }
    lane.node = k + 1;
    Push(lane.phase[k + 1] == 0 ? kAfterInit : kAfterFinal, l);
  }

  double Merge(Lane& lane, double lsw_a, double lsw_b, Candidate** proposal,
               Candidate*& proposal_b) {
    ++merges_;
    const double lsw = SamplerLogSumExp(lsw_a, lsw_b);
    if (NextUniform(lane.rng) < SamplerExp(lsw_b - lsw)) std::swap(*proposal, proposal_b);
    return lsw;
  }

  void StartTransition(int64_t l) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    const double* m = inv_metric_.data();
    lane.eps = JitteredStepSize(config_.step_size, config_.step_size_jitter, lane.rng);
    DrawMomentum(lane.rng, sqrt_inv_metric_.data(),
                 std::span<double>(lane.fwd.p, static_cast<size_t>(d_)));
    Copy(lane.state_q, lane.fwd.q, d_);
    Copy(lane.state_grad, lane.fwd.grad, d_);
    lane.fwd.logp = lane.state_logp;
    Copy(lane.state_q, lane.bck.q, d_);
    Copy(lane.fwd.p, lane.bck.p, d_);
    Copy(lane.state_grad, lane.bck.grad, d_);
    lane.bck.logp = lane.state_logp;
    lane.h0 = SamplerEnergy(m, lane.fwd.p, lane.state_logp, lane.p_sharp_fwd_fwd, d_);
    for (double* p : {lane.p_fwd_fwd, lane.p_fwd_bck, lane.p_bck_fwd, lane.p_bck_bck, lane.rho}) {
      Copy(lane.fwd.p, p, d_);
    }
    for (double* p_sharp : {lane.p_sharp_fwd_bck, lane.p_sharp_bck_fwd, lane.p_sharp_bck_bck}) {
      Copy(lane.p_sharp_fwd_fwd, p_sharp, d_);
    }
    lane.n_leapfrog = 0;
    lane.sum_prob = 0.0;
    lane.divergent = false;
    lane.lsw = 0;
    lane.moved = false;
    lane.depth = 0;
    Doubling(l);
  }

  // The head of the transition's doubling loop.
  void Doubling(int64_t l) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    if (lane.depth >= config_.max_depth) {
      Finish(l);
      return;
    }
    lane.forward = NextUniform(lane.rng) > 0.5;
    TreeOut out;
    if (lane.forward) {
      std::swap(lane.p_bck_fwd, lane.p_fwd_fwd);
      std::swap(lane.p_sharp_bck_fwd, lane.p_sharp_fwd_fwd);
      lane.step = lane.eps;
      lane.end = &lane.fwd;
      out = TreeOut{&lane.proposal, lane.p_sharp_fwd_bck, lane.p_sharp_fwd_fwd,
                    lane.p_fwd_bck, lane.p_fwd_fwd,       lane.rho_sub};
    } else {
      std::swap(lane.p_fwd_bck, lane.p_bck_bck);
      std::swap(lane.p_sharp_fwd_bck, lane.p_sharp_bck_bck);
      lane.step = -lane.eps;
      lane.end = &lane.bck;
      out = TreeOut{&lane.proposal, lane.p_sharp_bck_fwd, lane.p_sharp_bck_bck,
                    lane.p_bck_fwd, lane.p_bck_bck,       lane.rho_sub};
    }
    Descend(l, lane.depth, out);
  }

  void AfterSubtree(int64_t l) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    if (!lane.valid) {
      Finish(l);
      return;
    }
    ++lane.depth;
    ++doublings_;
    if (NextUniform(lane.rng) < SamplerExp(lane.lsw_subtree - lane.lsw)) {
      std::swap(lane.sample, lane.proposal);
      lane.moved = true;
    }
    lane.lsw = SamplerLogSumExp(lane.lsw, lane.lsw_subtree);
    const bool persist = MergeChecks(
        MergeInputs{lane.p_sharp_bck_bck, lane.p_sharp_fwd_fwd, lane.p_sharp_bck_fwd,
                    lane.p_sharp_fwd_bck, lane.forward ? lane.rho : lane.rho_sub,
                    lane.forward ? lane.rho_sub : lane.rho, lane.p_bck_fwd, lane.p_fwd_bck,
                    lane.rho},
        d_);
    if (!persist) {
      Finish(l);
      return;
    }
    Doubling(l);
  }

  // The end of a transition: the new state, the draw and its statistics.
  void Finish(int64_t l) {
    ++transitions_;
    Lane& lane = lanes_[static_cast<size_t>(l)];
    double energy = lane.h0;
    if (lane.moved) {
      Copy(lane.sample->q, lane.state_q, d_);
      Copy(lane.sample->grad, lane.state_grad, d_);
      lane.state_logp = lane.sample->logp;
      energy = lane.sample->energy;
    }
    ScalarChainResult& r = results_[l];
    DrawStats& s = r.stats[static_cast<size_t>(lane.draw)];
    s.lp = lane.state_logp;
    s.accept_stat = lane.sum_prob / static_cast<double>(lane.n_leapfrog);
    s.stepsize = lane.eps;
    s.treedepth = lane.depth;
    s.n_leapfrog = lane.n_leapfrog;
    s.divergent = lane.divergent;
    s.energy = energy;
    Copy(lane.state_q, r.draws.data() + lane.draw * d_, d_);
    if (++lane.draw < num_draws_) {
      Push(kStart, l);
    } else {
      r.final_rng = lane.rng;
      r.final_state.q.assign(lane.state_q, lane.state_q + d_);
      r.final_state.grad.assign(lane.state_grad, lane.state_grad + d_);
      r.final_state.logp = lane.state_logp;
    }
  }

  void AfterInit(int64_t l) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    const int k = lane.node;
    lane.lsw_init[k] = lane.lsw_ret[k - 1];
    lane.phase[k] = 1;
    Level& level = lane.levels[k];
    const TreeOut& out = lane.out[k];
    Descend(l, k - 1,
            TreeOut{&level.proposal_final, level.p_sharp_final_beg, out.p_sharp_end,
                    level.p_final_beg, out.p_end, level.rho_final});
  }

  void AfterFinal(int64_t l) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    const int k = lane.node;
    Level& level = lane.levels[k];
    const TreeOut& out = lane.out[k];
    lane.lsw_ret[k] =
        Merge(lane, lane.lsw_init[k], lane.lsw_ret[k - 1], out.proposal, level.proposal_final);
    const bool valid = MergeChecks(
        MergeInputs{out.p_sharp_beg, out.p_sharp_end, level.p_sharp_init_end,
                    level.p_sharp_final_beg, level.rho_init, level.rho_final, level.p_init_end,
                    level.p_final_beg, out.rho},
        d_);
    Return(l, k, valid);
  }

  // The p_sharp a leaf writes (ScalarNuts::Leaf's p_sharp argument).
  double* LeafPSharp(const Lane& lane) const {
    switch (lane.role) {
      case kSingle: return lane.out[0].p_sharp_beg;
      case kFirstOfPair: return lane.out[1].p_sharp_beg;
      case kSecondOfPair: return lane.out[1].p_sharp_end;
    }
    return nullptr;
  }

  // ScalarNuts::Leaf after its leapfrog and energy (h, not yet NaN-mapped);
  // with `lane_math`, SamplerMetropolisProb(w) is lane.prob, computed across
  // lanes.
  bool LeafTail(Lane& lane, bool lane_math, Candidate* proposal, double* p, double* lsw) {
    End& end = *lane.end;
    ++lane.n_leapfrog;
    double h = lane.h;
    if (h != h) h = kInf;
    if (h - lane.h0 > config_.max_delta_h) lane.divergent = true;
    const double w = lane.h0 - h;
    lane.sum_prob = lane.sum_prob + (lane_math ? lane.prob : SamplerMetropolisProb(w));
    *lsw = w;
    if (lane.divergent) return false;
    Copy(end.q, proposal->q, d_);
    Copy(end.grad, proposal->grad, d_);
    proposal->logp = end.logp;
    proposal->energy = h;
    Copy(end.p, p, d_);
    return true;
  }

  // The leaf block in four passes over its lanes: SamplerLeapfrog's first
  // half step and drift; its model call; its second half step with
  // SamplerEnergy (per lane, or kGroup lanes interleaved); the rest of
  // ScalarNuts::Leaf and the leaf's return (with the PairChecks of the
  // depth-1 nodes it completes, interleaved when grouped). Per lane, the
  // operations and their order are ScalarNuts's.
  void RunLeaves(int64_t count, bool grouped, bool lane_math, bool model_lanes, bool timing,
                 double* phase_seconds) {
    const double* m = inv_metric_.data();
    const size_t n = static_cast<size_t>(d_);
    const double t0 = timing ? Now() : 0.0;
    for (int64_t i = 0; i < count; ++i) {
      Lane& lane = lanes_[static_cast<size_t>(taken_[i])];
      End& end = *lane.end;
      const double e = lane.step;
      const double half = 0.5 * e;
      for (int64_t j = 0; j < d_; ++j) {
        end.p[j] = end.p[j] + half * end.grad[j];
        end.q[j] = end.q[j] + e * (m[j] * end.p[j]);
      }
    }
    const double t1 = timing ? Now() : 0.0;
    if (model_lanes) {
      ModelAcrossLanes(count);
    } else {
      for (int64_t i = 0; i < count; ++i) {
        End& end = *lanes_[static_cast<size_t>(taken_[i])].end;
        end.logp = model_.LogDensityGradient(std::span<const double>(end.q, n),
                                             std::span<double>(end.grad, n));
      }
    }
    const double t2 = timing ? Now() : 0.0;
    if (grouped) {
      for (int64_t i = 0; i < count; i += kGroup) {
        EnergyInputs in[kGroup];
        double h[kGroup];
        for (int k = 0; k < kGroup; ++k) {
          if (i + k < count) {
            Lane& lane = lanes_[static_cast<size_t>(taken_[i + k])];
            in[k] = EnergyInputs{lane.end->p, lane.end->grad, LeafPSharp(lane), 0.5 * lane.step,
                                 lane.end->logp};
          } else {
            in[k] = EnergyInputs{Pad(0), Pad(1), Pad(2), 0.0, 0.0};
          }
        }
        HalfStepEnergyGroup(m, in, d_, h);
        for (int k = 0; k < kGroup && i + k < count; ++k) {
          lanes_[static_cast<size_t>(taken_[i + k])].h = h[k];
        }
      }
    } else {
      for (int64_t i = 0; i < count; ++i) {
        Lane& lane = lanes_[static_cast<size_t>(taken_[i])];
        End& end = *lane.end;
        const double half = 0.5 * lane.step;
        for (int64_t j = 0; j < d_; ++j) end.p[j] = end.p[j] + half * end.grad[j];
        lane.h = SamplerEnergy(m, end.p, end.logp, LeafPSharp(lane), d_);
      }
    }
    if (lane_math) {
      // SamplerMetropolisProb(w) of every leaf, w as LeafTail computes it.
      for (int64_t i = 0; i < count; ++i) {
        const Lane& lane = lanes_[static_cast<size_t>(taken_[i])];
        const double h = lane.h != lane.h ? kInf : lane.h;
        w_[i] = lane.h0 - h;
      }
      ExpLanes(w_.data(), v_.data(), count);
      for (int64_t i = 0; i < count; ++i) {
        lanes_[static_cast<size_t>(taken_[i])].prob = w_[i] > 0 ? 1.0 : v_[i];
      }
    }
    const double t3 = timing ? Now() : 0.0;
    int64_t pairs = 0;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t l = taken_[i];
      Lane& lane = lanes_[static_cast<size_t>(l)];
      switch (lane.role) {
        case kSingle: {
          const TreeOut& out = lane.out[0];
          const bool ok = LeafTail(lane, lane_math, *out.proposal, out.p_beg, &lane.lsw_ret[0]);
          if (ok) {
            Copy(out.p_sharp_beg, out.p_sharp_end, d_);
            Copy(out.p_beg, out.p_end, d_);
            Copy(out.p_beg, out.rho, d_);
          }
          Return(l, 0, ok);
          break;
        }
        case kFirstOfPair: {
          const TreeOut& out = lane.out[1];
          if (!LeafTail(lane, lane_math, *out.proposal, out.p_beg, &lane.lsw_first)) {
            Return(l, 1, false);
          } else {
            lane.role = kSecondOfPair;
            Push(kLeaf, l);
          }
          break;
        }
        case kSecondOfPair: {
          const TreeOut& out = lane.out[1];
          Level& level = lane.levels[1];
          if (!LeafTail(lane, lane_math, level.proposal_final, out.p_end, &lane.lsw_second)) {
            Return(l, 1, false);
            break;
          }
          if (!lane_math) {  // else below, across lanes
            lane.lsw_ret[1] = Merge(lane, lane.lsw_first, lane.lsw_second, out.proposal,
                                    level.proposal_final);
          }
          if (grouped) {
            pair_in_[pairs] =
                PairInputs{out.p_sharp_beg, out.p_sharp_end, out.p_beg, out.p_end, out.rho};
            pending_[pairs++] = l;
          } else {
            Return(l, 1,
                   PairCheck(out.p_sharp_beg, out.p_sharp_end, out.p_beg, out.p_end, out.rho,
                             d_));
          }
          break;
        }
      }
    }
    if (lane_math) {
      for (int64_t i = 0; i < pairs; ++i) {
        const Lane& lane = lanes_[static_cast<size_t>(pending_[i])];
        a_[i] = lane.lsw_first;
        b_[i] = lane.lsw_second;
      }
      MergeLanes(pending_.data(), pairs);
      for (int64_t i = 0; i < pairs; ++i) {
        Lane& lane = lanes_[static_cast<size_t>(pending_[i])];
        lane.lsw_ret[1] = lsw_[i];
        if (take_[i]) std::swap(*lane.out[1].proposal, lane.levels[1].proposal_final);
      }
    }
    for (int64_t i = 0; i < pairs; i += kGroup) {
      PairInputs in[kGroup];
      bool ok[kGroup];
      for (int k = 0; k < kGroup; ++k) {
        in[k] = i + k < pairs ? pair_in_[i + k]
                              : PairInputs{Pad(0), Pad(1), Pad(2), Pad(3), Pad(4)};
      }
      PairCheckGroup(in, d_, ok);
      for (int k = 0; k < kGroup && i + k < pairs; ++k) Return(pending_[i + k], 1, ok[k]);
    }
    if (timing) {
      const double t4 = Now();
      phase_seconds[0] += t1 - t0;
      phase_seconds[1] += t2 - t1;
      phase_seconds[2] += t3 - t2;
      phase_seconds[3] += t4 - t3;
    }
  }

  // The model's log density and gradient at the leaf's count lanes, across
  // lanes: their points gathered into structure of arrays (padding lanes at
  // zero), one lane-model call, the results scattered back.
  void ModelAcrossLanes(int64_t count) {
    const int64_t n = (count + kLaneModelMultiple - 1) / kLaneModelMultiple * kLaneModelMultiple;
    double* q = soa_q_.data();
    for (int64_t i = 0; i < count; ++i) {
      const double* from = lanes_[static_cast<size_t>(taken_[i])].end->q;
      for (int64_t j = 0; j < d_; ++j) q[j * n + i] = from[j];
    }
    for (int64_t j = 0; j < d_; ++j) std::fill(q + j * n + count, q + (j + 1) * n, 0.0);
    lane_model_->LogDensityGradient(q, n, n, soa_grad_.data(), soa_logp_.data());
    const double* grad = soa_grad_.data();
    for (int64_t i = 0; i < count; ++i) {
      End& end = *lanes_[static_cast<size_t>(taken_[i])].end;
      for (int64_t j = 0; j < d_; ++j) end.grad[j] = grad[j * n + i];
      end.logp = soa_logp_[i];
    }
  }

  // Merge's arithmetic and draws for lanes[0, n), across lanes: with a_ and
  // b_ holding each lane's two log weights, writes lsw_[i] = LogSumExp and
  // take_[i] = NextUniform < SamplerExp(b - lsw); advances each lane's counter.
  void MergeLanes(const int64_t* lanes, int64_t n) {
    merges_ += n;
    LogSumExpLanes(a_.data(), b_.data(), lsw_.data(), n);
    for (int64_t i = 0; i < n; ++i) x_[i] = b_[i] - lsw_[i];
    ExpLanes(x_.data(), y_.data(), n);
    UniformLanes(lanes, n);
    for (int64_t i = 0; i < n; ++i) take_[i] = u_[i] < y_[i];
  }

  // SamplerLogSumExp across lanes: out[i] = LSE(a[i], b[i]).
  void LogSumExpLanes(const double* a, const double* b, double* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const double hi = a[i] > b[i] ? a[i] : b[i];
      const double lo = a[i] < b[i] ? a[i] : b[i];
      hi_[i] = hi;
      x_[i] = lo - hi;
    }
    ExpLanes(x_.data(), y_.data(), n);
    Log1pLanes(y_.data(), z_.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double hi = hi_[i];
      out[i] = (a[i] != a[i] || b[i] != b[i]) ? std::numeric_limits<double>::quiet_NaN()
               : hi == -kInf                 ? hi
                                             : hi + z_[i];
    }
  }

  // NextUniform of lanes[0, n) into u_, Philox rounds across lanes.
  void UniformLanes(const int64_t* lanes, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      ChainRng& rng = lanes_[static_cast<size_t>(lanes[i])].rng;
      key_[i] = rng.key;
      counter_[i] = rng.counter++;
    }
    PhiloxBitsLanes(key_.data(), counter_.data(), 0, n, bits0_.data(), bits1_.data());
    for (int64_t i = 0; i < n; ++i) u_[i] = UniformFromBits(bits0_[i]);
  }

  // AfterFinal for the block's lanes with the merges' math across lanes.
  void AfterFinalLanes(int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      const Lane& lane = lanes_[static_cast<size_t>(taken_[i])];
      a_[i] = lane.lsw_init[lane.node];
      b_[i] = lane.lsw_ret[lane.node - 1];
    }
    MergeLanes(taken_.data(), count);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t l = taken_[i];
      Lane& lane = lanes_[static_cast<size_t>(l)];
      const int k = lane.node;
      Level& level = lane.levels[k];
      const TreeOut& out = lane.out[k];
      lane.lsw_ret[k] = lsw_[i];
      if (take_[i]) std::swap(*out.proposal, level.proposal_final);
      Return(l, k,
             MergeChecks(MergeInputs{out.p_sharp_beg, out.p_sharp_end, level.p_sharp_init_end,
                                     level.p_sharp_final_beg, level.rho_init, level.rho_final,
                                     level.p_init_end, level.p_final_beg, out.rho},
                         d_));
    }
  }

  // AfterSubtree for the block's lanes with the progressive sampling's math
  // across lanes.
  void AfterSubtreeLanes(int64_t count) {
    int64_t n = 0;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t l = taken_[i];
      Lane& lane = lanes_[static_cast<size_t>(l)];
      if (!lane.valid) {
        Finish(l);
        continue;
      }
      ++lane.depth;
    ++doublings_;
      pending_[n] = l;
      a_[n] = lane.lsw;
      b_[n] = lane.lsw_subtree;
      w_[n] = lane.lsw_subtree - lane.lsw;
      ++n;
    }
    UniformLanes(pending_.data(), n);
    ExpLanes(w_.data(), v_.data(), n);
    LogSumExpLanes(a_.data(), b_.data(), lsw_.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t l = pending_[i];
      Lane& lane = lanes_[static_cast<size_t>(l)];
      if (u_[i] < v_[i]) {
        std::swap(lane.sample, lane.proposal);
        lane.moved = true;
      }
      lane.lsw = lsw_[i];
      const bool persist = MergeChecks(
          MergeInputs{lane.p_sharp_bck_bck, lane.p_sharp_fwd_fwd, lane.p_sharp_bck_fwd,
                      lane.p_sharp_fwd_bck, lane.forward ? lane.rho : lane.rho_sub,
                      lane.forward ? lane.rho_sub : lane.rho, lane.p_bck_fwd, lane.p_fwd_bck,
                      lane.rho},
          d_);
      if (persist) {
        Doubling(l);
      } else {
        Finish(l);
      }
    }
  }

  // Scratch vectors of d zeros that pad a group: a padded slot reads zeros
  // and writes zeros (0 + 0 * 0, m * 0), so they stay zero.
  double* Pad(int slot) { return pad_.data() + slot * d_; }

  const Model& model_;
  LaneModel* lane_model_;
  SamplerConfig config_;
  int64_t d_;
  int64_t batch_;
  std::vector<double> inv_metric_, sqrt_inv_metric_;
  std::vector<double> storage_;
  std::vector<Lane> lanes_;
  std::vector<int64_t> waiting_[kNumBlocks];
  int64_t count_[kNumBlocks] = {};
  std::vector<int64_t> taken_;
  // The grouped blocks' pending checks, and the padding of a last group.
  std::vector<PairInputs> pair_in_;
  std::vector<int64_t> pending_;
  std::vector<double> pad_;
  // Lane-parallel math: per-lane operands and results (RoundUp(batch)
  // entries each).
  std::vector<double> a_, b_, lsw_, hi_, x_, y_, z_, u_, w_, v_;
  std::vector<uint8_t> take_;
  std::vector<uint64_t> key_, counter_, bits0_, bits1_;
  // The leaf's points, gradients and log densities across lanes
  // (model_lanes), lanes rounded up to kLaneModelMultiple.
  std::vector<double> soa_q_, soa_grad_, soa_logp_;
  ScalarChainResult* results_ = nullptr;
  int64_t merges_ = 0, doublings_ = 0, transitions_ = 0;
  int64_t num_draws_ = 0;
};

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Empty if every chain's draws, statistics and final stream position equal
// bit for bit; otherwise the first difference.
std::string FirstDifference(const std::vector<ScalarChainResult>& want,
                            const std::vector<ScalarChainResult>& got) {
  if (want.size() != got.size()) return "different numbers of chains";
  for (size_t c = 0; c < want.size(); ++c) {
    const ScalarChainResult& x = want[c];
    const ScalarChainResult& y = got[c];
    const std::string chain = "chain " + std::to_string(x.chain_id);
    if (x.chain_id != y.chain_id || x.draws.size() != y.draws.size() ||
        x.stats.size() != y.stats.size()) {
      return chain + ": different ids or numbers of draws";
    }
    for (size_t n = 0; n < x.stats.size(); ++n) {
      const std::string draw = chain + ", draw " + std::to_string(n);
      const size_t d = static_cast<size_t>(x.dimension);
      if (std::memcmp(x.draws.data() + n * d, y.draws.data() + n * d, d * sizeof(double)) != 0) {
        return draw + ": the points differ";
      }
      const DrawStats& s = x.stats[n];
      const DrawStats& t = y.stats[n];
      if (!SameBits(s.lp, t.lp) || !SameBits(s.accept_stat, t.accept_stat) ||
          !SameBits(s.stepsize, t.stepsize) || !SameBits(s.energy, t.energy) ||
          s.treedepth != t.treedepth || s.n_leapfrog != t.n_leapfrog ||
          s.divergent != t.divergent) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      ": stats differ (n_leapfrog %lld vs %lld, treedepth %d vs %d, "
                      "accept_stat %.17g vs %.17g)",
                      static_cast<long long>(s.n_leapfrog), static_cast<long long>(t.n_leapfrog),
                      s.treedepth, t.treedepth, s.accept_stat, t.accept_stat);
        return draw + buf;
      }
    }
    if (x.final_rng.counter != y.final_rng.counter) {
      return chain + ": final stream positions differ";
    }
  }
  return "";
}

int64_t GradientsTaken(const std::vector<ScalarChainResult>& chains) {
  int64_t total = 0;
  for (const ScalarChainResult& c : chains) {
    for (const DrawStats& s : c.stats) total += s.n_leapfrog;
  }
  return total;
}

// The first `max` drawn points, chain by chain, in draw order.
std::vector<const double*> DrawnPoints(const std::vector<ScalarChainResult>& chains, int64_t d,
                                       size_t max) {
  std::vector<const double*> points;
  for (const ScalarChainResult& c : chains) {
    for (size_t n = 0; n < c.stats.size() && points.size() < max; ++n) {
      points.push_back(c.draws.data() + n * d);
    }
  }
  return points;
}

// The model alone: `calls` gradient evaluations at the drawn points, in draw
// order, cycling over the first kModelPoints of them so that they stay in
// cache: the model's compute cost per gradient.
constexpr size_t kModelPoints = 64;

double TimeModelAlone(const Model& model, const std::vector<ScalarChainResult>& chains,
                      int64_t calls) {
  const int64_t d = model.dimension();
  const std::vector<const double*> points = DrawnPoints(chains, d, kModelPoints);
  std::vector<double> grad(static_cast<size_t>(d));
  double sink = 0;
  const double start = Now();
  for (int64_t k = 0; k < calls; ++k) {
    const double* q = points[static_cast<size_t>(k) % points.size()];
    sink += model.LogDensityGradient(std::span<const double>(q, static_cast<size_t>(d)), grad);
  }
  const double seconds = Now() - start;
  if (sink == 12345.678) std::printf(" ");  // keeps the calls
  return seconds;
}

// The model across lanes alone: calls of `lanes` lanes (rounded up to
// kLaneModelMultiple) holding the drawn points (cycling over the first
// kModelPoints), until `calls` gradients are taken; exits 1 unless every
// value has the scalar model's bits (CheckLaneModel).
double TimeLaneModelAlone(const Model& model, LaneModel& lane_model,
                          const std::vector<ScalarChainResult>& chains, int64_t lanes,
                          int64_t calls) {
  const int64_t d = model.dimension();
  const std::vector<const double*> points = DrawnPoints(chains, d, kModelPoints);
  const std::string diff = CheckLaneModel(model, lane_model, points);
  if (!diff.empty()) Die(model.name() + ": the model across lanes differs: " + diff);
  const int64_t n = (lanes + kLaneModelMultiple - 1) / kLaneModelMultiple * kLaneModelMultiple;
  std::vector<double> q(static_cast<size_t>(d * n)), grad(q.size()), logp(static_cast<size_t>(n));
  for (int64_t l = 0; l < n; ++l) {
    for (int64_t i = 0; i < d; ++i)
      q[i * n + l] = points[static_cast<size_t>(l) % points.size()][i];
  }
  double sink = 0;
  const double start = Now();
  for (int64_t done = 0; done < calls; done += lanes) {
    lane_model.LogDensityGradient(q.data(), n, n, grad.data(), logp.data());
    sink += logp[0];
  }
  const double seconds = Now() - start;
  if (sink == 12345.678) std::printf(" ");
  return seconds;
}

// The cost per call of the per-lane pieces of NUTS, cache-resident, calls
// independent of one another (throughput, not latency), beside the same
// values computed across lanes where a lane-parallel form with the same bits
// exists (Philox rounds across lanes, PhiloxBitsLanes; the vector path of
// exp / log1p, support/math/math.h). Exits 1 if a lane-parallel value
// differs from the per-lane one.
void PrintCallCosts(const Model& model) {
  constexpr int64_t kLanes = 1024;
  constexpr int kReps = 200;
  const int64_t d = model.dimension();
  std::vector<uint64_t> key(kLanes), counter(kLanes), bits0(kLanes), bits1(kLanes);
  std::vector<double> x(kLanes), y(kLanes), z(kLanes);
  for (int64_t l = 0; l < kLanes; ++l) {
    key[l] = ChainKey(kSeed, static_cast<uint64_t>(l));
    counter[l] = static_cast<uint64_t>(l) * 7;
    x[l] = -30.0 + 30.0 * static_cast<double>(l) / kLanes;  // exp arguments, <= 0
  }
  auto time = [&](auto&& body) {
    const double start = Now();
    for (int r = 0; r < kReps; ++r) body();
    return (Now() - start) * 1e9 / (static_cast<double>(kReps) * kLanes);
  };
  double sink = 0;
  const double uniform = time([&] {
    for (int64_t l = 0; l < kLanes; ++l) {
      ChainRng rng{key[l], counter[l]};
      sink += NextUniform(rng);
    }
  });
  const double uniform_lanes = time([&] {
    PhiloxBitsLanes(key.data(), counter.data(), 0, kLanes, bits0.data(), bits1.data());
    for (int64_t l = 0; l < kLanes; ++l) y[l] = UniformFromBits(bits0[l]);
    sink += y[kLanes - 1];
  });
  for (int64_t l = 0; l < kLanes; ++l) {
    ChainRng rng{key[l], counter[l]};
    if (!SameBits(NextUniform(rng), y[l])) Die("PhiloxBitsLanes gave other bits");
  }
  std::vector<double> normals(static_cast<size_t>(d));
  const double normal = time([&] {
    for (int64_t l = 0; l < kLanes; ++l) {
      ChainRng rng{key[l], counter[l]};
      NextNormals(rng, normals);
      sink += normals[0];
    }
  });
  const double exp = time([&] {
    for (int64_t l = 0; l < kLanes; ++l) sink += SamplerExp(x[l]);
  });
  const double exp_lanes = time([&] {
    ExpLanes(x.data(), z.data(), kLanes);
    sink += z[0];
  });
  for (int64_t l = 0; l < kLanes; ++l) {
    if (!SameBits(SamplerExp(x[l]), z[l])) Die("ExpLanes gave other bits");
  }
  const double log1p = time([&] {
    for (int64_t l = 0; l < kLanes; ++l) sink += SamplerLog1p(-x[l]);
  });
  for (int64_t l = 0; l < kLanes; ++l) y[l] = -x[l];
  const double log1p_lanes = time([&] {
    Log1pLanes(y.data(), z.data(), kLanes);
    sink += z[0];
  });
  for (int64_t l = 0; l < kLanes; ++l) {
    if (!SameBits(SamplerLog1p(y[l]), z[l])) Die("Log1pLanes gave other bits");
  }
  // Edge values: NaN, infinities, the subnormal range of exp.
  const double edges[kPacket * 2] = {std::numeric_limits<double>::quiet_NaN(), kInf, -kInf,
                                     -708.5, -745.0, -1000.0, 709.9, 0.0};
  double edge_out[kPacket * 2], edge_log[kPacket * 2];
  ExpLanes(edges, edge_out, kPacket * 2);
  Log1pLanes(edges, edge_log, kPacket * 2);
  for (int64_t i = 0; i < kPacket * 2; ++i) {
    if (!SameBits(SamplerExp(edges[i]), edge_out[i]) ||
        !SameBits(SamplerLog1p(edges[i]), edge_log[i])) {
      Die("ExpLanes / Log1pLanes gave other bits at an edge value");
    }
  }
  const double lse = time([&] {
    for (int64_t l = 0; l < kLanes; ++l) sink += SamplerLogSumExp(x[l], 0.5 * x[l]);
  });
  if (sink == 12345.678) std::printf(" ");
  std::printf("  per call (%s, d = %lld; throughput, cache-resident), ns:\n",
              model.name().c_str(), static_cast<long long>(d));
  std::printf("    NextUniform %.2f (across lanes %.2f), NextNormals(d) %.2f, SamplerExp %.2f "
              "(across lanes %.2f), SamplerLog1p %.2f (across lanes %.2f), "
              "SamplerLogSumExp %.2f\n",
              uniform, uniform_lanes, normal, exp, exp_lanes, log1p, log1p_lanes, lse);
}

// Two of the sampler's d-loops as a structure-of-arrays executor would run
// them, kSoaLanes lanes side by side (element i of lane l at [i * kSoaLanes
// + l]) so that the compiler vectorizes across lanes, each lane's sum still
// in index order: MergeChecks and SamplerLeapfrog's second half step with
// SamplerEnergy. Not an executor: the slots are fixed, which a real one gets
// only by copying where ScalarNuts swaps pointers, and by grouping lanes by
// tree depth.
constexpr int64_t kSoaLanes = 16;

void MergeChecksSoa(const double* const* v, double* __restrict rho_out, int64_t d, bool* ok) {
  // v: sharp_beg, sharp_end, sharp_a_end, sharp_b_beg, rho_a, rho_b, p_a_end, p_b_beg.
  const double* __restrict beg = v[0];
  const double* __restrict end = v[1];
  const double* __restrict a_end = v[2];
  const double* __restrict b_beg = v[3];
  const double* __restrict rho_a = v[4];
  const double* __restrict rho_b = v[5];
  const double* __restrict p_a_end = v[6];
  const double* __restrict p_b_beg = v[7];
  double s1p[kSoaLanes], s1m[kSoaLanes], s2p[kSoaLanes], s2m[kSoaLanes], s3p[kSoaLanes],
      s3m[kSoaLanes];
  for (int64_t l = 0; l < kSoaLanes; ++l) {
    const double r1 = rho_a[l] + rho_b[l], r2 = rho_a[l] + p_b_beg[l];
    const double r3 = rho_b[l] + p_a_end[l];
    rho_out[l] = r1;
    s1p[l] = end[l] * r1;
    s1m[l] = beg[l] * r1;
    s2p[l] = b_beg[l] * r2;
    s2m[l] = beg[l] * r2;
    s3p[l] = end[l] * r3;
    s3m[l] = a_end[l] * r3;
  }
  for (int64_t i = 1; i < d; ++i) {
    const int64_t o = i * kSoaLanes;
    for (int64_t l = 0; l < kSoaLanes; ++l) {
      const double ra = rho_a[o + l], rb = rho_b[o + l];
      const double r1 = ra + rb, r2 = ra + p_b_beg[o + l], r3 = rb + p_a_end[o + l];
      rho_out[o + l] = r1;
      s1p[l] = s1p[l] + end[o + l] * r1;
      s1m[l] = s1m[l] + beg[o + l] * r1;
      s2p[l] = s2p[l] + b_beg[o + l] * r2;
      s2m[l] = s2m[l] + beg[o + l] * r2;
      s3p[l] = s3p[l] + end[o + l] * r3;
      s3m[l] = s3m[l] + a_end[o + l] * r3;
    }
  }
  for (int64_t l = 0; l < kSoaLanes; ++l) {
    ok[l] = s1p[l] > 0 && s1m[l] > 0 && s2p[l] > 0 && s2m[l] > 0 && s3p[l] > 0 && s3m[l] > 0;
  }
}

void HalfStepEnergySoa(const double* m, double* p, const double* grad, double* p_sharp,
                       const double* half, const double* logp, int64_t d, double* h) {
  double acc[kSoaLanes];
  for (int64_t l = 0; l < kSoaLanes; ++l) {
    const double pl = p[l] + half[l] * grad[l];
    const double ps = m[0] * pl;
    p[l] = pl;
    p_sharp[l] = ps;
    acc[l] = pl * ps;
  }
  for (int64_t i = 1; i < d; ++i) {
    const int64_t o = i * kSoaLanes;
    for (int64_t l = 0; l < kSoaLanes; ++l) {
      const double pl = p[o + l] + half[l] * grad[o + l];
      const double ps = m[i] * pl;
      p[o + l] = pl;
      p_sharp[o + l] = ps;
      acc[l] = acc[l] + pl * ps;
    }
  }
  for (int64_t l = 0; l < kSoaLanes; ++l) h[l] = 0.5 * acc[l] - logp[l];
}

// Times both kernels per lane against the per-lane forms on lane-major data
// (all cache-resident), checking that they give the same bits.
void PrintSoaKernels(int64_t d) {
  constexpr int kReps = 20000;
  const size_t n = static_cast<size_t>(d * kSoaLanes);
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> soa(9, std::vector<double>(n)), aos(9, std::vector<double>(n));
  for (int k = 0; k < 8; ++k) {
    for (size_t j = 0; j < n; ++j) soa[k][j] = normal(gen);
  }
  for (int k = 0; k < 9; ++k) {  // lane l's vector k at aos[k][l * d]
    for (int64_t l = 0; l < kSoaLanes; ++l) {
      for (int64_t i = 0; i < d; ++i) aos[k][l * d + i] = soa[k][i * kSoaLanes + l];
    }
  }
  const double* v[8];
  for (int k = 0; k < 8; ++k) v[k] = soa[k].data();
  bool ok_soa[kSoaLanes], ok_lane[kSoaLanes];
  int64_t sink = 0;
  double start = Now();
  for (int r = 0; r < kReps; ++r) {
    MergeChecksSoa(v, soa[8].data(), d, ok_soa);
    sink += ok_soa[r % kSoaLanes];
  }
  const double merge_soa = (Now() - start) * 1e9 / (kReps * kSoaLanes);
  start = Now();
  for (int r = 0; r < kReps; ++r) {
    for (int64_t l = 0; l < kSoaLanes; ++l) {
      auto at = [&](int k) { return aos[k].data() + l * d; };
      ok_lane[l] = MergeChecks(
          MergeInputs{at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8)}, d);
    }
    sink += ok_lane[r % kSoaLanes];
  }
  const double merge_lane = (Now() - start) * 1e9 / (kReps * kSoaLanes);
  for (int64_t l = 0; l < kSoaLanes; ++l) {
    if (ok_soa[l] != ok_lane[l]) Die("MergeChecksSoa disagrees with MergeChecks");
    for (int64_t i = 0; i < d; ++i) {
      if (!SameBits(soa[8][i * kSoaLanes + l], aos[8][l * d + i])) Die("MergeChecksSoa bits");
    }
  }
  // Energy: p in vector 0 (reset each rep would cost; p drifts by half * grad
  // with half = 0, so it stays), grad in 1, p_sharp in 2.
  std::vector<double> m(static_cast<size_t>(d), 1.0), half(kSoaLanes, 0.0), logp(kSoaLanes, 0.5);
  double h_soa[kSoaLanes], h_lane[kSoaLanes];
  start = Now();
  for (int r = 0; r < kReps; ++r) {
    HalfStepEnergySoa(m.data(), soa[0].data(), soa[1].data(), soa[2].data(), half.data(),
                      logp.data(), d, h_soa);
    sink += h_soa[r % kSoaLanes] > 0;
  }
  const double energy_soa = (Now() - start) * 1e9 / (kReps * kSoaLanes);
  start = Now();
  for (int r = 0; r < kReps; ++r) {
    for (int64_t l = 0; l < kSoaLanes; ++l) {
      double* p = aos[0].data() + l * d;
      const double* g = aos[1].data() + l * d;
      for (int64_t i = 0; i < d; ++i) p[i] = p[i] + half[l] * g[i];
      h_lane[l] = SamplerEnergy(m.data(), p, logp[l], aos[2].data() + l * d, d);
    }
    sink += h_lane[r % kSoaLanes] > 0;
  }
  const double energy_lane = (Now() - start) * 1e9 / (kReps * kSoaLanes);
  for (int64_t l = 0; l < kSoaLanes; ++l) {
    if (!SameBits(h_soa[l], h_lane[l])) Die("HalfStepEnergySoa bits");
  }
  if (sink == -1) std::printf(" ");
  std::printf("    per lane, d = %lld, %lld lanes side by side (SoA) vs lane by lane: "
              "MergeChecks %.2f vs %.2f ns, half step + energy %.2f vs %.2f ns (same bits)\n",
              static_cast<long long>(d), static_cast<long long>(kSoaLanes), merge_soa,
              merge_lane, energy_soa, energy_lane);
}

struct BenchTarget {
  std::string name;
  nlohmann::json params;
  double step_size;
};

// ns per gradient of the scalar sampler on the target a user would write
// with the C library's math (bench/libm_targets.h), or NaN where there is
// none; the "vs C lib" column.
double libm_scalar_ns = std::numeric_limits<double>::quiet_NaN();

// "  2.345x", or "       -" without a C library target.
std::string VsLibm(double ns_per_gradient) {
  if (std::isnan(libm_scalar_ns)) return "       -";
  char text[32];
  std::snprintf(text, sizeof(text), "%7.3fx", libm_scalar_ns / ns_per_gradient);
  return text;
}

// A row without steps, lanes or bits.
void PrintRow(const char* name, double seconds, double ns_per_gradient, double vs_scalar) {
  std::printf("%-48s %9.4f %9.2f %8.3fx %s %8s %10s %5s\n", name, seconds, ns_per_gradient,
              vs_scalar, VsLibm(ns_per_gradient).c_str(), "-", "-", "-");
}

struct Executor {
  std::string name;
  PcBatchedNuts::RunOptions options;
};

void Bench(const BenchTarget& bt, const std::vector<int64_t>& chain_counts, int64_t draws,
           int reps, int64_t tile, const std::string& only) {
  absl::StatusOr<std::unique_ptr<Target>> made = MakeTarget(bt.name, bt.params);
  if (!made.ok()) Die("MakeTarget(" + bt.name + "): " + made.status().ToString());
  const Model& model = **made;
  const std::unique_ptr<LaneModel> lane_model = MakeLaneModel(model);
  const std::unique_ptr<Target> libm_model =
      autobatch::bench::MakeLibmTarget(bt.name + "_libm", bt.params);
  SamplerConfig config;
  config.step_size = bt.step_size;  // identity metric, max_depth 10, no jitter
  using Policy = PcBatchedNuts::Policy;
  std::printf("\n");
  PrintCallCosts(model);
  PrintSoaKernels(model.dimension());

  for (int64_t chains : chain_counts) {
    const std::vector<Start> starts = MakeStarts(model, chains);

    double scalar_seconds = 1e300;
    std::vector<ScalarChainResult> scalar = RunScalarLoop(model, config, starts, draws);  // warm
    for (int r = 0; r < reps; ++r) {
      const double start = Now();
      scalar = RunScalarLoop(model, config, starts, draws);
      scalar_seconds = std::min(scalar_seconds, Now() - start);
    }
    const int64_t gradients = GradientsTaken(scalar);
    const double scalar_ns = scalar_seconds * 1e9 / static_cast<double>(gradients);
    // The C library target from the same starts: its trajectories round
    // differently, so its own gradient count divides its time.
    double libm_seconds = 1e300;
    int64_t libm_gradients = 0;
    libm_scalar_ns = std::numeric_limits<double>::quiet_NaN();
    if (libm_model != nullptr) {
      for (const Start& s : starts) {
        if (absl::Status ok = autobatch::bench::CheckAgrees(*libm_model, model, s.state.q);
            !ok.ok()) {
          Die(ok.ToString());
        }
      }
      for (int r = 0; r < reps; ++r) {
        const double start = Now();
        libm_gradients = GradientsTaken(RunScalarLoop(*libm_model, config, starts, draws));
        libm_seconds = std::min(libm_seconds, Now() - start);
      }
      libm_scalar_ns = libm_seconds * 1e9 / static_cast<double>(libm_gradients);
    }

    std::printf("\n%s, %lld chains x %lld draws, %lld gradients, best of %d\n",
                bt.name.c_str(), static_cast<long long>(chains), static_cast<long long>(draws),
                static_cast<long long>(gradients), reps);
    std::printf("%-48s %9s %9s %9s %8s %8s %10s %5s\n", "executor", "seconds", "ns/grad",
                "vs scalar", "vs C lib", "steps", "lanes/leaf", "bits");
    PrintRow("scalar", scalar_seconds, scalar_ns, 1.0);
    if (libm_model != nullptr) {
      PrintRow("scalar, the target with the C library's math", libm_seconds, libm_scalar_ns,
               scalar_ns / libm_scalar_ns);
    }

    std::vector<Executor> executors = {
        {"by hand, leaf-last", {Policy::kLeafLast, false, false, 0}},
        {"by hand, most-lanes", {Policy::kMostLanes, false, false, 0}},
        {"by hand, interleaved", {Policy::kLeafLast, true, false, 0}},
        {"by hand, lane math", {Policy::kLeafLast, true, true, 0}},
    };
    if (lane_model != nullptr) {
      executors.push_back(
          {"by hand, lane math, model across lanes", {Policy::kLeafLast, true, true, 0, true}});
    }
    if (tile > 0 && tile < chains) {
      const std::string t = std::to_string(tile);
      executors.push_back({"by hand, tiles of " + t, {Policy::kLeafLast, false, false, tile}});
      executors.push_back(
          {"by hand, lane math, tiles " + t, {Policy::kLeafLast, true, true, tile}});
      if (lane_model != nullptr) {
        executors.push_back({"by hand, lane math, model across lanes, tiles " + t,
                             {Policy::kLeafLast, true, true, tile, true}});
      }
    }
    if (!only.empty()) {
      std::erase_if(executors,
                    [&](const Executor& ex) { return ex.name.find(only) == std::string::npos; });
    }
    PcBatchedNuts batched(model, lane_model.get(), config, chains);
    PcBatchedNuts::RunStats last_stats;
    for (const Executor& ex : executors) {
      double best = 1e300;
      PcBatchedNuts::RunStats stats;
      std::vector<ScalarChainResult> got;
      for (int r = 0; r < reps; ++r) {
        const double start = Now();
        stats = batched.Run(starts, draws, ex.options, /*timing=*/false, &got);
        best = std::min(best, Now() - start);
        const std::string diff = FirstDifference(scalar, got);
        if (!diff.empty()) {
          Die(bt.name + ", " + ex.name + ": the hand-batched NUTS differs from ScalarNuts: " +
              diff);
        }
      }
      last_stats = stats;
      const double ns = best * 1e9 / static_cast<double>(gradients);
      std::printf("%-48s %9.4f %9.2f %8.3fx %s %8lld %10.1f %5s\n", ex.name.c_str(), best, ns,
                  scalar_ns / ns, VsLibm(ns).c_str(), static_cast<long long>(stats.steps),
                  static_cast<double>(stats.leaf_lanes) / static_cast<double>(stats.leaf_steps),
                  "OK");
    }
    double model_seconds = 1e300;
    for (int r = 0; r < reps; ++r) {
      model_seconds = std::min(model_seconds, TimeModelAlone(model, scalar, gradients));
    }
    const double model_ns = model_seconds * 1e9 / static_cast<double>(gradients);
    PrintRow("model alone", model_seconds, model_ns, scalar_ns / model_ns);
    if (lane_model != nullptr) {
      double seconds = 1e300;
      for (int r = 0; r < reps; ++r) {
        seconds =
            std::min(seconds, TimeLaneModelAlone(model, *lane_model, scalar, chains, gradients));
      }
      const double ns = seconds * 1e9 / static_cast<double>(gradients);
      PrintRow("model across lanes alone", seconds, ns, scalar_ns / ns);
    }
    if (!executors.empty()) {
      const PcBatchedNuts::RunStats& c = last_stats;
      const double g = static_cast<double>(gradients);
      std::printf("  per gradient: %.3f subtree merges, %.3f doublings, %.4f transitions "
                  "(%.1f gradients per transition)\n",
                  static_cast<double>(c.merges) / g, static_cast<double>(c.doublings) / g,
                  static_cast<double>(c.transitions) / g,
                  g / static_cast<double>(c.transitions));
    }

    // Each executor once more, timed block by block (ns per gradient).
    std::vector<PcBatchedNuts::RunStats> timed;
    std::vector<double> totals;
    for (const Executor& ex : executors) {
      std::vector<ScalarChainResult> got;
      const double start = Now();
      timed.push_back(batched.Run(starts, draws, ex.options, /*timing=*/true, &got));
      totals.push_back(Now() - start);
      if (!FirstDifference(scalar, got).empty()) Die(bt.name + ": a timed run differs");
    }
    const double per_grad = 1e9 / static_cast<double>(gradients);
    std::printf("  one more run of each, timed by block, ns per gradient:\n");
    std::printf("    %-36s", "block");
    for (size_t e = 0; e < executors.size(); ++e) std::printf("       #%zu", e + 1);
    std::printf("\n");
    auto line = [&](const char* name, auto seconds_of) {
      std::printf("    %-36s", name);
      for (size_t e = 0; e < executors.size(); ++e) {
        std::printf(" %8.2f", seconds_of(e) * per_grad);
      }
      std::printf("\n");
    };
    for (int b = 0; b < PcBatchedNuts::kNumBlocks; ++b) {
      if (b == PcBatchedNuts::kLeaf) {
        for (int p = 0; p < PcBatchedNuts::kLeafPhases; ++p) {
          line(PcBatchedNuts::kLeafPhaseNames[p],
               [&](size_t e) { return timed[e].leaf_phase_seconds[p]; });
        }
      } else {
        line(PcBatchedNuts::kBlockNames[b], [&](size_t e) { return timed[e].block_seconds[b]; });
      }
    }
    line("scheduling, clock reads (rest)", [&](size_t e) {
      double blocks = 0;
      for (double s : timed[e].block_seconds) blocks += s;
      return totals[e] - blocks;
    });
    line("total (with the clock reads)", [&](size_t e) { return totals[e]; });
    std::printf("    (#k = the k-th executor above)\n");
    std::fflush(stdout);
  }
}

std::vector<std::string> SplitList(const std::string& text) {
  return absl::StrSplit(text, ',', absl::SkipEmpty());
}

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "nuts_bound: %s\nusage: nuts_bound [--draws N] [--reps R] "
               "[--chains-list 64,256,1024] [--tile T] "
               "[--targets eight_schools,ar1,logistic_regression] [--only EXECUTOR]\n",
               problem.c_str());
  std::exit(2);
}

int64_t ParsePositive(const std::string& text, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1) {
    Usage(std::string(what) + " must be a positive integer, got '" + text + "'");
  }
  return v;
}

int Main(int argc, char** argv) {
  int64_t draws = 10;
  int reps = 3;
  int64_t tile = 16;
  std::string only;
  std::vector<int64_t> chain_counts = {64, 256, 1024};
  std::vector<std::string> target_names = {"eight_schools", "ar1", "logistic_regression"};
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--draws") && has_value) {
      draws = ParsePositive(argv[++i], "--draws");
    } else if (!std::strcmp(argv[i], "--reps") && has_value) {
      reps = static_cast<int>(ParsePositive(argv[++i], "--reps"));
    } else if (!std::strcmp(argv[i], "--chains-list") && has_value) {
      chain_counts.clear();
      for (const std::string& c : SplitList(argv[++i])) {
        chain_counts.push_back(ParsePositive(c, "--chains-list entry"));
      }
    } else if (!std::strcmp(argv[i], "--only") && has_value) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--tile") && has_value) {
      tile = ParsePositive(argv[++i], "--tile");
    } else if (!std::strcmp(argv[i], "--targets") && has_value) {
      target_names = SplitList(argv[++i]);
    } else {
      Usage(std::string("unknown or incomplete argument '") + argv[i] + "'");
    }
  }
  std::vector<BenchTarget> targets;
  for (const std::string& name : target_names) {
    if (name == "ar1") {
      targets.push_back({name, {{"dimension", 100}}, 0.15});
    } else if (name == "eight_schools") {
      targets.push_back({name, nlohmann::json::object(), 0.3});
    } else if (name == "logistic_regression") {
      // nuts_bench's: the example model's data, 1000 rows x 24 features.
      targets.push_back({name, {{"rows", 1000}, {"features", 24}}, 0.05});
    } else {
      Usage("unknown target '" + name + "' (eight_schools, ar1, logistic_regression)");
    }
  }
  std::printf("NUTS, identity metric, no warmup, seed %llu, %lld draws per chain; times are "
              "the best of %d runs\n",
              static_cast<unsigned long long>(kSeed), static_cast<long long>(draws), reps);
  for (const BenchTarget& t : targets) Bench(t, chain_counts, draws, reps, tile, only);
  return 0;
}

}  // namespace
}  // namespace autobatch::mcmc

int main(int argc, char** argv) { return autobatch::mcmc::Main(argc, argv); }
