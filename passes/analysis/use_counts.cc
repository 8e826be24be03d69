// UseCounts: how often each variable of one function is read and written.
#include "passes/analysis/use_counts.h"

#include <algorithm>

#include "support/overloaded.h"

namespace autobatch {

UseCounts::UseCounts(const Function& function, size_t num_variables)
    : reads_(num_variables, 0), writes_(num_variables, 0) {
  for (const Block& block : function.blocks) {
    for (const Op& op : block.ops) {
      for (VarId v : OpReads(op)) ++reads_[v.value];
      for (VarId v : OpWrites(op)) ++writes_[v.value];
    }
    for (VarId v : TerminatorReads(block.terminator)) ++reads_[v.value];
  }
  for (VarId v : function.results) ++reads_[v.value];
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
