// The stackless VM: local static batching with host recursion.
#include "vm/stackless_vm.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "support/memory.h"
#include "support/overloaded.h"
#include "vm/host_stack.h"
#include "vm/inputs.h"
#include "vm/run_support.h"
#include "vm/tapes.h"

namespace autobatch {
namespace {

// The state of one activation: the function's variables and its queue.
// Pooled per (function, depth) so recursion allocates only the first time a
// depth is reached.
struct Activation {
  std::vector<Tensor> vars;       // indexed by the function-local var index
  std::vector<LaneSet> waiting;   // per block
  LaneSet running;
  LaneSet if_true, if_false;
  CountedVector<uint8_t> merge;  // scratch mask for unions
};

class StacklessVm {
 public:
  StacklessVm(const Program& program, const KernelRegistry* kernels,
              Backend& backend, const CallOptions& options, Profile& profile)
      : program_(program),
        module_(program.module),
        kernels_(kernels),
        backend_(backend),
        options_(options),
        profile_(profile),
        budget_(options) {}

  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs) {
    if (program_.stage == Stage::kUntyped || program_.stage == Stage::kLowered) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the stackless VM runs typed, unlowered programs; this one is at "
          "stage '", std::string(StageName(program_.stage)),
          "': run CompileProgram (passes/pipeline.h)"));
    }
    AB_RETURN_IF_ERROR(CheckNoGradientStubs(program_));
    AB_RETURN_IF_ERROR(CheckInputs(program_, inputs));
    batch_ = BatchOfInputs(program_, inputs);
    AB_RETURN_IF_ERROR(CheckValueSizes(program_, batch_, options_.max_value_bytes));
    profile_.Reset(program_, batch_, options_.profile_timing);
    halted_.assign(static_cast<size_t>(batch_), 0);
    halts_ = 0;
    local_index_.assign(module_.variables.size(), -1);
    fn_vars_.assign(module_.functions.size(), {});
    for (size_t v = 0; v < module_.variables.size(); ++v) {
      int32_t f = module_.variables[v].function.value;
      local_index_[v] = static_cast<int32_t>(fn_vars_[f].size());
      fn_vars_[f].push_back(VarId(static_cast<int32_t>(v)));
    }
    pool_.clear();
    pool_.resize(module_.functions.size());
    tapes_.Reset(module_, batch_, backend_, options_);

    const Function& entry = program_.entry_function();
    Activation& top = Acquire(program_.entry, 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
      // A uniform input keeps its one lane: stored once, read with stride 0.
      if (module_.var(entry.params[i]).uniform) inputs[i].set_uniform();
      Var(top, entry.params[i]) = std::move(inputs[i]);
    }
    for (const Tensor& t : top.vars) profile_.storage_bytes += t.size_bytes();
    AB_RETURN_IF_ERROR(
        RunActivation(program_.entry, top, LaneSet::All(batch_), 0));
    // Lanes that halted were checked at their Halt, the others at the
    // entry's Return (its tapes' bases are 0; other functions' tapes were
    // checked when their activations returned).
    std::vector<Tensor> outputs;
    for (VarId result : entry.results) outputs.push_back(Var(top, result));
    return outputs;
  }

 private:
  Tensor& Var(Activation& a, VarId v) { return a.vars[local_index_[v.value]]; }
  // A PrimOp input of function f's activation `a`: its own variable, or a
  // uniform input of the entry, which the entry's first activation holds
  // (ir/ir.h: any function may read them).
  Tensor& Input(FunctionId f, Activation& a, VarId v) {
    if (module_.var(v).function == f) return Var(a, v);
    AB_CHECK(module_.var(v).uniform, "the verifier allows only uniform inputs here");
    return Var(*pool_[program_.entry.value][0], v);
  }

  Activation& Acquire(FunctionId f, int64_t depth) {
    auto& by_depth = pool_[f.value];
    while (static_cast<int64_t>(by_depth.size()) <= depth) {
      auto a = std::make_unique<Activation>();
      for (VarId v : fn_vars_[f.value]) {
        const Variable& var = module_.var(v);
        AB_CHECK(var.type.has_value(), "typed programs type every variable");
        // A uniform value (entry only) is one lane for the batch.
        a->vars.push_back(var.uniform ? Tensor::Uniform(*var.type)
                                      : backend_.Allocate(*var.type, batch_));
      }
      a->waiting.assign(module_.function(f).blocks.size(), LaneSet(batch_));
      a->running.Reset(batch_);
      a->if_true.Reset(batch_);
      a->if_false.Reset(batch_);
      a->merge.assign(static_cast<size_t>(batch_), 0);
      by_depth.push_back(std::move(a));
    }
    return *by_depth[depth];
  }

  // waiting |= lanes.
  static void Merge(Activation& a, LaneSet& waiting, const LaneSet& lanes) {
    if (lanes.empty()) return;
    if (waiting.empty()) {
      for (int64_t lane : lanes.indices()) waiting.Append(lane);
      return;
    }
    for (int64_t lane : waiting.indices()) a.merge[lane] = 1;
    for (int64_t lane : lanes.indices()) a.merge[lane] = 1;
    waiting.AssignMask(a.merge);
    for (int64_t lane : waiting.indices()) a.merge[lane] = 0;
  }

  absl::Status RunActivation(FunctionId f, Activation& a, const LaneSet& lanes,
                             int64_t depth) {
    const Function& fn = module_.function(f);
    tapes_.Enter(f, lanes.indices());
    Merge(a, a.waiting[0], lanes);
    for (;;) {
      size_t b = 0;
      while (b < a.waiting.size() && a.waiting[b].empty()) ++b;
      if (b == a.waiting.size()) return absl::OkStatus();
      a.running.Clear();
      for (int64_t lane : a.waiting[b].indices()) a.running.Append(lane);
      a.waiting[b].Clear();
      AB_RETURN_IF_ERROR(budget_.Tick());
      AB_RETURN_IF_ERROR(RunBlock(f, fn, BlockId(static_cast<int32_t>(b)), a, depth));
    }
  }

  absl::Status RunBlock(FunctionId f, const Function& fn, BlockId b,
                        Activation& a, int64_t depth) {
    const Block& block = fn.blocks[b.value];
    const LaneSet& lanes = a.running;
    ExecMode mode = ChooseMode(lanes.size(), batch_, RunsExpensiveKernel(block), options_);
    BlockCounters& counters = profile_.blocks[f.value][b.value];
    ++counters.executions;
    counters.active_lanes += lanes.size();
    counters.lane_slots += batch_;
    ++(mode == ExecMode::kDense ? counters.dense : counters.compact);
    ++profile_.steps;
    for (int64_t lane : lanes.indices()) ++profile_.lane_blocks[lane];

    for (const Op& op : block.ops) {
      AB_RETURN_IF_ERROR(std::visit(
          Overloaded{
              [&](const PrimOp& o) {
                std::vector<const Tensor*> ins;
                std::vector<Tensor*> outs;
                for (VarId v : o.inputs) ins.push_back(&Input(f, a, v));
                for (VarId v : o.outputs) outs.push_back(&Var(a, v));
                AB_RETURN_IF_ERROR(RunCountedOp(backend_, o, ins, outs, lanes, mode,
                                                kernels_, profile_, fn));
                // A block of heavy ops reads the clock between them (Budget).
                return budget_.TickOp(o, ins, outs,
                                      mode == ExecMode::kDense ? batch_ : lanes.size());
              },
              [&](const CallOp& o) { return RunCall(o, fn, a, depth); },
              [&](const PopOp& o) {
                return absl::InternalError(absl::StrCat(
                    "PopOp at ", o.loc.ToString(), " in unlowered function '",
                    fn.name, "'; the verifier should have rejected it"));
              },
              [&](const TapePushOp& o) {
                return tapes_.Push(o.tape, Var(a, o.value), lanes.indices(), lanes.indices(),
                                   {fn, b, o.loc});
              },
              [&](const TapePopOp& o) {
                return tapes_.Pop(o.tape, lanes.indices(), &Var(a, o.result), lanes.indices(),
                                  {fn, b, o.loc});
              },
          },
          op));
    }
    return std::visit(
        Overloaded{
            [&](const Goto& t) {
              Merge(a, a.waiting[t.target.value], lanes);
              return absl::OkStatus();
            },
            [&](const Branch& t) {
              backend_.Split(Var(a, t.cond), lanes, &a.if_true, &a.if_false);
              Merge(a, a.waiting[t.then_block.value], a.if_true);
              Merge(a, a.waiting[t.else_block.value], a.if_false);
              return absl::OkStatus();
            },
            [&](const Return&) { return tapes_.Leave(f, lanes.indices(), {fn, b, block.loc}); },
            [&](const Halt&) {
              // The lanes are finished: the callers they are nested in drop
              // them when the call returns (RunCall). A halt ends every
              // activation: every tape must be empty.
              if (!tapes_.empty()) {
                AB_RETURN_IF_ERROR(tapes_.CheckEmpty(
                    lanes.indices(),
                    absl::StrCat("at the halt of ", TapeSite{fn, b, block.loc}.ToString())));
              }
              for (int64_t lane : lanes.indices()) halted_[static_cast<size_t>(lane)] = 1;
              halts_ += lanes.size();
              return absl::OkStatus();
            },
            [&](const PushGoto&) { return NotLowered(fn, block); },
            [&](const IndirectGoto&) { return NotLowered(fn, block); },
        },
        block.terminator);
  }

  absl::Status NotLowered(const Function& fn, const Block& block) {
    return absl::InternalError(absl::StrCat(
        "lowered terminator in function '", fn.name, "' block '", block.label,
        "' of an unlowered program; the verifier should have rejected it"));
  }

  absl::Status RunCall(const CallOp& call, const Function& caller,
                       Activation& a, int64_t depth) {
    const Function& callee = module_.function(call.callee);
    if (depth + 2 > options_.max_stack_depth) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "stack overflow: calling '", callee.name, "' from '", caller.name,
          "' at ", call.loc.ToString(), " exceeds max_stack_depth = ",
          options_.max_stack_depth, " frames (first lane: ",
          a.running.indices().front(),
          ") — raise it (--max-stack-depth) or check for unbounded recursion"));
    }
    // The callee's activation lives at depth + 1 of the pool, so nested
    // blocks never touch a.running.
    const LaneSet& lanes = a.running;
    Activation& c = Acquire(call.callee, depth + 1);
    for (size_t i = 0; i < call.args.size(); ++i) {
      backend_.MaskedUpdate(Var(a, call.args[i]), lanes, &Var(c, callee.params[i]));
    }
    const int64_t halts_before = halts_;
    AB_RETURN_IF_ERROR(RunActivation(call.callee, c, lanes, depth + 1));
    if (halts_ != halts_before) {
      // Lanes that halted inside the call do not come back: the rest of the
      // caller's block (and everything after it) runs without them, so their
      // entry results stay as they were at the Halt.
      for (int64_t lane : a.running.indices()) a.merge[lane] = halted_[lane] == 0 ? 1 : 0;
      a.running.AssignMask(a.merge);
      for (int64_t lane : a.running.indices()) a.merge[lane] = 0;  // as Merge leaves it
    }
    for (size_t i = 0; i < call.results.size(); ++i) {
      backend_.MaskedUpdate(Var(c, callee.results[i]), lanes,
                            &Var(a, call.results[i]));
    }
    return absl::OkStatus();
  }

  const Program& program_;
  const Module& module_;
  const KernelRegistry* kernels_;
  Backend& backend_;
  const CallOptions& options_;
  Profile& profile_;
  Budget budget_;
  int64_t batch_ = 0;
  std::vector<uint8_t> halted_;  // per lane: reached a Halt
  int64_t halts_ = 0;            // lanes that reached a Halt so far
  std::vector<int32_t> local_index_;             // var -> index in its function
  std::vector<std::vector<VarId>> fn_vars_;      // function -> its variables
  std::vector<std::vector<std::unique_ptr<Activation>>> pool_;  // [fn][depth]
  LaneTapes tapes_;
};

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunStacklessVm(
    const Program& program, std::vector<Tensor> inputs,
    const KernelRegistry* kernels, Backend& backend, const CallOptions& options,
    Profile* profile) {
  if (options.max_stack_depth > kMaxHostRecursionLevels) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "max_stack_depth = ", options.max_stack_depth,
        " is deeper than the stackless VM can recurse on the host (at most ",
        kMaxHostRecursionLevels,
        " levels); lower it, or use the stack VM (--vm stack), whose stacks live on the heap"));
  }
  MemoryScope memory = MemoryScope::ForRun(options.max_memory_bytes);
  return CatchResourceErrors(
      "the stackless VM's run", [&]() -> absl::StatusOr<std::vector<Tensor>> {
        Profile local;
        StacklessVm vm(program, kernels, backend, options, profile ? *profile : local);
        absl::StatusOr<std::vector<Tensor>> result;
        // The VM recurses on the host once per call level: run it on a stack
        // that holds max_stack_depth levels, whatever the caller's thread has.
        AB_RETURN_IF_ERROR(
            RunWithHostStack(std::max<int64_t>(options.max_stack_depth, 0) + 2, [&] {
              result = vm.Run(std::move(inputs));
              return absl::OkStatus();
            }));
        return result;
      });
}

}  // namespace autobatch
