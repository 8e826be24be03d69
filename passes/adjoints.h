// The adjoint table: each built-in primitive's vector-Jacobian product, the
// one definition the differentiate pass (passes/differentiate.h) uses. One
// entry per primitive of ir/primitives.def (an exhaustive switch: a new
// primitive does not compile until it has an entry), each with a one-line
// statement of its derivative, including the subgradient chosen at kinks
// and what passes no gradient.
#ifndef AUTOBATCH_PASSES_ADJOINTS_H_
#define AUTOBATCH_PASSES_ADJOINTS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace autobatch {

// Emits typed ops into the reverse sweep. Implemented by the differentiate
// pass; every method appends one op and returns its fresh result variable.
class AdjointEmitter {
 public:
  virtual ~AdjointEmitter() = default;
  virtual VarId Prim(Primitive prim, std::vector<VarId> inputs, Attributes attrs = {}) = 0;
  // fill_like `like` {literal = f64 value}.
  virtual VarId Fill(VarId like, double value) = 0;
  virtual const TensorType& TypeOf(VarId v) const = 0;
  // A user-kernel op calling `name` (declared in Module::kernels) on
  // `inputs`; returns its fresh outputs.
  virtual std::vector<VarId> Kernel(const std::string& name, std::vector<VarId> inputs) = 0;
};

// What a primitive's adjoint needs and how it is computed. The reverse sweep
// calls `emit` with the op, the output's adjoint `dz` (the output's type),
// the primal values the rule asked for (`in[j]` for each input j with
// needs_input[j], else invalid; `out` if needs_output, else invalid) and
// gets, per input, its contribution (of the input's type, or of the
// output's shape when the input was a broadcast scalar: the pass sums it)
// or an invalid VarId when the input receives no gradient from this op.
struct AdjointRule {
  // Whether the op passes any gradient. False for ops whose outputs are not
  // floats, constants, floor, and random draws.
  bool differentiable = false;
  std::vector<bool> needs_input;  // per input (variadic ops: see NeedsInput)
  bool needs_output = false;
  std::function<std::vector<VarId>(AdjointEmitter& e, const PrimOp& op, VarId dz,
                                   const std::vector<VarId>& in, VarId out)>
      emit;
  // Per input (empty = none): the op cannot give this input a gradient (a
  // varying matrix of matvec_input). The pass reports an error naming the
  // op when such an input depends on a wrt parameter, rather than dropping
  // its gradient.
  std::vector<bool> refuses_input;
};

// The rule of `prim` for an op with `num_inputs` inputs (kUserKernel has
// none here: the differentiate pass builds a user kernel's rule from its
// registered vjp kernel, KernelSignature::vjp).
AdjointRule AdjointOf(Primitive prim, size_t num_inputs);

// The one-line statement of `prim`'s derivative (docs and error messages).
std::string_view AdjointDoc(Primitive prim);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ADJOINTS_H_
