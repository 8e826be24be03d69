// The reference interpreter: the IR's semantics for one lane, read top to
// bottom (checks, values, primitives, calls, terminators, the run loop).
#include "vm/reference_interpreter.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/kernels.h"
#include "ir/control_ops.h"
#include "ir/type_rules.h"
#include "support/memory.h"
#include "support/overloaded.h"
#include "support/status.h"
#include "vm/inputs.h"
#include "vm/run_support.h"

namespace autobatch {
namespace {

// Where an op is, in errors.
inline constexpr int kTerminator = -1;
inline constexpr int kBlockItself = -2;

// "function 'fib', block ^1 (then2), op 3 (fib.cc:12)"; op kTerminator: the
// terminator; kBlockItself: the block; a negative block: the function.
std::string Where(const Module& module, int32_t function, int32_t block, int op) {
  const Function& f = module.functions[function];
  std::string out = absl::StrCat("function '", f.name, "'");
  if (block < 0) return out;
  const Block& b = f.blocks[block];
  absl::StrAppend(&out, ", block ^", block);
  if (!b.label.empty()) absl::StrAppend(&out, " (", b.label, ")");
  if (op >= 0 && op < static_cast<int>(b.ops.size())) {
    absl::StrAppend(&out, ", op ", op);
    const SourceLoc& loc = LocOf(b.ops[op]);
    if (loc.known()) absl::StrAppend(&out, " (", loc.ToString(), ")");
  } else if (op == kTerminator) {
    absl::StrAppend(&out, ", terminator");
    if (b.loc.known()) absl::StrAppend(&out, " (", b.loc.ToString(), ")");
  }
  return out;
}

absl::Status Prefixed(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, ": ", s.message()));
}

// --- what Create checks (the interpreter trusts nothing else) ------------------

// Every variable of `vars` exists and belongs to function `fi`.
absl::Status CheckVars(const Module& module, int32_t fi, const std::vector<VarId>& vars,
                       int32_t block, int op) {
  const int32_t num_vars = static_cast<int32_t>(module.variables.size());
  for (VarId v : vars) {
    if (!v.valid() || v.value >= num_vars) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(module, fi, block, op), ": variable index ", v.value, " does not exist"));
    }
    if (module.variables[v.value].function.value != fi) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(module, fi, block, op), ": variable '", module.variables[v.value].name,
          "' belongs to another function"));
    }
  }
  return absl::OkStatus();
}

// A lowered-only control op (ir/control_ops.def) is not run: the interpreter
// has no PC stack and no frames.
absl::Status CheckUnlowered(ControlOp kind, const std::string& where) {
  if (AllowedAt(kind, Stage::kAllocated)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": ", std::string(Info(kind).type_name), " belongs to lowered programs"));
}

// `inputs`: the entry's uniform params, which a PrimOp of any function may
// read (ir/ir.h).
absl::Status CheckOp(const Module& module, const KernelRegistry* kernels, int32_t fi,
                     int32_t bi, int oi, const std::vector<VarId>& inputs) {
  const Op& op = module.functions[fi].blocks[bi].ops[oi];
  std::vector<VarId> reads = OpReads(op);
  if (std::holds_alternative<PrimOp>(op)) {
    std::erase_if(reads, [&](VarId v) {
      return std::find(inputs.begin(), inputs.end(), v) != inputs.end();
    });
  }
  AB_RETURN_IF_ERROR(CheckVars(module, fi, reads, bi, oi));
  AB_RETURN_IF_ERROR(CheckVars(module, fi, OpWrites(op), bi, oi));
  const std::string where = Where(module, fi, bi, oi);
  return std::visit(
      Overloaded{
          [&](const PrimOp& p) -> absl::Status {
            if (p.prim != Primitive::kUserKernel) return absl::OkStatus();
            if (kernels == nullptr || kernels->Find(p.attrs.kernel) == nullptr) {
              return absl::NotFoundError(absl::StrCat(
                  where, ": user kernel '", p.attrs.kernel,
                  "' is not registered; register it (Context::RegisterKernel or "
                  "KernelRegistry::Register) before running the program"));
            }
            if (!module.kernels.contains(p.attrs.kernel)) {
              return absl::InvalidArgumentError(absl::StrCat(
                  where, ": user kernel '", p.attrs.kernel,
                  "' is not declared in the module's kernels"));
            }
            return absl::OkStatus();
          },
          [&](const CallOp& c) -> absl::Status {
            if (!c.callee.valid() ||
                c.callee.value >= static_cast<int32_t>(module.functions.size())) {
              return absl::InvalidArgumentError(
                  absl::StrCat(where, ": callee index ", c.callee.value, " does not exist"));
            }
            const Function& callee = module.functions[c.callee.value];
            if (c.args.size() != callee.params.size() ||
                c.results.size() != callee.results.size()) {
              return absl::InvalidArgumentError(absl::StrCat(
                  where, ": the call of '", callee.name, "' passes ", c.args.size(),
                  " args and receives ", c.results.size(), " results, but '", callee.name,
                  "' has ", callee.params.size(), " params and ", callee.results.size(),
                  " results"));
            }
            return absl::OkStatus();
          },
          [&](const PopOp& p) { return CheckUnlowered(KindOf(p), where); },
          [&](const TapePushOp& p) { return CheckVars(module, fi, {p.tape}, bi, oi); },
          [&](const TapePopOp& p) { return CheckVars(module, fi, {p.tape}, bi, oi); },
      },
      op);
}

absl::Status CheckTerminator(const Module& module, int32_t fi, int32_t bi) {
  const Function& f = module.functions[fi];
  const Terminator& terminator = f.blocks[bi].terminator;
  const std::string where = Where(module, fi, bi, kTerminator);
  AB_RETURN_IF_ERROR(CheckUnlowered(KindOf(terminator), where));
  auto check_block = [&](BlockId b) -> absl::Status {
    if (!b.valid() || b.value >= static_cast<int32_t>(f.blocks.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": block index ", b.value, " does not exist"));
    }
    return absl::OkStatus();
  };
  if (const auto* branch = std::get_if<Branch>(&terminator)) {
    AB_RETURN_IF_ERROR(CheckVars(module, fi, {branch->cond}, bi, kTerminator));
    AB_RETURN_IF_ERROR(check_block(branch->then_block));
    return check_block(branch->else_block);
  }
  if (const auto* go = std::get_if<Goto>(&terminator)) return check_block(go->target);
  return absl::OkStatus();
}

// --- running one lane ----------------------------------------------------------

// One activation of a function: where it is and its own values.
struct Activation {
  int32_t function = 0;
  int32_t block = 0;
  int32_t op = 0;
  std::vector<Tensor> values;    // per slot of the function's variables
  std::vector<uint8_t> defined;  // per slot: written in this activation
  // Per tape of the function (ReferenceInterpreter::fn_tapes_): its depth
  // when the activation began, which it must leave it at.
  std::vector<int64_t> tape_base;
};

// One run of the entry function on one lane. Activations live on the heap
// (`stack_`), so a deep recursion uses no host stack.
class LaneRun {
 public:
  LaneRun(const Program& program, const KernelRegistry* kernels,
          const std::vector<int32_t>& slot, const std::vector<int32_t>& frame_size,
          const std::vector<std::vector<VarId>>& fn_tapes, const ReferenceOptions& options)
      : module_(program.module),
        program_(program),
        kernels_(kernels),
        slot_(slot),
        frame_size_(frame_size),
        fn_tapes_(fn_tapes),
        options_(options),
        budget_(options.max_steps, options.deadline),
        tapes_(program.module.variables.size()),
        tape_bytes_(program.module.variables.size(), 0) {}

  // The loop: run the innermost activation's next op, or its block's
  // terminator, until the entry returns or a lane halts.
  absl::StatusOr<std::vector<LaneValue>> Run(std::vector<LaneValue> inputs) {
    AB_RETURN_IF_ERROR(Start(std::move(inputs)));
    while (true) {
      Activation& a = stack_.back();
      const Block& block = module_.functions[a.function].blocks[a.block];
      if (a.op < static_cast<int32_t>(block.ops.size())) {
        AB_RETURN_IF_ERROR(std::visit(
            Overloaded{
                [&](const PrimOp& p) { return Evaluate(p); },
                [&](const CallOp& c) { return Call(c); },
                [&](const PopOp&) {
                  return absl::InvalidArgumentError(
                      absl::StrCat(Here(a.op), ": unexpected PopOp"));
                },
                [&](const TapePushOp& o) { return TapePush(o); },
                [&](const TapePopOp& o) { return TapePop(o); },
            },
            block.ops[a.op]));
        continue;
      }
      AB_ASSIGN_OR_RETURN(std::optional<std::vector<LaneValue>> results,
                          Terminate(block.terminator));
      if (results) return *std::move(results);
    }
  }

 private:
  std::string Here(int op) const {
    const Activation& a = stack_.back();
    return Where(module_, a.function, a.block, op);
  }

  // --- values: each activation has its own; reading one never written in it
  //     is an error (the batched VMs would read junk) ---

  absl::StatusOr<const Tensor*> Read(const Activation& a, VarId var, int op) const {
    const int32_t s = slot_[var.value];
    if (module_.var(var).function.value != a.function) {
      // A uniform input of the entry, read by another function (ir/ir.h):
      // the entry's activation, at the bottom of the stack, holds it.
      AB_CHECK(module_.var(var).uniform, "the verifier allows only uniform inputs here");
      return &stack_.front().values[s];
    }
    if (!a.defined[s]) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(module_, a.function, a.block, op), ": reads variable '", module_.var(var).name,
          "', which has not been written in this activation (undefined on this path)"));
    }
    return &a.values[s];
  }

  // Writes `value` to `var` of `a`; a declared type must match. `block` and
  // `op` say where, for the error.
  absl::Status Write(Activation& a, VarId var, Tensor value, int32_t block, int op) {
    AB_RETURN_IF_ERROR(CheckDeclaredType(var, value.type(), Where(module_, a.function, block, op)));
    const int32_t s = slot_[var.value];
    a.values[s] = std::move(value);
    a.defined[s] = 1;
    return absl::OkStatus();
  }

  absl::Status CheckDeclaredType(VarId var, const TensorType& type, const std::string& where) {
    const Variable& v = module_.var(var);
    if (v.type && *v.type != type) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": variable '", v.name, "' is declared ", v.type->ToString(),
          " but receives a value of type ", type.ToString()));
    }
    return absl::OkStatus();
  }

  // --- the budget: entering a block is one step ---

  absl::Status Enter(int32_t block) {
    Activation& a = stack_.back();
    a.block = block;
    a.op = 0;
    const Budget::Outcome outcome = budget_.Step();
    if (outcome != Budget::Outcome::kWithin) [[unlikely]] {
      return budget_.ExhaustedAt(outcome, Where(module_, a.function, block, kBlockItself));
    }
    return absl::OkStatus();
  }

  // --- the entry: its params receive the inputs; it starts at block 0 ---

  absl::Status Start(std::vector<LaneValue> inputs) {
    const Function& entry = module_.function(program_.entry);
    if (inputs.size() != entry.params.size()) {
      return absl::InvalidArgumentError(absl::StrCat("'", entry.name, "' takes ",
                                                     entry.params.size(), " input(s) but ",
                                                     inputs.size(), " were given"));
    }
    stack_.push_back(NewActivation(program_.entry.value));
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].batch() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " has batch size ",
                                                       inputs[i].batch(),
                                                       "; a LaneValue has batch size 1"));
      }
      AB_RETURN_IF_ERROR(Write(stack_.back(), entry.params[i], std::move(inputs[i]), -1, -1));
    }
    return Enter(0);
  }

  Activation NewActivation(int32_t function) {
    Activation a;
    a.function = function;
    a.values.resize(frame_size_[function]);
    a.defined.assign(frame_size_[function], 0);
    for (VarId tape : fn_tapes_[function]) a.tape_base.push_back(Tape(tape).size());
    return a;
  }

  // --- PrimOp: out = prim(in), one lane, by the kernels every backend runs
  //     (RunPrimitive), with output types from the type rules ---

  absl::Status Evaluate(const PrimOp& prim) {
    Activation& a = stack_.back();
    in_types_.clear();
    in_views_.clear();
    int64_t bytes = 0;  // of the operands, for the budget
    for (VarId in : prim.inputs) {
      AB_ASSIGN_OR_RETURN(const Tensor* value, Read(a, in, a.op));
      bytes += value->lane_bytes();
      in_types_.push_back(value->type());
      in_views_.push_back(ConstLanesView{value->type(), value->bytes()});
    }
    absl::StatusOr<std::vector<TensorType>> out_types =
        InferPrimitiveType(prim, in_types_, module_.kernels);
    if (!out_types.ok()) return Prefixed(out_types.status(), Here(a.op));
    if (out_types->size() != prim.outputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          Here(a.op), ": '", std::string(PrimitiveName(prim.prim)), "' produces ",
          out_types->size(), " values but the op has ", prim.outputs.size(), " outputs"));
    }
    // Outputs are written in place when the variable already holds a value
    // of the right type that the op does not read (no allocation in loops);
    // otherwise into a fresh tensor.
    fresh_.clear();
    fresh_.resize(prim.outputs.size());
    written_in_place_.assign(prim.outputs.size(), 0);
    out_views_.clear();
    for (size_t k = 0; k < prim.outputs.size(); ++k) {
      const VarId o = prim.outputs[k];
      const TensorType& type = (*out_types)[k];
      AB_RETURN_IF_ERROR(CheckDeclaredType(o, type, Here(a.op)));
      if (absl::Status size = CheckValueSize(module_, o, type, 1, options_.max_value_bytes);
          !size.ok()) {
        return Prefixed(size, Here(a.op));
      }
      const int32_t s = slot_[o.value];
      bool in_place = a.defined[s] && a.values[s].type() == type && a.values[s].batch() == 1;
      for (VarId in : prim.inputs) in_place &= in != o;
      for (size_t j = 0; j < k; ++j) in_place &= prim.outputs[j] != o;
      Tensor* target = &a.values[s];
      written_in_place_[k] = in_place;
      if (!in_place) {
        fresh_[k] = Tensor(type, 1);
        target = &fresh_[k];
      }
      out_views_.push_back(LanesView{type, target->bytes()});
    }
    absl::Status s = RunPrimitive(prim, in_views_, out_views_, /*num_lanes=*/1, kernels_,
                                  /*active=*/nullptr);
    if (!s.ok()) return Prefixed(s, Here(a.op));
    for (size_t k = 0; k < prim.outputs.size(); ++k) {
      const int32_t slot = slot_[prim.outputs[k].value];
      if (!written_in_place_[k]) a.values[slot] = std::move(fresh_[k]);
      a.defined[slot] = 1;
      bytes += a.values[slot].lane_bytes();
    }
    // A block of heavy ops reads the clock between them (Budget).
    const Budget::Outcome outcome = budget_.ChargeOp(prim, bytes);
    if (outcome != Budget::Outcome::kWithin) [[unlikely]] {
      return budget_.ExhaustedAt(outcome, Where(module_, a.function, a.block, kBlockItself));
    }
    ++a.op;
    return absl::OkStatus();
  }

  // --- tapes (ir/ir.h, "Tapes"): one LIFO stack of values per tape for the
  //     whole run, balanced per activation: an activation pops only what it
  //     pushed, and leaves each tape of its function as deep as it found it ---

  std::vector<Tensor>& Tape(VarId tape) { return tapes_[tape.value]; }

  std::string TapeName(VarId tape) const { return absl::StrCat("'", module_.var(tape).name, "'"); }

  absl::Status TapePush(const TapePushOp& push) {
    Activation& a = stack_.back();
    AB_ASSIGN_OR_RETURN(const Tensor* value, Read(a, push.value, a.op));
    AB_RETURN_IF_ERROR(CheckDeclaredType(push.tape, value->type(), Here(a.op)));
    std::vector<Tensor>& tape = Tape(push.tape);
    const int64_t bytes = value->size_bytes();
    if (tape_bytes_[push.tape.value] + bytes > options_.max_value_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          Here(a.op), ": tape ", TapeName(push.tape), " would hold more than max_value_bytes = ",
          options_.max_value_bytes, " bytes (", tape.size(),
          " values pushed and not popped); check for a loop that never ends, or raise "
          "CallOptions::max_value_bytes if the memory is there"));
    }
    if (all_tape_bytes_ + bytes > options_.max_stack_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          Here(a.op), ": pushing on tape ", TapeName(push.tape),
          " would make the tapes hold more than max_stack_bytes = ", options_.max_stack_bytes,
          " bytes; check for a loop that never ends, or raise CallOptions::max_stack_bytes "
          "if the memory is there"));
    }
    tape.push_back(*value);
    tape_bytes_[push.tape.value] += bytes;
    all_tape_bytes_ += bytes;
    ++a.op;
    return absl::OkStatus();
  }

  absl::Status TapePop(const TapePopOp& pop) {
    Activation& a = stack_.back();
    std::vector<Tensor>& tape = Tape(pop.tape);
    if (static_cast<int64_t>(tape.size()) <= BaseOf(a, pop.tape)) {
      const std::string start = absl::StrCat(Here(a.op), ": tape_pop of tape ", TapeName(pop.tape));
      if (tape.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            start, " finds the tape empty (it pops more values than it pushed); every pop "
            "needs a push before it in the same activation"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          start, " finds no value that this activation of '", module_.functions[a.function].name,
          "' pushed (the ", tape.size(), " on it belong to the activations that called it); "
          "every pop needs a push before it in the same activation"));
    }
    Tensor value = std::move(tape.back());
    tape.pop_back();
    tape_bytes_[pop.tape.value] -= value.size_bytes();
    all_tape_bytes_ -= value.size_bytes();
    AB_RETURN_IF_ERROR(Write(a, pop.result, std::move(value), a.block, a.op));
    ++a.op;
    return absl::OkStatus();
  }

  int64_t BaseOf(const Activation& a, VarId tape) const {
    const std::vector<VarId>& tapes = fn_tapes_[a.function];
    const auto it = std::find(tapes.begin(), tapes.end(), tape);
    AB_CHECK(it != tapes.end(), "a tape op's tape belongs to its function (Create)");
    return a.tape_base[static_cast<size_t>(it - tapes.begin())];
  }

  // `a` ends (a Return, or a Halt, which ends every activation): each tape
  // of its function must be as deep as when it began.
  absl::Status CheckTapesBalanced(const Activation& a, std::string_view how) {
    const std::vector<VarId>& tapes = fn_tapes_[a.function];
    for (size_t i = 0; i < tapes.size(); ++i) {
      const int64_t left = static_cast<int64_t>(Tape(tapes[i]).size()) - a.tape_base[i];
      if (left == 0) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          Where(module_, stack_.back().function, stack_.back().block, kTerminator), ": ",
          std::string(how), " with ", left, " value(s) pushed on tape ", TapeName(tapes[i]),
          " of '", module_.functions[a.function].name,
          "' by an activation that has not popped them; every activation pops what it "
          "pushes before it ends (ir/ir.h, \"Tapes\")"));
    }
    return absl::OkStatus();
  }

  // --- CallOp (ir/control_ops.def): a fresh activation of the callee whose
  //     params receive the args; it starts at block 0, and its Return comes
  //     back through ReturnToCaller ---

  absl::Status Call(const CallOp& call) {
    const Activation& caller = stack_.back();
    const Function& callee = module_.function(call.callee);
    if (static_cast<int64_t>(stack_.size()) >= options_.max_depth) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "recursion depth limit of ", options_.max_depth,
          " activations exceeded by the call of '", callee.name, "' at ", Here(caller.op),
          "; raise max_depth (CallOptions::max_stack_depth, --max-stack-depth) if the "
          "recursion is meant to go deeper, or check for unbounded recursion"));
    }
    Activation next = NewActivation(call.callee.value);
    for (size_t i = 0; i < call.args.size(); ++i) {
      AB_ASSIGN_OR_RETURN(const Tensor* value, Read(caller, call.args[i], caller.op));
      absl::Status s = Write(next, callee.params[i], *value, 0, kBlockItself);
      if (!s.ok()) {
        return Prefixed(s, absl::StrCat("passing argument ", i, " of the call at ",
                                        Here(caller.op)));
      }
    }
    stack_.push_back(std::move(next));  // invalidates `caller`
    return Enter(0);
  }

  // --- terminators (their semantics: ir/control_ops.def): the program's
  //     results when the run ends, else nullopt ---

  absl::StatusOr<std::optional<std::vector<LaneValue>>> Terminate(const Terminator& terminator) {
    using Results = std::optional<std::vector<LaneValue>>;
    return std::visit(
        Overloaded{
            [&](const Branch& t) -> absl::StatusOr<Results> {
              AB_ASSIGN_OR_RETURN(const Tensor* cond, Read(stack_.back(), t.cond, kTerminator));
              if (cond->type() != Scalar(DType::kBool)) {
                return absl::InvalidArgumentError(absl::StrCat(
                    Here(kTerminator), ": the branch condition '", module_.var(t.cond).name,
                    "' has type ", cond->type().ToString(), "; it must be a bool scalar"));
              }
              const bool taken = static_cast<uint8_t>(cond->bytes()[0]) != 0;
              AB_RETURN_IF_ERROR(Enter(taken ? t.then_block.value : t.else_block.value));
              return Results();
            },
            [&](const Goto& t) -> absl::StatusOr<Results> {
              AB_RETURN_IF_ERROR(Enter(t.target.value));
              return Results();
            },
            [&](const Return&) -> absl::StatusOr<Results> {
              AB_ASSIGN_OR_RETURN(std::vector<LaneValue> results, ResultsOf(stack_.back()));
              AB_RETURN_IF_ERROR(CheckTapesBalanced(
                  stack_.back(),
                  absl::StrCat("'", module_.functions[stack_.back().function].name,
                               "' returns")));
              if (stack_.size() == 1) return Results(std::move(results));
              AB_RETURN_IF_ERROR(ReturnToCaller(std::move(results)));
              return Results();
            },
            [&](const Halt&) -> absl::StatusOr<Results> {
              AB_ASSIGN_OR_RETURN(std::vector<LaneValue> results, ResultsOf(stack_.front()));
              for (size_t i = stack_.size(); i-- > 0;) {
                AB_RETURN_IF_ERROR(CheckTapesBalanced(stack_[i], "the lane halts"));
              }
              return Results(std::move(results));
            },
            [&](const PushGoto&) -> absl::StatusOr<Results> { return Lowered(); },
            [&](const IndirectGoto&) -> absl::StatusOr<Results> { return Lowered(); },
        },
        terminator);
  }

  // The result variables of `source`'s function, each written in it.
  absl::StatusOr<std::vector<LaneValue>> ResultsOf(const Activation& source) const {
    const Function& fn = module_.functions[source.function];
    std::vector<LaneValue> results;
    for (VarId r : fn.results) {
      if (!source.defined[slot_[r.value]]) {
        return absl::InvalidArgumentError(absl::StrCat(
            Here(kTerminator), ": '", fn.name, "' returns without writing its result '",
            module_.var(r).name, "'"));
      }
      results.push_back(source.values[slot_[r.value]]);
    }
    return results;
  }

  // Ends the innermost activation: the CallOp that made it receives
  // `results`, and its caller goes on after it.
  absl::Status ReturnToCaller(std::vector<LaneValue> results) {
    stack_.pop_back();
    Activation& caller = stack_.back();
    const CallOp& call = std::get<CallOp>(
        module_.functions[caller.function].blocks[caller.block].ops[caller.op]);
    for (size_t i = 0; i < call.results.size(); ++i) {
      AB_RETURN_IF_ERROR(
          Write(caller, call.results[i], std::move(results[i]), caller.block, caller.op));
    }
    ++caller.op;
    return absl::OkStatus();
  }

  absl::Status Lowered() const {
    return absl::InvalidArgumentError(
        absl::StrCat(Here(kTerminator), ": lowered terminator in an unlowered program"));
  }

  const Module& module_;
  const Program& program_;
  const KernelRegistry* kernels_;
  const std::vector<int32_t>& slot_;
  const std::vector<int32_t>& frame_size_;
  const std::vector<std::vector<VarId>>& fn_tapes_;
  const ReferenceOptions& options_;
  Budget budget_;
  std::vector<Activation> stack_;  // the entry's first, the innermost last
  std::vector<std::vector<Tensor>> tapes_;  // per variable (a tape's), bottom first
  std::vector<int64_t> tape_bytes_;         // per variable: bytes on its tape
  int64_t all_tape_bytes_ = 0;
  // Evaluate's buffers, kept to run loops without allocating.
  std::vector<TensorType> in_types_;
  std::vector<ConstLanesView> in_views_;
  std::vector<LanesView> out_views_;
  std::vector<Tensor> fresh_;
  std::vector<uint8_t> written_in_place_;
};

}  // namespace

absl::StatusOr<ReferenceInterpreter> ReferenceInterpreter::Create(const Program& program,
                                                                  const KernelRegistry* kernels) {
  const Module& module = program.module;
  if (program.stage == Stage::kLowered) {
    return absl::InvalidArgumentError(
        "the reference interpreter runs unlowered programs (stage untyped, typed or "
        "allocated); this program is lowered");
  }
  AB_RETURN_IF_ERROR(CheckNoGradientStubs(program));
  const int32_t num_functions = static_cast<int32_t>(module.functions.size());
  const int32_t num_vars = static_cast<int32_t>(module.variables.size());
  if (!program.entry.valid() || program.entry.value >= num_functions) {
    return absl::InvalidArgumentError(
        absl::StrCat("the entry function index ", program.entry.value, " does not exist"));
  }
  ReferenceInterpreter interp(program, kernels);
  interp.slot_.assign(num_vars, -1);
  interp.frame_size_.assign(num_functions, 0);
  for (int32_t v = 0; v < num_vars; ++v) {
    FunctionId f = module.variables[v].function;
    if (!f.valid() || f.value >= num_functions) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable '", module.variables[v].name, "' (index ", v,
          ") belongs to function index ", f.value, ", which does not exist"));
    }
    interp.slot_[v] = interp.frame_size_[f.value]++;
  }
  interp.fn_tapes_.assign(num_functions, {});
  std::vector<VarId> inputs;  // the entry's uniform params
  for (VarId v : module.function(program.entry).params) {
    if (v.valid() && v.value < static_cast<int32_t>(module.variables.size()) &&
        module.var(v).uniform && module.var(v).function == program.entry) {
      inputs.push_back(v);
    }
  }
  for (int32_t fi = 0; fi < num_functions; ++fi) {
    const Function& f = module.functions[fi];
    if (f.blocks.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("function '", f.name, "' has no blocks (block 0 is its entry)"));
    }
    AB_RETURN_IF_ERROR(CheckVars(module, fi, f.params, -1, -1));
    AB_RETURN_IF_ERROR(CheckVars(module, fi, f.results, -1, -1));
    for (int32_t bi = 0; bi < static_cast<int32_t>(f.blocks.size()); ++bi) {
      for (int oi = 0; oi < static_cast<int>(f.blocks[bi].ops.size()); ++oi) {
        AB_RETURN_IF_ERROR(CheckOp(module, kernels, fi, bi, oi, inputs));
        std::vector<VarId>& tapes = interp.fn_tapes_[fi];
        const std::optional<VarId> tape = TapeOf(f.blocks[bi].ops[oi]);
        if (tape && std::find(tapes.begin(), tapes.end(), *tape) == tapes.end()) {
          tapes.push_back(*tape);
        }
      }
      AB_RETURN_IF_ERROR(CheckTerminator(module, fi, bi));
    }
  }
  if (kernels != nullptr) {
    AB_RETURN_IF_ERROR(kernels->CheckBound(module));
  } else if (!module.kernels.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "the program uses user kernel '", module.kernels.begin()->first,
        "' but no KernelRegistry was given; pass the registry it was registered on"));
  }
  return interp;
}

absl::StatusOr<std::vector<LaneValue>> ReferenceInterpreter::Run(
    std::vector<LaneValue> inputs, const ReferenceOptions& options) const {
  MemoryScope memory = MemoryScope::ForRun(options.max_memory_bytes);
  return CatchResourceErrors(
      "the reference interpreter's run", [&]() -> absl::StatusOr<std::vector<LaneValue>> {
        LaneRun run(*program_, kernels_, slot_, frame_size_, fn_tapes_, options);
        return run.Run(std::move(inputs));
      });
}

absl::StatusOr<std::vector<LaneValue>> RunReference(const Program& program,
                                                    std::vector<LaneValue> inputs,
                                                    const KernelRegistry* kernels,
                                                    const ReferenceOptions& options) {
  AB_ASSIGN_OR_RETURN(ReferenceInterpreter interp, ReferenceInterpreter::Create(program, kernels));
  return interp.Run(std::move(inputs), options);
}

namespace {

absl::StatusOr<std::vector<Tensor>> RunReferenceLanes(const Program& program,
                                                      std::vector<Tensor> inputs,
                                                      const KernelRegistry* kernels,
                                                      const ReferenceOptions& options) {
  AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
  AB_ASSIGN_OR_RETURN(ReferenceInterpreter interp, ReferenceInterpreter::Create(program, kernels));
  const Module& module = program.module;
  const Function& entry = module.function(program.entry);
  const int64_t batch = BatchOfInputs(program, inputs);
  std::vector<Tensor> outputs;
  if (batch == 0) {
    for (size_t k = 0; k < entry.results.size(); ++k) {
      std::optional<TensorType> type = module.var(entry.results[k]).type;
      if (!type && entry.signature && k < entry.signature->results.size()) {
        type = entry.signature->results[k];
      }
      if (!type) {
        return absl::FailedPreconditionError(absl::StrCat(
            "a batch of 0 lanes: the type of result '", module.var(entry.results[k]).name,
            "' of '", entry.name, "' is unknown; run infer_types first or declare a signature"));
      }
      outputs.emplace_back(*type, 0);
    }
    return outputs;
  }
  for (int64_t lane = 0; lane < batch; ++lane) {
    std::vector<LaneValue> lane_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& in = inputs[i];
      Tensor t(in.type(), 1);
      // A uniform input holds one lane, every lane's value.
      t.CopyLaneFrom(in, IsUniformInput(program, i) ? 0 : lane, 0);
      lane_inputs.push_back(std::move(t));
    }
    absl::StatusOr<std::vector<LaneValue>> out = interp.Run(std::move(lane_inputs), options);
    if (!out.ok()) return Prefixed(out.status(), absl::StrCat("lane ", lane));
    if (lane == 0) {
      for (const LaneValue& v : *out) outputs.emplace_back(v.type(), batch);
    }
    for (size_t k = 0; k < out->size(); ++k) {
      if ((*out)[k].type() != outputs[k].type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "lane ", lane, ": result ", k, " ('", module.var(entry.results[k]).name,
            "') has type ", (*out)[k].type().ToString(), " but lane 0's has type ",
            outputs[k].type().ToString()));
      }
      outputs[k].CopyLaneFrom((*out)[k], 0, lane);
    }
  }
  return outputs;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunReferenceBatch(const Program& program,
                                                      std::vector<Tensor> inputs,
                                                      const KernelRegistry* kernels,
                                                      const ReferenceOptions& options) {
  MemoryScope memory = MemoryScope::ForRun(options.max_memory_bytes);
  return CatchResourceErrors("the reference interpreter's run", [&] {
    return RunReferenceLanes(program, std::move(inputs), kernels, options);
  });
}

}  // namespace autobatch
