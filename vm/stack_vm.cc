// The stack VM: program-counter batching of a lowered program.
#include "vm/stack_vm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <limits>
#include <span>

#include "absl/strings/str_cat.h"
#include "backends/lane_copy.h"
#include "support/overloaded.h"
#include "vm/fused_blocks.h"
#include "vm/inputs.h"
#include "vm/run_support.h"
#include "vm/timed_choice.h"

namespace autobatch {
namespace {

int64_t NanosecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

// The fewest lanes a tile holds (CallOptions::tile_bytes): below that the
// dispatch of every op per tile costs more than cache misses.
constexpr int64_t kMinTileLanes = 8;

class StackVm {
 public:
  StackVm(const Program& program, const KernelRegistry* kernels,
          Backend& backend, const CallOptions& options, Profile& profile)
      : program_(program),
        module_(program.module),
        kernels_(kernels),
        backend_(backend),
        options_(options),
        profile_(profile),
        policy_(options.block_policy),
        budget_(options) {}

  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs) {
    if (program_.stage != Stage::kLowered) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the stack VM runs lowered programs; this one is at stage '",
          std::string(StageName(program_.stage)), "': run LowerProgram (passes/pipeline.h)"));
    }
    AB_RETURN_IF_ERROR(CheckInputs(program_, inputs));
    batch_ = BatchOf(inputs);
    AB_RETURN_IF_ERROR(CheckValueSizes(program_, batch_, options_.max_value_bytes));
    AB_RETURN_IF_ERROR(CheckStackBytes());
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
        AB_RETURN_IF_ERROR(Push(param, entry, lanes_));
      }
      if (frame_stack_[param.value]) {
        WriteFrames(inputs[i], all_lanes_.indices(), param);
      } else {
        *Storage(param) = std::move(inputs[i]);
      }
    }
    MoveAll(Gid(program_.entry, BlockId(0)));
    for (int32_t gid = NextBlock(); gid >= 0; gid = NextBlock()) {
      AB_RETURN_IF_ERROR(budget_.Tick());
      AB_RETURN_IF_ERROR(Step(gid));
    }
    std::vector<Tensor> outputs;
    for (VarId result : entry.results) outputs.push_back(*DenseRead(result, all_lanes_));
    return outputs;
  }

 private:
  struct BlockRef {
    FunctionId fn;
    BlockId block;
  };

  // Global block numbers follow the call graph breadth-first from the entry
  // (callers before callees), then each function's block order. With the
  // lowest-index policy a lane back in a caller (e.g. an outer loop that
  // starts the next trajectory) therefore runs at once and rejoins the lanes
  // inside the callee, instead of waiting until no lane is left in it: that
  // is what lets lanes run free instead of in lock step.
  void Setup() {
    const size_t num_functions = module_.functions.size();
    std::vector<int32_t> order;
    std::vector<bool> seen(num_functions, false);
    order.push_back(program_.entry.value);
    seen[program_.entry.value] = true;
    for (size_t i = 0; i < order.size(); ++i) {
      for (const Block& block : module_.functions[order[i]].blocks) {
        if (const auto* call = std::get_if<PushGoto>(&block.terminator)) {
          if (!seen[call->callee.value]) {
            seen[call->callee.value] = true;
            order.push_back(call->callee.value);
          }
        }
      }
    }
    for (size_t f = 0; f < num_functions; ++f) {
      if (!seen[f]) order.push_back(static_cast<int32_t>(f));
    }
    fn_offset_.assign(num_functions, 0);
    for (int32_t f : order) {
      fn_offset_[f] = static_cast<int32_t>(blocks_.size());
      for (size_t b = 0; b < module_.functions[f].blocks.size(); ++b) {
        blocks_.push_back({FunctionId(f), BlockId(static_cast<int32_t>(b))});
      }
    }
    waiting_.assign(blocks_.size(), {});
    for (const BlockRef& ref : blocks_) {
      const Block& block = module_.function(ref.fn).blocks[ref.block.value];
      const int64_t lane_bytes = BlockLaneBytes(block);
      heavy_.push_back(RunsExpensiveKernel(block));
      wide_.push_back(Wide(lane_bytes));
      batch_dependent_.push_back(RunsBatchDependentOp(block));
      tile_lanes_.push_back(TileLanes(batch_dependent_.back(), lane_bytes));
    }
    mode_choice_.assign(blocks_.size(), TimedChoice());
    SetUpFusedSegments();
    nonempty_.assign((blocks_.size() + 63) / 64, 0);
    values_.resize(module_.variables.size());
    stacks_.resize(module_.variables.size());
    frame_stack_.assign(module_.variables.size(), false);
    depth_limit_.assign(module_.variables.size(), 0);
    for (size_t v = 0; v < module_.variables.size(); ++v) {
      const Variable& var = module_.variables[v];
      AB_CHECK(var.type.has_value(), "lowered programs are typed");
      const TensorType& type = *var.type;
      depth_limit_[v] = StackDepthLimit(type.NumElements() * DTypeSize(type.dtype));
      if (var.storage == StorageClass::kFull &&
          type.NumElements() * DTypeSize(type.dtype) >= options_.frame_stack_min_lane_bytes) {
        frame_stack_[v] = true;
        // Frame 0 (zeros) and room for 4 pushed frames; `top` is only the
        // buffer dense blocks read the current frames into.
        stacks_[v].top = backend_.Allocate(type, batch_);
        stacks_[v].saved = backend_.Allocate(type, 5 * batch_);
        stacks_[v].depth.assign(static_cast<size_t>(batch_), 0);
      } else if (var.storage == StorageClass::kFull) {
        stacks_[v] = backend_.AllocateStack(*var.type, batch_,
                                            /*initial_capacity=*/4);
      } else {
        values_[v] = backend_.Allocate(*var.type, batch_);
      }
    }
    compact_.resize(module_.variables.size());
    for (size_t v = 0; v < module_.variables.size(); ++v) {
      compact_[v] = backend_.Allocate(*module_.variables[v].type, 0);
    }
    compact_epoch_.assign(module_.variables.size(), -1);
    dirty_epoch_.assign(module_.variables.size(), -1);
    written_.reserve(module_.variables.size());
    pc_depth_.assign(static_cast<size_t>(batch_), 0);
    pc_depth_limit_ = StackDepthLimit(sizeof(int32_t));
    iota_.resize(static_cast<size_t>(batch_));
    for (int64_t l = 0; l < batch_; ++l) iota_[static_cast<size_t>(l)] = l;
    frame_lanes_[0].reserve(static_cast<size_t>(batch_));
    frame_lanes_[1].reserve(static_cast<size_t>(batch_));
    taking_.reserve(static_cast<size_t>(batch_));
    pc_saved_.assign(static_cast<size_t>(batch_) * 4, -1);
    for (Waiting& w : waiting_) w.bits.assign((static_cast<size_t>(batch_) + 63) / 64, 0);
    all_lanes_ = LaneSet::All(batch_);
    lanes_.Reset(batch_);
    if_true_.Reset(batch_);
    if_false_.Reset(batch_);
    tile_.Reset(batch_);
    FindConstants();
  }

  // fused_[gid][op]: the fused segment starting at that op of the block, if
  // any (CallOptions::fused_blocks, checked by CheckFusedProgram).
  void SetUpFusedSegments() {
    fused_.assign(blocks_.size(), {});
    dense_fused_choice_.assign(blocks_.size(), TimedChoice());
    if (options_.fused_blocks == nullptr) return;
    for (const FusedSegment& seg : options_.fused_blocks->segments) {
      const int32_t gid = Gid(FunctionId(seg.function), BlockId(seg.block));
      std::vector<const FusedSegment*>& at = fused_[gid];
      if (at.empty()) {
        at.assign(module_.function(FunctionId(seg.function)).blocks[seg.block].ops.size(),
                  nullptr);
      }
      at[seg.first_op] = &seg;
    }
  }

  // Bytes per lane of the variables `block` touches.
  int64_t BlockLaneBytes(const Block& block) const {
    std::vector<VarId> touched;
    for (const Op& op : block.ops) {
      for (VarId v : OpReads(op)) touched.push_back(v);
      for (VarId v : OpWrites(op)) touched.push_back(v);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    int64_t lane_bytes = 0;
    for (VarId v : touched) {
      const TensorType& type = *module_.var(v).type;
      lane_bytes += type.NumElements() * DTypeSize(type.dtype);
    }
    return lane_bytes;
  }

  // Whether `block` runs an op whose lanes depend on the batch (a batched
  // matrix product, a user kernel not bit_stable).
  bool RunsBatchDependentOp(const Block& block) const {
    for (const Op& op : block.ops) {
      const auto* prim = std::get_if<PrimOp>(&op);
      if (prim == nullptr) continue;
      if (prim->prim == Primitive::kUserKernel) {
        const auto kernel = module_.kernels.find(prim->attrs.kernel);
        if (kernel == module_.kernels.end() || !kernel->second.bit_stable) return true;
      } else if (!Info(prim->prim).bit_stable) {
        return true;
      }
    }
    return false;
  }

  // The lanes of one tile in compact mode (CallOptions::tile_bytes) of a
  // block touching `lane_bytes` per lane, or 0: never tiled (nor is a block
  // that runs a batch-dependent op, RunsBatchDependentOp).
  int64_t TileLanes(bool batch_dependent, int64_t lane_bytes) const {
    if (options_.tile_bytes <= 0 || batch_dependent) return 0;
    // Each thread of a threaded backend runs its part of a tile from its own
    // cache.
    const int64_t threads = backend_.threads();
    const int64_t bytes = options_.tile_bytes > std::numeric_limits<int64_t>::max() / threads
                              ? std::numeric_limits<int64_t>::max()
                              : options_.tile_bytes * threads;
    return std::max<int64_t>(kMinTileLanes, bytes / std::max<int64_t>(lane_bytes, 1));
  }

  // Whether `block`'s values over the whole batch exceed
  // CallOptions::dense_max_bytes.
  bool Wide(int64_t lane_bytes) const {
    return options_.dense_max_bytes > 0 && batch_ > 0 &&
           lane_bytes > options_.dense_max_bytes / batch_;
  }

  // A Temporary whose every write is a constant or fill_like op with the
  // same literal holds the same value in every lane whenever it is read: its
  // storage and its compact copy are filled once here, for every lane, and
  // those ops are skipped. (Only if that fill succeeds: a bad literal keeps
  // failing where the op runs, as before.)
  void FindConstants() {
    const size_t num_vars = module_.variables.size();
    std::vector<const PrimOp*> writer(num_vars, nullptr);
    std::vector<bool> candidate(num_vars, true);
    for (const Function& fn : module_.functions) {
      for (const Block& block : fn.blocks) {
        for (const Op& op : block.ops) {
          const auto* prim = std::get_if<PrimOp>(&op);
          const bool fill = prim != nullptr && prim->outputs.size() == 1 &&
                            (prim->prim == Primitive::kFillLike ||
                             prim->prim == Primitive::kConstant);
          for (VarId v : OpWrites(op)) {
            const size_t i = static_cast<size_t>(v.value);
            if (!fill) {
              candidate[i] = false;
            } else if (writer[i] == nullptr) {
              writer[i] = prim;
            } else if (!(writer[i]->prim == prim->prim &&
                         writer[i]->attrs.literal == prim->attrs.literal)) {
              candidate[i] = false;
            }
          }
        }
      }
    }
    constant_.assign(num_vars, false);
    for (size_t v = 0; v < num_vars; ++v) {
      if (!candidate[v] || writer[v] == nullptr ||
          module_.variables[v].storage != StorageClass::kTemporary) {
        continue;
      }
      const PrimOp& op = *writer[v];
      Tensor& full = values_[v];
      Tensor& compact = compact_[v];
      in_ptrs_.clear();
      for (VarId in : op.inputs) in_ptrs_.push_back(DenseRead(in, all_lanes_));
      Tensor* out = &full;
      if (!backend_.RunOp(op, in_ptrs_, std::span<Tensor* const>(&out, 1), all_lanes_,
                          ExecMode::kDense, kernels_)
               .ok()) {
        continue;
      }
      compact = full;
      constant_[v] = true;
    }
  }

  // Whether `op` only refills a constant temporary (FindConstants).
  bool SkipsOp(const PrimOp& op) const {
    return op.outputs.size() == 1 && constant_[op.outputs[0].value];
  }

  int32_t Gid(FunctionId fn, BlockId block) const {
    return fn_offset_[fn.value] + block.value;
  }

  // The contiguous storage of `v`: its value, or its stack's top. Not for
  // frame stacks (DenseRead, GatherVar, ScatterVar).
  Tensor* Storage(VarId v) {
    AB_DCHECK(!frame_stack_[v.value]);
    return module_.var(v).storage == StorageClass::kFull ? &stacks_[v.value].top
                                                         : &values_[v.value];
  }

  // A frame stack (frame_stack_, CallOptions::frame_stack_min_lane_bytes) keeps every frame
  // of a Full variable in `saved`: lane l's frame f is lane f * batch_ + l,
  // and its current value is frame depth[l]. A push makes the next frame
  // current (the op that pushed writes it), a pop the one below: neither
  // copies a value, where a stack with a separate top copies the top into a
  // frame on a push and back on a pop (for f64[100] values, 15% of NUTS's
  // time on AR(1)).
  //
  // The frame lanes of `v` for `lanes`, in `slot` (0 or 1: two may be in
  // use at once).
  std::span<const int64_t> FrameLanes(VarId v, std::span<const int64_t> lanes, int slot) {
    const int32_t* depth = stacks_[v.value].depth.data();
    std::vector<int64_t>& out = frame_lanes_[slot];
    out.resize(lanes.size());
    for (size_t i = 0; i < lanes.size(); ++i) out[i] = depth[lanes[i]] * batch_ + lanes[i];
    return out;
  }

  std::span<const int64_t> Iota(int64_t n) const {
    return std::span<const int64_t>(iota_).first(static_cast<size_t>(n));
  }

  // Lane i of `src` into the current frame of lane lanes[i] of `v`.
  void WriteFrames(const Tensor& src, std::span<const int64_t> lanes, VarId v) {
    backend_.CopyLanes(src, Iota(static_cast<int64_t>(lanes.size())), &stacks_[v.value].saved,
                       FrameLanes(v, lanes, 0));
  }

  // `v` over the whole batch, contiguous, current in `lanes` (the others of
  // a frame stack's top buffer hold old values: junk, as inactive lanes may).
  Tensor* DenseRead(VarId v, const LaneSet& lanes) {
    if (!frame_stack_[v.value]) return Storage(v);
    LaneStack& stack = stacks_[v.value];
    backend_.CopyLanes(stack.saved, FrameLanes(v, lanes.indices(), 0), &stack.top,
                       lanes.indices());
    return &stack.top;
  }

  // dst lane i = `v` in lane lanes.indices()[i] (Backend::Gather).
  void GatherVar(VarId v, const LaneSet& lanes, Tensor* dst) {
    if (!frame_stack_[v.value]) return backend_.Gather(*Storage(v), lanes, dst);
    backend_.CopyLanes(stacks_[v.value].saved, FrameLanes(v, lanes.indices(), 0), dst,
                       Iota(lanes.size()));
  }

  // `v` in lane lanes.indices()[i] = src lane i (Backend::Scatter).
  void ScatterVar(const Tensor& src, const LaneSet& lanes, VarId v) {
    if (!frame_stack_[v.value]) return backend_.Scatter(src, lanes, Storage(v));
    WriteFrames(src, lanes.indices(), v);
  }

  absl::Status PushFrames(VarId v, const LaneSet& lanes) {
    LaneStack& stack = stacks_[v.value];
    const int64_t max_depth = depth_limit_[v.value];
    int32_t needed = 0;
    for (int64_t lane : lanes.indices()) {
      const int32_t depth = stack.depth[static_cast<size_t>(lane)];
      if (depth >= max_depth) [[unlikely]] {
        return absl::ResourceExhaustedError(absl::StrCat(
            "stack overflow at lane ", lane, ": it already holds ", depth,
            " saved frames, its limit"));
      }
      needed = std::max(needed, depth + 1);
    }
    const int64_t frames = stack.saved.batch() / std::max<int64_t>(batch_, 1);
    if (needed >= frames) {
      const int64_t limit = max_depth + int64_t{1};
      const int64_t grown = std::max<int64_t>(needed + 1, std::min(limit, 2 * frames));
      Tensor bigger = backend_.Allocate(stack.top.type(), grown * batch_);
      CopyBytes(bigger.bytes(), stack.saved.bytes(), stack.saved.size_bytes());
      stack.saved = std::move(bigger);
    }
    for (int64_t lane : lanes.indices()) ++stack.depth[static_cast<size_t>(lane)];
    return absl::OkStatus();
  }

  absl::Status PopFrames(VarId v, const LaneSet& lanes) {
    LaneStack& stack = stacks_[v.value];
    for (int64_t lane : lanes.indices()) {
      if (stack.depth[static_cast<size_t>(lane)] == 0) [[unlikely]] {
        return absl::FailedPreconditionError(absl::StrCat(
            "pop of an empty stack at lane ", lane,
            " (the program pops a value that was never pushed)"));
      }
    }
    for (int64_t lane : lanes.indices()) --stack.depth[static_cast<size_t>(lane)];
    return absl::OkStatus();
  }

  // The lanes waiting at one block, as a bitset over the batch, so that Take
  // yields them in increasing order without sorting or merging; words
  // [lo, hi) are the only ones that may be nonzero, so Take costs the lanes
  // plus the span of words they occupy.
  struct Waiting {
    std::vector<uint64_t> bits;
    int64_t count = 0;
    size_t lo = std::numeric_limits<size_t>::max();
    size_t hi = 0;
  };

  void MoveLane(int64_t lane, int32_t gid) {
    Waiting& w = waiting_[gid];
    const size_t word = static_cast<size_t>(lane) >> 6;
    const uint64_t bit = uint64_t{1} << (lane & 63);
    AB_DCHECK((w.bits[word] & bit) == 0, "a lane waits at one block at a time");
    w.bits[word] |= bit;
    NoteArrivals(gid, 1, word, word);
  }

  // `count` lanes, whose bits in words [first_word, last_word] are set,
  // now wait at `gid`: its count, span of words and non-empty bit.
  void NoteArrivals(int32_t gid, int64_t count, size_t first_word, size_t last_word) {
    Waiting& w = waiting_[gid];
    w.count += count;
    w.lo = std::min(w.lo, first_word);
    w.hi = std::max(w.hi, last_word + 1);
    nonempty_[gid >> 6] |= uint64_t{1} << (gid & 63);
  }

  // `lanes` in increasing order (a LaneSet's indices): MoveLane for each,
  // with the bookkeeping done once.
  void MoveLanes(std::span<const int64_t> lanes, int32_t gid) {
    if (lanes.empty()) return;
    Waiting& w = waiting_[gid];
    // A word's bits are gathered in a register and stored once: an OR into
    // memory per lane waits on the store of the lane before it.
    uint64_t* const bits = w.bits.data();
    size_t word = static_cast<size_t>(lanes.front()) >> 6;
    uint64_t gathered = 0;
    for (int64_t lane : lanes) {
      AB_DCHECK((bits[static_cast<size_t>(lane) >> 6] & (uint64_t{1} << (lane & 63))) == 0,
                "a lane waits at one block at a time");
      if ((static_cast<size_t>(lane) >> 6) != word) {
        bits[word] |= gathered;
        word = static_cast<size_t>(lane) >> 6;
        gathered = 0;
      }
      gathered |= uint64_t{1} << (lane & 63);
    }
    bits[word] |= gathered;
    NoteArrivals(gid, static_cast<int64_t>(lanes.size()), static_cast<size_t>(lanes.front()) >> 6,
                 word);
  }

  // Moves the lanes waiting at `gid` into lanes_, in increasing order.
  void Take(int32_t gid) {
    Waiting& w = waiting_[gid];
    lanes_.Clear();
    int64_t* const lane_blocks = profile_.lane_blocks.data();
    for (size_t word = w.lo; word < w.hi; ++word) {
      const uint64_t bits = w.bits[word];
      if (bits == 0) continue;
      w.bits[word] = 0;
      const auto first = static_cast<int64_t>(word * 64);
      lanes_.AppendBits(first, bits);
      // Each lane's count of blocks, a word of lanes at a time: a vector
      // add of the bits, where an increment per lane waited on the stores
      // before it (a fifth of fibonacci's Step).
      int64_t* counts = lane_blocks + first;
      const int64_t n = std::min<int64_t>(64, batch_ - first);
      for (int64_t k = 0; k < n; ++k) counts[k] += static_cast<int64_t>((bits >> k) & 1);
    }
    AB_DCHECK(lanes_.size() == w.count);
    w.count = 0;
    w.lo = std::numeric_limits<size_t>::max();
    w.hi = 0;
    nonempty_[gid >> 6] &= ~(uint64_t{1} << (gid & 63));
  }

  int32_t NextBlock() const {
    if (policy_ == BlockPolicy::kMostLanes) {
      // Fullest block first; blocks with an expensive kernel only when no
      // other block has lanes, so that they run for every lane that can
      // reach them (as order_blocks arranges for kLowestIndex).
      int32_t best = -1;
      for (size_t w = 0; w < nonempty_.size(); ++w) {
        for (uint64_t bits = nonempty_[w]; bits != 0; bits &= bits - 1) {
          const int32_t g = static_cast<int32_t>(w * 64 + std::countr_zero(bits));
          if (best < 0 || (heavy_[best] && !heavy_[g]) ||
              (heavy_[best] == heavy_[g] &&
               waiting_[g].count > waiting_[best].count)) {
            best = g;
          }
        }
      }
      return best;
    }
    for (size_t w = 0; w < nonempty_.size(); ++w) {
      if (nonempty_[w] != 0) {
        return static_cast<int32_t>(w * 64 + std::countr_zero(nonempty_[w]));
      }
    }
    return -1;
  }

  absl::Status Step(int32_t gid) {
    const auto [fn_id, block_id] = blocks_[gid];
    const Function& fn = module_.function(fn_id);
    const Block& block = fn.blocks[block_id.value];
    Take(gid);  // the lanes waiting here all run now

    // From a quarter of the batch up, a block times compact against dense
    // (vm/timed_choice.h); fewer lanes run compact. Not a wide block: its
    // dense passes would stream the batch through the caches, a cost that
    // shows in the blocks after it rather than in its own time. Nor a block
    // whose lanes depend on the batch: dense and compact pass its op
    // different batches, so a choice by the clock would make its bits vary
    // from run to run.
    const bool choose_mode = options_.time_dense_or_compact && !wide_[gid] &&
                             !batch_dependent_[gid] && !lanes_.full() &&
                             lanes_.size() * 4 >= batch_;
    const bool timed_compact = choose_mode && mode_choice_[gid].First(lanes_.size());
    const bool time_mode = choose_mode && mode_choice_[gid].Timed();
    const ExecMode mode =
        choose_mode ? (timed_compact ? ExecMode::kCompact : ExecMode::kDense)
                    : ChooseMode(lanes_.size(), batch_, heavy_[gid] || wide_[gid], options_);
    std::chrono::steady_clock::time_point mode_start;
    if (time_mode) mode_start = std::chrono::steady_clock::now();
    BlockCounters& counters = profile_.blocks[fn_id.value][block_id.value];
    ++counters.executions;
    counters.active_lanes += lanes_.size();
    counters.lane_slots += batch_;
    ++(mode == ExecMode::kDense ? counters.dense : counters.compact);
    counters.ops += static_cast<int64_t>(block.ops.size());
    ++profile_.steps;
    std::chrono::steady_clock::time_point start;
    if (profile_.timing) start = std::chrono::steady_clock::now();

    if (mode == ExecMode::kCompact && !lanes_.full()) {  // full: dense is the same
      AB_RETURN_IF_ERROR(RunCompactTiles(block, fn, gid, counters));
    } else {
      // A dense block runs its fused segments when every lane is there;
      // with some lanes away, the kernels' passes over the whole batch may
      // beat a segment's loop over the running lanes' indices, so the block
      // measures both (vm/timed_choice.h).
      const std::vector<const FusedSegment*>& fused = fused_[gid];
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
        const Op& op = block.ops[i];
        AB_RETURN_IF_ERROR(std::visit(
            Overloaded{
                [&](const PrimOp& o) { return RunDense(o, fn); },
                [&](const PopOp& o) { return RunPop(o, fn, lanes_); },
                [&](const CallOp& o) { return CallInLoweredProgram(o, fn); },
            },
            op));
      }
      if (time_fused) {
        dense_fused_choice_[gid].Record(use_fused, lanes_.size(), NanosecondsSince(ops_start));
      }
      if (use_fused) ++counters.dense_fused;
    }
    if (time_mode) {
      mode_choice_[gid].Record(timed_compact, lanes_.size(), NanosecondsSince(mode_start));
    }
    AB_RETURN_IF_ERROR(RunTerminator(block, fn_id, fn));
    if (profile_.timing) {
      counters.nanoseconds += NanosecondsSince(start);
    }
    return absl::OkStatus();
  }

  absl::Status CallInLoweredProgram(const CallOp& op, const Function& fn) {
    return absl::InternalError(absl::StrCat(
        "CallOp at ", op.loc.ToString(), " in lowered function '", fn.name,
        "'; the verifier should have rejected it"));
  }

  // Whether the values of `v` in lanes outside the running set are dead:
  // temporaries live within one block and null variables are never read, so
  // an op may leave junk there.
  bool BlockLocal(VarId v) const {
    const StorageClass storage = module_.var(v).storage;
    return storage == StorageClass::kTemporary || storage == StorageClass::kNull;
  }

  bool PushesFrame(const PrimOp& op, VarId output) const {
    return module_.var(output).storage == StorageClass::kFull &&
           std::find(op.in_place.begin(), op.in_place.end(), output) ==
               op.in_place.end();
  }

  // Dense: the op runs over the whole batch in place. An op whose outputs are
  // all block-local skips the masked blend and writes every lane (inactive
  // ones get junk, which nothing reads) — except user kernels, which may have
  // side effects and so only ever see the running lanes.
  absl::Status RunDense(const PrimOp& op, const Function& fn) {
    if (SkipsOp(op)) return absl::OkStatus();
    in_ptrs_.clear();
    out_ptrs_.clear();
    bool outputs_local = op.prim != Primitive::kUserKernel;
    for (VarId v : op.inputs) in_ptrs_.push_back(DenseRead(v, lanes_));
    for (VarId v : op.outputs) {
      if (PushesFrame(op, v)) AB_RETURN_IF_ERROR(Push(v, fn, lanes_));
      outputs_local = outputs_local && BlockLocal(v);
      // A frame stack's output goes to its top buffer (holding the current
      // frames if it is also an input, read before the push) and then to
      // the running lanes' frames.
      out_ptrs_.push_back(frame_stack_[v.value] ? &stacks_[v.value].top : Storage(v));
    }
    AB_RETURN_IF_ERROR(RunCountedOp(backend_, op, in_ptrs_, out_ptrs_,
                                    outputs_local ? all_lanes_ : lanes_, ExecMode::kDense,
                                    kernels_, profile_, fn, lanes_.size()));
    for (VarId v : op.outputs) {
      if (!frame_stack_[v.value]) continue;
      backend_.CopyLanes(stacks_[v.value].top, lanes_.indices(), &stacks_[v.value].saved,
                         FrameLanes(v, lanes_.indices(), 0));
    }
    return absl::OkStatus();
  }

  // Compact in tiles of `tile` lanes (0: one tile), in increasing lane order:
  // every op is a function of its lane alone (the block has no op whose lanes
  // depend on the batch; TileLanes), so running the block tile by tile gives
  // each lane the bits of running it all at once, and a tile's values stay in
  // cache from one op to the next.
  absl::Status RunCompactTiles(const Block& block, const Function& fn, int32_t gid,
                               BlockCounters& counters) {
    const int64_t n = lanes_.size();
    const int64_t tile = tile_lanes_[gid];
    const std::vector<const FusedSegment*>& fused = fused_[gid];
    if (tile <= 0 || n <= tile) {
      return RunCompact(block, fn, fused, lanes_, /*first_tile=*/true);
    }
    const std::span<const int64_t> all = lanes_.indices();
    for (int64_t begin = 0; begin < n; begin += tile) {
      tile_.Clear();
      for (int64_t lane : all.subspan(begin, std::min(tile, n - begin))) tile_.Append(lane);
      AB_RETURN_IF_ERROR(RunCompact(block, fn, fused, tile_, /*first_tile=*/begin == 0));
      ++counters.tiles;
    }
    return absl::OkStatus();
  }

  // Compact: the block runs for `lanes` on contiguous copies of its variables
  // holding just those lanes. A variable is gathered the first time the block
  // reads it and scattered back once at the end if the block wrote it (never
  // for block-local ones), instead of a gather and a scatter per op. Pushes
  // and pops act on the full storage, so a written value is scattered before
  // its frame is pushed, and a pop drops the compact copy. `first_tile`: the
  // profile counts an execution of each op (later tiles add lanes to it).
  // `fused`: the block's fused segments by first op (empty: none).
  absl::Status RunCompact(const Block& block, const Function& fn,
                          const std::vector<const FusedSegment*>& fused, const LaneSet& lanes,
                          bool first_tile) {
    ++epoch_;
    const int64_t n = lanes.size();
    if (compact_lanes_.batch() != n) {
      compact_lanes_.Reset(n);
      compact_lanes_.SetAll();
    }
    written_.clear();
    for (size_t i = 0; i < block.ops.size(); ++i) {
      if (!fused.empty() && fused[i] != nullptr) {
        AB_RETURN_IF_ERROR(RunFused(block, fn, *fused[i], lanes, first_tile));
        i = static_cast<size_t>(fused[i]->end_op) - 1;
        continue;
      }
      const Op& op = block.ops[i];
      if (const auto* prim = std::get_if<PrimOp>(&op)) {
        if (SkipsOp(*prim)) continue;
        if (CopiesStorageToStorage(*prim)) {
          AB_RETURN_IF_ERROR(RunStorageCopy(*prim, fn, lanes, first_tile));
          continue;
        }
        if (SelectsInStorage(*prim)) {
          RunStorageSelect(*prim, lanes, first_tile);
          continue;
        }
        in_ptrs_.clear();
        out_ptrs_.clear();
        for (VarId v : prim->inputs) in_ptrs_.push_back(CompactRead(v, lanes));
        for (VarId v : prim->outputs) {
          if (PushesFrame(*prim, v)) AB_RETURN_IF_ERROR(PushCompact(v, fn, lanes));
          out_ptrs_.push_back(CompactWrite(v, n));
        }
        AB_RETURN_IF_ERROR(RunCountedOp(backend_, *prim, in_ptrs_, out_ptrs_,
                                        compact_lanes_, ExecMode::kDense, kernels_,
                                        profile_, fn, /*active=*/-1, first_tile));
      } else if (const auto* pop = std::get_if<PopOp>(&op)) {
        AB_RETURN_IF_ERROR(RunCompactPop(*pop, fn, lanes));
      } else {
        return CallInLoweredProgram(std::get<CallOp>(op), fn);
      }
    }
    for (VarId v : written_) {
      if (dirty_epoch_[v.value] == epoch_ && !BlockLocal(v)) FlushCompact(v, lanes);
    }
    if (const auto* branch = std::get_if<Branch>(&block.terminator)) {
      if (dirty_epoch_[branch->cond.value] == epoch_) FlushCompact(branch->cond, lanes);
    }
    return absl::OkStatus();
  }

  // Runs a fused segment in a compact block. Each input is read where it is
  // current: its compact copy if the block has one (or it is a constant or a
  // frame stack, read through a compact copy), else its storage at the
  // lanes' indices, with no gather. An output that outlives the block goes
  // straight to its storage (its compact copy, now stale, is dropped); a
  // block-local one, which later ops read compact, and a frame stack go to
  // their compact copies. Then the segment's pops.
  absl::Status RunFused(const Block& block, const Function& fn, const FusedSegment& seg,
                        const LaneSet& lanes, bool first_tile) {
    const int64_t n = lanes.size();
    const int64_t* compact_lanes = iota_.data();
    const int64_t* storage_lanes = lanes.indices().data();
    ClearFusedArgs();
    for (int32_t v : seg.inputs) {
      const VarId var(v);
      if (constant_[v] || frame_stack_[v] || compact_epoch_[v] == epoch_) {
        AddFusedInput(CompactRead(var, lanes)->bytes(), compact_lanes);
      } else {
        AddFusedInput(Storage(var)->bytes(), storage_lanes);
      }
    }
    for (int32_t v : seg.outputs) {
      const VarId var(v);
      if (constant_[v]) {
        // Its copy holds the constant in every lane (FindConstants): the
        // segment writes the same bytes.
        AddFusedOutput(compact_[v].bytes(), compact_lanes);
      } else if (BlockLocal(var) || frame_stack_[v]) {
        AddFusedOutput(CompactWrite(var, n)->bytes(), compact_lanes);
      } else {
        compact_epoch_[v] = -1;
        dirty_epoch_[v] = -1;
        AddFusedOutput(Storage(var)->bytes(), storage_lanes);
      }
    }
    CallFused(block, seg, n, first_tile);
    for (int32_t i = seg.first_op; i < seg.end_op; ++i) {
      if (const auto* pop = std::get_if<PopOp>(&block.ops[i])) {
        AB_RETURN_IF_ERROR(RunCompactPop(*pop, fn, lanes));
      }
    }
    return absl::OkStatus();
  }

  // Runs a fused segment in a dense block: every variable in its storage
  // (a frame stack through its top buffer, as RunDense does); then the
  // segment's pops.
  absl::Status RunFusedDense(const Block& block, const Function& fn, const FusedSegment& seg) {
    const int64_t* storage_lanes = lanes_.indices().data();
    ClearFusedArgs();
    for (int32_t v : seg.inputs) AddFusedInput(DenseRead(VarId(v), lanes_)->bytes(), storage_lanes);
    for (int32_t v : seg.outputs) {
      AddFusedOutput(frame_stack_[v] ? stacks_[v].top.bytes() : Storage(VarId(v))->bytes(),
                     storage_lanes);
    }
    CallFused(block, seg, lanes_.size(), /*new_execution=*/true);
    for (int32_t v : seg.outputs) {
      if (!frame_stack_[v]) continue;
      backend_.CopyLanes(stacks_[v].top, lanes_.indices(), &stacks_[v].saved,
                         FrameLanes(VarId(v), lanes_.indices(), 0));
    }
    for (int32_t i = seg.first_op; i < seg.end_op; ++i) {
      if (const auto* pop = std::get_if<PopOp>(&block.ops[i])) {
        AB_RETURN_IF_ERROR(RunPop(*pop, fn, lanes_));
      }
    }
    return absl::OkStatus();
  }

  void ClearFusedArgs() {
    fused_in_.clear();
    fused_in_lanes_.clear();
    fused_out_.clear();
    fused_out_lanes_.clear();
  }
  void AddFusedInput(const std::byte* data, const int64_t* lanes) {
    fused_in_.push_back(data);
    fused_in_lanes_.push_back(lanes);
  }
  void AddFusedOutput(std::byte* data, const int64_t* lanes) {
    fused_out_.push_back(data);
    fused_out_lanes_.push_back(lanes);
  }

  // Calls the segment on the arguments gathered, counting each of its
  // primitives in the profile (the segment's time goes to its first op, which
  // is one).
  void CallFused(const Block& block, const FusedSegment& seg, int64_t n, bool new_execution) {
    for (int32_t i = seg.first_op + 1; i < seg.end_op; ++i) {
      if (const auto* prim = std::get_if<PrimOp>(&block.ops[i])) {
        CountOpRun(*prim, n, new_execution, profile_, [] {});
      }
    }
    const FusedArgs args{fused_in_.data(), fused_in_lanes_.data(), fused_out_.data(),
                         fused_out_lanes_.data(), n};
    CountOpRun(std::get<PrimOp>(block.ops[seg.first_op]), n, new_execution, profile_,
               [&] { seg.run(args); });
  }

  // Whether a copy op in a compact block can move the running lanes from
  // storage to storage: its source has no compact copy yet (so the storage is
  // current) and its destination outlives the block (so the storage must be
  // written anyway; a later read in the block gathers it again). One pass
  // over the lanes instead of a gather, a kernel over the copies and a
  // scatter.
  bool CopiesStorageToStorage(const PrimOp& op) const {
    if (op.prim != Primitive::kCopy || op.inputs.size() != 1 || op.outputs.size() != 1) {
      return false;
    }
    const VarId in = op.inputs[0];
    const VarId out = op.outputs[0];
    return in != out && compact_epoch_[in.value] != epoch_ && !constant_[in.value] &&
           !BlockLocal(out);
  }

  absl::Status RunStorageCopy(const PrimOp& op, const Function& fn, const LaneSet& lanes,
                              bool first_tile) {
    const VarId out = op.outputs[0];
    if (PushesFrame(op, out)) AB_RETURN_IF_ERROR(PushCompact(out, fn, lanes));
    // Every running lane of the storage is overwritten: a compact copy of
    // `out`, even an unflushed one, is stale.
    compact_epoch_[out.value] = -1;
    dirty_epoch_[out.value] = -1;
    const VarId in_var = op.inputs[0];
    if (frame_stack_[in_var.value] || frame_stack_[out.value]) {
      // Lane to lane between the current frames, counted as the copy.
      CountOpRun(op, lanes.size(), first_tile, profile_,
                 [&] { CopyCurrentLanes(in_var, lanes.indices(), out); });
      return absl::OkStatus();
    }
    const Tensor* in = Storage(in_var);
    Tensor* dst = Storage(out);
    return RunCountedOp(backend_, op, std::span<const Tensor* const>(&in, 1),
                        std::span<Tensor* const>(&dst, 1), lanes, ExecMode::kCompact,
                        kernels_, profile_, fn, /*active=*/-1, first_tile);
  }

  // Whether a select in a compact block can update its output in storage:
  // x = select(c, y, x) or x = select(c, x, y) with one condition per lane,
  // values wider than 8 bytes, x outliving the block and not pushed by the
  // op, and the storage of x and y current (no compact copy written in this
  // block). Only the lanes that take y are then copied, storage to storage,
  // instead of gathering x and y, a kernel pass over both and a scatter of x
  // (NUTS's merges keep or replace a subtree's point this way).
  bool SelectsInStorage(const PrimOp& op) const {
    if (op.prim != Primitive::kSelect || op.inputs.size() != 3 || op.outputs.size() != 1) {
      return false;
    }
    const VarId out = op.outputs[0];
    const VarId cond = op.inputs[0];
    if ((op.inputs[1] == out) == (op.inputs[2] == out) || cond == out) return false;
    const VarId other = op.inputs[1] == out ? op.inputs[2] : op.inputs[1];
    const TensorType& out_type = *module_.var(out).type;
    const TensorType& cond_type = *module_.var(cond).type;
    return cond_type.dtype == DType::kBool && cond_type.NumElements() == 1 &&
           *module_.var(other).type == out_type &&
           out_type.NumElements() * DTypeSize(out_type.dtype) > 8 && !BlockLocal(out) &&
           !PushesFrame(op, out) && dirty_epoch_[out.value] != epoch_ &&
           dirty_epoch_[other.value] != epoch_;
  }

  void RunStorageSelect(const PrimOp& op, const LaneSet& lanes, bool first_tile) {
    const VarId out = op.outputs[0];
    // x = select(c, y, x) takes y where c holds, x = select(c, x, y) where not.
    const bool take_if_true = op.inputs[2] == out;
    const VarId other = take_if_true ? op.inputs[1] : op.inputs[2];
    const auto* cond = reinterpret_cast<const uint8_t*>(CompactRead(op.inputs[0], lanes)->bytes());
    const std::span<const int64_t> all = lanes.indices();
    taking_.clear();
    for (size_t i = 0; i < all.size(); ++i) {
      if ((cond[i] != 0) == take_if_true) taking_.push_back(all[i]);
    }
    // The storage of `out` changes in those lanes: a compact copy is stale.
    compact_epoch_[out.value] = -1;
    CountOpRun(op, lanes.size(), first_tile, profile_, [&] {
      if (!taking_.empty()) CopyCurrentLanes(other, taking_, out);
    });
  }

  // `dst` = `src` in `lanes`, storage to storage: each variable's current
  // value, its storage or (a frame stack) its current frame.
  void CopyCurrentLanes(VarId src, std::span<const int64_t> lanes, VarId dst) {
    const bool src_frames = frame_stack_[src.value];
    const bool dst_frames = frame_stack_[dst.value];
    backend_.CopyLanes(src_frames ? stacks_[src.value].saved : *Storage(src),
                       src_frames ? FrameLanes(src, lanes, 0) : lanes,
                       dst_frames ? &stacks_[dst.value].saved : Storage(dst),
                       dst_frames ? FrameLanes(dst, lanes, 1) : lanes);
  }

  // The compact copy of `v` for `lanes`, gathered on first use.
  Tensor* CompactRead(VarId v, const LaneSet& lanes) {
    Tensor& copy = compact_[v.value];
    if (constant_[v.value]) {  // every lane holds the constant: no gather
      copy.SetBatch(lanes.size());
      return &copy;
    }
    if (compact_epoch_[v.value] != epoch_) {
      copy.SetBatch(lanes.size());
      GatherVar(v, lanes, &copy);
      compact_epoch_[v.value] = epoch_;
    }
    return &copy;
  }

  // The compact copy of `v`, about to be overwritten in every running lane.
  Tensor* CompactWrite(VarId v, int64_t n) {
    Tensor& copy = compact_[v.value];
    if (compact_epoch_[v.value] != epoch_) {
      copy.SetBatch(n);
      compact_epoch_[v.value] = epoch_;
    }
    if (dirty_epoch_[v.value] != epoch_) {
      dirty_epoch_[v.value] = epoch_;
      written_.push_back(v);
    }
    return &copy;
  }

  // Push for a compact block: the frame pushed must hold the value the block
  // wrote, so an unflushed compact copy goes to the storage first.
  absl::Status PushCompact(VarId v, const Function& fn, const LaneSet& lanes) {
    if (dirty_epoch_[v.value] == epoch_) FlushCompact(v, lanes);
    return Push(v, fn, lanes);
  }

  // Writes the compact copy of `v` back to its storage; the copy stays valid.
  void FlushCompact(VarId v, const LaneSet& lanes) {
    ScatterVar(compact_[v.value], lanes, v);
    dirty_epoch_[v.value] = -1;
  }

  absl::Status Push(VarId v, const Function& fn, const LaneSet& lanes) {
    absl::Status status = frame_stack_[v.value]
                              ? PushFrames(v, lanes)
                              : backend_.Push(lanes, depth_limit_[v.value], &stacks_[v.value]);
    if (!status.ok()) [[unlikely]] {
      return absl::ResourceExhaustedError(absl::StrCat(
          "stack overflow in function '", fn.name, "' (variable '",
          module_.var(v).name, "'): ", status.message(), "; ",
          OverflowReason(depth_limit_[v.value], module_.var(v).type->NumElements() *
                                                    DTypeSize(module_.var(v).type->dtype))));
    }
    return absl::OkStatus();
  }

  // The most frames a stack of values of `lane_bytes` bytes per lane may
  // hold: max_stack_depth, but also no more than max_value_bytes for the
  // frames of the whole batch, no more than max_stack_bytes for a frame of
  // every stack (a recursion deeper than memory allows is an error, not a
  // failed allocation) and what an int32 depth counts.
  int64_t StackDepthLimit(int64_t lane_bytes) const {
    return std::min({options_.max_stack_depth, DepthByValueBytes(lane_bytes),
                     DepthByStackBytes(), int64_t{std::numeric_limits<int32_t>::max() - 1}});
  }
  int64_t DepthByValueBytes(int64_t lane_bytes) const {
    const int64_t per_frame = std::max<int64_t>(lane_bytes, 1) * std::max<int64_t>(batch_, 1);
    return std::max<int64_t>(options_.max_value_bytes / per_frame, 1);
  }
  // Every Full variable (and the program counter) may hold as many frames
  // as the recursion is deep, so that depth bounds their bytes together.
  int64_t DepthByStackBytes() const {
    return std::max<int64_t>(
        options_.max_stack_bytes / std::max<int64_t>(batch_, 1) / level_lane_bytes_, 1);
  }

  // Sets level_lane_bytes_; the stacks start with up to kInitialFrames
  // frames each, which must fit in max_stack_bytes.
  static constexpr int64_t kInitialFrames = 5;
  absl::Status CheckStackBytes() {
    // Saturating: each value is bounded by max_value_bytes, their sum is not.
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 2;
    level_lane_bytes_ = sizeof(int32_t);  // the program counter
    for (const Variable& var : module_.variables) {
      if (var.storage != StorageClass::kFull) continue;
      const int64_t bytes =
          std::max<int64_t>(var.type->NumElements() * DTypeSize(var.type->dtype), 1);
      level_lane_bytes_ = std::min(kMax, level_lane_bytes_ + std::min(kMax, bytes));
    }
    const int64_t depth =
        options_.max_stack_bytes / std::max<int64_t>(batch_, 1) / level_lane_bytes_;
    if (depth >= kInitialFrames) return absl::OkStatus();
    return absl::ResourceExhaustedError(absl::StrCat(
        "the stack VM's stacks start with ", kInitialFrames, " frames of ", batch_,
        " lanes x ", level_lane_bytes_, " bytes (a frame of every stack), more than "
        "max_stack_bytes = ", options_.max_stack_bytes,
        " allows; raise CallOptions::max_stack_bytes if the memory is there, or run "
        "fewer lanes at a time (CallOptions::shards)"));
  }

  // Why a stack of that limit overflowed, and what to do.
  std::string OverflowReason(int64_t limit, int64_t lane_bytes) const {
    if (limit >= options_.max_stack_depth) {
      return absl::StrCat("the recursion is deeper than max_stack_depth = ",
                          options_.max_stack_depth,
                          " — raise it (--max-stack-depth) or check for unbounded recursion");
    }
    if (limit >= int64_t{std::numeric_limits<int32_t>::max() - 1}) {
      return absl::StrCat("the recursion is deeper than the ", limit,
                          " frames a stack can count — check for unbounded recursion");
    }
    if (limit >= DepthByValueBytes(lane_bytes)) {
      return absl::StrCat("its ", limit, " frames of ", batch_, " lanes x ",
                          std::max<int64_t>(lane_bytes, 1), " bytes reach max_value_bytes = ",
                          options_.max_value_bytes,
                          " before max_stack_depth = ", options_.max_stack_depth,
                          " — check for unbounded recursion, or raise "
                          "CallOptions::max_value_bytes if the memory is there");
    }
    return absl::StrCat(limit, " frames of every stack (", batch_, " lanes x ",
                        level_lane_bytes_, " bytes a frame, over all stacks) reach "
                        "max_stack_bytes = ", options_.max_stack_bytes,
                        " before max_stack_depth = ", options_.max_stack_depth,
                        " — check for unbounded recursion, or raise "
                        "CallOptions::max_stack_bytes if the memory is there");
  }

  // A pop in a compact block: the popped variables' compact copies are stale.
  absl::Status RunCompactPop(const PopOp& op, const Function& fn, const LaneSet& lanes) {
    for (VarId v : op.vars) {
      if (module_.var(v).storage != StorageClass::kFull) continue;
      compact_epoch_[v.value] = -1;
      dirty_epoch_[v.value] = -1;
    }
    return RunPop(op, fn, lanes);
  }

  absl::Status RunPop(const PopOp& op, const Function& fn, const LaneSet& lanes) {
    for (VarId v : op.vars) {
      if (module_.var(v).storage != StorageClass::kFull) continue;
      absl::Status status =
          frame_stack_[v.value] ? PopFrames(v, lanes) : backend_.Pop(lanes, &stacks_[v.value]);
      if (!status.ok()) [[unlikely]] {
        return absl::FailedPreconditionError(absl::StrCat(
            "pop of '", module_.var(v).name, "' in function '", fn.name,
            "' at ", op.loc.ToString(), " found an empty stack: ",
            status.message(), "; the lowered program breaks the stack discipline, "
            "which the verifier does not check: pop only what was pushed, or pass "
            "the unlowered program"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RunTerminator(const Block& block, FunctionId fn_id,
                             const Function& fn) {
    return std::visit(
        Overloaded{
            [&](const Goto& t) {
              MoveAll(Gid(fn_id, t.target));
              return absl::OkStatus();
            },
            [&](const Branch& t) {
              backend_.Split(*DenseRead(t.cond, lanes_), lanes_, &if_true_, &if_false_);
              int32_t then_gid = Gid(fn_id, t.then_block);
              int32_t else_gid = Gid(fn_id, t.else_block);
              MoveLanes(if_true_.indices(), then_gid);
              MoveLanes(if_false_.indices(), else_gid);
              return absl::OkStatus();
            },
            [&](const PushGoto& t) {
              const int32_t return_gid = Gid(fn_id, t.return_to);
              const int32_t callee_gid = Gid(t.callee, BlockId(0));
              int32_t needed = 0;
              for (int64_t lane : lanes_.indices()) {
                const int32_t depth = pc_depth_[lane];
                if (depth + 1 >= pc_depth_limit_) [[unlikely]] {
                  const std::string call = absl::StrCat(
                      "stack overflow: lane ", lane, " calling '",
                      module_.function(t.callee).name, "' from '", fn.name, "'");
                  if (pc_depth_limit_ < options_.max_stack_depth) {
                    return absl::ResourceExhaustedError(absl::StrCat(
                        call, ": ", OverflowReason(pc_depth_limit_, sizeof(int32_t))));
                  }
                  return absl::ResourceExhaustedError(absl::StrCat(
                      call, " exceeds max_stack_depth = ", options_.max_stack_depth,
                      " frames — raise it (--max-stack-depth) or check for "
                      "unbounded recursion"));
                }
                needed = std::max(needed, depth + 1);
              }
              if (static_cast<size_t>(needed) * batch_ > pc_saved_.size()) {
                const size_t limit = static_cast<size_t>(pc_depth_limit_) * batch_;
                pc_saved_.resize(std::max(std::min(pc_saved_.size() * 2, limit),
                                          static_cast<size_t>(needed) * batch_));
              }
              for (int64_t lane : lanes_.indices()) {
                int32_t& depth = pc_depth_[lane];
                pc_saved_[static_cast<size_t>(depth) * batch_ + lane] = return_gid;
                ++depth;
              }
              MoveLanes(lanes_.indices(), callee_gid);
              return absl::OkStatus();
            },
            [&](const IndirectGoto&) {
              ReturnLanes();
              return absl::OkStatus();
            },
            [&](const Halt&) { return absl::OkStatus(); },
            [&](const Return&) {
              return absl::InternalError(absl::StrCat(
                  "Return in lowered function '", fn.name, "' block '",
                  block.label, "'; the verifier should have rejected it"));
            },
        },
        block.terminator);
  }

  // IndirectGoto: pops each running lane's return address and moves it
  // there (a lane returning from the entry function halts). The lanes return
  // to a few blocks, the continuations of the calls, whose waiting-set
  // bookkeeping (count, span of words) is kept in locals during the loop and
  // written once: MoveLane's read-modify-writes of it for every lane stalled
  // on store forwarding, a third of the time fibonacci spent in Step.
  void ReturnLanes() {
    struct Target {
      int32_t gid;
      uint64_t* bits;
      int64_t count;
      size_t first_word;
      size_t last_word;     // the word `gathered` belongs to
      uint64_t gathered;    // its bits not yet stored (see MoveLanes)
    };
    constexpr int kTargets = 4;  // more go through MoveLane
    std::array<Target, kTargets> targets;
    int used = 0;
    for (int64_t lane : lanes_.indices()) {
      int32_t& depth = pc_depth_[lane];
      if (depth == 0) continue;
      --depth;
      const int32_t gid = pc_saved_[static_cast<size_t>(depth) * batch_ + lane];
      const size_t word = static_cast<size_t>(lane) >> 6;
      int t = 0;
      while (t < used && targets[t].gid != gid) ++t;
      if (t == used) {
        if (used == kTargets) {
          MoveLane(lane, gid);
          continue;
        }
        targets[used++] = {gid, waiting_[gid].bits.data(), 0, word, word, 0};
      }
      Target& target = targets[t];
      AB_DCHECK((target.bits[word] & (uint64_t{1} << (lane & 63))) == 0,
                "a lane waits at one block at a time");
      if (word != target.last_word) {
        target.bits[target.last_word] |= target.gathered;
        target.last_word = word;
        target.gathered = 0;
      }
      target.gathered |= uint64_t{1} << (lane & 63);
      ++target.count;
    }
    for (int t = 0; t < used; ++t) {
      const Target& target = targets[t];
      target.bits[target.last_word] |= target.gathered;
      NoteArrivals(target.gid, target.count, target.first_word, target.last_word);
    }
  }

  void MoveAll(int32_t gid) {
    MoveLanes(lanes_.indices(), gid);
  }

  const Program& program_;
  const Module& module_;
  const KernelRegistry* kernels_;
  Backend& backend_;
  const CallOptions& options_;
  Profile& profile_;
  BlockPolicy policy_;
  Budget budget_;

  int64_t batch_ = 0;
  std::vector<int32_t> fn_offset_;
  std::vector<BlockRef> blocks_;
  std::vector<bool> heavy_;  // per global block: RunsExpensiveKernel (scheduling)
  std::vector<int64_t> tile_lanes_;  // per global block: TileLanes
  // Per global block: Wide; with heavy_, the dense/compact choice's cost hint.
  std::vector<bool> wide_;
  // Per global block: RunsBatchDependentOp (never tiled, never timed).
  std::vector<bool> batch_dependent_;
  std::vector<bool> constant_;  // per variable: a constant temporary (FindConstants)
  std::vector<Tensor> values_;     // non-Full variables
  std::vector<LaneStack> stacks_;  // Full variables
  std::vector<bool> frame_stack_;  // per variable: a Full one kept as a frame stack
  std::vector<int64_t> iota_;      // 0, 1, ..., batch_ - 1
  std::vector<int64_t> frame_lanes_[2];  // FrameLanes' results
  std::vector<int64_t> taking_;          // RunStorageSelect's lanes
  // The program counters' stacks, frame-major like a LaneStack's saved
  // frames: lane l's return addresses are pc_saved_[f * batch_ + l] for
  // f < pc_depth_[l], the last one on top. (One vector per lane cost a
  // pointer chase and a capacity check per lane and call.)
  std::vector<int32_t> pc_depth_;
  std::vector<int32_t> pc_saved_;
  // The frames the PC stack, and each Full variable's stack, may hold
  // (StackDepthLimit).
  int64_t pc_depth_limit_ = 0;
  std::vector<int64_t> depth_limit_;
  // Bytes per lane of one frame of every stack: the Full variables' values
  // and the program counter (DepthByStackBytes).
  int64_t level_lane_bytes_ = 0;
  std::vector<Waiting> waiting_;                // per global block
  std::vector<uint64_t> nonempty_;              // bitset of waiting_ non-empty
  LaneSet lanes_, if_true_, if_false_;
  LaneSet all_lanes_;      // every lane of the batch
  LaneSet compact_lanes_;  // every lane of a compact copy (0..n-1)
  LaneSet tile_;           // the lanes of one tile (RunCompactTiles)
  // Compact execution (RunCompact): per variable, a copy holding the running
  // lanes, valid while compact_epoch_ == epoch_ (one epoch per compact block)
  // and newer than the variable's storage while dirty_epoch_ == epoch_.
  std::vector<Tensor> compact_;
  std::vector<int64_t> compact_epoch_;
  std::vector<int64_t> dirty_epoch_;
  std::vector<VarId> written_;
  int64_t epoch_ = 0;
  std::vector<const Tensor*> in_ptrs_;
  std::vector<Tensor*> out_ptrs_;
  // Per global block: its fused segments by first op (empty: none).
  std::vector<std::vector<const FusedSegment*>> fused_;
  // Per global block: fused segments or kernels in a dense block that some
  // lanes are away from; compact or dense for many but not all lanes
  // (CallOptions::time_dense_or_compact).
  std::vector<TimedChoice> dense_fused_choice_;
  std::vector<TimedChoice> mode_choice_;
  std::vector<const std::byte*> fused_in_;
  std::vector<const int64_t*> fused_in_lanes_;
  std::vector<std::byte*> fused_out_;
  std::vector<const int64_t*> fused_out_lanes_;
};

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunStackVm(
    const Program& program, std::vector<Tensor> inputs,
    const KernelRegistry* kernels, Backend& backend, const CallOptions& options,
    Profile* profile) {
  Profile local;
  StackVm vm(program, kernels, backend, options, profile ? *profile : local);
  return vm.Run(std::move(inputs));
}

}  // namespace autobatch
