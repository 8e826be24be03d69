// The IR verifier: collects every violated invariant of ir/verifier.h.
#include "ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/control_ops.h"
#include "support/overloaded.h"
#include "ir/type_rules.h"
#include "ir/uniform.h"

namespace autobatch {

std::string VerifierError::ToString() const {
  if (!function.valid()) return absl::StrCat("program: ", message);
  std::string out = absl::StrCat("function '", function_name, "'");
  if (block.valid()) {
    absl::StrAppend(&out, ", block ^", block.value);
    if (!block_label.empty()) absl::StrAppend(&out, " (", block_label, ")");
    if (op_index >= 0) {
      absl::StrAppend(&out, ", op ", op_index);
    } else {
      absl::StrAppend(&out, ", terminator");
    }
  }
  absl::StrAppend(&out, ": ", message);
  return out;
}

namespace {

// Mirrors the shape limits of the type rules (ir/type_rules.cc).
bool ValidShape(const std::vector<int64_t>& shape) {
  constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 8;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) return false;
    n *= d;
  }
  return true;
}

std::string ShapeProblem(const TensorType& t) {
  return absl::StrCat("has shape [", absl::StrJoin(t.shape, ","),
                      "]: dimensions must be >= 0 and 8 * element count must "
                      "fit in int64");
}

std::string AtLoc(const SourceLoc& loc) {
  return loc.known() ? absl::StrCat(" (at ", loc.ToString(), ")") : "";
}

std::string Storage(StorageClass s) { return std::string(StorageClassName(s)); }

// A variable an op or terminator reads, with how the message names it.
struct Use {
  VarId var;
  std::string role;
};

std::vector<Use> NamedReads(const Op& op) {
  std::vector<Use> uses;
  std::visit(Overloaded{
                 [&](const PrimOp& o) {
                   for (size_t i = 0; i < o.inputs.size(); ++i) {
                     uses.push_back({o.inputs[i], absl::StrCat("input ", i)});
                   }
                 },
                 [&](const CallOp& o) {
                   for (size_t i = 0; i < o.args.size(); ++i) {
                     uses.push_back({o.args[i], absl::StrCat("argument ", i)});
                   }
                 },
                 [](const PopOp&) {},
                 [&](const TapePushOp& o) { uses.push_back({o.value, "pushed value"}); },
                 [](const TapePopOp&) {},
             },
             op);
  return uses;
}

// Every variable an op names other than a tape operand, with its role.
std::vector<Use> NamedNonTapeUses(const Op& op) {
  std::vector<Use> uses = NamedReads(op);
  auto list = [&](const std::vector<VarId>& vars, const char* role) {
    for (size_t i = 0; i < vars.size(); ++i) {
      uses.push_back({vars[i], absl::StrCat(role, " ", i)});
    }
  };
  std::visit(Overloaded{
                 [&](const PrimOp& o) {
                   list(o.outputs, "output");
                   list(o.in_place, "in_place variable");
                 },
                 [&](const CallOp& o) { list(o.results, "result"); },
                 [&](const PopOp& o) { list(o.vars, "popped variable"); },
                 [](const TapePushOp&) {},
                 [&](const TapePopOp& o) { uses.push_back({o.result, "popped result"}); },
             },
             op);
  return uses;
}

class Verifier {
 public:
  explicit Verifier(const Program& program)
      : p_(program), m_(program.module) {}

  std::vector<VerifierError> Run() {
    CheckProgram();
    CheckVariables();
    BuildCallGraph();
    FindTapes();
    for (size_t f = 0; f < m_.functions.size(); ++f) {
      CheckFunction(FunctionId(static_cast<int32_t>(f)));
    }
    CheckUniform();
    return std::move(errors_);
  }

 private:
  // Where an error is; op = -1 is the terminator (or none).
  struct Where {
    FunctionId f;
    BlockId b;
    int op = -1;
  };

  bool Typed() const { return p_.stage >= Stage::kTyped; }
  bool Allocated() const { return p_.stage >= Stage::kAllocated; }
  bool Lowered() const { return p_.stage == Stage::kLowered; }

  bool ValidVar(VarId v) const {
    return v.value >= 0 && static_cast<size_t>(v.value) < m_.variables.size();
  }
  bool ValidFunction(FunctionId f) const {
    return f.value >= 0 && static_cast<size_t>(f.value) < m_.functions.size();
  }
  static bool ValidBlock(const Function& fn, BlockId b) {
    return b.value >= 0 && static_cast<size_t>(b.value) < fn.blocks.size();
  }
  // The variable's type if it exists, is set and is well-formed.
  const TensorType* TypeOf(VarId v) const {
    if (!ValidVar(v)) return nullptr;
    const std::optional<TensorType>& t = m_.var(v).type;
    if (!t || !ValidShape(t->shape)) return nullptr;
    return &*t;
  }

  std::string VarDesc(VarId v) const {
    if (!ValidVar(v) || m_.var(v).name.empty()) {
      return absl::StrCat("#", v.value);
    }
    return absl::StrCat("'", m_.var(v).name, "' (#", v.value, ")");
  }
  std::string FunctionDesc(FunctionId f) const {
    if (!ValidFunction(f)) return absl::StrCat("#", f.value);
    return absl::StrCat("'", m_.function(f).name, "'");
  }
  std::string TypeDesc(VarId v) const {
    const TensorType* t = TypeOf(v);
    return t ? t->ToString() : "<none>";
  }

  void Report(Where w, std::string message) {
    VerifierError e;
    e.function = w.f;
    e.block = w.b;
    e.op_index = w.op;
    e.message = std::move(message);
    if (ValidFunction(w.f)) {
      const Function& fn = m_.function(w.f);
      e.function_name = fn.name;
      if (ValidBlock(fn, w.b)) e.block_label = fn.blocks[w.b.value].label;
    } else {
      e.function = FunctionId();
    }
    if (!e.function.valid()) e.block = BlockId();
    errors_.push_back(std::move(e));
  }

  // --- P1-P3 ----------------------------------------------------------------
  void CheckProgram() {
    if (!ValidFunction(p_.entry)) {
      Report({}, absl::StrCat("entry function #", p_.entry.value,
                              " does not exist (the module has ",
                              m_.functions.size(),
                              " functions); set Program::entry to one of them"));
    }
    std::map<std::string, size_t> first;
    for (size_t f = 0; f < m_.functions.size(); ++f) {
      auto [it, inserted] = first.emplace(m_.functions[f].name, f);
      if (!inserted) {
        Report({}, absl::StrCat("functions #", it->second, " and #", f,
                                " are both named '", m_.functions[f].name,
                                "'; function names must be unique (rename one)"));
      }
    }
    for (const auto& [name, sig] : m_.kernels) {
      for (size_t i = 0; i < sig.inputs.size(); ++i) {
        if (!ValidShape(sig.inputs[i].shape)) {
          Report({}, absl::StrCat("kernel '", name, "' input ", i, " ",
                                  ShapeProblem(sig.inputs[i])));
        }
      }
      for (size_t i = 0; i < sig.outputs.size(); ++i) {
        if (!ValidShape(sig.outputs[i].shape)) {
          Report({}, absl::StrCat("kernel '", name, "' output ", i, " ",
                                  ShapeProblem(sig.outputs[i])));
        }
      }
      // O5
      if (!sig.vjp.empty()) CheckVjp(name, sig);
    }
  }

  void CheckVjp(const std::string& name, const KernelSignature& sig) {
    auto it = m_.kernels.find(sig.vjp);
    if (it == m_.kernels.end() || sig.vjp == name) {
      Report({}, absl::StrCat("kernel '", name, "' names '", sig.vjp,
                              "' as its vjp, which is ",
                              sig.vjp == name ? "itself" : "not declared in Module::kernels",
                              "; declare (register) the vjp kernel too"));
      return;
    }
    std::vector<TensorType> want_inputs = sig.inputs;
    want_inputs.insert(want_inputs.end(), sig.outputs.begin(), sig.outputs.end());
    if (it->second.inputs != want_inputs || it->second.outputs != sig.inputs) {
      auto list = [](const std::vector<TensorType>& types) {
        std::vector<std::string> names;
        for (const TensorType& t : types) names.push_back(t.ToString());
        return absl::StrCat("(", absl::StrJoin(names, ", "), ")");
      };
      Report({}, absl::StrCat("kernel '", name, "' has vjp '", sig.vjp, "' of signature ",
                              list(it->second.inputs), " -> ", list(it->second.outputs),
                              ", but a vjp takes the kernel's inputs then one cotangent per "
                              "output and returns one cotangent per input: ",
                              list(want_inputs), " -> ", list(sig.inputs)));
    }
  }

  // --- V1-V3, T1 ------------------------------------------------------------
  void CheckVariables() {
    std::map<std::pair<int32_t, std::string>, size_t> first;
    for (size_t i = 0; i < m_.variables.size(); ++i) {
      const VarId id(static_cast<int32_t>(i));
      const Variable& v = m_.variables[i];
      const Where where{v.function, BlockId()};
      if (!ValidFunction(v.function)) {
        Report({}, absl::StrCat("variable ", VarDesc(id), " names function #",
                                v.function.value, ", which does not exist (the "
                                "module has ", m_.functions.size(),
                                " functions); every variable belongs to one "
                                "function"));
      } else {
        auto [it, inserted] = first.emplace(
            std::make_pair(v.function.value, v.name), i);
        if (!inserted) {
          Report(where, absl::StrCat("variables #", it->second, " and #", i,
                                     " are both named '", v.name,
                                     "'; names must be unique within a "
                                     "function (rename one)"));
        }
      }
      if (v.type && !ValidShape(v.type->shape)) {
        Report(where, absl::StrCat("variable ", VarDesc(id), " ",
                                   ShapeProblem(*v.type)));
      }
      if (Typed() && !v.type) {
        Report(where, absl::StrCat("variable ", VarDesc(id), " has no type in a ",
                                   std::string(StageName(p_.stage)),
                                   " program; run infer_types (or declare "
                                   "its type)"));
      }
    }
  }

  // --- call graph (for R2 in lowered programs and A6) -------------------------
  void BuildCallGraph() {
    const size_t n = m_.functions.size();
    callees_.assign(n, {});
    writes_.assign(n, {});
    for (size_t f = 0; f < n; ++f) {
      for (const Block& block : m_.functions[f].blocks) {
        for (const Op& op : block.ops) {
          for (VarId v : OpWrites(op)) writes_[f].insert(v.value);
          const auto* call = std::get_if<CallOp>(&op);
          if (call == nullptr || !ValidFunction(call->callee)) continue;
          callees_[f].insert(call->callee.value);
          for (VarId p : ParamsWrittenByCall(m_, *call)) writes_[f].insert(p.value);
        }
        if (const auto* push = std::get_if<PushGoto>(&block.terminator)) {
          if (ValidFunction(push->callee)) callees_[f].insert(push->callee.value);
        }
      }
    }
    // reaches_[g][f]: calling g may run f (g itself included). Only the
    // storage checks of allocated programs use it, and it takes time and
    // memory quadratic in the number of functions (a long chain of calls
    // before inlining).
    reaches_.clear();
    if (!Allocated()) return;
    reaches_.assign(n, std::vector<bool>(n, false));
    for (size_t g = 0; g < n; ++g) {
      std::vector<int32_t> stack = {static_cast<int32_t>(g)};
      reaches_[g][g] = true;
      while (!stack.empty()) {
        int32_t f = stack.back();
        stack.pop_back();
        for (int32_t h : callees_[f]) {
          if (!reaches_[g][h]) {
            reaches_[g][h] = true;
            stack.push_back(h);
          }
        }
      }
    }
  }

  // --- tapes (K1-K3, T6, A7) -----------------------------------------------------
  void FindTapes() {
    is_tape_.assign(m_.variables.size(), false);
    tape_pushed_.assign(m_.variables.size(), false);
    tape_popped_.assign(m_.variables.size(), false);
    tapes_of_.assign(m_.functions.size(), {});
    for (const Function& fn : m_.functions) {
      for (const Block& block : fn.blocks) {
        for (const Op& op : block.ops) {
          std::optional<VarId> tape = TapeOf(op);
          if (!tape || !ValidVar(*tape)) continue;
          const FunctionId owner = m_.var(*tape).function;
          if (!is_tape_[tape->value] && ValidFunction(owner)) {
            tapes_of_[owner.value].push_back(tape->value);
          }
          is_tape_[tape->value] = true;
          (std::holds_alternative<TapePushOp>(op) ? tape_pushed_ : tape_popped_)[tape->value] =
              true;
        }
      }
    }
  }
  bool IsTape(VarId v) const { return ValidVar(v) && is_tape_[v.value]; }

  std::string TapeMisuse(VarId v, const std::string& role, const SourceLoc& loc) const {
    return absl::StrCat("tape ", VarDesc(v), " is used as ", role, AtLoc(loc),
                        "; a tape is named only as the tape operand of tape_push and "
                        "tape_pop (use another variable here, or tape_pop the value into "
                        "one)");
  }

  // K1 for a function's params and results, and for its ops and branches.
  void CheckTapeUses(FunctionId f, const Function& fn) {
    for (const auto* list : {&fn.params, &fn.results}) {
      const char* role = list == &fn.params ? "parameter" : "result";
      for (size_t i = 0; i < list->size(); ++i) {
        if (IsTape((*list)[i])) {
          Report({f, BlockId()}, TapeMisuse((*list)[i], absl::StrCat(role, " ", i), fn.loc));
        }
      }
    }
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const BlockId bid(static_cast<int32_t>(b));
      const Block& block = fn.blocks[b];
      for (size_t k = 0; k < block.ops.size(); ++k) {
        for (const Use& use : NamedNonTapeUses(block.ops[k])) {
          if (IsTape(use.var)) {
            Report({f, bid, static_cast<int>(k)},
                   TapeMisuse(use.var, use.role, LocOf(block.ops[k])));
          }
        }
      }
      if (const auto* branch = std::get_if<Branch>(&block.terminator)) {
        if (IsTape(branch->cond)) {
          Report({f, bid, -1}, TapeMisuse(branch->cond, "branch condition", block.loc));
        }
      }
    }
  }

  // K3: a tape of f that is only pushed, or only popped, cannot balance.
  void CheckTapesPushedAndPopped(FunctionId f, const Function& fn) {
    std::vector<int32_t> tapes = tapes_of_[f.value];
    std::sort(tapes.begin(), tapes.end());  // reported in variable order
    for (int32_t i : tapes) {
      if (tape_pushed_[i] == tape_popped_[i]) continue;
      const VarId v(static_cast<int32_t>(i));
      Report({f, BlockId()},
             tape_pushed_[i]
                 ? absl::StrCat("tape ", VarDesc(v), " is pushed but never popped", AtLoc(fn.loc),
                                "; every activation must pop what it pushes before it "
                                "returns (add the tape_pop of the reverse sweep, or remove "
                                "the tape_push)")
                 : absl::StrCat("tape ", VarDesc(v), " is popped but never pushed", AtLoc(fn.loc),
                                "; a pop needs a push before it in the same activation (add "
                                "the tape_push of the forward sweep, or remove the tape_pop)"));
    }
  }

  // R1, R2 (K2: the tape belongs to the op's own function), T6.
  void CheckTapeOp(Where w, ControlOp kind, VarId tape, VarId other, const std::string& role,
                   const SourceLoc& loc) {
    bool ok = CheckVarRef(w, tape, "tape", loc, /*allow_callee_vars=*/false);
    ok &= CheckVarRef(w, other, role, loc, /*allow_callee_vars=*/true);
    if (!Typed() || !ok) return;
    const TensorType* tape_type = TypeOf(tape);
    const TensorType* other_type = TypeOf(other);
    if (tape_type == nullptr || other_type == nullptr || *tape_type == *other_type) return;
    Report(w, absl::StrCat(std::string(Info(kind).spelling), " ", role, " ", VarDesc(other),
                           " has type ", other_type->ToString(), ", but tape ", VarDesc(tape),
                           " holds ", tape_type->ToString(), AtLoc(loc),
                           "; every value pushed on a tape, and every result popped from "
                           "it, has the tape's type (rerun infer_types, or cast the value)"));
  }

  // A7: storage class tape iff the variable is a tape.
  void CheckTapeStorage(FunctionId f) {
    for (size_t i = 0; i < m_.variables.size(); ++i) {
      const VarId v(static_cast<int32_t>(i));
      const Variable& var = m_.variables[i];
      if (var.function != f) continue;
      const bool tape_class = var.storage == StorageClass::kTape;
      if (tape_class == is_tape_[i]) continue;
      Report({f, BlockId()},
             tape_class
                 ? absl::StrCat("variable ", VarDesc(v), " has storage class tape, but no "
                                "tape_push or tape_pop names it as its tape; only tapes are "
                                "tape (rerun allocate_variables)")
                 : absl::StrCat("tape ", VarDesc(v), " has storage class ", Storage(var.storage),
                                "; a tape's storage class is tape (rerun "
                                "allocate_variables)"));
    }
  }

  // --- R1, R2 -----------------------------------------------------------------
  // Returns whether `v` exists and may be used by function `w.f`.
  bool CheckVarRef(Where w, VarId v, const std::string& role, const SourceLoc& loc,
                   bool allow_callee_vars, bool reads_program_inputs = false) {
    if (!ValidVar(v)) {
      Report(w, absl::StrCat(role, " #", v.value, " does not exist (the module has ",
                             m_.variables.size(), " variables)", AtLoc(loc)));
      broken_ = true;
      return false;
    }
    const FunctionId owner = m_.var(v).function;
    if (owner == w.f) return true;
    if (allow_callee_vars && Lowered() && callee_vars_.count(v.value) > 0) {
      return true;
    }
    if (reads_program_inputs && IsProgramInput(v)) return true;
    std::string msg = absl::StrCat(
        role, " ", VarDesc(v), " belongs to function ", FunctionDesc(owner),
        ", not ", FunctionDesc(w.f), AtLoc(loc),
        "; a function uses only its own variables (pass values through "
        "parameters and results)");
    if (Lowered() && allow_callee_vars) {
      absl::StrAppend(&msg, "; a lowered function may also use the parameters "
                            "and results of the functions it PushGotos to");
    }
    Report(w, std::move(msg));
    broken_ = true;
    return false;
  }

  // --- R3, R4 -----------------------------------------------------------------
  bool CheckBlockRef(Where w, const Function& fn, BlockId target,
                     const std::string& role) {
    if (ValidBlock(fn, target)) return true;
    Report(w, absl::StrCat(role, " ^", target.value, " does not exist (function '",
                           fn.name, "' has ", fn.blocks.size(), " blocks)"));
    broken_ = true;
    return false;
  }

  bool CheckFunctionRef(Where w, FunctionId callee, const std::string& role,
                        const SourceLoc& loc) {
    if (ValidFunction(callee)) return true;
    Report(w, absl::StrCat(role, " #", callee.value,
                           " does not exist (the module has ",
                           m_.functions.size(), " functions)", AtLoc(loc)));
    broken_ = true;
    return false;
  }

  // --- O3 ---------------------------------------------------------------------
  void CheckDistinct(Where w, std::span<const VarId> vars, const std::string& what,
                     const SourceLoc& loc) {
    for (size_t i = 0; i < vars.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (vars[i] == vars[j]) {
          Report(w, absl::StrCat(what, " ", j, " and ", i, " are the same variable ",
                                 VarDesc(vars[i]), AtLoc(loc),
                                 "; each needs its own variable"));
        }
      }
    }
  }

  // --- functions --------------------------------------------------------------
  void CheckFunction(FunctionId f) {
    const Function& fn = m_.function(f);
    const Where here{f, BlockId()};
    broken_ = false;
    callee_vars_.clear();
    for (int32_t g : callees_[f.value]) {
      const Function& callee = m_.functions[g];
      for (VarId v : callee.params) callee_vars_.insert(v.value);
      for (VarId v : callee.results) callee_vars_.insert(v.value);
    }

    // F1
    if (fn.blocks.empty() && !fn.gradient_of) {
      Report(here, "has no blocks; every function needs an entry block ^0");
    }
    // F2
    bool vars_ok = true;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      vars_ok &= CheckVarRef(here, fn.params[i], absl::StrCat("parameter ", i),
                             fn.loc, /*allow_callee_vars=*/false);
    }
    for (size_t i = 0; i < fn.results.size(); ++i) {
      vars_ok &= CheckVarRef(here, fn.results[i], absl::StrCat("result ", i),
                             fn.loc, /*allow_callee_vars=*/false);
    }
    // F3
    CheckDistinct(here, fn.params, "parameters", fn.loc);
    // G1-G6
    if (fn.gradient_of) CheckGradientStub(f, fn, *fn.gradient_of, vars_ok);
    // K1, K3
    CheckTapeUses(f, fn);
    CheckTapesPushedAndPopped(f, fn);
    // F4, T5
    if (fn.signature) CheckSignature(f, fn, *fn.signature);
    // A1, A2
    if (Allocated() && vars_ok) CheckParamStorage(f, fn);

    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const BlockId bid(static_cast<int32_t>(b));
      const Block& block = fn.blocks[b];
      for (size_t k = 0; k < block.ops.size(); ++k) {
        CheckOp({f, bid, static_cast<int>(k)}, block.ops[k]);
      }
      CheckTerminator({f, bid, -1}, fn, block);
    }

    if (Allocated()) {
      CheckTapeStorage(f);
      for (size_t b = 0; b < fn.blocks.size(); ++b) {
        CheckBlockStorage(f, BlockId(static_cast<int32_t>(b)));
      }
      if (!broken_) CheckLiveAcrossCalls(f);
    }
  }

  // --- G1-G6 ------------------------------------------------------------------
  void CheckGradientStub(FunctionId f, const Function& fn, const GradientOf& grad,
                         bool vars_ok) {
    const Where here{f, BlockId()};
    const std::string loc = AtLoc(fn.loc);
    const std::string of = absl::StrCat("is a gradient stub of ",
                                        FunctionDesc(grad.function));
    // G1
    if (p_.stage != Stage::kUntyped && p_.stage != Stage::kTyped) {
      Report(here, absl::StrCat(of, " in a ", std::string(StageName(p_.stage)),
                                " program", loc,
                                "; stubs exist only in untyped and typed programs: "
                                "run the differentiate pass before allocate_variables "
                                "(CompileProgram and LowerProgram do)"));
    }
    // G2
    if (!fn.blocks.empty()) {
      Report(here, absl::StrCat(of, " but has ", fn.blocks.size(), " blocks", loc,
                                "; a stub has no body until the differentiate pass "
                                "writes one (and clears gradient_of)"));
    }
    // G3
    if (!ValidFunction(grad.function)) {
      Report(here, absl::StrCat(of, ", which does not exist (the module has ",
                                m_.functions.size(), " functions)", loc,
                                "; name the function to differentiate"));
      return;
    }
    const Function& primal = m_.function(grad.function);
    if (grad.function == f) {
      Report(here, absl::StrCat("is a gradient stub of itself", loc,
                                "; name the function to differentiate"));
      return;
    }
    if (primal.gradient_of) {
      Report(here, absl::StrCat(of, ", which is itself a gradient stub (of ",
                                FunctionDesc(primal.gradient_of->function), ")", loc,
                                "; only a function with a body can be differentiated"));
      return;
    }
    // G4
    const size_t n = primal.params.size();
    bool wrt_ok = true;
    if (grad.wrt.empty()) {
      Report(here, absl::StrCat(of, " with respect to no parameter", loc,
                                "; list at least one parameter index in wrt"));
      wrt_ok = false;
    }
    for (size_t k = 0; k < grad.wrt.size(); ++k) {
      const int32_t i = grad.wrt[k];
      if (i < 0 || static_cast<size_t>(i) >= n) {
        Report(here, absl::StrCat("wrt[", k, "] = ", i, " is not a parameter of ",
                                  FunctionDesc(grad.function), " (it has ", n,
                                  " parameters)", loc,
                                  "; list indices of the primal's parameters"));
        wrt_ok = false;
      } else if (k > 0 && i <= grad.wrt[k - 1]) {
        Report(here, absl::StrCat("wrt[", k, "] = ", i, " follows wrt[", k - 1, "] = ",
                                  grad.wrt[k - 1], loc,
                                  "; list the parameter indices in ascending order, "
                                  "each once"));
        wrt_ok = false;
      }
    }
    // G5
    bool shape_ok = true;
    if (fn.params.size() != n) {
      Report(here, absl::StrCat(of, " but has ", fn.params.size(),
                                " parameters, and ", FunctionDesc(grad.function), " has ",
                                n, loc, "; a gradient takes the primal's parameters"));
      shape_ok = false;
    }
    if (fn.results.size() != 1 + grad.wrt.size()) {
      Report(here, absl::StrCat(of, " with respect to ", grad.wrt.size(),
                                " parameters but has ", fn.results.size(), " results",
                                loc, "; a gradient returns the value, then one "
                                "gradient per wrt entry (", 1 + grad.wrt.size(),
                                " results)"));
      shape_ok = false;
    }
    if (primal.results.size() != 1) {
      Report(here, absl::StrCat(of, ", which has ", primal.results.size(), " results",
                                loc, "; only a function with one result (an f64 "
                                "scalar) can be differentiated"));
      shape_ok = false;
    }
    // G6
    if (!Typed() || !wrt_ok || !shape_ok || !vars_ok) return;
    for (VarId v : primal.params) {
      if (!ValidVar(v)) return;  // reported with the primal
    }
    if (!ValidVar(primal.results[0])) return;
    for (size_t i = 0; i < n; ++i) {
      const TensorType* mine = TypeOf(fn.params[i]);
      const TensorType* theirs = TypeOf(primal.params[i]);
      if (mine != nullptr && theirs != nullptr && *mine != *theirs) {
        Report(here, absl::StrCat("parameter ", i, " ", VarDesc(fn.params[i]),
                                  " has type ", mine->ToString(), ", but parameter ", i,
                                  " ", VarDesc(primal.params[i]), " of ",
                                  FunctionDesc(grad.function), ", of which it is the "
                                  "gradient, has type ", theirs->ToString(), loc,
                                  "; a gradient takes the primal's parameter types "
                                  "(rerun infer_types)"));
      }
    }
    const TensorType* value = TypeOf(primal.results[0]);
    if (value != nullptr && *value != Scalar(DType::kF64)) {
      Report(here, absl::StrCat(of, ", whose result ", VarDesc(primal.results[0]),
                                " has type ", value->ToString(), loc,
                                "; only a function returning an f64 scalar can be "
                                "differentiated (cast the result to f64, or reduce "
                                "it to a scalar)"));
    } else if (const TensorType* mine = TypeOf(fn.results[0]);
               mine != nullptr && value != nullptr && *mine != *value) {
      Report(here, absl::StrCat("result 0 ", VarDesc(fn.results[0]), " has type ",
                                mine->ToString(), ", but the value of ",
                                FunctionDesc(grad.function), " has type ",
                                value->ToString(), loc, "; result 0 of a gradient is "
                                "the primal's value (rerun infer_types)"));
    }
    for (size_t k = 0; k < grad.wrt.size(); ++k) {
      const VarId param = primal.params[grad.wrt[k]];
      const TensorType* wrt_type = TypeOf(param);
      if (wrt_type == nullptr) continue;
      if (wrt_type->dtype != DType::kF64) {
        Report(here, absl::StrCat(of, " with respect to parameter ", grad.wrt[k], " ",
                                  VarDesc(param), ", which has type ",
                                  wrt_type->ToString(), loc,
                                  "; gradients exist only with respect to f64 "
                                  "parameters (pass an f64 and cast it inside, or "
                                  "drop it from wrt)"));
        continue;
      }
      const TensorType* mine = TypeOf(fn.results[1 + k]);
      if (mine != nullptr && *mine != *wrt_type) {
        Report(here, absl::StrCat("result ", 1 + k, " ", VarDesc(fn.results[1 + k]),
                                  " has type ", mine->ToString(),
                                  ", but it is the gradient with respect to parameter ",
                                  grad.wrt[k], " ", VarDesc(param), " of ",
                                  FunctionDesc(grad.function), ", of type ",
                                  wrt_type->ToString(), loc,
                                  "; a gradient has its parameter's type (rerun "
                                  "infer_types)"));
      }
    }
  }

  void CheckSignature(FunctionId f, const Function& fn, const Signature& sig) {
    const Where here{f, BlockId()};
    if (sig.params.size() != fn.params.size() ||
        sig.results.size() != fn.results.size()) {
      Report(here, absl::StrCat(
                       "the signature declares ", sig.params.size(),
                       " parameters and ", sig.results.size(),
                       " results, but the function has ", fn.params.size(),
                       " and ", fn.results.size(), AtLoc(fn.loc),
                       "; make the signature match the function"));
      return;
    }
    if (!Typed()) return;
    auto compare = [&](std::span<const VarId> vars,
                       std::span<const TensorType> declared,
                       const std::string& what) {
      for (size_t i = 0; i < vars.size(); ++i) {
        const TensorType* t = TypeOf(vars[i]);
        if (t != nullptr && *t != declared[i]) {
          Report(here, absl::StrCat(what, " ", i, " ", VarDesc(vars[i]),
                                    " has type ", t->ToString(),
                                    ", but the signature declares ",
                                    declared[i].ToString(), AtLoc(fn.loc),
                                    "; fix the signature or the body"));
        }
      }
    };
    compare(fn.params, sig.params, "parameter");
    compare(fn.results, sig.results, "result");
  }

  // --- S1: the stages a control op may appear at (ir/control_ops.def) ----------
  // `detail` follows the op's name in the error ("CallOp to 'f'").
  void CheckStage(Where w, ControlOp kind, std::string_view detail, const SourceLoc& loc) {
    if (AllowedAt(kind, p_.stage)) return;
    const ControlOpInfo& info = Info(kind);
    const std::string stage =
        Lowered() ? std::string(" in a lowered program")
                  : absl::StrCat(" in an unlowered (", std::string(StageName(p_.stage)),
                                 ") program");
    Report(w, absl::StrCat(std::string(info.type_name), std::string(detail), stage,
                           AtLoc(loc), "; ", std::string(info.misplaced)));
  }

  // --- O1-O4, S1, T2, T4 --------------------------------------------------------
  void CheckOp(Where w, const Op& op) {
    std::visit(Overloaded{
                   [&](const PrimOp& o) { CheckPrimOp(w, o); },
                   [&](const CallOp& o) { CheckCallOp(w, o); },
                   [&](const PopOp& o) {
                     CheckStage(w, KindOf(o), "", o.loc);
                     for (size_t i = 0; i < o.vars.size(); ++i) {
                       CheckVarRef(w, o.vars[i], absl::StrCat("popped variable ", i),
                                   o.loc, /*allow_callee_vars=*/true);
                     }
                   },
                   [&](const TapePushOp& o) {
                     CheckStage(w, KindOf(o), "", o.loc);
                     CheckTapeOp(w, KindOf(o), o.tape, o.value, "value", o.loc);
                   },
                   [&](const TapePopOp& o) {
                     CheckStage(w, KindOf(o), "", o.loc);
                     CheckTapeOp(w, KindOf(o), o.tape, o.result, "result", o.loc);
                   },
               },
               op);
  }

  void CheckPrimOp(Where w, const PrimOp& op) {
    bool ok = true;
    const std::string name =
        op.prim == Primitive::kUserKernel
            ? absl::StrCat("kernel '", op.attrs.kernel, "'")
            : std::string(PrimitiveName(op.prim));
    auto arity = [&](const std::string& what, size_t want, size_t have) {
      if (want == have) return;
      Report(w, absl::StrCat(name, " takes ", want, " ", what,
                             want == 1 ? "" : "s", ", got ", have, AtLoc(op.loc)));
      ok = false;
    };
    if (op.prim == Primitive::kUserKernel) {
      // O2
      auto it = m_.kernels.find(op.attrs.kernel);
      if (op.attrs.kernel.empty()) {
        Report(w, absl::StrCat("user-kernel op without a kernel name", AtLoc(op.loc),
                               "; set attrs.kernel to a declared kernel"));
        ok = false;
      } else if (it == m_.kernels.end()) {
        Report(w, absl::StrCat(name, " is not declared in Module::kernels",
                               AtLoc(op.loc),
                               "; register the kernel so its signature is "
                               "recorded in the module"));
        ok = false;
      } else {
        arity("input", it->second.inputs.size(), op.inputs.size());
        arity("output", it->second.outputs.size(), op.outputs.size());
      }
    } else {
      // O1
      const int want = Info(op.prim).num_inputs;
      if (want >= 0) {
        arity("input", static_cast<size_t>(want), op.inputs.size());
      } else if (op.inputs.empty()) {
        Report(w, absl::StrCat(name, " takes one or more inputs, got none",
                               AtLoc(op.loc)));
        ok = false;
      }
      arity("output", 1, op.outputs.size());
    }
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      ok &= CheckVarRef(w, op.inputs[i], absl::StrCat("input ", i), op.loc,
                        /*allow_callee_vars=*/true, /*reads_program_inputs=*/true);
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      ok &= CheckVarRef(w, op.outputs[i], absl::StrCat("output ", i), op.loc,
                        /*allow_callee_vars=*/true);
    }
    CheckDistinct(w, op.outputs, "outputs", op.loc);
    if (!Typed() || !ok) return;

    // T2
    std::vector<TensorType> in;
    for (VarId v : op.inputs) {
      const TensorType* t = TypeOf(v);
      if (t == nullptr) return;  // reported by T1 / V3
      in.push_back(*t);
    }
    for (VarId v : op.outputs) {
      if (TypeOf(v) == nullptr) return;
    }
    absl::StatusOr<std::vector<TensorType>> out =
        InferPrimitiveType(op, in, m_.kernels);
    if (!out.ok()) {
      Report(w, std::string(out.status().message()));
      return;
    }
    for (size_t i = 0; i < op.outputs.size() && i < out->size(); ++i) {
      const TensorType& have = *TypeOf(op.outputs[i]);
      if (have != (*out)[i]) {
        Report(w, absl::StrCat("output ", i, " ", VarDesc(op.outputs[i]),
                               " has type ", have.ToString(), ", but ", name,
                               " gives ", (*out)[i].ToString(), AtLoc(op.loc),
                               "; fix the variable's type (rerun infer_types)"));
      }
    }
  }

  void CheckCallOp(Where w, const CallOp& op) {
    CheckStage(w, KindOf(op), absl::StrCat(" to ", FunctionDesc(op.callee)), op.loc);
    bool ok = CheckFunctionRef(w, op.callee, "callee", op.loc);
    for (size_t i = 0; i < op.args.size(); ++i) {
      ok &= CheckVarRef(w, op.args[i], absl::StrCat("argument ", i), op.loc,
                        /*allow_callee_vars=*/true);
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      ok &= CheckVarRef(w, op.results[i], absl::StrCat("result ", i), op.loc,
                        /*allow_callee_vars=*/true);
    }
    CheckDistinct(w, op.results, "results", op.loc);
    if (!ValidFunction(op.callee)) return;
    const Function& callee = m_.function(op.callee);
    // O4
    if (op.args.size() != callee.params.size() ||
        op.results.size() != callee.results.size()) {
      Report(w, absl::StrCat("call to '", callee.name, "' passes ", op.args.size(),
                             " arguments and receives ", op.results.size(),
                             " results, but '", callee.name, "' has ",
                             callee.params.size(), " parameters and ",
                             callee.results.size(), " results", AtLoc(op.loc)));
      return;
    }
    if (!Typed() || !ok) return;
    // T4
    auto compare = [&](std::span<const VarId> mine, std::span<const VarId> theirs,
                       const std::string& what, const std::string& their_what) {
      for (size_t i = 0; i < mine.size(); ++i) {
        const TensorType* a = TypeOf(mine[i]);
        const TensorType* b = TypeOf(theirs[i]);
        if (a != nullptr && b != nullptr && *a != *b) {
          Report(w, absl::StrCat(what, " ", i, " ", VarDesc(mine[i]),
                                 " has type ", a->ToString(), ", but ",
                                 their_what, " ", i, " ", VarDesc(theirs[i]),
                                 " of '", callee.name, "' has type ",
                                 b->ToString(), AtLoc(op.loc),
                                 "; cast the value or fix the types"));
        }
      }
    };
    compare(op.args, callee.params, "argument", "parameter");
    compare(op.results, callee.results, "result", "result");
  }

  // --- R1-R4, S1, T3 for terminators ----------------------------------------------
  void CheckTerminator(Where w, const Function& fn, const Block& block) {
    CheckStage(w, KindOf(block.terminator), "", block.loc);
    std::visit(
        Overloaded{
            [&](const Branch& t) {
              if (CheckVarRef(w, t.cond, "branch condition", block.loc,
                              /*allow_callee_vars=*/true) &&
                  Typed()) {
                const TensorType* type = TypeOf(t.cond);
                if (type != nullptr && *type != Scalar(DType::kBool)) {
                  Report(w, absl::StrCat(
                                "branch condition ", VarDesc(t.cond),
                                " has type ", type->ToString(), AtLoc(block.loc),
                                "; it must be a bool scalar (compare it, "
                                "e.g. ne with 0)"));
                }
              }
              CheckBlockRef(w, fn, t.then_block, "then target");
              CheckBlockRef(w, fn, t.else_block, "else target");
            },
            [&](const Goto& t) { CheckBlockRef(w, fn, t.target, "goto target"); },
            [](const Return&) {},
            [&](const PushGoto& t) {
              CheckFunctionRef(w, t.callee, "PushGoto callee", block.loc);
              CheckBlockRef(w, fn, t.return_to, "return_to block");
            },
            [](const IndirectGoto&) {},
            [](const Halt&) {},
        },
        block.terminator);
  }

  // --- A1, A2 -----------------------------------------------------------------
  void CheckParamStorage(FunctionId f, const Function& fn) {
    const Where here{f, BlockId()};
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const StorageClass s = m_.var(fn.params[i]).storage;
      if (s == StorageClass::kTemporary) {
        Report(here, absl::StrCat("parameter ", i, " ", VarDesc(fn.params[i]),
                                  " is temp, but the caller writes parameters "
                                  "outside this function's blocks; make it "
                                  "register or full (rerun allocate_variables)"));
      }
    }
    for (size_t i = 0; i < fn.results.size(); ++i) {
      const StorageClass s = m_.var(fn.results[i]).storage;
      if (s == StorageClass::kTemporary || s == StorageClass::kNull) {
        Report(here, absl::StrCat("result ", i, " ", VarDesc(fn.results[i]), " is ",
                                  Storage(s),
                                  ", but results are read by the caller (or are "
                                  "the program's outputs); make it register or "
                                  "full (rerun allocate_variables)"));
      }
    }
  }

  // --- A3, A4, A5 (and A6 for temps, which never leave their block) ----------
  void CheckBlockStorage(FunctionId f, BlockId b) {
    const Block& block = m_.function(f).blocks[b.value];
    std::map<int32_t, int> last_temp_write;         // temp -> op index
    std::vector<std::pair<int, FunctionId>> calls;  // CallOps seen so far
    std::set<std::pair<int32_t, int>> reported;     // (temp, call) pairs
    auto check_read = [&](Where w, const Use& use, const SourceLoc& loc) {
      if (!ValidVar(use.var)) return;
      const Variable& var = m_.var(use.var);
      if (var.storage == StorageClass::kNull) {
        Report(w, absl::StrCat(use.role, " ", VarDesc(use.var),
                               " is read, but its storage class is null (never "
                               "read)", AtLoc(loc),
                               "; make it register or full (rerun "
                               "allocate_variables)"));
        return;
      }
      if (var.storage != StorageClass::kTemporary) return;
      auto write = last_temp_write.find(use.var.value);
      if (write == last_temp_write.end()) {
        Report(w, absl::StrCat(use.role, " ", VarDesc(use.var),
                               " is a temp read before any write to it in this "
                               "block", AtLoc(loc),
                               "; a temp lives only from a write to later reads "
                               "in the same block (make it register or full)"));
        return;
      }
      for (const auto& [k, callee] : calls) {
        if (k <= write->second || !ValidFunction(var.function) ||
            !reaches_[callee.value][var.function.value] ||
            !reported.emplace(use.var.value, k).second) {
          continue;
        }
        Report({f, b, k}, LiveAcrossMessage(use.var, callee,
                                            LocOf(block.ops[k])));
      }
    };
    for (size_t k = 0; k < block.ops.size(); ++k) {
      const Op& op = block.ops[k];
      const Where w{f, b, static_cast<int>(k)};
      for (const Use& use : NamedReads(op)) check_read(w, use, LocOf(op));
      if (const auto* pop = std::get_if<PopOp>(&op)) {
        for (VarId v : pop->vars) {
          if (!ValidVar(v)) continue;
          const StorageClass s = m_.var(v).storage;
          if (s != StorageClass::kFull) {
            Report(w, absl::StrCat("PopOp pops ", VarDesc(v),
                                   ", whose storage class is ", Storage(s),
                                   AtLoc(pop->loc),
                                   "; only full variables have a stack to pop "
                                   "(make it full or drop the pop)"));
          }
        }
      }
      if (const auto* call = std::get_if<CallOp>(&op)) {
        if (ValidFunction(call->callee)) {
          calls.emplace_back(static_cast<int>(k), call->callee);
        }
      }
      for (VarId v : OpWrites(op)) {
        if (ValidVar(v) && m_.var(v).storage == StorageClass::kTemporary) {
          last_temp_write[v.value] = static_cast<int>(k);
        }
      }
    }
    if (const auto* branch = std::get_if<Branch>(&block.terminator)) {
      check_read({f, b, -1}, {branch->cond, "branch condition"}, block.loc);
    }
  }

  // Whether a call to `callee` may overwrite v: a function it can run writes v.
  bool MayWrite(FunctionId callee, VarId v) const {
    for (size_t f = 0; f < writes_.size(); ++f) {
      if (reaches_[callee.value][f] && writes_[f].count(v.value) > 0) return true;
    }
    return false;
  }

  std::string LiveAcrossMessage(VarId v, FunctionId callee,
                                const SourceLoc& loc) const {
    const Variable& var = m_.var(v);
    return absl::StrCat(Storage(var.storage), " variable ", VarDesc(v),
                        " is live across the call to ", FunctionDesc(callee),
                        ", which may re-enter ", FunctionDesc(var.function),
                        " and overwrite it", AtLoc(loc),
                        "; make it full (rerun allocate_variables)");
  }

  // --- A6 ---------------------------------------------------------------------
  // Only called when every index in the function is valid (no R1-R4 error).
  void CheckLiveAcrossCalls(FunctionId f) {
    const Function& fn = m_.function(f);
    const std::vector<VarId> no_vars;
    const std::vector<VarId>& entry_results =
        ValidFunction(p_.entry) ? m_.function(p_.entry).results : no_vars;
    for (VarId v : entry_results) {
      if (!ValidVar(v)) return;
    }
    using VarSet = std::set<int32_t>;
    auto add = [](VarSet& s, std::span<const VarId> vars) {
      for (VarId v : vars) s.insert(v.value);
    };
    auto remove = [](VarSet& s, std::span<const VarId> vars) {
      for (VarId v : vars) s.erase(v.value);
    };
    const size_t n = fn.blocks.size();
    std::vector<VarSet> live_in(n);

    // Live after the terminator (before its own reads).
    auto live_out = [&](const Block& block) {
      VarSet out;
      for (BlockId s : Successors(block.terminator)) {
        out.insert(live_in[s.value].begin(), live_in[s.value].end());
      }
      if (const auto* push = std::get_if<PushGoto>(&block.terminator)) {
        const Function& callee = m_.function(push->callee);
        remove(out, callee.results);
        add(out, callee.params);
      }
      return out;
    };
    auto terminator_reads = [&](const Terminator& t, VarSet& live) {
      std::visit(Overloaded{
                     [&](const Branch& b) { live.insert(b.cond.value); },
                     [](const Goto&) {},
                     [&](const Return&) { add(live, fn.results); },
                     [](const PushGoto&) {},
                     [&](const IndirectGoto&) { add(live, fn.results); },
                     [&](const Halt&) { add(live, entry_results); },
                 },
                 t);
    };
    auto step_back = [&](const Op& op, VarSet& live) {
      remove(live, OpWrites(op));
      add(live, OpReads(op));
    };

    for (bool changed = true; changed;) {
      changed = false;
      for (size_t b = n; b-- > 0;) {
        const Block& block = fn.blocks[b];
        VarSet live = live_out(block);
        terminator_reads(block.terminator, live);
        for (size_t k = block.ops.size(); k-- > 0;) step_back(block.ops[k], live);
        if (live != live_in[b]) {
          live_in[b] = std::move(live);
          changed = true;
        }
      }
    }

    // Temporaries are handled by CheckBlockStorage: one live across a call
    // is written and read in the same block.
    auto report = [&](Where w, const VarSet& across, FunctionId callee,
                      const SourceLoc& loc) {
      for (int32_t id : across) {
        const VarId v(id);
        if (!ValidVar(v)) continue;  // a callee's broken param, reported there
        const Variable& var = m_.var(v);
        if (var.storage != StorageClass::kRegister || !MayWrite(callee, v)) continue;
        Report(w, LiveAcrossMessage(v, callee, loc));
      }
    };
    for (size_t b = 0; b < n; ++b) {
      const BlockId bid(static_cast<int32_t>(b));
      const Block& block = fn.blocks[b];
      if (const auto* push = std::get_if<PushGoto>(&block.terminator)) {
        VarSet across = live_in[push->return_to.value];
        remove(across, m_.function(push->callee).results);
        report({f, bid, -1}, across, push->callee, block.loc);
      }
      VarSet live = live_out(block);
      terminator_reads(block.terminator, live);
      for (size_t k = block.ops.size(); k-- > 0;) {
        const Op& op = block.ops[k];
        if (const auto* call = std::get_if<CallOp>(&op)) {
          VarSet across = live;
          remove(across, call->results);
          report({f, bid, static_cast<int>(k)}, across, call->callee, call->loc);
        }
        step_back(op, live);
      }
    }
  }

  // --- U1-U5 ------------------------------------------------------------------
  void CheckUniform() {
    std::vector<int32_t> uniform;
    for (size_t i = 0; i < m_.variables.size(); ++i) {
      if (m_.variables[i].uniform) uniform.push_back(static_cast<int32_t>(i));
    }
    if (uniform.empty()) return;
    const bool entry_ok = ValidFunction(p_.entry);
    std::set<int32_t> entry_params;
    std::vector<bool> once;
    if (entry_ok) {
      const Function& entry = m_.function(p_.entry);
      for (VarId v : entry.params) entry_params.insert(v.value);
      once = BlocksRunOncePerLane(entry);
      for (size_t k = 0; k < entry.results.size(); ++k) {
        if (ValidVar(entry.results[k]) && m_.var(entry.results[k]).uniform) {
          Report({p_.entry, BlockId()},
                 absl::StrCat("result ", k, " ", VarDesc(entry.results[k]),
                              " is uniform, but the program's outputs are per lane (U4); "
                              "copy it into a varying variable and return that"));
        }
      }
    }
    auto why = [&](int32_t v) {
      return entry_params.contains(v) ? std::string(" (a uniform input)")
                                      : std::string(" (a uniform value)");
    };
    // U1, U5
    for (int32_t v : uniform) {
      const Variable& var = m_.variables[v];
      const VarId id(v);
      if (entry_ok && var.function != p_.entry) {
        Report({var.function, BlockId()},
               absl::StrCat("variable ", VarDesc(id), " is uniform but belongs to ",
                            FunctionDesc(var.function), ", not the entry ",
                            FunctionDesc(p_.entry),
                            " (U1); only the entry's inputs and values computed from them "
                            "once per call are uniform: drop the flag"));
      }
      if (Allocated() && var.storage != StorageClass::kRegister &&
          var.storage != StorageClass::kNull) {
        Report({var.function, BlockId()},
               absl::StrCat("uniform variable ", VarDesc(id), " has storage class ",
                            Storage(var.storage),
                            "; a uniform value is stored once, so it is register or null "
                            "(U5; allocate_variables chooses so)"));
      }
    }
    // U2-U4, op by op.
    std::map<int32_t, int> writes;
    for (size_t f = 0; f < m_.functions.size(); ++f) {
      const FunctionId fid(static_cast<int32_t>(f));
      const Function& fn = m_.functions[f];
      for (size_t b = 0; b < fn.blocks.size(); ++b) {
        const BlockId bid(static_cast<int32_t>(b));
        const Block& block = fn.blocks[b];
        for (size_t k = 0; k < block.ops.size(); ++k) {
          const Op& op = block.ops[k];
          const Where here{fid, bid, static_cast<int>(k)};
          const std::string at = AtLoc(LocOf(op));
          if (const auto* call = std::get_if<CallOp>(&op)) {
            for (size_t i = 0; i < call->args.size(); ++i) {
              if (ValidVar(call->args[i]) && m_.var(call->args[i]).uniform) {
                Report(here, absl::StrCat("argument ", i, " ", VarDesc(call->args[i]),
                                          why(call->args[i].value),
                                          " is passed to a call", at,
                                          "; uniform values are never call arguments (U4): "
                                          "copy it into a varying variable first"));
              }
            }
            CheckCalleeHasNoUniformParams(here, call->callee, at);
          }
          for (VarId w : OpWrites(op)) {
            if (!ValidVar(w) || !m_.var(w).uniform) continue;
            ++writes[w.value];
            const auto* prim = std::get_if<PrimOp>(&op);
            if (entry_params.contains(w.value)) {
              Report(here, absl::StrCat("writes uniform input ", VarDesc(w), at,
                                        "; inputs marked uniform are read-only (U2): write "
                                        "a new variable instead"));
              continue;
            }
            if (prim == nullptr || !MayComputeUniform(*prim)) {
              Report(here, absl::StrCat(
                               "writes uniform variable ", VarDesc(w), at,
                               " by ", prim == nullptr ? "a call or pop" : "a user kernel or a "
                               "primitive without inputs",
                               "; a uniform value is computed by a built-in primitive from "
                               "uniform inputs (U3): drop the flag"));
              continue;
            }
            for (size_t i = 0; i < prim->inputs.size(); ++i) {
              if (ValidVar(prim->inputs[i]) && !m_.var(prim->inputs[i]).uniform) {
                Report(here, absl::StrCat(
                                 "writes uniform variable ", VarDesc(w), " from input ", i, " ",
                                 VarDesc(prim->inputs[i]), ", which is varying", at,
                                 "; a uniform value is computed from uniform values only (U3): "
                                 "drop the flag, or mark the input uniform"));
              }
            }
            if (entry_ok && fid == p_.entry && b < once.size() && !once[b]) {
              Report(here, absl::StrCat(
                               "writes uniform variable ", VarDesc(w), at,
                               " in a block that a lane may run several times or not at "
                               "all (a loop or a per-lane branch); uniform values are "
                               "computed where every lane passes exactly once (U3): move "
                               "the op before the loop or branch, or drop the flag"));
            }
          }
        }
        if (const auto* branch = std::get_if<Branch>(&block.terminator)) {
          if (ValidVar(branch->cond) && m_.var(branch->cond).uniform) {
            Report({fid, bid, -1},
                   absl::StrCat("branches on uniform variable ", VarDesc(branch->cond),
                                "; a branch condition is per lane (U4): copy it into a "
                                "varying variable first"));
          }
        }
        if (const auto* push = std::get_if<PushGoto>(&block.terminator)) {
          CheckCalleeHasNoUniformParams({fid, bid, -1}, push->callee, "");
        }
      }
    }
    for (int32_t v : uniform) {
      if (entry_params.contains(v)) continue;
      const Variable& var = m_.variables[v];
      const int n = writes.contains(v) ? writes[v] : 0;
      if (n != 1) {
        Report({var.function, BlockId()},
               absl::StrCat("uniform variable ", VarDesc(VarId(v)), " is written by ", n,
                            " ops; a uniform value that is not an input of the entry is "
                            "written exactly once (U3): drop the flag, or mark it on an "
                            "entry parameter"));
      }
    }
  }

  // R2's exception: a uniform parameter of the entry (a program-wide input).
  bool IsProgramInput(VarId v) const {
    if (!ValidVar(v) || !m_.var(v).uniform || !ValidFunction(p_.entry)) return false;
    const std::vector<VarId>& params = m_.function(p_.entry).params;
    return std::find(params.begin(), params.end(), v) != params.end();
  }

  void CheckCalleeHasNoUniformParams(Where here, FunctionId callee, const std::string& at) {
    if (!ValidFunction(callee)) return;
    for (VarId p : m_.function(callee).params) {
      if (ValidVar(p) && m_.var(p).uniform) {
        Report(here, absl::StrCat("calls ", FunctionDesc(callee), at, ", whose parameter ",
                                  VarDesc(p), " is uniform; uniform inputs are given once "
                                  "per call of the program, so nothing calls a function "
                                  "with uniform parameters (U4)"));
        return;
      }
    }
  }

  const Program& p_;
  const Module& m_;
  std::vector<VerifierError> errors_;
  std::vector<std::set<int32_t>> callees_;   // by function index
  std::vector<std::vector<bool>> reaches_;   // [callee][function]; allocated programs only
  std::vector<std::vector<int32_t>> tapes_of_;  // per function: its tapes' variable ids
  std::vector<std::set<int32_t>> writes_;    // by function: variables it writes
  std::vector<bool> is_tape_;                // by variable: a tape op's tape
  std::vector<bool> tape_pushed_;            // by variable: some tape_push names it
  std::vector<bool> tape_popped_;            // by variable: some tape_pop names it
  // Per function being checked:
  bool broken_ = false;                      // an R1-R4 error was found
  std::set<int32_t> callee_vars_;            // params/results of its callees
};

}  // namespace

std::vector<VerifierError> CollectVerifierErrors(const Program& program) {
  return Verifier(program).Run();
}

absl::Status VerifyProgram(const Program& program) {
  std::vector<VerifierError> errors = CollectVerifierErrors(program);
  if (errors.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  lines.reserve(errors.size());
  for (const VerifierError& e : errors) lines.push_back(e.ToString());
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace autobatch
