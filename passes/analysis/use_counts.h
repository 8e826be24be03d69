// UseCounts: how often each variable of one function is read and written.
#ifndef AUTOBATCH_PASSES_ANALYSIS_USE_COUNTS_H_
#define AUTOBATCH_PASSES_ANALYSIS_USE_COUNTS_H_

#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace autobatch {

// Counts over one function: every op's reads and writes (OpReads /
// OpWrites, each occurrence counted), every Branch condition as a read, and
// the function's results as one read each (the caller reads them).
// Parameters are not counted as writes.
// The counts are kept for the range of variable ids the function mentions,
// not for every variable of the module: a module of thousands of small
// functions would otherwise cost all its variables per function
// (docs/BENCHMARKS.md, "Compile time against program size").
class UseCounts {
 public:
  // Requires: every variable `function` names is below num_variables.
  UseCounts(const Function& function, size_t num_variables);

  // 0 for a variable the function does not mention.
  int Reads(VarId v) const { return At(reads_, v); }
  int Writes(VarId v) const { return At(writes_, v); }

 private:
  int At(const std::vector<int>& counts, VarId v) const {
    const size_t i = static_cast<size_t>(v.value - first_);
    return v.value >= first_ && i < counts.size() ? counts[i] : 0;
  }
  int& Slot(std::vector<int>& counts, VarId v) {
    return counts[static_cast<size_t>(v.value - first_)];
  }

  int32_t first_ = 0;  // the lowest id counted: reads_[i] counts variable first_ + i
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
