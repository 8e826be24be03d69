// UseCounts: how often each variable of one function is read and written.
#include "passes/analysis/use_counts.h"

#include <algorithm>
#include <limits>

#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {

UseCounts::UseCounts(const Function& function, size_t num_variables) {
  // Every read and write, then counted over the range of their ids.
  std::vector<VarId> reads, writes;
  for (const Block& block : function.blocks) {
    for (const Op& op : block.ops) {
      for (VarId v : OpReads(op)) reads.push_back(v);
      for (VarId v : OpWrites(op)) writes.push_back(v);
    }
    for (VarId v : TerminatorReads(block.terminator)) reads.push_back(v);
  }
  for (VarId v : function.results) reads.push_back(v);
  int32_t first = std::numeric_limits<int32_t>::max(), last = -1;
  for (const std::vector<VarId>* uses : {&reads, &writes}) {
    for (VarId v : *uses) {
      AB_CHECK(v.value >= 0 && static_cast<size_t>(v.value) < num_variables,
               "UseCounts: a variable id out of range");
      first = std::min(first, v.value);
      last = std::max(last, v.value);
    }
  }
  if (last < first) return;
  first_ = first;
  reads_.assign(static_cast<size_t>(last - first + 1), 0);
  writes_.assign(reads_.size(), 0);
  for (VarId v : reads) ++Slot(reads_, v);
  for (VarId v : writes) ++Slot(writes_, v);
}

std::vector<VarId> TerminatorReads(const Terminator& terminator) {
  return std::visit(Overloaded{
                        [](const Branch& t) { return std::vector<VarId>{t.cond}; },
                        [](const Goto&) { return std::vector<VarId>{}; },
                        [](const Return&) { return std::vector<VarId>{}; },
                        [](const PushGoto&) { return std::vector<VarId>{}; },
                        [](const IndirectGoto&) { return std::vector<VarId>{}; },
                        [](const Halt&) { return std::vector<VarId>{}; },
                    },
                    terminator);
}

void ReplaceOpReads(Op& op, VarId from, VarId to) {
  std::visit(Overloaded{
                 [&](PrimOp& o) { std::replace(o.inputs.begin(), o.inputs.end(), from, to); },
                 [&](CallOp& o) { std::replace(o.args.begin(), o.args.end(), from, to); },
                 [](PopOp&) {},  // a pop writes
                 [&](TapePushOp& o) {
                   if (o.value == from) o.value = to;  // the tape is not a read
                 },
                 [](TapePopOp&) {},  // it writes its result
             },
             op);
}

void ReplaceTerminatorReads(Terminator& terminator, VarId from, VarId to) {
  std::visit(Overloaded{
                 [&](Branch& t) {
                   if (t.cond == from) t.cond = to;
                 },
                 [](Goto&) {},
                 [](Return&) {},
                 [](PushGoto&) {},
                 [](IndirectGoto&) {},
                 [](Halt&) {},
             },
             terminator);
}

const PrimOp* AsCopy(const Op& op) {
  const auto* prim = std::get_if<PrimOp>(&op);
  if (prim == nullptr || prim->prim != Primitive::kCopy || prim->inputs.size() != 1 ||
      prim->outputs.size() != 1) {
    return nullptr;
  }
  return prim;
}

bool IsParamOrResult(const Function& function, VarId v) {
  return std::find(function.params.begin(), function.params.end(), v) != function.params.end() ||
         std::find(function.results.begin(), function.results.end(), v) !=
             function.results.end();
}

bool IsGeneratedName(std::string_view name) {
  if (name.size() < 2 || (name[0] != 't' && name[0] != 'l')) return false;
  if (name[1] == '0') return name.size() == 2;
  return std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace autobatch
