// coalesce_copies: removes the copies lowering leaves around block-local
// temporaries.
#include "passes/coalesce_copies.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/analysis/use_counts.h"

namespace autobatch {
namespace {

bool Contains(const std::vector<VarId>& vars, VarId v) {
  return std::find(vars.begin(), vars.end(), v) != vars.end();
}

bool Reads(const Op& op, VarId v) { return Contains(OpReads(op), v); }
bool Writes(const Op& op, VarId v) { return Contains(OpWrites(op), v); }  // pops too

bool ReadByTerminator(const Block& block, VarId v) {
  return Contains(TerminatorReads(block.terminator), v);
}

class BlockCoalescer {
 public:
  BlockCoalescer(const Module& module, Block& block, ForwardCopies forward)
      : module_(module), block_(block), forward_(forward) {}

  void Run() {
    while (Forward() || Backward()) {
    }
  }

 private:
  bool Temporary(VarId v) const {
    return module_.var(v).storage == StorageClass::kTemporary;
  }

  int CountReads(VarId v) const {
    int n = ReadByTerminator(block_, v) ? 1 : 0;
    for (const Op& op : block_.ops) {
      for (VarId r : OpReads(op)) n += r == v ? 1 : 0;
    }
    return n;
  }

  // "t = f(...); ...; x = copy t" -> "x = f(...)", other reads of t read x.
  bool Forward() {
    std::vector<Op>& ops = block_.ops;
    for (size_t c = 0; c < ops.size(); ++c) {
      const PrimOp* copy = AsCopy(ops[c]);
      if (copy == nullptr) continue;
      const VarId t = copy->inputs[0];
      const VarId x = copy->outputs[0];
      if (t == x || !Temporary(t)) continue;
      // Walk back to t's definition; x must stay untouched on the way.
      size_t d = c;
      for (size_t k = c; k-- > 0;) {
        if (Writes(ops[k], t)) {
          d = k;
          break;
        }
        if (Reads(ops[k], x) || Writes(ops[k], x)) break;
      }
      PrimOp* def = d < c ? std::get_if<PrimOp>(&ops[d]) : nullptr;
      if (def == nullptr || Contains(def->outputs, x)) continue;
      // t is written only at def and read nowhere before it.
      bool ok = true;
      for (size_t k = 0; k < ops.size() && ok; ++k) {
        if (k != d && Writes(ops[k], t)) ok = false;
        if (k < d && Reads(ops[k], t)) ok = false;
      }
      if (!ok) continue;
      // Reads of t after the copy must find x still holding t's value (the
      // op of the last read may write x: ops read before they write), and x
      // must keep the values it is given (a Null variable drops them).
      size_t last_read = c;  // ops.size() stands for the terminator
      for (size_t k = c + 1; k < ops.size(); ++k) {
        if (Reads(ops[k], t)) last_read = k;
      }
      if (ReadByTerminator(block_, t)) last_read = ops.size();
      const bool other_reads = CountReads(t) > 1;  // besides the copy
      if (other_reads && (forward_ == ForwardCopies::kOnlyRead ||
                          module_.var(x).storage == StorageClass::kNull)) {
        continue;
      }
      for (size_t k = c + 1; k < last_read && ok; ++k) ok = !Writes(ops[k], x);
      if (!ok) continue;
      for (VarId& out : def->outputs) {
        if (out == t) out = x;
      }
      if (Contains(copy->in_place, x)) {
        def->in_place.push_back(x);
        std::sort(def->in_place.begin(), def->in_place.end());
      }
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(c));
      for (size_t k = d + 1; k < ops.size(); ++k) ReplaceOpReads(ops[k], t, x);
      ReplaceTerminatorReads(block_.terminator, t, x);
      return true;
    }
    return false;
  }

  // "t = copy x; ...reads of t..." -> "...reads of x...".
  bool Backward() {
    std::vector<Op>& ops = block_.ops;
    for (size_t c = 0; c < ops.size(); ++c) {
      const PrimOp* copy = AsCopy(ops[c]);
      if (copy == nullptr) continue;
      const VarId x = copy->inputs[0];
      const VarId t = copy->outputs[0];
      if (t == x || !Temporary(t)) continue;
      bool ok = true;
      size_t last_read = c;  // ops.size() stands for the terminator
      for (size_t k = 0; k < ops.size() && ok; ++k) {
        if (k != c && Writes(ops[k], t)) ok = false;
        if (Reads(ops[k], t)) {
          if (k < c) ok = false;
          last_read = k;
        }
      }
      if (!ok) continue;
      if (ReadByTerminator(block_, t)) last_read = ops.size();
      // A Branch condition is per lane (verifier U4): the copy of a uniform
      // value it reads stays.
      const auto* branch = std::get_if<Branch>(&block_.terminator);
      if (module_.var(x).uniform && branch != nullptr && branch->cond == t) continue;
      for (size_t k = c + 1; k < last_read && ok; ++k) ok = !Writes(ops[k], x);
      if (!ok) continue;
      for (size_t k = c + 1; k < ops.size(); ++k) ReplaceOpReads(ops[k], t, x);
      ReplaceTerminatorReads(block_.terminator, t, x);
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(c));
      return true;
    }
    return false;
  }

  const Module& module_;
  Block& block_;
  ForwardCopies forward_;
};

}  // namespace

absl::StatusOr<Program> CoalesceCopies(Program program, ForwardCopies forward) {
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coalesce_copies needs a lowered program (run lower_calls first), got stage ",
        std::string(StageName(program.stage))));
  }
  for (Function& function : program.module.functions) {
    for (Block& block : function.blocks) BlockCoalescer(program.module, block, forward).Run();
  }
  return program;
}

}  // namespace autobatch
