// Batched NUTS: the recursive build_tree and the doubling loop as frontend
// bodies, mirroring scalar_nuts.cc operation for operation.
#include "mcmc/batched/batched_nuts.h"

#include <limits>

#include "support/status.h"
#include "mcmc/batched/model_kernel.h"

namespace autobatch::mcmc {
namespace {

// The per-transition accumulators, threaded through the leaves in order.
struct Walk {
  Value counter;     // u64
  Value n_leapfrog;  // i64
  Value sum_prob;    // f64
  Value divergent;   // bool
};
AUTOBATCH_STRUCT(Walk, counter, n_leapfrog, sum_prob, divergent)

// What nuts_build_tree returns (scalar_nuts.h's BuildTree outputs, plus the
// end point where integration continues and the walk).
struct Tree {
  PhasePoint end;
  Value valid;  // bool
  Value lsw;    // log sum of the subtree's weights
  Value prop_q, prop_logp, prop_grad, prop_energy;
  Value rho, p_beg;
  Walk walk;
};
AUTOBATCH_STRUCT(Tree, end, valid, lsw, prop_q, prop_logp, prop_grad, prop_energy, rho,
                 p_beg, walk)

// U(minus, plus, r) = dot(plus, r) > 0 && dot(minus, r) > 0.
Value NoUTurn(const Value& sharp_minus, const Value& sharp_plus, const Value& rho) {
  return dot(sharp_plus, rho) > 0.0 && dot(sharp_minus, rho) > 0.0;
}

// The three checks at the merge of part A (first in time) with part B after
// it (scalar_nuts.cc, MergeChecks); *rho = rho_a + rho_b.
Value MergeChecks(const Value& sharp_beg, const Value& sharp_end, const Value& sharp_a_end,
                  const Value& sharp_b_beg, const Value& rho_a, const Value& rho_b,
                  const Value& p_a_end, const Value& p_b_beg, Value* rho) {
  *rho = rho_a + rho_b;
  Value around = NoUTurn(sharp_beg, sharp_end, *rho);
  Value a_extended = NoUTurn(sharp_beg, sharp_b_beg, rho_a + p_b_beg);
  Value b_extended = NoUTurn(sharp_a_end, sharp_end, rho_b + p_a_end);
  return around && a_extended && b_extended;
}

}  // namespace

BatchFunction DefineNutsTransition(Context& ctx, const LogDensityFn& log_density, int64_t dimension,
                                   const SamplerConfig& config) {
  AB_CHECK(config.Validate(dimension).ok(), "DefineNutsTransition needs a valid config");
  const double max_delta_h = config.max_delta_h;
  const int64_t max_depth = config.max_depth;
  const double jitter = config.step_size_jitter;
  const int64_t d = dimension;

  // The leaf (the only model evaluation) is a function of its own, called
  // only by build_tree: by the block-order contract (vm/stack/block_plan.h,
  // tested on this program in tests/vm/block_plan_test.cc) the stack VM runs
  // the lowest-numbered block that has lanes, and the leaf's block comes
  // LAST. Every lane that is not
  // finished — unwinding a subtree, merging, starting its next doubling or
  // its next transition — therefore reaches the leaf before it runs: each
  // model-kernel execution serves every unfinished chain (the free-running
  // bound), and no chain waits for another's trajectory. (A leaf block inside
  // build_tree would come before the merge blocks, and lanes unwinding would
  // miss leaf executions.)
  FunctionOptions transition_options;
  transition_options.param_names = TransitionParamNames();
  BatchFunction transition = ctx.Declare("nuts_transition", transition_options);
  BatchFunction build_tree = ctx.Declare(
      "nuts_build_tree",
      {.param_names = {"depth", "start", "step", "h0", "inv_metric", "key", "walk"}});
  BatchFunction leaf =
      ctx.Declare("nuts_leaf", {.param_names = {"start", "step", "h0", "inv_metric", "walk"}});

  // A leaf: one leapfrog (scalar_nuts.cc, Leaf).
  ctx.Batch(leaf)([log_density, max_delta_h](PhasePoint start, Value e, Value h0, Value m,
                                              Walk walk) -> Tree {
    PhasePoint end = EmitLeapfrog(log_density, m, e, start);
    Value n_leapfrog = walk.n_leapfrog + 1;
    Value p_sharp;  // recomputed by the merges as m * p (the same bits)
    Value h = EmitNanToInf(EmitEnergy(m, end.p, end.logp, &p_sharp));
    Value divergent = walk.divergent || h - h0 > max_delta_h;
    Value w = h0 - h;
    Value sum_prob = walk.sum_prob + EmitMetropolisProb(w);
    return Tree{end,   !divergent, w,     end.q, end.logp, end.grad, h,
                end.p, end.p,      Walk{walk.counter, n_leapfrog, sum_prob, divergent}};
  });

  ctx.Batch(build_tree)([build_tree, leaf](Builder& b, Value depth, PhasePoint start, Value e,
                                           Value h0, Value m, Value key, Walk walk) -> Tree {
    b.If(depth == 0).Then([&] {
      Tree one = leaf(start, e, h0, m, walk);
      b.Return(one);
    });
    Tree init = build_tree(depth - 1, start, e, h0, m, key, walk);
    b.If(!init.valid).Then([&] { b.Return(init); });
    Tree last = build_tree(depth - 1, init.end, e, h0, m, key, init.walk);
    b.If(!last.valid).Then([&] { b.Return(last); });
    // Multinomial choice between the two valid halves (scalar Merge).
    Value lsw = EmitLogSumExp(init.lsw, last.lsw);
    Value u = random_uniform(key, last.walk.counter);
    Value counter = last.walk.counter + 1;
    Value take_last = u < exp(last.lsw - lsw);
    Value rho;
    Value valid = MergeChecks(m * init.p_beg, m * last.end.p, m * init.end.p, m * last.p_beg,
                              init.rho, last.rho, init.end.p, last.p_beg, &rho);
    return Tree{last.end,
                valid,
                lsw,
                select(take_last, last.prop_q, init.prop_q),
                select(take_last, last.prop_logp, init.prop_logp),
                select(take_last, last.prop_grad, init.prop_grad),
                select(take_last, last.prop_energy, init.prop_energy),
                rho,
                init.p_beg,
                Walk{counter, last.walk.n_leapfrog, last.walk.sum_prob, last.walk.divergent}};
  });

  return ctx.Batch(transition)(
      [build_tree, max_depth, jitter, d](Builder& b, ChainPoint state, Value key,
                                         Value counter_in, Value step_size, Value m,
                                         Value sqrt_m) -> TransitionResult {
        Var counter = b.Local("counter", counter_in);
        Value eps = EmitJitteredStepSize(step_size, jitter, key, counter);
        Value p0 = DrawNormals(key, counter, d) / sqrt_m;
        Value p_sharp0;
        Value h0 = EmitEnergy(m, p0, state.logp, &p_sharp0);

        // The trajectory's two ends, integrated in place.
        Var fwd_q = b.Local("fwd_q", state.q), fwd_p = b.Local("fwd_p", p0),
            fwd_grad = b.Local("fwd_grad", state.grad), fwd_logp = b.Local("fwd_logp", state.logp);
        Var bck_q = b.Local("bck_q", state.q), bck_p = b.Local("bck_p", p0),
            bck_grad = b.Local("bck_grad", state.grad), bck_logp = b.Local("bck_logp", state.logp);
        // The sample (the chain stays unless a subtree's proposal is taken).
        Var sample_q = b.Local("sample_q", state.q),
            sample_logp = b.Local("sample_logp", state.logp),
            sample_grad = b.Local("sample_grad", state.grad),
            sample_energy = b.Local("sample_energy", h0);
        Var lsw = b.Local("lsw", 0.0);
        Var rho = b.Local("rho", p0);
        // Boundary momenta of the backward and forward parts, and m * each.
        Var p_bck_bck = b.Local("p_bck_bck", p0), p_bck_fwd = b.Local("p_bck_fwd", p0),
            p_fwd_bck = b.Local("p_fwd_bck", p0), p_fwd_fwd = b.Local("p_fwd_fwd", p0);
        Var sharp_bck_bck = b.Local("sharp_bck_bck", p_sharp0),
            sharp_bck_fwd = b.Local("sharp_bck_fwd", p_sharp0),
            sharp_fwd_bck = b.Local("sharp_fwd_bck", p_sharp0),
            sharp_fwd_fwd = b.Local("sharp_fwd_fwd", p_sharp0);
        Var depth = b.Local("depth", int64_t{0});
        Var n_leapfrog = b.Local("n_leapfrog", int64_t{0});
        Var sum_prob = b.Local("sum_prob", 0.0);
        Var divergent = b.Local("divergent", false);
        Var go = b.Local("go", true);

        b.While([&] { return go && depth < max_depth; }).Do([&] {
          Value forward = DrawUniform(key, counter) > 0.5;
          // Forward: the old trajectory's forward end becomes the backward
          // part's inner end; backward: symmetrically.
          p_bck_fwd = select(forward, p_fwd_fwd, p_bck_fwd);
          sharp_bck_fwd = select(forward, sharp_fwd_fwd, sharp_bck_fwd);
          p_fwd_bck = select(forward, p_fwd_bck, p_bck_bck);
          sharp_fwd_bck = select(forward, sharp_fwd_bck, sharp_bck_bck);
          PhasePoint start{select(forward, fwd_q, bck_q), select(forward, fwd_p, bck_p),
                           select(forward, fwd_grad, bck_grad),
                           select(forward, fwd_logp, bck_logp)};
          Value e = select(forward, eps, -eps);
          Tree t = build_tree(depth, start, e, h0, m, key,
                              Walk{counter, n_leapfrog, sum_prob, divergent});
          counter = t.walk.counter;
          n_leapfrog = t.walk.n_leapfrog;
          sum_prob = t.walk.sum_prob;
          divergent = t.walk.divergent;
          fwd_q = select(forward, t.end.q, fwd_q);
          fwd_p = select(forward, t.end.p, fwd_p);
          fwd_grad = select(forward, t.end.grad, fwd_grad);
          fwd_logp = select(forward, t.end.logp, fwd_logp);
          bck_q = select(forward, bck_q, t.end.q);
          bck_p = select(forward, bck_p, t.end.p);
          bck_grad = select(forward, bck_grad, t.end.grad);
          bck_logp = select(forward, bck_logp, t.end.logp);
          Value sharp_beg = m * t.p_beg;
          Value sharp_end = m * t.end.p;
          p_fwd_bck = select(forward, t.p_beg, p_fwd_bck);
          sharp_fwd_bck = select(forward, sharp_beg, sharp_fwd_bck);
          p_fwd_fwd = select(forward, t.end.p, p_fwd_fwd);
          sharp_fwd_fwd = select(forward, sharp_end, sharp_fwd_fwd);
          p_bck_fwd = select(forward, p_bck_fwd, t.p_beg);
          sharp_bck_fwd = select(forward, sharp_bck_fwd, sharp_beg);
          p_bck_bck = select(forward, p_bck_bck, t.end.p);
          sharp_bck_bck = select(forward, sharp_bck_bck, sharp_end);

          // An invalid subtree ends the transition with no further draw; the
          // values computed below are then discarded by the selects (or
          // never read again).
          Value valid = t.valid;
          depth = select(valid, depth + 1, depth);
          Value u = random_uniform(key, counter);
          counter = select(valid, counter + 1, counter);
          // Biased progressive sampling between doublings.
          Value take = valid && u < exp(t.lsw - lsw);
          sample_q = select(take, t.prop_q, sample_q);
          sample_logp = select(take, t.prop_logp, sample_logp);
          sample_grad = select(take, t.prop_grad, sample_grad);
          sample_energy = select(take, t.prop_energy, sample_energy);
          lsw = EmitLogSumExp(lsw, t.lsw);
          Value rho_bck = select(forward, rho, t.rho);
          Value rho_fwd = select(forward, t.rho, rho);
          Value merged_rho;
          Value persist =
              MergeChecks(sharp_bck_bck, sharp_fwd_fwd, sharp_bck_fwd, sharp_fwd_bck, rho_bck,
                          rho_fwd, p_bck_fwd, p_fwd_bck, &merged_rho);
          rho = merged_rho;
          go = valid && persist;
        });

        Value n_leapfrog_f = cast(n_leapfrog, DType::kF64);
        return TransitionResult{
            ChainPoint{sample_q, sample_logp, sample_grad},
            counter,
            TransitionStats{sample_logp, sum_prob / n_leapfrog_f, eps, depth, n_leapfrog,
                            divergent, sample_energy, n_leapfrog}};
      });
}

}  // namespace autobatch::mcmc
