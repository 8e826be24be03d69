// Backend: the narrow interface through which the VMs touch batched data.
//
// A VM keeps every variable as a Tensor of `batch` lanes (Full variables as a
// LaneStack) and runs each block for a LaneSet. Everything that reads or
// writes lane data goes through a Backend, so a new backend (threads, another
// library) is a new implementation of this class plus one line in
// MakeBackend, and the conformance suite (tests/backends/conformance_test.cc)
// runs against it automatically.
//
// Contract shared by all methods:
// * Lane-indexed arguments (Tensors, LaneStacks) have batch() ==
//   lanes.batch() unless stated otherwise; types agree where stated. Breaking
//   this is a bug of the caller (AB_CHECK), not a user error.
// * Lanes outside the LaneSet are never changed. Inactive lanes may hold any
//   bits (junk); no method traps on them.
// * Per-lane results are bit-identical across backends, batch sizes, lane
//   positions and both ExecModes, for every bit_stable primitive.
// * A Backend object keeps scratch buffers that only grow: after a warm-up
//   step, RunOp and the data-movement methods do not allocate (except for
//   Push growing a stack). It is not thread-safe: one per VM run / thread.
#ifndef AUTOBATCH_BACKENDS_BACKEND_H_
#define AUTOBATCH_BACKENDS_BACKEND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/kernel_registry.h"
#include "backends/lane_set.h"
#include "backends/tensor.h"
#include "support/memory.h"
#include "ir/ir.h"

namespace autobatch {

// How RunOp treats the lanes outside the set.
enum class ExecMode : uint8_t {
  // Run the kernel over all batch() lanes (inactive ones compute on junk),
  // then copy the results of the lanes in the set into the outputs. Cheap per
  // lane, best when most lanes are active.
  kDense,
  // Gather the lanes in the set into contiguous scratch, run the kernel on
  // just those, scatter the results back. Best when few lanes are active and
  // the kernel is expensive.
  kCompact,
};
std::string_view ExecModeName(ExecMode mode);  // "dense", "compact"

// A per-lane stack of one variable's values (a Full variable of the stack
// VM). `top` holds each lane's current value; the frames saved below it live
// in `saved`, frame f of lane l at lane index f * batch + l (frame-major, so
// growing the stack appends). depth[l] = number of saved frames of lane l.
// Reads and in-place writes of the current value go to `top` directly.
struct LaneStack {
  Tensor top;                  // [batch]
  Tensor saved;                // [capacity * batch]
  CountedVector<int32_t> depth;  // [batch]

  int64_t batch() const { return top.batch(); }
  int64_t capacity() const { return batch() == 0 ? 0 : saved.batch() / batch(); }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // The threads one RunOp may use (each with its own cache): the stack VM
  // sizes its lane tiles (CallOptions::tile_bytes) by it.
  virtual int threads() const { return 1; }

  // --- storage -------------------------------------------------------------
  // A zero-filled tensor of `batch` lanes.
  virtual Tensor Allocate(const TensorType& type, int64_t batch) = 0;
  // A stack with zero-filled top, depth 0 everywhere and room for
  // `initial_capacity` saved frames per lane.
  virtual LaneStack AllocateStack(const TensorType& type, int64_t batch,
                                  int64_t initial_capacity) = 0;

  // --- running ops -----------------------------------------------------------
  // For every lane l in `lanes`: outputs[k][l] = op(inputs[...][l]), computed
  // by RunPrimitive (backends/kernels.h); other lanes of the outputs are left
  // untouched, even if the op fails. inputs[i] / outputs[k] are the tensors of
  // op.inputs[i] / op.outputs[k] (types as the op requires), each with batch
  // lanes.batch(). An output may be the same Tensor as an input (x = x + 1).
  // Both modes give identical bits for bit_stable primitives. User kernels are
  // looked up in `kernels` (may be null if the op is a built-in); in dense mode
  // they receive lanes.mask() as `active`. Errors: RunPrimitive's (a bad op,
  // a missing user kernel, a user kernel's failure).
  // Uniform tensors (Tensor::uniform(), one lane) may stand for inputs of
  // any batch: every lane reads their one lane (a stride-0 view, never
  // gathered). If the outputs are uniform, so must every input be, and the
  // op runs once, for that one lane.
  virtual absl::Status RunOp(const PrimOp& op,
                             std::span<const Tensor* const> inputs,
                             std::span<Tensor* const> outputs,
                             const LaneSet& lanes, ExecMode mode,
                             const KernelRegistry* kernels) = 0;

  // --- data movement ---------------------------------------------------------
  // dst[l] = src[l] for l in lanes (same type).
  virtual void MaskedUpdate(const Tensor& src, const LaneSet& lanes,
                            Tensor* dst) = 0;
  // dst[i] = src[lanes.indices()[i]] for i < lanes.size(); src has batch
  // lanes.batch(), dst at least lanes.size() lanes; its other lanes untouched.
  virtual void Gather(const Tensor& src, const LaneSet& lanes, Tensor* dst) = 0;
  // dst[lanes.indices()[i]] = src[i] for i < lanes.size(); the inverse of Gather.
  virtual void Scatter(const Tensor& src, const LaneSet& lanes, Tensor* dst) = 0;
  // dst[dst_lanes[i]] = src[src_lanes[i]] for every i (equal lengths, indices
  // in range of each tensor, same type; src and dst must not be the same
  // tensor).
  virtual void CopyLanes(const Tensor& src, std::span<const int64_t> src_lanes,
                         Tensor* dst, std::span<const int64_t> dst_lanes) = 0;
  // dst[l] = value (every element) for l in lanes, with cast semantics from
  // i64 (kernels.h); e.g. setting program counters.
  virtual void FillLanes(int64_t value, const LaneSet& lanes, Tensor* dst) = 0;

  // --- stacks ----------------------------------------------------------------
  // For l in lanes: save top[l] as a new frame (depth[l] += 1); top[l] keeps
  // its value (the caller then writes the new one). Grows `saved` on demand.
  // If some lane would exceed `max_depth` saved frames, returns
  // ResourceExhausted naming the first such lane, and changes nothing.
  virtual absl::Status Push(const LaneSet& lanes, int64_t max_depth,
                            LaneStack* stack) = 0;
  // For l in lanes: top[l] = the last saved frame, depth[l] -= 1. If some lane
  // has no saved frame, returns FailedPrecondition naming it, and changes
  // nothing.
  virtual absl::Status Pop(const LaneSet& lanes, LaneStack* stack) = 0;

  // --- lane queries ----------------------------------------------------------
  // Whether cond[l] (a bool scalar tensor) is true for some l in lanes.
  virtual bool Any(const Tensor& cond, const LaneSet& lanes) = 0;
  // The minimum of values[l] (an i32 or i64 scalar tensor) over l in lanes;
  // nullopt if lanes is empty.
  virtual std::optional<int64_t> Min(const Tensor& values,
                                     const LaneSet& lanes) = 0;
  // Splits lanes by cond (a bool scalar tensor): *if_true / *if_false become
  // the lanes of `lanes` where cond is true / false. Both are reset to
  // lanes.batch(); neither may be `lanes` itself.
  virtual void Split(const Tensor& cond, const LaneSet& lanes, LaneSet* if_true,
                     LaneSet* if_false) = 0;
  // *out = the lanes l of `lanes` with values[l] == value (values an i32 or
  // i64 scalar tensor, e.g. program counters); *out may not be `lanes`.
  virtual void LanesEqual(const Tensor& values, int64_t value,
                          const LaneSet& lanes, LaneSet* out) = 0;
};

// Whether an input or output is a uniform tensor (Tensor::uniform()).
bool HasUniformOperand(std::span<const Tensor* const> inputs,
                       std::span<Tensor* const> outputs);

// Whether `op` is a copy between two tensors of one type, which a backend runs
// as MaskedUpdate: the same bits, without a kernel pass into scratch and a
// blend back. (Any other copy goes to the kernel, which reports the error.)
bool IsPlainCopy(const PrimOp& op, std::span<const Tensor* const> inputs,
                 std::span<Tensor* const> outputs);

// Whether `op` is a select with one condition per lane between values of the
// output's type, of more than 8 bytes per lane, which the eigen backend (and
// so the threaded one for an op it does not split) runs straight into the
// running lanes of the output (MaskedSelectLaneBytes): the same bits, without
// a kernel pass over every lane into scratch and a blend back. (Narrower
// values blend faster over the whole batch, which vectorizes.)
bool IsWideLaneSelect(const PrimOp& op, std::span<const Tensor* const> inputs,
                      std::span<Tensor* const> outputs);

// The available backends: eigen (single-threaded) and threaded (eigen's
// kernels with lanes split over a thread pool; backends/threaded_backend.h).
enum class BackendKind : uint8_t { kEigen, kThreaded };
std::span<const BackendKind> AllBackendKinds();
std::string_view BackendKindName(BackendKind kind);  // "eigen", "threaded"
std::optional<BackendKind> BackendKindFromName(std::string_view name);
std::vector<std::string> KnownBackendNames();  // in AllBackendKinds() order

// kThreaded uses the default thread count (the hardware concurrency), and
// throws std::system_error if a worker thread does not start (the
// name-taking MakeBackend returns that as a status).
std::unique_ptr<Backend> MakeBackend(BackendKind kind);
// A known name, or "threaded:N" for the threaded backend with N threads
// (1 <= N <= 256, decimal). An unknown name, or a bad N, is InvalidArgument
// saying what is accepted.
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(std::string_view name);

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_BACKEND_H_
