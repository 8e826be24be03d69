// infer_types: gives every variable its TensorType from the input types.
#include "passes/infer_types.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/overloaded.h"
#include "support/status.h"
#include "ir/type_rules.h"
#include "passes/analysis/call_graph.h"
#include "passes/registry.h"

namespace autobatch {
namespace {

std::string BlockName(const Block& block, size_t index) {
  if (block.label.empty()) return absl::StrCat("^", index);
  return absl::StrCat("^", index, " (", block.label, ")");
}

// Why a variable has the type it has, for error messages.
struct Origin {
  enum Kind {
    kInput, kSignature, kDeclared, kOp, kCallArg, kCallResult, kGradient, kTapePush, kTapePop
  };
  Kind kind;
  std::string text;  // e.g. "assigned by sub at fib.cc:11"
};

// A place where a variable gets its value, and the variable it then depends
// on; used to explain variables left untyped.
struct Writer {
  enum Kind { kPrim, kCallResult, kParam, kGradient, kTapePush, kTapePop };
  Kind kind;
  FunctionId function;  // where the writing op is (kGradient: the stub)
  SourceLoc loc;
  const PrimOp* prim = nullptr;  // kPrim
  // kCallResult: callee result; kParam: the arg; kGradient: the stub's or
  // primal's variable whose type it shares; kTapePush (a tape's writer): the
  // pushed value; kTapePop (the result's writer): the tape.
  VarId from;
  FunctionId callee;             // kCallResult, kParam
};

// A variable of a gradient stub and the primal's variable of the same type
// (ir/ir.h GradientOf), with how messages name each.
struct GradientLink {
  VarId stub_var;
  VarId primal_var;
  std::string stub_role;    // "parameter 0", "result 0", "result 1"
  std::string primal_role;  // "parameter 0", "result 0"
};

class TypeInference {
 public:
  TypeInference(Program& program, Deadline deadline)
      : p_(program),
        m_(program.module),
        deadline_(deadline),
        types_(m_.variables.size()),
        origins_(m_.variables.size()) {}

  absl::Status Run(std::span<const TensorType> input_types) {
    for (const Function& fn : m_.functions) {
      for (const Block& block : fn.blocks) {
        for (const Op& op : block.ops) {
          if (std::optional<VarId> tape = TapeOf(op)) tapes_.insert(tape->value);
        }
      }
    }
    FindDependents();
    AB_RETURN_IF_ERROR(Seed(input_types));
    // Sweeps in function order until nothing changes, skipping a function
    // none of whose inputs got a type since its last sweep (it would change
    // nothing): a chain of n calls takes n sweeps for its results to flow
    // back to the entry, each of one function instead of all n. A function
    // marked during a sweep is swept later in the same round if it comes
    // after the one being swept, else in the next round, as sweeping every
    // function in every round would.
    for (size_t f = 0; f < m_.functions.size(); ++f) round_.insert(static_cast<int32_t>(f));
    while (!round_.empty()) {
      for (auto it = round_.begin(); it != round_.end(); it = round_.erase(it)) {
        current_ = *it;
        bool changed = false;
        AB_RETURN_IF_ERROR(Sweep(FunctionId(current_), changed));
        AB_RETURN_IF_ERROR(SweepGradient(FunctionId(current_), changed));
      }
      round_.swap(next_round_);
    }
    AB_RETURN_IF_ERROR(ExplainUntyped());
    AB_RETURN_IF_ERROR(CheckGradients());
    AB_RETURN_IF_ERROR(CheckBranches());
    AB_RETURN_IF_ERROR(CheckSignatures());
    for (size_t v = 0; v < m_.variables.size(); ++v) m_.variables[v].type = types_[v];
    p_.stage = Stage::kTyped;
    return absl::OkStatus();
  }

 private:
  const Variable& V(VarId v) const { return m_.var(v); }
  const Function& F(FunctionId f) const { return m_.function(f); }
  const std::string& FName(VarId v) const { return F(V(v).function).name; }

  bool IsParam(VarId v) const {
    const Function& fn = F(V(v).function);
    return std::find(fn.params.begin(), fn.params.end(), v) != fn.params.end();
  }
  bool IsResult(VarId v) const {
    const Function& fn = F(V(v).function);
    return std::find(fn.results.begin(), fn.results.end(), v) != fn.results.end();
  }
  bool IsTape(VarId v) const { return tapes_.count(v.value) != 0; }

  // Who reads a function's variables' types besides itself: the callers of
  // its results, and the gradient stubs linked to it (either way).
  void FindDependents() {
    const size_t n = m_.functions.size();
    dependents_.assign(n, {});
    for (size_t f = 0; f < n; ++f) {
      const Function& fn = m_.functions[f];
      for (const Block& block : fn.blocks) {
        for (const Op& op : block.ops) {
          if (const auto* call = std::get_if<CallOp>(&op)) {
            dependents_[call->callee.value].push_back(static_cast<int32_t>(f));
          }
        }
      }
      if (fn.gradient_of) {
        dependents_[fn.gradient_of->function.value].push_back(static_cast<int32_t>(f));
        dependents_[f].push_back(fn.gradient_of->function.value);
      }
    }
  }

  // v got its type: its function and the functions that read its types
  // are swept again.
  void MarkReaders(VarId v) {
    if (current_ < 0) return;  // seeding: every function is swept anyway
    const int32_t f = V(v).function.value;
    Mark(f);
    for (int32_t g : dependents_[f]) Mark(g);
  }
  void Mark(int32_t f) { (f > current_ ? round_ : next_round_).insert(f); }
  std::string KindOf(VarId v) const {
    if (IsParam(v)) return "parameter";
    if (IsResult(v)) return "result";
    if (IsTape(v)) return "tape";
    return "variable";
  }

  // Gives `v` type `t`, or reports the clash with the type it already has.
  absl::Status Assign(VarId v, const TensorType& t, Origin why, bool& changed) {
    std::optional<TensorType>& have = types_.at(v.value);
    if (!have) {
      have = t;
      origins_[v.value] = std::move(why);
      changed = true;
      MarkReaders(v);
      return absl::OkStatus();
    }
    if (*have == t) return absl::OkStatus();
    const Origin& before = *origins_[v.value];
    std::string advice;
    if (why.kind == Origin::kGradient || before.kind == Origin::kGradient) {
      advice = absl::StrCat(
          "a gradient takes its primal's parameter types, returns the primal's "
          "value first and each gradient with its parameter's type; call both "
          "with the same types (or cast)");
    } else if (why.kind == Origin::kTapePush && before.kind == Origin::kTapePush) {
      advice = "every value pushed on a tape has the tape's one type; cast the value "
               "(cast primitive) or push it on another tape";
    } else if (why.kind == Origin::kCallArg || before.kind == Origin::kCallArg) {
      advice = absl::StrCat(
          "a function is typed once, so every call must pass the same types; "
          "cast the argument (cast primitive) or call a separate function");
    } else if (why.kind == Origin::kSignature || before.kind == Origin::kSignature ||
               why.kind == Origin::kInput || before.kind == Origin::kInput) {
      advice = "make the declared types and the values agree (or cast the value)";
    } else {
      advice = absl::StrCat(
          "a variable has one type on every path; cast one of the values "
          "(cast primitive) or use two variables");
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "type mismatch in function '", FName(v), "': ", KindOf(v), " '", V(v).name,
        "' is ", have->ToString(), " (", before.text, ") but ", t.ToString(), " (",
        why.text, "); ", advice));
  }

  absl::Status Seed(std::span<const TensorType> input_types) {
    bool changed = false;
    for (size_t v = 0; v < m_.variables.size(); ++v) {
      if (m_.variables[v].type) {
        AB_RETURN_IF_ERROR(Assign(VarId(static_cast<int32_t>(v)), *m_.variables[v].type,
                                  {Origin::kDeclared, "its declared type"}, changed));
      }
    }
    const Function& entry = F(p_.entry);
    if (input_types.size() != entry.params.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the entry function '", entry.name, "' takes ", entry.params.size(),
          " input(s) but ", input_types.size(),
          " input type(s) were given; pass one TensorType per parameter"));
    }
    for (size_t i = 0; i < input_types.size(); ++i) {
      AB_RETURN_IF_ERROR(Assign(entry.params[i], input_types[i],
                                {Origin::kInput, absl::StrCat("program input ", i)},
                                changed));
    }
    for (const Function& fn : m_.functions) {
      if (!fn.signature) continue;
      const Signature& sig = *fn.signature;
      if (sig.params.size() != fn.params.size() ||
          sig.results.size() != fn.results.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the signature of function '", fn.name, "' (", fn.loc.ToString(),
            ") declares ", sig.params.size(), " params and ", sig.results.size(),
            " results, but the function has ", fn.params.size(), " and ",
            fn.results.size(), "; fix the signature"));
      }
      const std::string text =
          absl::StrCat("declared by the signature of '", fn.name, "' at ", fn.loc.ToString());
      for (size_t i = 0; i < sig.params.size(); ++i) {
        AB_RETURN_IF_ERROR(
            Assign(fn.params[i], sig.params[i], {Origin::kSignature, text}, changed));
      }
      for (size_t i = 0; i < sig.results.size(); ++i) {
        AB_RETURN_IF_ERROR(
            Assign(fn.results[i], sig.results[i], {Origin::kSignature, text}, changed));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Sweep(FunctionId f, bool& changed) {
    const Function& fn = F(f);
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const Block& block = fn.blocks[b];
      for (const Op& op : block.ops) {
        if (deadline_.Charge(kPassOpWork)) return PassOutOfTime("infer_types");
        AB_RETURN_IF_ERROR(std::visit(
            Overloaded{
                [&](const PrimOp& o) { return SweepPrim(fn, b, o, changed); },
                [&](const CallOp& o) { return SweepCall(fn, o, changed); },
                [](const PopOp&) { return absl::OkStatus(); },
                [&](const TapePushOp& o) { return SweepTapePush(o, changed); },
                [&](const TapePopOp& o) { return SweepTapePop(o, changed); },
            },
            op));
      }
    }
    return absl::OkStatus();
  }

  absl::Status SweepPrim(const Function& fn, size_t b, const PrimOp& op, bool& changed) {
    std::vector<TensorType> inputs;
    for (VarId v : op.inputs) {
      if (!types_[v.value]) return absl::OkStatus();  // not yet
      inputs.push_back(*types_[v.value]);
    }
    bool all_typed = true;
    for (VarId v : op.outputs) all_typed &= types_[v.value].has_value();
    if (all_typed && checked_.count(&op) != 0) return absl::OkStatus();
    checked_.insert(&op);
    absl::StatusOr<std::vector<TensorType>> outputs =
        InferPrimitiveType(op, inputs, m_.kernels);
    if (!outputs.ok()) {
      std::vector<std::string> operands;
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        operands.push_back(absl::StrCat("'", V(op.inputs[i]).name, "': ",
                                        inputs[i].ToString()));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "type error in function '", fn.name, "', block ", BlockName(fn.blocks[b], b),
          ": ", std::string(outputs.status().message()), " (operands ",
          absl::StrJoin(operands, ", "), ")"));
    }
    const std::string name = op.prim == Primitive::kUserKernel
                                 ? absl::StrCat("kernel '", op.attrs.kernel, "'")
                                 : std::string(PrimitiveName(op.prim));
    if (outputs->size() != op.outputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "type error in function '", fn.name, "', block ", BlockName(fn.blocks[b], b),
          ": ", name, " at ", op.loc.ToString(), " produces ", outputs->size(),
          " values but the op has ", op.outputs.size(), " outputs"));
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      AB_RETURN_IF_ERROR(Assign(
          op.outputs[i], (*outputs)[i],
          {Origin::kOp, absl::StrCat("assigned by ", name, " at ", op.loc.ToString())},
          changed));
    }
    return absl::OkStatus();
  }

  absl::Status SweepCall(const Function& caller, const CallOp& op, bool& changed) {
    const Function& callee = F(op.callee);
    AB_CHECK(op.args.size() == callee.params.size() &&
                 op.results.size() == callee.results.size(),
             "call arity is checked by the verifier (O4)");
    for (size_t i = 0; i < op.args.size(); ++i) {
      if (!types_[op.args[i].value]) continue;
      AB_RETURN_IF_ERROR(Assign(
          callee.params[i], *types_[op.args[i].value],
          {Origin::kCallArg,
           absl::StrCat("argument ", i, " '", V(op.args[i]).name, "' of the call from '",
                        caller.name, "' at ", op.loc.ToString())},
          changed));
    }
    for (size_t j = 0; j < op.results.size(); ++j) {
      if (!types_[callee.results[j].value]) continue;
      AB_RETURN_IF_ERROR(Assign(
          op.results[j], *types_[callee.results[j].value],
          {Origin::kCallResult,
           absl::StrCat("result ", j, " of the call to '", callee.name, "' at ",
                        op.loc.ToString())},
          changed));
    }
    return absl::OkStatus();
  }

  // The variables a gradient stub shares types with (none for other
  // functions). The verifier (G3-G5) guarantees the counts.
  std::vector<GradientLink> GradientLinks(const Function& stub) const {
    std::vector<GradientLink> links;
    if (!stub.gradient_of) return links;
    const Function& primal = F(stub.gradient_of->function);
    const std::vector<int32_t>& wrt = stub.gradient_of->wrt;
    AB_CHECK(stub.params.size() == primal.params.size() && primal.results.size() == 1 &&
                 stub.results.size() == 1 + wrt.size(),
             "gradient stub shapes are checked by the verifier (G5)");
    for (size_t i = 0; i < stub.params.size(); ++i) {
      links.push_back({stub.params[i], primal.params[i], absl::StrCat("parameter ", i),
                       absl::StrCat("parameter ", i)});
    }
    links.push_back({stub.results[0], primal.results[0], "result 0", "result 0"});
    for (size_t k = 0; k < wrt.size(); ++k) {
      links.push_back({stub.results[1 + k], primal.params[wrt[k]],
                       absl::StrCat("result ", 1 + k), absl::StrCat("parameter ", wrt[k])});
    }
    return links;
  }

  // Types flow both ways between a stub and its primal, so calling either
  // types the other.
  absl::Status SweepGradient(FunctionId f, bool& changed) {
    const Function& stub = F(f);
    for (const GradientLink& link : GradientLinks(stub)) {
      const std::string& primal = F(stub.gradient_of->function).name;
      if (const auto& t = types_[link.primal_var.value]) {
        AB_RETURN_IF_ERROR(Assign(
            link.stub_var, *t,
            {Origin::kGradient,
             absl::StrCat(link.primal_role, " '", V(link.primal_var).name, "' of '", primal,
                          "', of which '", stub.name, "' is the gradient")},
            changed));
      }
      if (const auto& t = types_[link.stub_var.value]) {
        AB_RETURN_IF_ERROR(Assign(
            link.primal_var, *t,
            {Origin::kGradient, absl::StrCat(link.stub_role, " '", V(link.stub_var).name,
                                             "' of its gradient '", stub.name, "'")},
            changed));
      }
    }
    return absl::OkStatus();
  }

  // Only an f64 scalar function can be differentiated, with respect to f64
  // parameters (what the verifier's G6 requires of a typed stub).
  absl::Status CheckGradients() const {
    for (const Function& stub : m_.functions) {
      if (!stub.gradient_of) continue;
      const Function& primal = F(stub.gradient_of->function);
      const std::string where =
          absl::StrCat("cannot differentiate function '", primal.name, "' (for its gradient '",
                       stub.name, "', registered at ", stub.loc.ToString(), "): ");
      const VarId result = primal.results[0];
      if (*types_[result.value] != Scalar(DType::kF64)) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "its result '", V(result).name, "' is ", types_[result.value]->ToString(),
            ", but only a function returning an f64 scalar has a gradient; cast the "
            "result to f64 (cast primitive) or reduce it to a scalar"));
      }
      for (int32_t i : stub.gradient_of->wrt) {
        const VarId param = primal.params[i];
        if (types_[param.value]->dtype != DType::kF64) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, "parameter ", i, " '", V(param).name, "' is ",
              types_[param.value]->ToString(),
              ", but gradients exist only with respect to f64 parameters; pass an f64 "
              "(and cast it inside '", primal.name, "') or leave it out of wrt"));
        }
      }
    }
    return absl::OkStatus();
  }

  // A tape has the type of the values pushed on it (all the same).
  absl::Status SweepTapePush(const TapePushOp& op, bool& changed) {
    if (!types_[op.value.value]) return absl::OkStatus();
    return Assign(op.tape, *types_[op.value.value],
                  {Origin::kTapePush, absl::StrCat("the type of '", V(op.value).name,
                                                   "', pushed at ", op.loc.ToString())},
                  changed);
  }

  // A tape_pop's result has the tape's type.
  absl::Status SweepTapePop(const TapePopOp& op, bool& changed) {
    if (!types_[op.tape.value]) return absl::OkStatus();
    return Assign(op.result, *types_[op.tape.value],
                  {Origin::kTapePop, absl::StrCat("popped from tape '", V(op.tape).name,
                                                  "' at ", op.loc.ToString())},
                  changed);
  }

  absl::Status CheckBranches() const {
    for (const Function& fn : m_.functions) {
      for (size_t b = 0; b < fn.blocks.size(); ++b) {
        const Block& block = fn.blocks[b];
        const auto* branch = std::get_if<Branch>(&block.terminator);
        if (branch == nullptr) continue;
        const TensorType& t = *types_[branch->cond.value];
        if (t != Scalar(DType::kBool)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "type error in function '", fn.name, "', block ", BlockName(block, b),
              ": the branch at ", block.loc.ToString(), " tests '", V(branch->cond).name,
              "', which is ", t.ToString(),
              ", but a condition must be a bool scalar; compare it (e.g. ne with 0)"));
        }
      }
    }
    return absl::OkStatus();
  }

  // Seeded signatures are already consistent (Assign checked them); this
  // catches nothing new but keeps the guarantee explicit and cheap.
  absl::Status CheckSignatures() const {
    for (const Function& fn : m_.functions) {
      if (!fn.signature) continue;
      for (size_t i = 0; i < fn.params.size(); ++i) {
        AB_CHECK(*types_[fn.params[i].value] == fn.signature->params[i]);
      }
      for (size_t i = 0; i < fn.results.size(); ++i) {
        AB_CHECK(*types_[fn.results[i].value] == fn.signature->results[i]);
      }
    }
    return absl::OkStatus();
  }

  // --- explaining variables left untyped -------------------------------------

  std::vector<std::vector<Writer>> CollectWriters() const {
    std::vector<std::vector<Writer>> writers(m_.variables.size());
    for (size_t f = 0; f < m_.functions.size(); ++f) {
      const FunctionId fid(static_cast<int32_t>(f));
      for (const Block& block : m_.functions[f].blocks) {
        for (const Op& op : block.ops) {
          std::visit(Overloaded{
                         [&](const PrimOp& prim) {
                           for (VarId v : prim.outputs) {
                             writers[v.value].push_back(
                                 {Writer::kPrim, fid, prim.loc, &prim, VarId(), {}});
                           }
                         },
                         [&](const CallOp& call) { AddCallWriters(writers, fid, call); },
                         [](const PopOp&) {},  // not in unlowered programs
                         [&](const TapePushOp& push) {
                           writers[push.tape.value].push_back(
                               {Writer::kTapePush, fid, push.loc, nullptr, push.value, {}});
                         },
                         [&](const TapePopOp& pop) {
                           writers[pop.result.value].push_back(
                               {Writer::kTapePop, fid, pop.loc, nullptr, pop.tape, {}});
                         },
                     },
                     op);
        }
      }
    }
    // Last, so that explanations follow real writes first.
    for (size_t f = 0; f < m_.functions.size(); ++f) {
      const FunctionId fid(static_cast<int32_t>(f));
      for (const GradientLink& link : GradientLinks(m_.functions[f])) {
        writers[link.stub_var.value].push_back(
            {Writer::kGradient, fid, m_.functions[f].loc, nullptr, link.primal_var, {}});
        writers[link.primal_var.value].push_back(
            {Writer::kGradient, fid, m_.functions[f].loc, nullptr, link.stub_var, {}});
      }
    }
    return writers;
  }

  // A call writes its results (from the callee's results) and the callee's
  // parameters (from its arguments).
  void AddCallWriters(std::vector<std::vector<Writer>>& writers, FunctionId fid,
                      const CallOp& call) const {
    const Function& callee = F(call.callee);
    for (size_t j = 0; j < call.results.size(); ++j) {
      writers[call.results[j].value].push_back(
          {Writer::kCallResult, fid, call.loc, nullptr, callee.results[j], call.callee});
    }
    for (size_t i = 0; i < call.args.size(); ++i) {
      writers[callee.params[i].value].push_back(
          {Writer::kParam, fid, call.loc, nullptr, call.args[i], call.callee});
    }
  }

  // The first op or branch reading `v`, for "read at ..." messages.
  SourceLoc FirstRead(VarId v) const {
    for (const Function& fn : m_.functions) {
      for (const Block& block : fn.blocks) {
        for (const Op& op : block.ops) {
          for (VarId r : OpReads(op)) {
            if (r == v) return LocOf(op);
          }
          if (TapeOf(op) == v) return LocOf(op);
        }
        const auto* branch = std::get_if<Branch>(&block.terminator);
        if (branch != nullptr && branch->cond == v) return block.loc;
      }
    }
    return {};
  }

  absl::Status ExplainUntyped() const {
    VarId start;
    for (size_t v = 0; v < types_.size(); ++v) {
      if (!types_[v]) {
        start = VarId(static_cast<int32_t>(v));
        break;
      }
    }
    if (!start.valid()) return absl::OkStatus();
    const std::vector<std::vector<Writer>> writers = CollectWriters();

    // Follow "v cannot be typed because it depends on w" until a variable
    // with no writer, or a cycle. Every writer of an untyped variable has an
    // untyped operand (otherwise the fixed point would have typed it), so
    // following the first writer's first untyped operand is always possible.
    std::vector<VarId> path;
    std::vector<const Writer*> via;  // via[i]: how path[i] depends on path[i+1]
    std::vector<int> position(m_.variables.size(), -1);
    VarId v = start;
    while (position[v.value] < 0) {
      position[v.value] = static_cast<int>(path.size());
      path.push_back(v);
      if (writers[v.value].empty()) {
        return NeverAssigned(start, v);
      }
      const Writer& w = writers[v.value].front();
      VarId next;
      if (w.kind == Writer::kPrim) {
        for (VarId in : w.prim->inputs) {
          if (!types_[in.value]) {
            next = in;
            break;
          }
        }
        AB_CHECK(next.valid(), "an op with typed inputs was typed by the fixed point");
      } else {
        next = w.from;
        AB_CHECK(!types_[next.value]);
      }
      via.push_back(&w);
      v = next;
    }
    // path[position[v]..] -> v is a cycle.
    const size_t first = static_cast<size_t>(position[v.value]);
    std::vector<std::string> chain;
    const Writer* recursive_call = nullptr;
    VarId recursive_result;
    for (size_t i = first; i < path.size(); ++i) {
      chain.push_back(absl::StrCat("'", V(path[i]).name, "' (", FName(path[i]), ")"));
      if (via[i]->kind == Writer::kCallResult && recursive_call == nullptr) {
        recursive_call = via[i];
        recursive_result = via[i]->from;
      }
    }
    chain.push_back(absl::StrCat("'", V(v).name, "'"));
    if (recursive_call != nullptr) {
      const Function& callee = F(recursive_call->callee);
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot infer the type of result '", V(recursive_result).name,
          "' of function '", callee.name, "': every path that assigns it depends on a "
          "recursive call (the call to '", callee.name, "' from '",
          F(recursive_call->function).name, "' at ", recursive_call->loc.ToString(),
          "; dependency cycle: ", absl::StrJoin(chain, " <- "),
          "), so no base case gives it a type; add a path that returns without "
          "recursing, or declare the function's signature"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot infer the type of variable '", V(v).name, "' in function '", FName(v),
        "': it is only ever computed from itself (", absl::StrJoin(chain, " <- "),
        ", at ", via[first]->loc.ToString(),
        "); give it an initial value on the way in (e.g. before the loop)"));
  }

  absl::Status NeverAssigned(VarId start, VarId root) const {
    std::string because;
    if (start != root) {
      because = absl::StrCat(", so the type of '", V(start).name, "' in function '",
                             FName(start), "' cannot be inferred either");
    }
    if (IsTape(root)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot infer the type of tape '", V(root).name, "' in function '", FName(root),
          "': it is popped (at ", FirstRead(root).ToString(), ") but nothing is ever pushed "
          "on it", because, "; push values on the tape before popping them"));
    }
    if (IsResult(root)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot infer the type of result '", V(root).name, "' of function '",
          FName(root), "' (", F(V(root).function).loc.ToString(),
          "): no path assigns it", because, "; assign it before every return"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot infer the type of variable '", V(root).name, "' in function '",
        FName(root), "': it is read (at ", FirstRead(root).ToString(),
        ") but never assigned anywhere", because, "; assign it before reading it"));
  }

  Program& p_;
  Module& m_;
  Deadline deadline_;  // charged per op swept
  std::vector<std::optional<TensorType>> types_;
  std::vector<std::optional<Origin>> origins_;
  std::set<const PrimOp*> checked_;  // ops whose outputs were computed
  std::set<int32_t> tapes_;          // tape ops' tapes
  // The functions to sweep in this round and the next, and the one being
  // swept (-1 before the first sweep).
  std::set<int32_t> round_, next_round_;
  int32_t current_ = -1;
  std::vector<std::vector<int32_t>> dependents_;  // per function: see FindDependents
};

}  // namespace

absl::StatusOr<Program> InferTypes(Program program,
                                   std::span<const TensorType> input_types,
                                   Deadline deadline) {
  if (program.stage != Stage::kUntyped && program.stage != Stage::kTyped) {
    return absl::InvalidArgumentError(absl::StrCat(
        "infer_types needs an untyped or typed program, got stage ",
        std::string(StageName(program.stage))));
  }
  Program pruned = PruneUnreachable(program);
  TypeInference inference(pruned, deadline);
  AB_RETURN_IF_ERROR(inference.Run(input_types));
  return pruned;
}

}  // namespace autobatch
