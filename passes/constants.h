// Compile-time values: evaluating an op whose inputs are known through the
// one definition every executor runs, and the variables that hold a known
// value. Shared by fold_constants, simplify_arithmetic and cse.
//
// The evaluation is RunPrimitive (backends/kernels.h) for one lane, the very
// function the reference interpreter and the backends call, so a value
// computed here has the bits every executor would compute (and follows
// automatically when a primitive's definition changes). This is the one
// place passes/ reaches into backends/ (tests/layering allows exactly
// backends/kernels.h).
#ifndef AUTOBATCH_PASSES_CONSTANTS_H_
#define AUTOBATCH_PASSES_CONSTANTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/ir.h"

namespace autobatch {

// One lane's value of a variable: its type and its bytes, as the kernels
// store them (bool: one byte, 0 or 1).
struct ConstantValue {
  TensorType type;
  std::vector<std::byte> bytes;
  friend bool operator==(const ConstantValue&, const ConstantValue&) = default;  // bitwise
};

// Values of more elements than this are never evaluated nor folded: a
// folded literal is written out in full in the IR's text and JSON (and its
// fingerprint), so only small vectors (a model's parameters, say) become
// literals; bigger results stay ops that compute them at run time.
inline constexpr int64_t kMaxConstantElements = 256;

// The value built-in `op` computes for one lane from `inputs` (one per
// op.inputs, in order) when its only output has type `output`, computed by
// RunPrimitive. nullopt if the op is a user kernel, if an input or the
// output has more than kMaxConstantElements elements, or if RunPrimitive
// refuses it (it never traps). Random and batch-dependent primitives are
// evaluated like any other: whether to fold them is the caller's choice.
std::optional<ConstantValue> Evaluate(const PrimOp& op, std::span<const ConstantValue> inputs,
                                      const TensorType& output);

// A literal whose `constant` op computes exactly `value`'s bits, or nullopt
// when none does (a NaN other than the canonical one, which neither the
// text nor the JSON form keeps; a bool byte other than 0 or 1).
std::optional<Literal> LiteralFor(const ConstantValue& value);

// Whether every element of `value` is `x` converted to its dtype, bit for
// bit (so -0.0 is not 0.0; every element of a bool is x != 0).
bool EveryElementIs(const ConstantValue& value, double x);

// The values of one function's variables that a pass may rely on.
//
// Function-wide: a variable written exactly once in the function, by a
// `constant` or `fill_like` op, and not a parameter, holds that op's value
// wherever it is read (every read follows a write on every path: the
// definedness check, passes/analysis/definedness.h, which
// allocate_variables runs, refuses a program otherwise; and its one write
// always writes the same value). Block-local: inside a walk over a block,
// a variable written earlier in the block by a `constant` op (or an op a
// pass has just folded into one) and not written since.
// Only values of at most kMaxConstantElements elements are tracked.
class KnownConstants {
 public:
  // Requires: a typed program's module and one of its functions.
  KnownConstants(const Module& module, const Function& function);

  // The value `v` holds wherever it is read (function-wide), or null.
  const ConstantValue* Everywhere(VarId v) const;
  // The value `v` holds at the current point of the block walk, or null.
  const ConstantValue* Here(VarId v) const;

  // The block walk: StartBlock before a block's first op, AfterOp after
  // each op (with the op as it now stands, folded or not), which forgets
  // the variables the op writes and learns the value of a constant op.
  void StartBlock();
  void AfterOp(const Op& op);

 private:
  // Maps, not vectors by VarId: a walk of one function must not cost the
  // whole module's variables (thousands of functions, each walked).
  const Module& module_;
  absl::flat_hash_map<int32_t, ConstantValue> everywhere_;
  absl::flat_hash_map<int32_t, ConstantValue> here_;
};

// The value of a `constant` or `fill_like` op whose output has type
// `output` (fill_like's input only lends its type), or nullopt as Evaluate.
std::optional<ConstantValue> ValueOfConstantOp(const PrimOp& op, const TensorType& output);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_CONSTANTS_H_
