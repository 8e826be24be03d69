// UseCounts: how often each variable of one function is read and written.
#ifndef AUTOBATCH_PASSES_ANALYSIS_USE_COUNTS_H_
#define AUTOBATCH_PASSES_ANALYSIS_USE_COUNTS_H_

#include <vector>

#include "ir/ir.h"

namespace autobatch {

// Counts over one function: every op's reads and writes (OpReads /
// OpWrites, each occurrence counted), every Branch condition as a read, and
// the function's results as one read each (the caller reads them).
// Parameters are not counted as writes.
class UseCounts {
 public:
  // Requires: every variable `function` names is below num_variables.
  UseCounts(const Function& function, size_t num_variables);

  int Reads(VarId v) const { return reads_[v.value]; }
  int Writes(VarId v) const { return writes_[v.value]; }

 private:
  std::vector<int> reads_;
  std::vector<int> writes_;
};

// The variables a terminator reads: a Branch's condition; no other kind
// reads any.
std::vector<VarId> TerminatorReads(const Terminator& terminator);

// Replaces every read of `from` in the op (PrimOp inputs, CallOp
// arguments, a tape_push's value; never a tape) by `to`.
void ReplaceOpReads(Op& op, VarId from, VarId to);

// Replaces every read of `from` in the terminator by `to`.
void ReplaceTerminatorReads(Terminator& terminator, VarId from, VarId to);

// The op as a copy `out = copy in` (one input, one output), or null.
const PrimOp* AsCopy(const Op& op);

// Whether `function` has `v` among its parameters or results.
bool IsParamOrResult(const Function& function, VarId v);

// Whether `name` is one the frontend generates for a variable the user did
// not name: `t<N>` (temporaries) or `l<N>` (unnamed locals), N a decimal
// number without leading zeros (frontend/body.cc, frontend/context.cc).
// Parameters and results are never generated, whatever their names.
bool IsGeneratedName(std::string_view name);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ANALYSIS_USE_COUNTS_H_
