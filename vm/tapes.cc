// LaneTapes: per-lane tapes of the batched executors.
#include "vm/tapes.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "backends/lane_copy.h"
#include "support/status.h"

namespace autobatch {
namespace {

// The first push gives a tape room for this many values per lane.
constexpr int64_t kInitialFrames = 4;

}  // namespace

std::string TapeSite::ToString() const {
  std::string out = absl::StrCat("function '", fn.name, "', block ^", block.value);
  if (block.valid() && static_cast<size_t>(block.value) < fn.blocks.size() &&
      !fn.blocks[block.value].label.empty()) {
    absl::StrAppend(&out, " (", fn.blocks[block.value].label, ")");
  }
  if (loc.known()) absl::StrAppend(&out, " at ", loc.ToString());
  return out;
}

void LaneTapes::Reset(const Module& module, int64_t batch, Backend& backend,
                      const CallOptions& options) {
  module_ = &module;
  backend_ = &backend;
  options_ = &options;
  batch_ = batch;
  tapes_.clear();
  bytes_ = 0;
  index_.assign(module.variables.size(), -1);
  fn_tapes_.assign(module.functions.size(), {});
  for (const Function& fn : module.functions) {
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) {
        const std::optional<VarId> tape = TapeOf(op);
        if (!tape || index_[tape->value] >= 0) continue;
        const Variable& var = module.var(*tape);
        AB_CHECK(var.type.has_value(), "the batched executors run typed programs");
        index_[tape->value] = static_cast<int32_t>(tapes_.size());
        Tape& t = tapes_.emplace_back();
        t.var = *tape;
        t.lane_bytes = var.type->NumElements() * DTypeSize(var.type->dtype);
        t.depth.assign(static_cast<size_t>(batch), 0);
        t.floor.assign(static_cast<size_t>(batch), 0);
        t.nesting.assign(static_cast<size_t>(batch), 0);
        fn_tapes_[var.function.value].push_back(*tape);
      }
    }
  }
  for (std::vector<VarId>& tapes : fn_tapes_) std::sort(tapes.begin(), tapes.end());
  frame_lanes_.reserve(static_cast<size_t>(batch));
}

absl::Status LaneTapes::Grow(Tape& tape, int64_t needed, int64_t lane, const TapeSite& site) {
  const int64_t frame_bytes = std::max<int64_t>(tape.lane_bytes, 1) * std::max<int64_t>(batch_, 1);
  const int64_t own = tape.frames * frame_bytes;
  const int64_t by_value = options_->max_value_bytes / frame_bytes;
  const int64_t by_stack = std::max<int64_t>(options_->max_stack_bytes - (bytes_ - own), 0) /
                           frame_bytes;
  const int64_t limit = std::min(by_value, by_stack);
  if (needed > limit) {
    const std::string start = absl::StrCat(
        "tape_push on tape '", module_->var(tape.var).name, "' in ", site.ToString(),
        ": lane ", lane, " would hold ", needed, " values; ", needed, " frames of ", batch_,
        " lanes x ", tape.lane_bytes, " bytes");
    if (by_value <= by_stack) {
      return absl::ResourceExhaustedError(absl::StrCat(
          start, " pass max_value_bytes = ", options_->max_value_bytes,
          " (the most one tape may take); check for a loop that never ends, or raise "
          "CallOptions::max_value_bytes if the memory is there"));
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        start, " with the other tapes' ", bytes_ - own, " bytes pass max_stack_bytes = ",
        options_->max_stack_bytes, " (the most all tapes together may take); check for a "
        "loop that never ends, or raise CallOptions::max_stack_bytes if the memory is there"));
  }
  const int64_t frames = std::min(limit, std::max({needed, 2 * tape.frames, kInitialFrames}));
  Tensor bigger = backend_->Allocate(*module_->var(tape.var).type, frames * batch_);
  CopyBytes(bigger.bytes(), tape.saved.bytes(), tape.saved.size_bytes());
  tape.saved = std::move(bigger);
  bytes_ += (frames - tape.frames) * frame_bytes;
  tape.frames = frames;
  return absl::OkStatus();
}

absl::Status LaneTapes::Push(VarId tape_var, const Tensor& src, std::span<const int64_t> src_lanes,
                             std::span<const int64_t> lanes, const TapeSite& site) {
  Tape& tape = tapes_[index_[tape_var.value]];
  int64_t needed = 0, deepest = 0;
  for (int64_t lane : lanes) {
    const int64_t depth = tape.depth[static_cast<size_t>(lane)];
    if (depth + 1 > needed) {
      needed = depth + 1;
      deepest = lane;
    }
  }
  if (needed > tape.frames) AB_RETURN_IF_ERROR(Grow(tape, needed, deepest, site));
  frame_lanes_.resize(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    int64_t& depth = tape.depth[static_cast<size_t>(lanes[i])];
    frame_lanes_[i] = depth * batch_ + lanes[i];
    ++depth;
  }
  backend_->CopyLanes(src, src_lanes, &tape.saved, frame_lanes_);
  return absl::OkStatus();
}

absl::Status LaneTapes::Pop(VarId tape_var, std::span<const int64_t> lanes, Tensor* dst,
                            std::span<const int64_t> dst_lanes, const TapeSite& site) {
  Tape& tape = tapes_[index_[tape_var.value]];
  for (int64_t lane : lanes) {
    const int64_t depth = tape.depth[static_cast<size_t>(lane)];
    if (depth > tape.floor[static_cast<size_t>(lane)]) [[likely]] {
      continue;
    }
    const std::string start = absl::StrCat("tape_pop of tape '", module_->var(tape_var).name,
                                           "' in ", site.ToString(), ": lane ", lane);
    if (depth == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          start, " finds the tape empty (it pops more values than it pushed); every pop "
          "needs a push before it in the same activation"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        start, " finds no value that this activation of '", site.fn.name,
        "' pushed (the ", depth, " below belong to the activations that called it); every "
        "pop needs a push before it in the same activation"));
  }
  frame_lanes_.resize(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    int64_t& depth = tape.depth[static_cast<size_t>(lanes[i])];
    --depth;
    frame_lanes_[i] = depth * batch_ + lanes[i];
  }
  backend_->CopyLanes(tape.saved, frame_lanes_, dst, dst_lanes);
  return absl::OkStatus();
}

void LaneTapes::Enter(FunctionId f, std::span<const int64_t> lanes) {
  for (VarId tape_var : fn_tapes_[f.value]) {
    Tape& tape = tapes_[index_[tape_var.value]];
    for (int64_t lane : lanes) {
      const auto l = static_cast<size_t>(lane);
      const auto slot = static_cast<size_t>(tape.nesting[l] * batch_ + lane);
      if (slot >= tape.saved_floors.size()) {
        // Frames appended keep the frame-major layout: lane l's level k is
        // at k * batch + l whatever the capacity.
        const size_t frames =
            std::max<size_t>(2 * tape.saved_floors.size() / static_cast<size_t>(batch_), 4);
        tape.saved_floors.resize(frames * static_cast<size_t>(batch_));
      }
      tape.saved_floors[slot] = tape.floor[l];
      ++tape.nesting[l];
      tape.floor[l] = tape.depth[l];
    }
  }
}

absl::Status LaneTapes::Leave(FunctionId f, std::span<const int64_t> lanes,
                              const TapeSite& site) {
  for (VarId tape_var : fn_tapes_[f.value]) {
    Tape& tape = tapes_[index_[tape_var.value]];
    for (int64_t lane : lanes) {
      const auto l = static_cast<size_t>(lane);
      const int64_t left = tape.depth[l] - tape.floor[l];
      if (left != 0) [[unlikely]] {
        return absl::FailedPreconditionError(absl::StrCat(
            "'", site.fn.name, "' returns (", site.ToString(), ") at lane ", lane, " with ",
            left, " value(s) it pushed on tape '", module_->var(tape_var).name,
            "' and did not pop; every activation pops what it pushes before it ends "
            "(ir/ir.h, \"Tapes\")"));
      }
      // The entry's first activation, which no Enter began, saved nothing.
      if (tape.nesting[l] == 0) continue;
      --tape.nesting[l];
      tape.floor[l] = tape.saved_floors[static_cast<size_t>(tape.nesting[l] * batch_ + lane)];
    }
  }
  return absl::OkStatus();
}

absl::Status LaneTapes::CheckEmpty(std::span<const int64_t> lanes,
                                   const std::string& where) const {
  for (const Tape& tape : tapes_) {
    for (int64_t lane : lanes) {
      const int64_t depth = tape.depth[static_cast<size_t>(lane)];
      if (depth == 0) [[likely]] {
        continue;
      }
      const Variable& var = module_->var(tape.var);
      return absl::FailedPreconditionError(absl::StrCat(
          "lane ", lane, " ends (", where, ") with ", depth, " value(s) on tape '", var.name,
          "' of function '", module_->function(var.function).name,
          "': an activation of '", module_->function(var.function).name,
          "' ended without popping what it pushed; every activation pops what it pushes "
          "before it ends (ir/ir.h, \"Tapes\")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace autobatch
