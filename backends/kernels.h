// The ONE definition of every primitive's per-lane value, over contiguous
// lanes. Every executor (reference interpreter, eigen and threaded backends)
// computes primitives by calling RunPrimitive, so a lane's bits never depend
// on how many lanes ran beside it, where it sat, or which executor ran it.
//
// Exact definitions, beyond the one-liners of ir/primitives.def:
// * bool is stored as one byte; kernels read any nonzero byte as true (so
//   junk bytes are harmless) and write 0 or 1. Data-movement primitives
//   (constant, fill_like, copy, select, broadcast, slice, concat) move bytes
//   unchanged.
// * NaN: every NaN a computing primitive produces (arithmetic, cast, exp...,
//   reductions, matvec) is the canonical quiet NaN
//   std::numeric_limits<T>::quiet_NaN(): NaN payloads and signs never depend
//   on instruction selection. min/max return that NaN if either operand is
//   NaN.
// * Integer-to-integer casts wrap (two's complement, modulo 2^bits); integer
//   to float rounds to nearest; float to integer truncates toward zero,
//   saturates, NaN -> 0 (u64: negative -> 0); anything to bool is x != 0
//   (NaN -> true); bool to a number is 0 or 1. f64 -> f32 rounds to nearest
//   (overflow -> inf).
// * Literal attributes (constant, fill_like) are converted to the result's
//   dtype with these cast semantics, from the literal's own dtype (the int64
//   values of an i32 literal first wrap to 32 bits, of a u64 literal are
//   bit-cast); a literal holds one value (broadcast) or one per element.
// * Integer add/sub/mul/neg/abs and reductions wrap; x / 0 = 0, x % 0 = x,
//   INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. Float % is std::fmod.
// * exp, log, log1p, expm1, tanh, sin, cos, atan, lgamma, erfc, digamma,
//   log1p_exp, logistic, pow and log_sum_exp: computed in f64 (f32 operands
//   are widened, the result rounded back to f32) by support/math/math.h
//   (SLEEF's deterministic functions, the widest vector variant the CPU
//   has; the same bits on every variant, so an element's bits depend only
//   on its value), which states each function's exact definition. sqrt
//   and floor are exact (IEEE). Accuracy (tested): f64 within 1 ulp of the
//   correctly rounded value (erfc 1.5, the functions built on others 2),
//   f32 within 1 ulp.
// * reduce_sum / dot / squared_norm: x[0] (or the product of the 0th
//   elements), then += the next term, in index order; an empty vector sums to
//   +0. Integers wrap.
// * matvec: M (double) is rounded to x's dtype and arithmetic is in x's
//   dtype; per lane out[i] = M[i,0]*x[0], then out[i] += M[i,j]*x[j] for
//   j = 1, 2, ... (products rounded separately: no FMA). Bit-stable.
// * matvec_batched: out = M * X with X the (n x lanes) column-major matrix of
//   the lanes, as ONE single-threaded Eigen matrix product; each lane's value
//   is M x up to rounding, but its bits may depend on the batch (flagged not
//   bit_stable in ir/primitives.def; tested to 1e-12 relative).
// * random_uniform / random_normal: Philox4x32-10 (Random123). Output
//   element i of a lane with key k and counter c comes from the Philox block
//   b = i / 2 with philox key {lo32(k), hi32(k)} and philox counter
//   {lo32(b), hi32(b), lo32(c), hi32(c)}; the block's 128 bits make two
//   64-bit words w0, w1 (r0 | r1 << 32, r2 | r3 << 32), each word a uniform
//   ((w >> 12) + 0.5) * 2^-52 in (0, 1); uniform element i is the word i % 2,
//   normal elements 2b and 2b + 1 are the Box-Muller pair of the block's two
//   uniforms. The exact construction is in backends/random.h, whose
//   PhiloxUniform / PhiloxNormal give the same bits from plain C++.
#ifndef AUTOBATCH_BACKENDS_KERNELS_H_
#define AUTOBATCH_BACKENDS_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace autobatch {

class KernelRegistry;

// `lanes` consecutive lanes of one variable, lane-major (see Tensor). `data`
// must be aligned to the element size; it may be null when the view holds no
// bytes (no lanes, or a zero-element type such as f64[0]), so a kernel must
// not pass it to memcpy/memset for zero bytes (see CopyBytes).
struct LanesView {
  TensorType type;
  std::byte* data = nullptr;
};
// An input view may be UNIFORM (ir/ir.h): it holds ONE lane, which every
// lane reads (lane stride 0). Built-in primitives accept uniform inputs
// (RunPrimitive repeats them for kernels that index lanes); a user kernel
// receives the flag and must read such an input at `data` for every lane.
struct ConstLanesView {
  TensorType type;
  const std::byte* data = nullptr;
  bool uniform = false;
};

// Computes `op` for `num_lanes` lanes: inputs[k] and outputs[k] hold
// num_lanes consecutive lanes of op.inputs[k] / op.outputs[k]. `active`, if
// not null, has num_lanes entries (1 = the lane's result is wanted); built-in
// primitives may ignore it, user kernels may use it to skip work. Inputs may hold
// any bits (junk from masked-off lanes): no primitive traps. Outputs must not
// alias inputs. Types must already be valid for the op (the verifier's job);
// RunPrimitive still checks the input/output counts, dtypes, element counts
// and attributes it relies on (cheap, once per call) and returns
// InvalidArgument rather than touching memory out of bounds. A user kernel's
// error, or a kernel missing from `kernels` (NotFound, naming it), is
// returned. Built-in primitives do not allocate on the heap, except that
// matvec / matvec_batched reuse a per-thread scratch buffer (grown on demand)
// and Eigen's matrix product may allocate blocking space for large products.
absl::Status RunPrimitive(const PrimOp& op,
                          std::span<const ConstLanesView> inputs,
                          std::span<const LanesView> outputs, int64_t num_lanes,
                          const KernelRegistry* kernels,
                          const uint8_t* active = nullptr);

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_KERNELS_H_
