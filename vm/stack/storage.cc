// The stack VM's storage: variables, stacks, program counters, memory limits.
#include "vm/stack/storage.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "backends/lane_copy.h"

namespace autobatch {

absl::Status StackStorage::CheckStackBytes(int64_t batch) const {
  const int64_t level = plan_.level_lane_bytes();
  const int64_t depth = options_.max_stack_bytes / std::max<int64_t>(batch, 1) / level;
  if (depth >= kInitialFrames) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the stack VM's stacks start with ", kInitialFrames, " frames of ", batch,
      " lanes x ", level, " bytes (a frame of every stack), more than "
      "max_stack_bytes = ", options_.max_stack_bytes,
      " allows; raise CallOptions::max_stack_bytes if the memory is there, or run "
      "fewer lanes at a time (CallOptions::shards)"));
}

void StackStorage::Allocate(int64_t batch, const KernelRegistry* kernels) {
  batch_ = batch;
  const size_t num_vars = module_.variables.size();
  values_.resize(num_vars);
  stacks_.resize(num_vars);
  frame_stack_.assign(num_vars, false);
  depth_limit_.assign(num_vars, 0);
  for (size_t v = 0; v < num_vars; ++v) {
    const Variable& var = module_.variables[v];
    const int64_t lane_bytes = plan_.var(VarId(static_cast<int32_t>(v))).lane_bytes;
    depth_limit_[v] = StackDepthLimit(lane_bytes);
    if (var.storage == StorageClass::kFull && lane_bytes >= options_.frame_stack_min_lane_bytes) {
      frame_stack_[v] = true;
      // Frame 0 (zeros) and room for 4 pushed frames; `top` is only the
      // buffer dense blocks read the current frames into.
      stacks_[v].top = backend_.Allocate(*var.type, batch_);
      stacks_[v].saved = backend_.Allocate(*var.type, kInitialFrames * batch_);
      stacks_[v].depth.assign(static_cast<size_t>(batch_), 0);
    } else if (var.storage == StorageClass::kFull) {
      stacks_[v] = backend_.AllocateStack(*var.type, batch_, /*initial_capacity=*/4);
    } else if (var.uniform) {
      values_[v] = Tensor::Uniform(*var.type);
    } else if (var.storage != StorageClass::kTape) {
      values_[v] = backend_.Allocate(*var.type, batch_);
    }
  }
  tapes_.Reset(module_, batch_, backend_, options_);
  pc_depth_.assign(static_cast<size_t>(batch_), 0);
  pc_depth_limit_ = StackDepthLimit(sizeof(int32_t));
  pc_saved_.assign(static_cast<size_t>(batch_) * 4, -1);
  iota_.resize(static_cast<size_t>(batch_));
  for (int64_t l = 0; l < batch_; ++l) iota_[static_cast<size_t>(l)] = l;
  frame_lanes_[0].reserve(static_cast<size_t>(batch_));
  frame_lanes_[1].reserve(static_cast<size_t>(batch_));
  all_lanes_ = LaneSet::All(batch_);
  HoistConstants(kernels);
}

int64_t StackStorage::StorageBytes() const {
  int64_t bytes = 0;
  for (const Tensor& t : values_) bytes += t.size_bytes();
  for (const LaneStack& s : stacks_) bytes += s.top.size_bytes() + s.saved.size_bytes();
  return bytes;
}

void StackStorage::HoistConstants(const KernelRegistry* kernels) {
  constant_.assign(module_.variables.size(), false);
  for (size_t v = 0; v < module_.variables.size(); ++v) {
    const PrimOp* op = plan_.var(VarId(static_cast<int32_t>(v))).constant_writer;
    if (op == nullptr) continue;
    in_ptrs_.clear();
    for (VarId in : op->inputs) in_ptrs_.push_back(DenseRead(in, all_lanes_));
    Tensor* out = &values_[v];
    if (backend_.RunOp(*op, in_ptrs_, std::span<Tensor* const>(&out, 1), all_lanes_,
                       ExecMode::kDense, kernels)
            .ok()) {
      constant_[v] = true;
    }
  }
}

void StackStorage::CopyCurrentLanes(VarId src, std::span<const int64_t> lanes, VarId dst) {
  const bool src_frames = frame_stack_[src.value];
  const bool dst_frames = frame_stack_[dst.value];
  backend_.CopyLanes(src_frames ? stacks_[src.value].saved : *Contiguous(src),
                     src_frames ? FrameLanes(src, lanes, 0) : lanes,
                     dst_frames ? &stacks_[dst.value].saved : Contiguous(dst),
                     dst_frames ? FrameLanes(dst, lanes, 1) : lanes);
}

absl::Status StackStorage::PushFrames(VarId v, const LaneSet& lanes) {
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

absl::Status StackStorage::PopFrames(VarId v, const LaneSet& lanes) {
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

absl::Status StackStorage::Push(VarId v, const Function& fn, const LaneSet& lanes) {
  absl::Status status = frame_stack_[v.value]
                            ? PushFrames(v, lanes)
                            : backend_.Push(lanes, depth_limit_[v.value], &stacks_[v.value]);
  if (!status.ok()) [[unlikely]] {
    return absl::ResourceExhaustedError(absl::StrCat(
        "stack overflow in function '", fn.name, "' (variable '", module_.var(v).name,
        "'): ", status.message(), "; ",
        OverflowReason(depth_limit_[v.value], plan_.var(v).lane_bytes)));
  }
  return absl::OkStatus();
}

absl::Status StackStorage::Pop(const PopOp& op, const Function& fn, const LaneSet& lanes) {
  for (VarId v : op.vars) {
    if (module_.var(v).storage != StorageClass::kFull) continue;
    absl::Status status =
        frame_stack_[v.value] ? PopFrames(v, lanes) : backend_.Pop(lanes, &stacks_[v.value]);
    if (!status.ok()) [[unlikely]] {
      return absl::FailedPreconditionError(absl::StrCat(
          "pop of '", module_.var(v).name, "' in function '", fn.name, "' at ",
          op.loc.ToString(), " found an empty stack: ", status.message(),
          "; the lowered program breaks the stack discipline, which the verifier does not "
          "check: pop only what was pushed, or pass the unlowered program"));
    }
  }
  return absl::OkStatus();
}

absl::Status StackStorage::TapePush(const TapePushOp& op, const TapeSite& site,
                                    const LaneSet& lanes) {
  if (frame_stack_[op.value.value]) {
    return tapes_.Push(op.tape, stacks_[op.value.value].saved,
                       FrameLanes(op.value, lanes.indices(), 0), lanes.indices(), site);
  }
  return tapes_.Push(op.tape, *Contiguous(op.value), lanes.indices(), lanes.indices(), site);
}

absl::Status StackStorage::TapePop(const TapePopOp& op, const TapeSite& site,
                                   const LaneSet& lanes) {
  if (frame_stack_[op.result.value]) {
    return tapes_.Pop(op.tape, lanes.indices(), &stacks_[op.result.value].saved,
                      FrameLanes(op.result, lanes.indices(), 1), site);
  }
  return tapes_.Pop(op.tape, lanes.indices(), Contiguous(op.result), lanes.indices(), site);
}

absl::Status StackStorage::PushReturns(const LaneSet& lanes, int32_t return_gid,
                                       const Function& callee, const Function& caller) {
  int32_t needed = 0;
  for (int64_t lane : lanes.indices()) {
    const int32_t depth = pc_depth_[lane];
    if (depth + 1 >= pc_depth_limit_) [[unlikely]] {
      const std::string call = absl::StrCat("stack overflow: lane ", lane, " calling '",
                                            callee.name, "' from '", caller.name, "'");
      if (pc_depth_limit_ < options_.max_stack_depth) {
        return absl::ResourceExhaustedError(
            absl::StrCat(call, ": ", OverflowReason(pc_depth_limit_, sizeof(int32_t))));
      }
      return absl::ResourceExhaustedError(absl::StrCat(
          call, " exceeds max_stack_depth = ", options_.max_stack_depth,
          " frames — raise it (--max-stack-depth) or check for unbounded recursion"));
    }
    needed = std::max(needed, depth + 1);
  }
  if (static_cast<size_t>(needed) * batch_ > pc_saved_.size()) {
    const size_t limit = static_cast<size_t>(pc_depth_limit_) * batch_;
    pc_saved_.resize(std::max(std::min(pc_saved_.size() * 2, limit),
                              static_cast<size_t>(needed) * batch_));
  }
  for (int64_t lane : lanes.indices()) {
    int32_t& depth = pc_depth_[lane];
    pc_saved_[static_cast<size_t>(depth) * batch_ + lane] = return_gid;
    ++depth;
  }
  return absl::OkStatus();
}

int64_t StackStorage::StackDepthLimit(int64_t lane_bytes) const {
  return std::min({options_.max_stack_depth, DepthByValueBytes(lane_bytes), DepthByStackBytes(),
                   int64_t{std::numeric_limits<int32_t>::max() - 1}});
}

int64_t StackStorage::DepthByValueBytes(int64_t lane_bytes) const {
  const int64_t per_frame = std::max<int64_t>(lane_bytes, 1) * std::max<int64_t>(batch_, 1);
  return std::max<int64_t>(options_.max_value_bytes / per_frame, 1);
}

// Every Full variable (and the program counter) may hold as many frames as
// the recursion is deep, so that depth bounds their bytes together.
int64_t StackStorage::DepthByStackBytes() const {
  return std::max<int64_t>(
      options_.max_stack_bytes / std::max<int64_t>(batch_, 1) / plan_.level_lane_bytes(), 1);
}

std::string StackStorage::OverflowReason(int64_t limit, int64_t lane_bytes) const {
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
                      plan_.level_lane_bytes(), " bytes a frame, over all stacks) reach "
                      "max_stack_bytes = ", options_.max_stack_bytes,
                      " before max_stack_depth = ", options_.max_stack_depth,
                      " — check for unbounded recursion, or raise "
                      "CallOptions::max_stack_bytes if the memory is there");
}

}  // namespace autobatch
