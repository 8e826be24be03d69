// The autobatch IR: small helpers over the data model.
#include "ir/ir.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "support/overloaded.h"

namespace autobatch {

std::string SourceLoc::ToString() const {
  if (!known()) return "<unknown>";
  return absl::StrCat(file, ":", line);
}

std::string_view StorageClassName(StorageClass s) {
  switch (s) {
    case StorageClass::kNull: return "null";
    case StorageClass::kTemporary: return "temp";
    case StorageClass::kRegister: return "register";
    case StorageClass::kFull: return "full";
    case StorageClass::kTape: return "tape";
  }
  return "?";
}

std::optional<StorageClass> StorageClassFromName(std::string_view name) {
  for (StorageClass s : {StorageClass::kNull, StorageClass::kTemporary,
                         StorageClass::kRegister, StorageClass::kFull, StorageClass::kTape}) {
    if (StorageClassName(s) == name) return s;
  }
  return std::nullopt;
}

bool operator==(const Literal& a, const Literal& b) {
  if (a.type != b.type || a.ints != b.ints ||
      a.floats.size() != b.floats.size()) {
    return false;
  }
  for (size_t i = 0; i < a.floats.size(); ++i) {
    double x = a.floats[i], y = b.floats[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
    if (x == 0 && std::signbit(x) != std::signbit(y)) return false;
  }
  return true;
}

bool operator==(const Attributes& a, const Attributes& b) {
  bool same_matrix = a.matrix == b.matrix ||
                     (a.matrix && b.matrix && *a.matrix == *b.matrix);
  return a.literal == b.literal && a.dtype == b.dtype && a.ints == b.ints &&
         same_matrix && a.kernel == b.kernel;
}

const SourceLoc& LocOf(const Op& op) {
  return std::visit([](const auto& o) -> const SourceLoc& { return o.loc; }, op);
}

std::optional<FunctionId> Module::FindFunction(std::string_view name) const {
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == name) return FunctionId(static_cast<int32_t>(i));
  }
  return std::nullopt;
}

VarId Module::AddVariable(Variable v) {
  variables.push_back(std::move(v));
  return VarId(static_cast<int32_t>(variables.size() - 1));
}

FunctionId Module::AddFunction(Function f) {
  functions.push_back(std::move(f));
  return FunctionId(static_cast<int32_t>(functions.size() - 1));
}

std::string_view StageName(Stage s) {
  switch (s) {
    case Stage::kUntyped: return "untyped";
    case Stage::kTyped: return "typed";
    case Stage::kAllocated: return "allocated";
    case Stage::kLowered: return "lowered";
  }
  return "?";
}

std::optional<Stage> StageFromName(std::string_view name) {
  for (Stage s : {Stage::kUntyped, Stage::kTyped, Stage::kAllocated,
                  Stage::kLowered}) {
    if (StageName(s) == name) return s;
  }
  return std::nullopt;
}

PrimOp MakeCopy(VarId to, VarId from, SourceLoc loc) {
  PrimOp op;
  op.prim = Primitive::kCopy;
  op.inputs = {from};
  op.outputs = {to};
  op.loc = std::move(loc);
  return op;
}

void RenameVariables(Op& op, const std::function<VarId(VarId)>& map) {
  auto rename = [&](std::vector<VarId>& vars) {
    for (VarId& v : vars) v = map(v);
  };
  std::visit(Overloaded{
                 [&](PrimOp& o) {
                   rename(o.inputs);
                   rename(o.outputs);
                   rename(o.in_place);
                 },
                 [&](CallOp& o) {
                   rename(o.args);
                   rename(o.results);
                 },
                 [&](PopOp& o) { rename(o.vars); },
                 [&](TapePushOp& o) {
                   o.tape = map(o.tape);
                   o.value = map(o.value);
                 },
                 [&](TapePopOp& o) {
                   o.tape = map(o.tape);
                   o.result = map(o.result);
                 },
             },
             op);
}

void RenameVariables(Function& fn, const std::function<VarId(VarId)>& map) {
  for (VarId& v : fn.params) v = map(v);
  for (VarId& v : fn.results) v = map(v);
  for (Block& block : fn.blocks) {
    for (Op& op : block.ops) RenameVariables(op, map);
    std::visit(Overloaded{
                   [&](Branch& t) { t.cond = map(t.cond); },
                   [](Goto&) {},
                   [](Return&) {},
                   [](PushGoto&) {},
                   [](IndirectGoto&) {},
                   [](Halt&) {},
               },
               block.terminator);
  }
}

std::vector<VarId> OpReads(const Op& op) {
  return std::visit(Overloaded{
                        [](const PrimOp& o) { return o.inputs; },
                        [](const CallOp& o) { return o.args; },
                        [](const PopOp&) { return std::vector<VarId>{}; },
                        [](const TapePushOp& o) { return std::vector<VarId>{o.value}; },
                        [](const TapePopOp&) { return std::vector<VarId>{}; },
                    },
                    op);
}

std::vector<VarId> OpWrites(const Op& op) {
  return std::visit(Overloaded{
                        [](const PrimOp& o) { return o.outputs; },
                        [](const CallOp& o) { return o.results; },
                        [](const PopOp& o) { return o.vars; },
                        [](const TapePushOp&) { return std::vector<VarId>{}; },
                        [](const TapePopOp& o) { return std::vector<VarId>{o.result}; },
                    },
                    op);
}

std::optional<VarId> TapeOf(const Op& op) {
  if (const auto* push = std::get_if<TapePushOp>(&op)) return push->tape;
  if (const auto* pop = std::get_if<TapePopOp>(&op)) return pop->tape;
  return std::nullopt;
}

std::vector<VarId> OpVariables(const Op& op) {
  std::vector<VarId> vars = OpReads(op);
  for (VarId v : OpWrites(op)) vars.push_back(v);
  if (std::optional<VarId> tape = TapeOf(op)) vars.push_back(*tape);
  return vars;
}

std::vector<VarId> ParamsWrittenByCall(const Module& module, const CallOp& call) {
  const std::vector<VarId>& params = module.function(call.callee).params;
  std::vector<VarId> written;
  for (size_t i = 0; i < std::min(params.size(), call.args.size()); ++i) {
    if (call.args[i] != params[i]) written.push_back(params[i]);
  }
  return written;
}

std::vector<VarId> PushedVariables(const Module& module, const Op& op) {
  std::vector<VarId> pushed;
  if (std::holds_alternative<PopOp>(op)) return pushed;
  const PrimOp* prim = std::get_if<PrimOp>(&op);
  for (VarId v : OpWrites(op)) {
    if (v.value < 0 || static_cast<size_t>(v.value) >= module.variables.size() ||
        module.var(v).storage != StorageClass::kFull) {
      continue;
    }
    if (prim != nullptr && std::find(prim->in_place.begin(), prim->in_place.end(), v) !=
                               prim->in_place.end()) {
      continue;
    }
    pushed.push_back(v);
  }
  return pushed;
}

bool RunsExpensiveKernel(const Block& block) {
  for (const Op& op : block.ops) {
    const PrimOp* prim = std::get_if<PrimOp>(&op);
    if (prim != nullptr && IsExpensive(prim->prim)) return true;
  }
  return false;
}

std::vector<BlockId> Successors(const Terminator& t) {
  return std::visit(
      Overloaded{
          [](const Branch& b) {
            return std::vector<BlockId>{b.then_block, b.else_block};
          },
          [](const Goto& g) { return std::vector<BlockId>{g.target}; },
          [](const Return&) { return std::vector<BlockId>{}; },
          [](const PushGoto& p) { return std::vector<BlockId>{p.return_to}; },
          [](const IndirectGoto&) { return std::vector<BlockId>{}; },
          [](const Halt&) { return std::vector<BlockId>{}; },
      },
      t);
}

}  // namespace autobatch
