// EigenBackend: the single-threaded backend; kernels from backends/kernels.h
// (Eigen packet math and matrix products), masks as dense blends or compact
// gathers.
#ifndef AUTOBATCH_BACKENDS_EIGEN_BACKEND_H_
#define AUTOBATCH_BACKENDS_EIGEN_BACKEND_H_

#include <vector>

#include "backends/backend.h"
#include "backends/kernels.h"
#include "backends/scratch_buffer.h"

namespace autobatch {

class EigenBackend : public Backend {
 public:
  std::string_view name() const override { return "eigen"; }

  Tensor Allocate(const TensorType& type, int64_t batch) override;
  LaneStack AllocateStack(const TensorType& type, int64_t batch,
                          int64_t initial_capacity) override;

  absl::Status RunOp(const PrimOp& op, std::span<const Tensor* const> inputs,
                     std::span<Tensor* const> outputs, const LaneSet& lanes,
                     ExecMode mode, const KernelRegistry* kernels) override;

  void MaskedUpdate(const Tensor& src, const LaneSet& lanes, Tensor* dst) override;
  void Gather(const Tensor& src, const LaneSet& lanes, Tensor* dst) override;
  void Scatter(const Tensor& src, const LaneSet& lanes, Tensor* dst) override;
  void CopyLanes(const Tensor& src, std::span<const int64_t> src_lanes,
                 Tensor* dst, std::span<const int64_t> dst_lanes) override;
  void FillLanes(int64_t value, const LaneSet& lanes, Tensor* dst) override;

  absl::Status Push(const LaneSet& lanes, int64_t max_depth,
                    LaneStack* stack) override;
  absl::Status Pop(const LaneSet& lanes, LaneStack* stack) override;

  bool Any(const Tensor& cond, const LaneSet& lanes) override;
  std::optional<int64_t> Min(const Tensor& values, const LaneSet& lanes) override;
  void Split(const Tensor& cond, const LaneSet& lanes, LaneSet* if_true,
             LaneSet* if_false) override;
  void LanesEqual(const Tensor& values, int64_t value, const LaneSet& lanes,
                  LaneSet* out) override;

 private:
  // RunOp of an op whose outputs are uniform: once, for one lane.
  absl::Status RunUniformOp(const PrimOp& op, std::span<const Tensor* const> inputs,
                            std::span<Tensor* const> outputs, const LaneSet& lanes,
                            const KernelRegistry* kernels);
  // One buffer per operand slot of RunOp: inputs first, then outputs.
  std::vector<ScratchBuffer> scratch_;
  std::vector<ConstLanesView> in_views_;
  std::vector<LanesView> out_views_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_EIGEN_BACKEND_H_
