// The stack VM: Run, Step (dense blocks and the timed dense/compact choice), terminators.
#include "vm/stack/stack_vm.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "support/memory.h"
#include "support/overloaded.h"
#include "vm/fused_blocks.h"
#include "vm/inputs.h"
#include "vm/run_support.h"
#include "vm/stack/compact.h"
#include "vm/stack/fused_calls.h"
#include "vm/stack/scheduler.h"
#include "vm/stack/storage.h"
#include "vm/timed_choice.h"

namespace autobatch {
namespace {

int64_t NanosecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

absl::Status CallInLoweredProgram(const CallOp& op, const Function& fn) {
  return absl::InternalError(absl::StrCat("CallOp at ", op.loc.ToString(),
                                          " in lowered function '", fn.name,
                                          "'; the verifier should have rejected it"));
}

class StackVm {
 public:
  StackVm(const BlockPlan& plan, const KernelRegistry* kernels, Backend& backend,
          const CallOptions& options, Profile& profile)
      : plan_(plan),
        program_(plan.program()),
        module_(plan.module()),
        kernels_(kernels),
        backend_(backend),
        options_(options),
        profile_(profile),
        budget_(options),
        scheduler_(plan, options.block_policy),
        storage_(plan, backend, options),
        compact_(plan, storage_, fused_, budget_, backend, kernels, options, profile) {}

  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs) {
    AB_RETURN_IF_ERROR(CheckInputs(program_, inputs));
    batch_ = BatchOfInputs(program_, inputs);
    AB_RETURN_IF_ERROR(CheckValueSizes(program_, batch_, options_.max_value_bytes));
    AB_RETURN_IF_ERROR(storage_.CheckStackBytes(batch_));
    if (options_.fused_blocks != nullptr) {
      AB_RETURN_IF_ERROR(CheckFusedProgram(*options_.fused_blocks, program_));
    }
    profile_.Reset(program_, batch_, options_.profile_timing);
    Setup();
    const Function& entry = program_.entry_function();
    // The entry is entered like a call: a Full parameter gets a frame of its
    // own, which the entry pops where the parameter dies.
    lanes_.SetAll();
    for (size_t i = 0; i < inputs.size(); ++i) {
      VarId param = entry.params[i];
      if (module_.var(param).storage == StorageClass::kFull) {
        AB_RETURN_IF_ERROR(storage_.Push(param, entry, lanes_));
      }
      if (storage_.frame_stack(param)) {
        storage_.WriteFrames(inputs[i], storage_.all_lanes().indices(), param);
      } else {
        // A uniform input keeps its one lane: stored once, read with stride 0.
        if (module_.var(param).uniform) inputs[i].set_uniform();
        *storage_.Contiguous(param) = std::move(inputs[i]);
      }
    }
    profile_.storage_bytes = storage_.StorageBytes();
    scheduler_.MoveLanes(lanes_.indices(), plan_.Gid(program_.entry, BlockId(0)));
    for (int32_t gid = scheduler_.NextBlock(); gid >= 0; gid = scheduler_.NextBlock()) {
      AB_RETURN_IF_ERROR(budget_.Tick());
      AB_RETURN_IF_ERROR(Step(gid));
    }
    std::vector<Tensor> outputs;
    for (VarId result : entry.results) {
      outputs.push_back(*storage_.DenseRead(result, storage_.all_lanes()));
    }
    return outputs;
  }

 private:
  void Setup() {
    const auto num_blocks = static_cast<size_t>(plan_.num_blocks());
    wide_.clear();
    for (size_t gid = 0; gid < num_blocks; ++gid) {
      // The block's values over the whole batch exceed dense_max_bytes.
      const int64_t lane_bytes = plan_.block(static_cast<int32_t>(gid)).lane_bytes;
      wide_.push_back(options_.dense_max_bytes > 0 && batch_ > 0 &&
                      lane_bytes > options_.dense_max_bytes / batch_);
    }
    mode_choice_.assign(num_blocks, TimedChoice());
    dense_fused_choice_.assign(num_blocks, TimedChoice());
    fused_.Reset(plan_, options_.fused_blocks);
    scheduler_.Reset(batch_);
    storage_.Allocate(batch_, kernels_);
    compact_.Reset();
    lanes_.Reset(batch_);
    if_true_.Reset(batch_);
    if_false_.Reset(batch_);
  }

  absl::Status Step(int32_t gid) {
    const BlockFacts& facts = plan_.block(gid);
    const FunctionId fn_id = facts.fn;
    const Function& fn = module_.function(fn_id);
    const Block& block = fn.blocks[facts.block.value];
    scheduler_.Take(gid, &lanes_, profile_.lane_blocks.data());  // they all run now

    // From a quarter of the batch up, a block times compact against dense
    // (vm/timed_choice.h); fewer lanes run compact. Not a wide block: its
    // dense passes would stream the batch through the caches, a cost that
    // shows in the blocks after it rather than in its own time. Nor a block
    // whose lanes depend on the batch: dense and compact pass its op
    // different batches, so a choice by the clock would make its bits vary
    // from run to run.
    const bool choose_mode = options_.time_dense_or_compact && !wide_[gid] &&
                             !facts.batch_dependent && !lanes_.full() &&
                             lanes_.size() * 4 >= batch_;
    const bool timed_compact = choose_mode && mode_choice_[gid].First(lanes_.size());
    const bool time_mode = choose_mode && mode_choice_[gid].Timed();
    const ExecMode mode =
        choose_mode ? (timed_compact ? ExecMode::kCompact : ExecMode::kDense)
                    : ChooseMode(lanes_.size(), batch_, facts.heavy || wide_[gid], options_);
    std::chrono::steady_clock::time_point mode_start;
    if (time_mode) mode_start = std::chrono::steady_clock::now();
    BlockCounters& counters = profile_.blocks[fn_id.value][facts.block.value];
    ++counters.executions;
    counters.active_lanes += lanes_.size();
    counters.lane_slots += batch_;
    ++(mode == ExecMode::kDense ? counters.dense : counters.compact);
    counters.ops += static_cast<int64_t>(block.ops.size());
    ++profile_.steps;
    std::chrono::steady_clock::time_point start;
    if (profile_.timing) start = std::chrono::steady_clock::now();

    if (mode == ExecMode::kCompact && !lanes_.full()) {  // full: dense is the same
      AB_RETURN_IF_ERROR(compact_.Run(gid, lanes_, counters));
    } else {
      AB_RETURN_IF_ERROR(RunDenseBlock(gid, block, fn, counters));
    }
    if (time_mode) {
      mode_choice_[gid].Record(timed_compact, lanes_.size(), NanosecondsSince(mode_start));
    }
    AB_RETURN_IF_ERROR(RunTerminator(block, fn_id, fn, facts.block));
    if (profile_.timing) counters.nanoseconds += NanosecondsSince(start);
    return absl::OkStatus();
  }

  // A dense block runs its fused segments when every lane is there; with
  // some lanes away, the kernels' passes over the whole batch may beat a
  // segment's loop over the running lanes' indices, so the block measures
  // both (vm/timed_choice.h).
  absl::Status RunDenseBlock(int32_t gid, const Block& block, const Function& fn,
                             BlockCounters& counters) {
    const std::vector<const FusedSegment*>& fused = fused_.at(gid);
    const bool choose = !fused.empty() && !lanes_.full();
    const bool use_fused =
        !fused.empty() && (lanes_.full() || dense_fused_choice_[gid].First(lanes_.size()));
    const bool time_fused = choose && dense_fused_choice_[gid].Timed();
    std::chrono::steady_clock::time_point ops_start;
    if (time_fused) ops_start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < block.ops.size(); ++i) {
      if (use_fused && fused[i] != nullptr) {
        AB_RETURN_IF_ERROR(RunFusedDense(block, fn, *fused[i]));
        i = static_cast<size_t>(fused[i]->end_op) - 1;
        continue;
      }
      AB_RETURN_IF_ERROR(std::visit(
          Overloaded{
              [&](const PrimOp& o) { return RunDense(o, fn); },
              [&](const PopOp& o) { return storage_.Pop(o, fn, lanes_); },
              [&](const CallOp& o) { return CallInLoweredProgram(o, fn); },
              [&](const TapePushOp& o) {
                return storage_.TapePush(o, {fn, plan_.block(gid).block, o.loc}, lanes_);
              },
              [&](const TapePopOp& o) {
                if (module_.var(o.result).storage == StorageClass::kFull) {
                  AB_RETURN_IF_ERROR(storage_.Push(o.result, fn, lanes_));
                }
                return storage_.TapePop(o, {fn, plan_.block(gid).block, o.loc}, lanes_);
              },
          },
          block.ops[i]));
    }
    if (time_fused) {
      dense_fused_choice_[gid].Record(use_fused, lanes_.size(), NanosecondsSince(ops_start));
    }
    if (use_fused) ++counters.dense_fused;
    return absl::OkStatus();
  }

  // Dense: the op runs over the whole batch in place. An op whose outputs are
  // all block-local skips the masked blend and writes every lane (inactive
  // ones get junk, which nothing reads) — except user kernels, which may have
  // side effects and so only ever see the running lanes.
  absl::Status RunDense(const PrimOp& op, const Function& fn) {
    if (storage_.SkipsOp(op)) return absl::OkStatus();
    in_ptrs_.clear();
    out_ptrs_.clear();
    bool outputs_local = op.prim != Primitive::kUserKernel;
    for (VarId v : op.inputs) in_ptrs_.push_back(storage_.DenseRead(v, lanes_));
    for (VarId v : op.outputs) {
      if (plan_.PushesFrame(op, v)) AB_RETURN_IF_ERROR(storage_.Push(v, fn, lanes_));
      outputs_local = outputs_local && plan_.var(v).block_local;
      // A frame stack's output goes to its top buffer (holding the current
      // frames if it is also an input, read before the push) and then to
      // the running lanes' frames.
      out_ptrs_.push_back(storage_.DenseWrite(v));
    }
    AB_RETURN_IF_ERROR(RunCountedOp(backend_, op, in_ptrs_, out_ptrs_,
                                    outputs_local ? storage_.all_lanes() : lanes_,
                                    ExecMode::kDense, kernels_, profile_, fn, lanes_.size()));
    for (VarId v : op.outputs) storage_.CommitDense(v, lanes_);
    // A block of heavy ops reads the clock between them (Budget).
    return budget_.TickOp(op, in_ptrs_, out_ptrs_, batch_);
  }

  // A fused segment in a dense block: every variable in its storage (a
  // frame stack through its top buffer, as RunDense does); then the
  // segment's pops.
  absl::Status RunFusedDense(const Block& block, const Function& fn, const FusedSegment& seg) {
    const int64_t* storage_lanes = lanes_.indices().data();
    fused_.ClearArgs();
    for (int32_t v : seg.inputs) {
      fused_.AddInput(storage_.DenseRead(VarId(v), lanes_)->bytes(), storage_lanes);
    }
    for (int32_t v : seg.outputs) fused_.AddOutput(storage_.DenseWrite(VarId(v))->bytes(), storage_lanes);
    AB_RETURN_IF_ERROR(
        fused_.Call(block, seg, lanes_.size(), /*new_execution=*/true, profile_, budget_));
    for (int32_t v : seg.outputs) storage_.CommitDense(VarId(v), lanes_);
    for (int32_t i = seg.first_op; i < seg.end_op; ++i) {
      if (const auto* pop = std::get_if<PopOp>(&block.ops[i])) {
        AB_RETURN_IF_ERROR(storage_.Pop(*pop, fn, lanes_));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RunTerminator(const Block& block, FunctionId fn_id, const Function& fn,
                             BlockId block_id) {
    return std::visit(
        Overloaded{
            [&](const Goto& t) {
              scheduler_.MoveLanes(lanes_.indices(), plan_.Gid(fn_id, t.target));
              return absl::OkStatus();
            },
            [&](const Branch& t) {
              backend_.Split(*storage_.DenseRead(t.cond, lanes_), lanes_, &if_true_, &if_false_);
              scheduler_.MoveLanes(if_true_.indices(), plan_.Gid(fn_id, t.then_block));
              scheduler_.MoveLanes(if_false_.indices(), plan_.Gid(fn_id, t.else_block));
              return absl::OkStatus();
            },
            [&](const PushGoto& t) {
              AB_RETURN_IF_ERROR(storage_.PushReturns(lanes_, plan_.Gid(fn_id, t.return_to),
                                                      module_.function(t.callee), fn));
              storage_.tapes().Enter(t.callee, lanes_.indices());
              scheduler_.MoveLanes(lanes_.indices(), plan_.Gid(t.callee, BlockId(0)));
              return absl::OkStatus();
            },
            [&](const IndirectGoto&) {
              // Lanes returning from the entry's first activation find its
              // tapes' floors at 0: they end with those tapes empty, and
              // every other tape was checked when its activations returned.
              AB_RETURN_IF_ERROR(
                  storage_.tapes().Leave(fn_id, lanes_.indices(), {fn, block_id, block.loc}));
              scheduler_.ReturnLanes(lanes_, storage_);
              return absl::OkStatus();
            },
            [&](const Halt&) {
              if (storage_.tapes().empty()) return absl::OkStatus();
              return storage_.tapes().CheckEmpty(
                  lanes_.indices(),
                  absl::StrCat("at the halt of ", TapeSite{fn, block_id, block.loc}.ToString()));
            },
            [&](const Return&) {
              return absl::InternalError(absl::StrCat("Return in lowered function '", fn.name,
                                                      "' block '", block.label,
                                                      "'; the verifier should have rejected it"));
            },
        },
        block.terminator);
  }

  const BlockPlan& plan_;
  const Program& program_;
  const Module& module_;
  const KernelRegistry* kernels_;
  Backend& backend_;
  const CallOptions& options_;
  Profile& profile_;
  Budget budget_;
  FusedCalls fused_;
  Scheduler scheduler_;
  StackStorage storage_;
  CompactExecutor compact_;

  int64_t batch_ = 0;
  LaneSet lanes_, if_true_, if_false_;  // the running lanes; a branch's split
  // Per global block: its values over the batch exceed dense_max_bytes
  // (with BlockFacts::heavy, the fixed dense/compact choice's cost hint).
  std::vector<bool> wide_;
  // Per global block: fused segments or kernels in a dense block that some
  // lanes are away from; compact or dense for many but not all lanes
  // (CallOptions::time_dense_or_compact).
  std::vector<TimedChoice> dense_fused_choice_;
  std::vector<TimedChoice> mode_choice_;
  std::vector<const Tensor*> in_ptrs_;
  std::vector<Tensor*> out_ptrs_;
};

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunStackVm(const BlockPlan& plan, std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels, Backend& backend,
                                               const CallOptions& options, Profile* profile) {
  MemoryScope memory = MemoryScope::ForRun(options.max_memory_bytes);
  return CatchResourceErrors("the stack VM's run", [&]() -> absl::StatusOr<std::vector<Tensor>> {
    Profile local;
    StackVm vm(plan, kernels, backend, options, profile ? *profile : local);
    return vm.Run(std::move(inputs));
  });
}

absl::StatusOr<std::vector<Tensor>> RunStackVm(const Program& program, std::vector<Tensor> inputs,
                                               const KernelRegistry* kernels, Backend& backend,
                                               const CallOptions& options, Profile* profile) {
  AB_ASSIGN_OR_RETURN(BlockPlan plan, BlockPlan::Build(program));
  return RunStackVm(plan, std::move(inputs), kernels, backend, options, profile);
}

}  // namespace autobatch
