// coalesce_copies: removes the copies lowering leaves around block-local
// temporaries.
#include "passes/coalesce_copies.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "passes/analysis/use_counts.h"
#include "passes/registry.h"

namespace autobatch {
namespace {

bool Contains(const std::vector<VarId>& vars, VarId v) {
  return std::find(vars.begin(), vars.end(), v) != vars.end();
}

// Where each variable is read and written in one block, kept up to date as
// copies are removed and reads renamed, so that each rule's conditions are a
// few lookups instead of scans of the block: a block that inlining made
// long (a chain of thousands of calls) would otherwise take time cubic in
// its length. Positions are op indices; the terminator reads at kEnd.
class BlockIndex {
 public:
  static constexpr int kEnd = std::numeric_limits<int>::max();

  explicit BlockIndex(const Block& block) {
    for (size_t k = 0; k < block.ops.size(); ++k) AddOp(block.ops[k], static_cast<int>(k));
    AddTerminator(block.terminator);
  }

  void AddTerminator(const Terminator& terminator) {
    for (VarId v : TerminatorReads(terminator)) AddRead(v, kEnd);
  }
  void RemoveTerminator(const Terminator& terminator) {
    for (VarId v : TerminatorReads(terminator)) {
      Uses& uses = at_[v.value];
      --uses.read_count;
      uses.reads.erase(kEnd);
    }
  }

  void AddOp(const Op& op, int k) {
    for (VarId v : OpReads(op)) AddRead(v, k);
    for (VarId v : OpWrites(op)) at_[v.value].writes.insert(k);  // pops too
  }
  void RemoveOp(const Op& op, int k) {
    for (VarId v : OpReads(op)) {
      Uses& uses = at_[v.value];
      --uses.read_count;
      uses.reads.erase(k);
    }
    for (VarId v : OpWrites(op)) at_[v.value].writes.erase(k);
  }
  void AddRead(VarId v, int k) {
    Uses& uses = at_[v.value];
    ++uses.read_count;
    uses.reads.insert(k);
  }
  void MoveWrite(VarId from, VarId to, int k) {
    at_[from.value].writes.erase(k);
    at_[to.value].writes.insert(k);
  }

  const std::set<int>& Reads(VarId v) { return at_[v.value].reads; }
  const std::set<int>& Writes(VarId v) { return at_[v.value].writes; }
  // Reads counted with multiplicity (an op reading v twice counts twice).
  int ReadCount(VarId v) { return at_[v.value].read_count; }
  // The last position in [0, end) in `positions`, or -1.
  static int LastBefore(const std::set<int>& positions, int end) {
    auto it = positions.lower_bound(end);
    return it == positions.begin() ? -1 : *std::prev(it);
  }
  // The first position after `begin` in `positions`, or kEnd.
  static int FirstAfter(const std::set<int>& positions, int begin) {
    auto it = positions.upper_bound(begin);
    return it == positions.end() ? kEnd : *it;
  }

 private:
  struct Uses {
    std::set<int> reads;
    std::set<int> writes;
    int read_count = 0;
  };
  absl::flat_hash_map<int32_t, Uses> at_;
};

class BlockCoalescer {
 public:
  BlockCoalescer(const Module& module, Block& block, ForwardCopies forward, Deadline& deadline)
      : module_(module), block_(block), forward_(forward), index_(block), deadline_(deadline) {}

  // Sweeps over the block's copies in order, the forward rule until it no
  // longer applies, then the backward rule, until neither applies; removed
  // ops are dropped at the end. False if the deadline passed (the block is
  // then half coalesced).
  bool Run() {
    removed_.assign(block_.ops.size(), false);
    for (;;) {
      while (Sweep(&BlockCoalescer::Forward)) {
      }
      if (out_of_time_) return false;
      if (!Sweep(&BlockCoalescer::Backward)) break;
    }
    if (out_of_time_) return false;
    std::vector<Op> kept;
    kept.reserve(block_.ops.size());
    for (size_t k = 0; k < block_.ops.size(); ++k) {
      if (!removed_[k]) kept.push_back(std::move(block_.ops[k]));
    }
    block_.ops = std::move(kept);
    return true;
  }

 private:
  // One sweep of `rule`; false, as if nothing changed, once the deadline
  // has passed.
  bool Sweep(bool (BlockCoalescer::*rule)(int)) {
    if (deadline_.Charge(kPassOpWork * static_cast<int64_t>(block_.ops.size() + 1))) {
      out_of_time_ = true;
      return false;
    }
    bool changed = false;
    for (size_t c = 0; c < block_.ops.size(); ++c) {
      if (!removed_[c] && AsCopy(block_.ops[c]) != nullptr) {
        changed = (this->*rule)(static_cast<int>(c)) || changed;
      }
    }
    return changed;
  }

  bool Temporary(VarId v) const {
    return module_.var(v).storage == StorageClass::kTemporary;
  }

  // Every read of t at or after `from` reads x instead.
  void RenameReads(VarId t, VarId x, int from) {
    const std::vector<int> readers(index_.Reads(t).lower_bound(from), index_.Reads(t).end());
    for (int k : readers) {
      if (k == BlockIndex::kEnd) {
        index_.RemoveTerminator(block_.terminator);
        ReplaceTerminatorReads(block_.terminator, t, x);
        index_.AddTerminator(block_.terminator);
        continue;
      }
      Op& op = block_.ops[static_cast<size_t>(k)];
      index_.RemoveOp(op, k);
      ReplaceOpReads(op, t, x);
      index_.AddOp(op, k);
    }
  }

  // The last read of t after position c (the terminator's is kEnd), or c.
  int LastRead(VarId t, int c) {
    const std::set<int>& reads = index_.Reads(t);
    return reads.empty() || *reads.rbegin() <= c ? c : *reads.rbegin();
  }

  // "t = f(...); ...; x = copy t" -> "x = f(...)", other reads of t read x.
  bool Forward(int c) {
    std::vector<Op>& ops = block_.ops;
    const PrimOp* copy = AsCopy(ops[static_cast<size_t>(c)]);
    const VarId t = copy->inputs[0];
    const VarId x = copy->outputs[0];
    if (t == x || !Temporary(t)) return false;
    // t's definition: its last write before the copy, with x untouched
    // between them (the definition itself may read x).
    const int d = BlockIndex::LastBefore(index_.Writes(t), c);
    if (d < 0 || BlockIndex::LastBefore(index_.Reads(x), c) > d ||
        BlockIndex::LastBefore(index_.Writes(x), c) > d) {
      return false;
    }
    PrimOp* def = std::get_if<PrimOp>(&ops[static_cast<size_t>(d)]);
    if (def == nullptr || Contains(def->outputs, x)) return false;
    // t is written only at def and read nowhere before it.
    if (index_.Writes(t).size() != 1 || *index_.Reads(t).begin() < d) return false;
    // Reads of t after the copy must find x still holding t's value (the op
    // of the last read may write x: ops read before they write), and x must
    // keep the values it is given (a Null variable drops them).
    const bool other_reads = index_.ReadCount(t) > 1;  // besides the copy
    if (other_reads && (forward_ == ForwardCopies::kOnlyRead ||
                        module_.var(x).storage == StorageClass::kNull)) {
      return false;
    }
    if (BlockIndex::FirstAfter(index_.Writes(x), c) < LastRead(t, c)) return false;
    index_.MoveWrite(t, x, d);
    for (VarId& out : def->outputs) {
      if (out == t) out = x;
    }
    if (Contains(copy->in_place, x)) {
      def->in_place.push_back(x);
      std::sort(def->in_place.begin(), def->in_place.end());
    }
    Remove(c);
    RenameReads(t, x, d + 1);
    return true;
  }

  // "t = copy x; ...reads of t..." -> "...reads of x...".
  bool Backward(int c) {
    const PrimOp* copy = AsCopy(block_.ops[static_cast<size_t>(c)]);
    const VarId x = copy->inputs[0];
    const VarId t = copy->outputs[0];
    if (t == x || !Temporary(t)) return false;
    // t is written only here and read nowhere before.
    if (index_.Writes(t).size() != 1) return false;
    if (!index_.Reads(t).empty() && *index_.Reads(t).begin() < c) return false;
    // A Branch condition is per lane (verifier U4): the copy of a uniform
    // value it reads stays.
    const auto* branch = std::get_if<Branch>(&block_.terminator);
    if (module_.var(x).uniform && branch != nullptr && branch->cond == t) return false;
    if (BlockIndex::FirstAfter(index_.Writes(x), c) < LastRead(t, c)) return false;
    Remove(c);
    RenameReads(t, x, c + 1);
    return true;
  }

  void Remove(int c) {
    index_.RemoveOp(block_.ops[static_cast<size_t>(c)], c);
    removed_[static_cast<size_t>(c)] = true;
  }

  const Module& module_;
  Block& block_;
  ForwardCopies forward_;
  BlockIndex index_;
  std::vector<bool> removed_;  // per op: dropped by a rule
  Deadline& deadline_;         // the pass's: charged per sweep, by the ops swept
  bool out_of_time_ = false;
};

}  // namespace

absl::StatusOr<Program> CoalesceCopies(Program program, ForwardCopies forward,
                                       Deadline deadline) {
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coalesce_copies needs a lowered program (run lower_calls first), got stage ",
        std::string(StageName(program.stage))));
  }
  for (Function& function : program.module.functions) {
    for (Block& block : function.blocks) {
      if (!BlockCoalescer(program.module, block, forward, deadline).Run()) {
        return PassOutOfTime(forward == ForwardCopies::kAnyReads ? "coalesce_copies(any_reads)"
                                                                 : "coalesce_copies");
      }
    }
  }
  return program;
}

}  // namespace autobatch
