// The stack VM's compact execution: epochs of compact copies, tiles, storage peepholes.
#include "vm/stack/compact.h"

#include <algorithm>
#include <limits>
#include <span>

#include "absl/strings/str_cat.h"
#include "vm/run_support.h"

namespace autobatch {
namespace {

// The fewest lanes a tile holds (CallOptions::tile_bytes): below that the
// dispatch of every op per tile costs more than cache misses.
constexpr int64_t kMinTileLanes = 8;

}  // namespace

void CompactExecutor::Reset() {
  const Module& module = plan_.module();
  const size_t num_vars = module.variables.size();
  copies_.resize(num_vars);
  for (size_t v = 0; v < num_vars; ++v) {
    const VarId var(static_cast<int32_t>(v));
    // A constant's copy holds it in every lane: it is never gathered.
    copies_[v] = storage_.constant(var) ? *storage_.Contiguous(var)
                                        : backend_.Allocate(*module.variables[v].type, 0);
  }
  copy_epoch_.assign(num_vars, -1);
  dirty_epoch_.assign(num_vars, -1);
  written_.reserve(num_vars);
  const int64_t batch = storage_.batch();
  taking_.reserve(static_cast<size_t>(batch));
  tile_.Reset(batch);
  tile_lanes_.clear();
  for (int32_t gid = 0; gid < plan_.num_blocks(); ++gid) {
    const BlockFacts& facts = plan_.block(gid);
    tile_lanes_.push_back(TileLanes(facts.batch_dependent, facts.lane_bytes));
  }
}

int64_t CompactExecutor::TileLanes(bool batch_dependent, int64_t lane_bytes) const {
  if (options_.tile_bytes <= 0 || batch_dependent) return 0;
  // Each thread of a threaded backend runs its part of a tile from its own
  // cache.
  const int64_t threads = backend_.threads();
  const int64_t bytes = options_.tile_bytes > std::numeric_limits<int64_t>::max() / threads
                            ? std::numeric_limits<int64_t>::max()
                            : options_.tile_bytes * threads;
  return std::max<int64_t>(kMinTileLanes, bytes / std::max<int64_t>(lane_bytes, 1));
}

absl::Status CompactExecutor::Run(int32_t gid, const LaneSet& lanes, BlockCounters& counters) {
  const BlockFacts& facts = plan_.block(gid);
  const Function& fn = plan_.module().function(facts.fn);
  const Block& block = fn.blocks[facts.block.value];
  const int64_t n = lanes.size();
  const int64_t tile = tile_lanes_[gid];
  if (tile <= 0 || n <= tile) return RunTile(block, fn, gid, lanes, /*first_tile=*/true);
  const std::span<const int64_t> all = lanes.indices();
  for (int64_t begin = 0; begin < n; begin += tile) {
    tile_.Clear();
    for (int64_t lane : all.subspan(begin, std::min(tile, n - begin))) tile_.Append(lane);
    AB_RETURN_IF_ERROR(RunTile(block, fn, gid, tile_, /*first_tile=*/begin == 0));
    ++counters.tiles;
  }
  return absl::OkStatus();
}

// A variable is gathered the first time the tile reads it and scattered
// back once at the end if the tile wrote it (never for block-local ones),
// instead of a gather and a scatter per op. Pushes and pops act on the
// storage, so a written value is scattered before its frame is pushed, and
// a pop drops the copy. `first_tile`: the profile counts an execution of
// each op (later tiles add lanes to it).
absl::Status CompactExecutor::RunTile(const Block& block, const Function& fn, int32_t gid,
                                      const LaneSet& lanes, bool first_tile) {
  ++epoch_;
  const int64_t n = lanes.size();
  if (copy_lanes_.batch() != n) {
    copy_lanes_.Reset(n);
    copy_lanes_.SetAll();
  }
  written_.clear();
  const std::vector<const FusedSegment*>& fused = fused_.at(gid);
  const std::vector<StoragePeephole>& peepholes = plan_.block(gid).peepholes;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    if (!fused.empty() && fused[i] != nullptr) {
      AB_RETURN_IF_ERROR(RunFused(block, fn, *fused[i], lanes, first_tile));
      i = static_cast<size_t>(fused[i]->end_op) - 1;
      continue;
    }
    const Op& op = block.ops[i];
    if (const auto* prim = std::get_if<PrimOp>(&op)) {
      if (storage_.SkipsOp(*prim)) continue;
      // A copy moves the running lanes storage to storage when its source
      // has no copy yet (its storage is current) and its destination
      // outlives the block (its storage must be written anyway; a later
      // read in the block gathers it again): one pass over the lanes
      // instead of a gather, a kernel over the copies and a scatter.
      if (peepholes[i] == StoragePeephole::kCopy &&
          copy_epoch_[prim->inputs[0].value] != epoch_ && !storage_.constant(prim->inputs[0])) {
        AB_RETURN_IF_ERROR(RunStorageCopy(*prim, fn, lanes, first_tile));
        AB_RETURN_IF_ERROR(budget_.TickWork(
            Budget::kOpWork + 2 * lanes.size() * plan_.var(prim->outputs[0]).lane_bytes));
        continue;
      }
      // A select updates its output in storage when neither the output nor
      // the other value has a copy written in this tile (their storage is
      // current): only the lanes that take the other value are copied,
      // instead of gathering both, a kernel pass and a scatter (NUTS's
      // merges keep or replace a subtree's point this way).
      if (peepholes[i] == StoragePeephole::kSelect) {
        const VarId out = prim->outputs[0];
        const VarId other = prim->inputs[1] == out ? prim->inputs[2] : prim->inputs[1];
        if (dirty_epoch_[out.value] != epoch_ && dirty_epoch_[other.value] != epoch_) {
          RunStorageSelect(*prim, lanes, first_tile);
          AB_RETURN_IF_ERROR(budget_.TickWork(
              Budget::kOpWork + 2 * lanes.size() * plan_.var(prim->outputs[0]).lane_bytes));
          continue;
        }
      }
      in_ptrs_.clear();
      out_ptrs_.clear();
      for (VarId v : prim->inputs) in_ptrs_.push_back(Read(v, lanes));
      for (VarId v : prim->outputs) {
        if (plan_.PushesFrame(*prim, v)) AB_RETURN_IF_ERROR(Push(v, fn, lanes));
        out_ptrs_.push_back(Write(v, n));
      }
      AB_RETURN_IF_ERROR(RunCountedOp(backend_, *prim, in_ptrs_, out_ptrs_, copy_lanes_,
                                      ExecMode::kDense, kernels_, profile_, fn,
                                      /*active=*/-1, first_tile));
      // A block of heavy ops reads the clock between them (Budget).
      AB_RETURN_IF_ERROR(budget_.TickOp(*prim, in_ptrs_, out_ptrs_, n));
    } else if (const auto* pop = std::get_if<PopOp>(&op)) {
      AB_RETURN_IF_ERROR(RunPop(*pop, fn, lanes));
    } else if (const auto* push = std::get_if<TapePushOp>(&op)) {
      AB_RETURN_IF_ERROR(RunTapePush(*push, {fn, plan_.block(gid).block, push->loc}, lanes));
    } else if (const auto* tape_pop = std::get_if<TapePopOp>(&op)) {
      AB_RETURN_IF_ERROR(
          RunTapePop(*tape_pop, fn, {fn, plan_.block(gid).block, tape_pop->loc}, lanes));
    } else {
      return absl::InternalError(absl::StrCat(
          "CallOp at ", std::get<CallOp>(op).loc.ToString(), " in lowered function '", fn.name,
          "'; the verifier should have rejected it"));
    }
  }
  for (VarId v : written_) {
    if (dirty_epoch_[v.value] == epoch_ && !plan_.var(v).block_local) Flush(v, lanes);
  }
  if (const auto* branch = std::get_if<Branch>(&block.terminator)) {
    if (dirty_epoch_[branch->cond.value] == epoch_) Flush(branch->cond, lanes);
  }
  return absl::OkStatus();
}

// Each input is read where it is current: its copy if the tile has one (or
// it is a constant or a frame stack, read through a copy), else its storage
// at the lanes' indices, with no gather. An output that outlives the block
// goes straight to its storage (its copy, now stale, is dropped); a
// block-local one, which later ops read compact, and a frame stack go to
// their copies. Then the segment's pops.
absl::Status CompactExecutor::RunFused(const Block& block, const Function& fn,
                                       const FusedSegment& seg, const LaneSet& lanes,
                                       bool first_tile) {
  const int64_t n = lanes.size();
  const int64_t* copy_lanes = storage_.Iota(storage_.batch()).data();
  const int64_t* storage_lanes = lanes.indices().data();
  FusedCalls& args = fused_;
  args.ClearArgs();
  for (int32_t v : seg.inputs) {
    const VarId var(v);
    if (storage_.constant(var) || storage_.frame_stack(var) || copy_epoch_[v] == epoch_) {
      args.AddInput(Read(var, lanes)->bytes(), copy_lanes);
    } else {
      args.AddInput(storage_.Contiguous(var)->bytes(), storage_lanes);
    }
  }
  for (int32_t v : seg.outputs) {
    const VarId var(v);
    if (storage_.constant(var)) {
      // Its copy holds the constant in every lane: the segment writes the
      // same bytes.
      args.AddOutput(copies_[v].bytes(), copy_lanes);
    } else if (plan_.var(var).block_local || storage_.frame_stack(var)) {
      args.AddOutput(Write(var, n)->bytes(), copy_lanes);
    } else {
      Drop(var);
      args.AddOutput(storage_.Contiguous(var)->bytes(), storage_lanes);
    }
  }
  AB_RETURN_IF_ERROR(args.Call(block, seg, n, first_tile, profile_, budget_));
  for (int32_t i = seg.first_op; i < seg.end_op; ++i) {
    if (const auto* pop = std::get_if<PopOp>(&block.ops[i])) {
      AB_RETURN_IF_ERROR(RunPop(*pop, fn, lanes));
    }
  }
  return absl::OkStatus();
}

absl::Status CompactExecutor::RunStorageCopy(const PrimOp& op, const Function& fn,
                                             const LaneSet& lanes, bool first_tile) {
  const VarId out = op.outputs[0];
  if (plan_.PushesFrame(op, out)) AB_RETURN_IF_ERROR(Push(out, fn, lanes));
  // Every running lane of the storage is overwritten: a copy of `out`, even
  // an unflushed one, is stale.
  Drop(out);
  const VarId in_var = op.inputs[0];
  if (storage_.frame_stack(in_var) || storage_.frame_stack(out)) {
    // Lane to lane between the current frames, counted as the copy.
    CountOpRun(op, lanes.size(), first_tile, profile_,
               [&] { storage_.CopyCurrentLanes(in_var, lanes.indices(), out); });
    return absl::OkStatus();
  }
  const Tensor* in = storage_.Contiguous(in_var);
  Tensor* dst = storage_.Contiguous(out);
  return RunCountedOp(backend_, op, std::span<const Tensor* const>(&in, 1),
                      std::span<Tensor* const>(&dst, 1), lanes, ExecMode::kCompact, kernels_,
                      profile_, fn, /*active=*/-1, first_tile);
}

void CompactExecutor::RunStorageSelect(const PrimOp& op, const LaneSet& lanes, bool first_tile) {
  const VarId out = op.outputs[0];
  // x = select(c, y, x) takes y where c holds, x = select(c, x, y) where not.
  const bool take_if_true = op.inputs[2] == out;
  const VarId other = take_if_true ? op.inputs[1] : op.inputs[2];
  const auto* cond = reinterpret_cast<const uint8_t*>(Read(op.inputs[0], lanes)->bytes());
  const std::span<const int64_t> all = lanes.indices();
  taking_.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    if ((cond[i] != 0) == take_if_true) taking_.push_back(all[i]);
  }
  // The storage of `out` changes in those lanes: a copy is stale.
  copy_epoch_[out.value] = -1;
  CountOpRun(op, lanes.size(), first_tile, profile_, [&] {
    if (!taking_.empty()) storage_.CopyCurrentLanes(other, taking_, out);
  });
}

// The popped variables' copies are stale.
absl::Status CompactExecutor::RunPop(const PopOp& op, const Function& fn, const LaneSet& lanes) {
  for (VarId v : op.vars) {
    if (plan_.module().var(v).storage == StorageClass::kFull) Drop(v);
  }
  return storage_.Pop(op, fn, lanes);
}

// The value is pushed from where it is current: its copy (or a constant's),
// else its storage, with no gather.
absl::Status CompactExecutor::RunTapePush(const TapePushOp& op, const TapeSite& site,
                                          const LaneSet& lanes) {
  if (storage_.constant(op.value) || copy_epoch_[op.value.value] == epoch_) {
    return storage_.tapes().Push(op.tape, *Read(op.value, lanes), storage_.Iota(lanes.size()),
                                 lanes.indices(), site);
  }
  return storage_.TapePush(op, site, lanes);
}

// The result is written like an op's output: into its copy, scattered at the
// end of the tile unless block-local; a Full result's frame is pushed first.
absl::Status CompactExecutor::RunTapePop(const TapePopOp& op, const Function& fn,
                                         const TapeSite& site, const LaneSet& lanes) {
  if (plan_.module().var(op.result).storage == StorageClass::kFull) {
    AB_RETURN_IF_ERROR(Push(op.result, fn, lanes));
  }
  Tensor* dst = Write(op.result, lanes.size());
  return storage_.tapes().Pop(op.tape, lanes.indices(), dst, storage_.Iota(lanes.size()),
                              site);
}

Tensor* CompactExecutor::Read(VarId v, const LaneSet& lanes) {
  if (storage_.uniform(v)) return storage_.Contiguous(v);  // read in place, stride 0
  Tensor& copy = copies_[v.value];
  if (storage_.constant(v)) {  // every lane holds the constant: no gather
    copy.SetBatch(lanes.size());
    return &copy;
  }
  if (copy_epoch_[v.value] != epoch_) {
    copy.SetBatch(lanes.size());
    storage_.Gather(v, lanes, &copy);
    copy_epoch_[v.value] = epoch_;
  }
  return &copy;
}

Tensor* CompactExecutor::Write(VarId v, int64_t n) {
  if (storage_.uniform(v)) return storage_.Contiguous(v);  // computed once, for one lane
  Tensor& copy = copies_[v.value];
  if (copy_epoch_[v.value] != epoch_) {
    copy.SetBatch(n);
    copy_epoch_[v.value] = epoch_;
  }
  if (dirty_epoch_[v.value] != epoch_) {
    dirty_epoch_[v.value] = epoch_;
    written_.push_back(v);
  }
  return &copy;
}

absl::Status CompactExecutor::Push(VarId v, const Function& fn, const LaneSet& lanes) {
  if (dirty_epoch_[v.value] == epoch_) Flush(v, lanes);
  return storage_.Push(v, fn, lanes);
}

void CompactExecutor::Flush(VarId v, const LaneSet& lanes) {
  storage_.Scatter(copies_[v.value], lanes, v);
  dirty_epoch_[v.value] = -1;
}

}  // namespace autobatch
