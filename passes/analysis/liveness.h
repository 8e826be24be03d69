// Live-variable analysis of one function (for allocate_variables, lower_calls).
//
// Semantics analysed: the UNLOWERED activation-local view. A variable is live
// at a point if some path from there reads it before writing it, within the
// same activation:
// * a PrimOp reads its inputs and writes its outputs; a CallOp reads its
//   args and writes its results (the callee's own variables belong to the
//   callee's activation and are not touched); a PopOp reads and writes
//   nothing here (the analysis is meant for programs before lower_calls);
//   a tape_push reads its value and a tape_pop writes its result (a tape is
//   never live: only tape ops move it, ir/ir.h "Tapes");
// * Branch reads its condition; Return (and IndirectGoto) read the
//   function's results; Halt reads the results when the function is the
//   program's entry (they are the outputs) and nothing otherwise; PushGoto
//   continues at return_to.
// The IR is not SSA: a variable may be written in several blocks, and loops
// make the analysis iterate to a fixed point.
#ifndef AUTOBATCH_PASSES_ANALYSIS_LIVENESS_H_
#define AUTOBATCH_PASSES_ANALYSIS_LIVENESS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "ir/ir.h"

namespace autobatch {

// A set of variables of one module: a bitset indexed by VarId::value.
// Iteration (Vars) is in ascending VarId order, so everything derived from
// it is deterministic.
class VarSet {
 public:
  VarSet() = default;
  explicit VarSet(size_t num_vars) : words_((num_vars + 63) / 64, 0) {}
  VarSet(size_t num_vars, std::span<const VarId> vars);
  // Every variable below num_vars.
  static VarSet All(size_t num_vars);

  bool contains(VarId v) const {
    const size_t w = static_cast<size_t>(v.value) / 64;
    return w < words_.size() && ((words_[w] >> (v.value % 64)) & 1) != 0;
  }
  void insert(VarId v);
  void erase(VarId v);
  void insert_all(std::span<const VarId> vars) {
    for (VarId v : vars) insert(v);
  }
  void erase_all(std::span<const VarId> vars) {
    for (VarId v : vars) erase(v);
  }
  bool empty() const;
  size_t size() const;
  // Set algebra; every operand must have been built for the same module.
  // UnionWith returns true if *this grew.
  bool UnionWith(const VarSet& other);
  void IntersectWith(const VarSet& other);
  void Subtract(const VarSet& other);
  std::vector<VarId> Vars() const;  // ascending

  friend bool operator==(const VarSet&, const VarSet&) = default;

 private:
  std::vector<uint64_t> words_;
};

// The variables a terminator of `function` reads (see the semantics above).
// Halt reads the entry's results in every function (the verifier's rule A6):
// a lane halting inside a callee returns the entry's current results.
std::vector<VarId> TerminatorReads(const Program& program, FunctionId function,
                                   const Terminator& terminator);

struct BlockLiveness {
  VarSet live_in;   // live on entry to the block
  VarSet live_out;  // live after the terminator: union of successors' live_in
  // live_after_op[i]: live right after ops[i] (before ops[i + 1], or before
  // the terminator for the last op). The terminator's own reads are
  // included, so live_after_op.back() = live_out + TerminatorReads.
  std::vector<VarSet> live_after_op;
  // Live right before the terminator: live_out + TerminatorReads.
  VarSet live_before_terminator;
};

struct FunctionLiveness {
  std::vector<BlockLiveness> blocks;  // parallel to Function::blocks
};

// Liveness of every block of `function` of `program`.
// Requires: every index in the function is in range (ir/verifier.h R1-R4).
// Guarantees: sets are exact for the semantics above (least fixed point);
// unreachable blocks are analysed too.
FunctionLiveness ComputeLiveness(const Program& program, FunctionId function);

// The variables live across each CallOp of `function`: live after the call
// minus the call's results. Keyed by (block, op index) in op order.
struct CallLiveness {
  BlockId block;
  int op_index = 0;
  VarSet live_across;
};
std::vector<CallLiveness> LiveAcrossCalls(const Program& program,
                                          FunctionId function,
                                          const FunctionLiveness& liveness);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ANALYSIS_LIVENESS_H_
