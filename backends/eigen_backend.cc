// EigenBackend: masked execution (dense blend or compact gather/scatter),
// data movement, stacks and lane queries over lane-major tensors.
#include "backends/eigen_backend.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "backends/lane_copy.h"

namespace autobatch {
namespace {

// Copies the lanes of `lanes` from src to dst (both batch-lane byte arrays).
void MaskedCopyBytes(const std::byte* src, std::byte* dst, int64_t lane_bytes,
                     const LaneSet& lanes) {
  const int64_t batch = lanes.batch();
  if (lane_bytes == 0 || lanes.empty()) return;
  if (lanes.full()) {
    std::memmove(dst, src, static_cast<size_t>(batch * lane_bytes));
    return;
  }
  if (!lanes.sparse()) {  // one pass over the mask
    MaskedCopyLaneBytes(src, dst, lane_bytes, lanes.mask().data(), 0, batch);
    return;
  }
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    for (int64_t lane : lanes.indices()) {
      copy_lane(dst + lane * lane_bytes, src + lane * lane_bytes);
    }
  });
}

int64_t ScalarIntAt(const Tensor& t, int64_t lane) {
  return t.dtype() == DType::kI64 ? t.data<int64_t>()[lane]
                                  : static_cast<int64_t>(t.data<int32_t>()[lane]);
}

void CheckScalarInt(const Tensor& t) {
  AB_CHECK((t.dtype() == DType::kI64 || t.dtype() == DType::kI32) &&
               t.lane_elements() == 1,
           "expected an i32 or i64 scalar tensor");
}

const uint8_t* BoolBytes(const Tensor& t) {
  AB_CHECK(t.dtype() == DType::kBool && t.lane_elements() == 1,
           "expected a bool scalar tensor");
  return reinterpret_cast<const uint8_t*>(t.bytes());
}

}  // namespace

Tensor EigenBackend::Allocate(const TensorType& type, int64_t batch) {
  return Tensor(type, batch);
}

LaneStack EigenBackend::AllocateStack(const TensorType& type, int64_t batch,
                                      int64_t initial_capacity) {
  AB_CHECK(initial_capacity >= 0, "AllocateStack: negative capacity");
  LaneStack stack;
  stack.top = Tensor(type, batch);
  stack.saved = Tensor(type, initial_capacity * batch);
  stack.depth.assign(static_cast<size_t>(batch), 0);
  return stack;
}

absl::Status EigenBackend::RunOp(const PrimOp& op,
                                 std::span<const Tensor* const> inputs,
                                 std::span<Tensor* const> outputs,
                                 const LaneSet& lanes, ExecMode mode,
                                 const KernelRegistry* kernels) {
  const int64_t batch = lanes.batch();
  bool aliased = false;
  for (const Tensor* in : inputs) {
    AB_CHECK(in != nullptr && (in->batch() == batch || in->uniform()),
             "RunOp: input batch mismatch");
  }
  if (!outputs.empty() && outputs[0]->uniform()) {
    return RunUniformOp(op, inputs, outputs, lanes, kernels);
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    AB_CHECK(outputs[k] != nullptr && outputs[k]->batch() == batch,
             "RunOp: output batch mismatch");
    for (size_t j = 0; j < k; ++j) {
      AB_CHECK(outputs[j] != outputs[k], "RunOp: an output is listed twice");
    }
    for (const Tensor* in : inputs) aliased = aliased || in == outputs[k];
  }
  if (lanes.empty()) return absl::OkStatus();
  if (IsPlainCopy(op, inputs, outputs)) {
    MaskedUpdate(*inputs[0], lanes, outputs[0]);
    return absl::OkStatus();
  }
  if (!lanes.full() && IsWideLaneSelect(op, inputs, outputs)) {
    MaskedSelectLaneBytes(BoolBytes(*inputs[0]), inputs[1]->bytes(), inputs[2]->bytes(),
                          outputs[0]->bytes(), outputs[0]->lane_bytes(), lanes.mask().data(),
                          0, batch);
    return absl::OkStatus();
  }

  const size_t num_in = inputs.size();
  // Slots only grow, so the views' shape vectors keep their capacity and
  // steady-state steps do not allocate.
  if (scratch_.size() < num_in + outputs.size()) scratch_.resize(num_in + outputs.size());
  if (in_views_.size() < num_in) in_views_.resize(num_in);
  if (out_views_.size() < outputs.size()) out_views_.resize(outputs.size());
  const std::span<const ConstLanesView> in_views(in_views_.data(), num_in);
  const std::span<const LanesView> out_views(out_views_.data(), outputs.size());

  if (mode == ExecMode::kCompact && !lanes.full()) {
    const int64_t n = lanes.size();
    for (size_t i = 0; i < num_in; ++i) {
      const Tensor& in = *inputs[i];
      in_views_[i].type = in.type();
      in_views_[i].uniform = in.uniform();
      if (in.uniform()) {  // one lane for all: nothing to gather
        in_views_[i].data = in.bytes();
        continue;
      }
      std::byte* buffer = scratch_[i].Get(static_cast<size_t>(n * in.lane_bytes()));
      GatherLaneBytes(in.bytes(), buffer, in.lane_bytes(), lanes.indices());
      in_views_[i].type = in.type();
      in_views_[i].data = buffer;
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      out_views_[k].type = outputs[k]->type();
      out_views_[k].data =
          scratch_[num_in + k].Get(static_cast<size_t>(n * outputs[k]->lane_bytes()));
    }
    AB_RETURN_IF_ERROR(RunPrimitive(op, in_views, out_views, n, kernels));
    for (size_t k = 0; k < outputs.size(); ++k) {
      ScatterLaneBytes(out_views_[k].data, outputs[k]->bytes(), outputs[k]->lane_bytes(),
                   lanes.indices());
    }
    return absl::OkStatus();
  }

  // Dense (a full compact set is dense too).
  for (size_t i = 0; i < num_in; ++i) {
    in_views_[i].type = inputs[i]->type();
    in_views_[i].data = inputs[i]->bytes();
    in_views_[i].uniform = inputs[i]->uniform();
  }
  const bool direct = lanes.full() && !aliased;
  for (size_t k = 0; k < outputs.size(); ++k) {
    out_views_[k].type = outputs[k]->type();
    out_views_[k].data =
        direct ? outputs[k]->bytes()
               : scratch_[num_in + k].Get(static_cast<size_t>(outputs[k]->size_bytes()));
  }
  AB_RETURN_IF_ERROR(RunPrimitive(op, in_views, out_views, batch, kernels,
                                  lanes.full() ? nullptr : lanes.mask().data()));
  if (!direct) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      MaskedCopyBytes(out_views_[k].data, outputs[k]->bytes(),
                      outputs[k]->lane_bytes(), lanes);
    }
  }
  return absl::OkStatus();
}

absl::Status EigenBackend::RunUniformOp(const PrimOp& op,
                                        std::span<const Tensor* const> inputs,
                                        std::span<Tensor* const> outputs,
                                        const LaneSet& lanes, const KernelRegistry* kernels) {
  for (const Tensor* in : inputs) {
    AB_CHECK(in->uniform(), "RunOp: a uniform output computed from a varying input");
  }
  if (lanes.empty()) return absl::OkStatus();
  const size_t num_in = inputs.size();
  if (in_views_.size() < num_in) in_views_.resize(num_in);
  if (out_views_.size() < outputs.size()) out_views_.resize(outputs.size());
  if (scratch_.size() < outputs.size()) scratch_.resize(outputs.size());
  for (size_t i = 0; i < num_in; ++i) {
    in_views_[i] = ConstLanesView{inputs[i]->type(), inputs[i]->bytes(), /*uniform=*/false};
  }
  // Into scratch, so that an output that is also an input reads its old value.
  for (size_t k = 0; k < outputs.size(); ++k) {
    AB_CHECK(outputs[k]->uniform(), "RunOp: uniform and varying outputs mixed");
    out_views_[k].type = outputs[k]->type();
    out_views_[k].data = scratch_[k].Get(static_cast<size_t>(outputs[k]->lane_bytes()));
  }
  AB_RETURN_IF_ERROR(RunPrimitive(op, std::span<const ConstLanesView>(in_views_.data(), num_in),
                                  std::span<const LanesView>(out_views_.data(), outputs.size()),
                                  /*num_lanes=*/1, kernels));
  for (size_t k = 0; k < outputs.size(); ++k) {
    CopyBytes(outputs[k]->bytes(), out_views_[k].data, outputs[k]->lane_bytes());
  }
  return absl::OkStatus();
}

void EigenBackend::MaskedUpdate(const Tensor& src, const LaneSet& lanes, Tensor* dst) {
  AB_CHECK(src.batch() == lanes.batch(), "MaskedUpdate: src batch mismatch");
  AB_CHECK(dst->batch() == lanes.batch(), "MaskedUpdate: dst batch mismatch");
  AB_CHECK(src.type() == dst->type(), "MaskedUpdate: types differ");
  if (&src == dst) return;
  MaskedCopyBytes(src.bytes(), dst->bytes(), src.lane_bytes(), lanes);
}

void EigenBackend::Gather(const Tensor& src, const LaneSet& lanes, Tensor* dst) {
  AB_CHECK(src.batch() == lanes.batch(), "Gather: src batch mismatch");
  AB_CHECK(src.type() == dst->type(), "Gather: types differ");
  AB_CHECK(dst->batch() >= lanes.size() && &src != dst, "Gather: bad destination");
  GatherLaneBytes(src.bytes(), dst->bytes(), src.lane_bytes(), lanes.indices());
}

void EigenBackend::Scatter(const Tensor& src, const LaneSet& lanes, Tensor* dst) {
  AB_CHECK(dst->batch() == lanes.batch(), "Scatter: dst batch mismatch");
  AB_CHECK(src.type() == dst->type(), "Scatter: types differ");
  AB_CHECK(src.batch() >= lanes.size() && &src != dst, "Scatter: bad source");
  ScatterLaneBytes(src.bytes(), dst->bytes(), src.lane_bytes(), lanes.indices());
}

void EigenBackend::CopyLanes(const Tensor& src, std::span<const int64_t> src_lanes,
                             Tensor* dst, std::span<const int64_t> dst_lanes) {
  AB_CHECK(src.type() == dst->type(), "CopyLanes: types differ");
  AB_CHECK(src_lanes.size() == dst_lanes.size() && &src != dst,
           "CopyLanes: bad arguments");
  const int64_t lane_bytes = src.lane_bytes();
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    for (size_t i = 0; i < src_lanes.size(); ++i) {
      AB_DCHECK(src_lanes[i] >= 0 && src_lanes[i] < src.batch() && dst_lanes[i] >= 0 &&
                dst_lanes[i] < dst->batch());
      copy_lane(dst->lane_bytes_ptr(dst_lanes[i]), src.lane_bytes_ptr(src_lanes[i]));
    }
  });
}

void EigenBackend::FillLanes(int64_t value, const LaneSet& lanes, Tensor* dst) {
  AB_CHECK(dst->batch() == lanes.batch(), "FillLanes: dst batch mismatch");
  const int64_t n = dst->lane_elements();
  VisitDType(dst->dtype(), [&](auto zero) {
    using T = decltype(zero);
    using W = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
    W v;
    if constexpr (std::is_same_v<T, bool>) {
      v = value != 0 ? 1 : 0;
    } else {
      v = static_cast<T>(value);
    }
    W* d = reinterpret_cast<W*>(dst->bytes());
    for (int64_t lane : lanes.indices()) std::fill(d + lane * n, d + (lane + 1) * n, v);
  });
}

absl::Status EigenBackend::Push(const LaneSet& lanes, int64_t max_depth,
                                LaneStack* stack) {
  const int64_t batch = stack->batch();
  AB_CHECK(stack->top.batch() == lanes.batch(), "Push: batch mismatch");
  AB_CHECK(max_depth >= 0, "Push: negative max_depth");
  int64_t needed = 0;
  for (int64_t lane : lanes.indices()) {
    const int64_t depth = stack->depth[static_cast<size_t>(lane)];
    if (depth >= max_depth) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "stack overflow at lane ", lane, ": it already holds ", depth,
          " saved frames, the maximum depth of this stack"));
    }
    needed = std::max(needed, depth + 1);
  }
  if (needed > stack->capacity()) {
    const int64_t capacity =
        std::max(needed, std::min(max_depth, std::max<int64_t>(4, 2 * stack->capacity())));
    Tensor grown(stack->top.type(), capacity * batch);
    CopyBytes(grown.bytes(), stack->saved.bytes(), stack->saved.size_bytes());
    stack->saved = std::move(grown);
  }
  const int64_t lane_bytes = stack->top.lane_bytes();
  std::byte* saved = stack->saved.bytes();
  const std::byte* top = stack->top.bytes();
  int32_t* depths = stack->depth.data();
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    for (int64_t lane : lanes.indices()) {
      int32_t& depth = depths[lane];
      copy_lane(saved + (depth * batch + lane) * lane_bytes, top + lane * lane_bytes);
      ++depth;
    }
  });
  return absl::OkStatus();
}

absl::Status EigenBackend::Pop(const LaneSet& lanes, LaneStack* stack) {
  const int64_t batch = stack->batch();
  AB_CHECK(stack->top.batch() == lanes.batch(), "Pop: batch mismatch");
  for (int64_t lane : lanes.indices()) {
    if (stack->depth[static_cast<size_t>(lane)] == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pop of an empty stack at lane ", lane,
          " (the program pops a value that was never pushed)"));
    }
  }
  const int64_t lane_bytes = stack->top.lane_bytes();
  const std::byte* saved = stack->saved.bytes();
  std::byte* top = stack->top.bytes();
  int32_t* depths = stack->depth.data();
  WithLaneCopy(lane_bytes, [&](auto copy_lane) {
    for (int64_t lane : lanes.indices()) {
      int32_t& depth = depths[lane];
      --depth;
      copy_lane(top + lane * lane_bytes, saved + (depth * batch + lane) * lane_bytes);
    }
  });
  return absl::OkStatus();
}

bool EigenBackend::Any(const Tensor& cond, const LaneSet& lanes) {
  AB_CHECK(cond.batch() == lanes.batch(), "Any: batch mismatch");
  const uint8_t* c = BoolBytes(cond);
  for (int64_t lane : lanes.indices()) {
    if (c[lane] != 0) return true;
  }
  return false;
}

std::optional<int64_t> EigenBackend::Min(const Tensor& values, const LaneSet& lanes) {
  AB_CHECK(values.batch() == lanes.batch(), "Min: batch mismatch");
  CheckScalarInt(values);
  if (lanes.empty()) return std::nullopt;
  int64_t best = ScalarIntAt(values, lanes.indices()[0]);
  for (int64_t lane : lanes.indices()) best = std::min(best, ScalarIntAt(values, lane));
  return best;
}

void EigenBackend::Split(const Tensor& cond, const LaneSet& lanes, LaneSet* if_true,
                         LaneSet* if_false) {
  AB_CHECK(cond.batch() == lanes.batch(), "Split: batch mismatch");
  LaneSet::Split(lanes, BoolBytes(cond), if_true, if_false);
}

void EigenBackend::LanesEqual(const Tensor& values, int64_t value, const LaneSet& lanes,
                              LaneSet* out) {
  AB_CHECK(values.batch() == lanes.batch(), "LanesEqual: batch mismatch");
  CheckScalarInt(values);
  AB_CHECK(out != &lanes, "LanesEqual: output must differ from the input");
  out->Reset(lanes.batch());
  for (int64_t lane : lanes.indices()) {
    if (ScalarIntAt(values, lane) == value) out->Append(lane);
  }
}

}  // namespace autobatch
