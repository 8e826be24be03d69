// differentiate: reverse-mode differentiation over the IR.
#include "passes/differentiate.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/type_rules.h"
#include "passes/adjoints.h"
#include "passes/analysis/call_graph.h"
#include "passes/analysis/cfg.h"
#include "passes/analysis/definedness.h"
#include "passes/inline_calls.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

// The control tape's entry for "the function's start" (block indices are
// >= 0).
constexpr int64_t kStart = -1;

// Whether block `from` can reach itself: it lies on a cycle (a loop).
std::vector<bool> OnCycle(const Function& fn) {
  const size_t n = fn.blocks.size();
  std::vector<bool> cyclic(n, false);
  for (size_t b = 0; b < n; ++b) {
    std::vector<bool> seen(n, false);
    std::vector<BlockId> stack = Successors(fn.blocks[b].terminator);
    while (!stack.empty() && !cyclic[b]) {
      const BlockId s = stack.back();
      stack.pop_back();
      if (static_cast<size_t>(s.value) == b) cyclic[b] = true;
      if (seen[s.value]) continue;
      seen[s.value] = true;
      for (BlockId t : Successors(fn.blocks[s.value].terminator)) stack.push_back(t);
    }
  }
  return cyclic;
}

class Differentiator : public AdjointEmitter {
 public:
  Differentiator(Program& program, FunctionId g)
      : program_(program), module_(program.module), g_(g) {}

  absl::Status Run() {
    const GradientOf spec = *module_.function(g_).gradient_of;
    const std::string primal_name = module_.function(spec.function).name;
    what_ = absl::StrCat("cannot differentiate '", primal_name, "' for '",
                         module_.function(g_).name, "'");
    CloneBody(spec);
    module_.function(g_).gradient_of.reset();
    InlineEveryCall(program_, g_);
    AB_RETURN_IF_ERROR(CheckOps());
    FindActive(spec);
    AB_RETURN_IF_ERROR(CheckDraws());
    FindStable();
    PlanControl();
    Build(spec);
    return absl::OkStatus();
  }

  // --- AdjointEmitter --------------------------------------------------------
  VarId Prim(Primitive prim, std::vector<VarId> inputs, Attributes attrs) override {
    // One output (type rules count them); its variable is made from the type.
    PrimOp op{prim, std::move(inputs), {VarId()}, std::move(attrs), loc_, {}};
    const VarId out = NewVar("d", TypeFor(op));
    op.outputs = {out};
    ops_->push_back(std::move(op));
    return out;
  }
  VarId Fill(VarId like, double value) override {
    Attributes attrs;
    attrs.literal = Literal::F64(value);
    return Prim(Primitive::kFillLike, {like}, std::move(attrs));
  }
  const TensorType& TypeOf(VarId v) const override { return *module_.var(v).type; }
  std::vector<VarId> Kernel(const std::string& name, std::vector<VarId> inputs) override {
    const KernelSignature& sig = module_.kernels.at(name);
    PrimOp op{Primitive::kUserKernel, std::move(inputs), {}, {}, loc_, {}};
    op.attrs.kernel = name;
    for (const TensorType& t : sig.outputs) op.outputs.push_back(NewVar("d", t));
    std::vector<VarId> outputs = op.outputs;
    ops_->push_back(std::move(op));
    return outputs;
  }

 private:
  Function& G() { return module_.function(g_); }

  // The adjoint rule of `op`: the table's, or for a user kernel with one
  // output and a registered vjp kernel, a call of that kernel.
  AdjointRule RuleOf(const PrimOp& op) const {
    if (op.prim != Primitive::kUserKernel) return AdjointOf(op.prim, op.inputs.size());
    auto it = module_.kernels.find(op.attrs.kernel);
    if (it == module_.kernels.end() || it->second.vjp.empty() || op.outputs.size() != 1) {
      return AdjointOf(op.prim, op.inputs.size());
    }
    AdjointRule rule;
    rule.differentiable = true;
    rule.needs_input.assign(op.inputs.size(), true);
    rule.refuses_input.assign(op.inputs.size(), false);
    rule.emit = [vjp = it->second.vjp](AdjointEmitter& e, const PrimOp&, VarId dz,
                                       const std::vector<VarId>& in, VarId) {
      std::vector<VarId> inputs = in;
      inputs.push_back(dz);
      return e.Kernel(vjp, std::move(inputs));
    };
    return rule;
  }

  TensorType TypeFor(const PrimOp& op) const {
    std::vector<TensorType> types;
    for (VarId v : op.inputs) types.push_back(TypeOf(v));
    absl::StatusOr<std::vector<TensorType>> out =
        InferPrimitiveType(op, types, module_.kernels);
    if (!out.ok() || out->size() != 1) [[unlikely]] {
      const std::string why = absl::StrCat(
          "an adjoint op breaks its type rule: ", std::string(PrimitiveName(op.prim)), ": ",
          out.ok() ? absl::StrCat(out->size(), " outputs") : std::string(out.status().message()));
      internal::CheckFailed("TypeFor", __FILE__, __LINE__, why.c_str());
    }
    return (*out)[0];
  }

  // A fresh variable of g named `base` (made unique).
  VarId NewVar(const std::string& base, const TensorType& type) {
    std::string name = base;
    for (int n = 2; names_.count(name) != 0; ++n) name = absl::StrCat(base, "#", n);
    names_.insert(name);
    return module_.AddVariable(Variable{name, g_, type, StorageClass::kFull});
  }

  // `to = prim(inputs)` into an existing variable.
  void Assign(VarId to, Primitive prim, std::vector<VarId> inputs, Attributes attrs = {}) {
    PrimOp op{prim, std::move(inputs), {to}, std::move(attrs), loc_, {}};
    AB_CHECK(TypeFor(op) == TypeOf(to));
    ops_->push_back(std::move(op));
  }
  // `to = value` in every element, a literal of to's type: it reads nothing,
  // so it may stand where the primal value is unassigned.
  void AssignLiteral(VarId to, double value) {
    const TensorType& type = TypeOf(to);
    Literal literal{type, {}, {}};
    const int64_t count = type.NumElements();
    if (IsFloat(type.dtype)) {
      literal.floats.assign(static_cast<size_t>(count), value);
    } else {
      literal.ints.assign(static_cast<size_t>(count), static_cast<int64_t>(value));
    }
    Attributes attrs;
    attrs.literal = std::move(literal);
    Assign(to, Primitive::kConstant, {}, std::move(attrs));
  }

  // Adjoint bookkeeping without the adds of zeros: `adj = 0` followed by
  // `adj = add adj, c` is `adj = copy c` but for the sign of a zero (0 + -0
  // is +0), which no promise covers, so while an adjoint holds a literal 0
  // that nothing read yet, its first contribution is assigned and the 0
  // dropped. Tracked within a block (and from the reverse start into the
  // one block it jumps to); a zero still pending where a block ends stays.
  void ZeroAdjoint(VarId adj) {
    AssignLiteral(adj, 0.0);
    auto [it, inserted] = zero_.try_emplace(adj.value, block_, ops_->size() - 1);
    if (!inserted) {
      dead_.insert(it->second);  // overwritten unread
      it->second = {block_, ops_->size() - 1};
    }
  }
  void ReadAdjoint(VarId adj) { zero_.erase(adj.value); }
  void Accumulate(VarId adj, VarId c) {
    auto it = zero_.find(adj.value);
    if (it == zero_.end()) {
      Assign(adj, Primitive::kAdd, {adj, c});
      return;
    }
    dead_.insert(it->second);
    zero_.erase(it);
    Assign(adj, Primitive::kCopy, {c});
  }
  // Starts emitting into blocks_[b], whose adjoints hold no known zero.
  void StartBlock(int32_t b) {
    block_ = b;
    ops_ = &blocks_[b].ops;
    zero_.clear();
  }
  void EraseDeadZeros() {
    for (auto it = dead_.rbegin(); it != dead_.rend(); ++it) {
      std::vector<Op>& ops = blocks_[it->first].ops;
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(it->second));
    }
    dead_.clear();
  }

  // The reverse sweep reads a primal value where the lane assigned it (the
  // control tape sends it back along its own path), but a value assigned in
  // one branch is unassigned on the other path as far as the definedness
  // rule can see, and the stack discipline needs every live value assigned
  // (ir/ir.h): such values get a zero at the start of g.
  void InitializeWhatTheReverseSweepReads(int32_t first_reverse_block) {
    const Function& fn = G();
    const std::vector<VarSet> assigned = AssignedOnEveryPath(module_, fn);
    std::set<int32_t> unassigned;
    for (size_t b = static_cast<size_t>(first_reverse_block); b < fn.blocks.size(); ++b) {
      VarSet defined = assigned[b];
      for (const Op& op : fn.blocks[b].ops) {
        for (VarId v : OpReads(op)) {
          if (!defined.contains(v)) unassigned.insert(v.value);
        }
        defined.insert_all(OpWrites(op));
      }
      if (const auto* branch = std::get_if<Branch>(&fn.blocks[b].terminator)) {
        if (!defined.contains(branch->cond)) unassigned.insert(branch->cond.value);
      }
    }
    if (unassigned.empty()) return;
    std::vector<Op> init;
    ops_ = &init;
    loc_ = fn.loc;
    for (int32_t v : unassigned) AssignLiteral(VarId(v), 0.0);
    std::vector<Op>& entry = G().blocks[0].ops;
    entry.insert(entry.begin(), std::make_move_iterator(init.begin()),
                 std::make_move_iterator(init.end()));
  }
  VarId Constant(int64_t value) {
    Attributes attrs;
    attrs.literal = Literal::I64(value);
    return Prim(Primitive::kConstant, {}, std::move(attrs));
  }
  void Push(VarId tape, VarId value) { ops_->push_back(TapePushOp{tape, value, loc_}); }
  VarId Pop(VarId tape, const std::string& name) {
    const VarId out = NewVar(name, TypeOf(tape));
    ops_->push_back(TapePopOp{tape, out, loc_});
    return out;
  }
  // The tape saving `v` (made on first use).
  VarId TapeFor(VarId v) {
    auto [it, inserted] = tapes_.try_emplace(v.value);
    if (inserted) it->second = NewVar(absl::StrCat(module_.var(v).name, ".tape"), TypeOf(v));
    return it->second;
  }

  // g's blocks := f's, f's variables copied into g (f's params become g's).
  void CloneBody(const GradientOf& spec) {
    const Function f = module_.function(spec.function);
    for (const Variable& var : module_.variables) {
      if (var.function == g_) names_.insert(var.name);
    }
    std::vector<VarId> map(module_.variables.size());
    for (size_t i = 0; i < f.params.size(); ++i) map[f.params[i].value] = G().params[i];
    const size_t count = module_.variables.size();
    for (size_t v = 0; v < count; ++v) {
      const Variable var = module_.variables[v];
      if (map[v].valid()) continue;
      // Another function's variable here is an input of the entry, read by
      // both (ir/ir.h's uniform values): it stays itself.
      map[v] = var.function == spec.function ? NewVar(var.name, *var.type)
                                             : VarId(static_cast<int32_t>(v));
    }
    auto rename = [&](VarId v) { return map.at(v.value); };
    std::vector<Block> blocks = f.blocks;
    for (Block& block : blocks) {
      for (Op& op : block.ops) RenameVariables(op, rename);
      if (auto* branch = std::get_if<Branch>(&block.terminator)) {
        branch->cond = rename(branch->cond);
      }
    }
    G().blocks = std::move(blocks);
    result_ = rename(f.results.at(0));
  }

  // What reverse mode cannot handle: calls left after inlining (recursion,
  // halting callees), Halt, and tapes of an earlier differentiation.
  absl::Status CheckOps() {
    for (const Block& block : G().blocks) {
      if (std::holds_alternative<Halt>(block.terminator)) {
        return absl::InvalidArgumentError(absl::StrCat(
            what_, ": it halts at ", block.loc.ToString(),
            "; a differentiated function must return (remove the halt)"));
      }
      for (const Op& op : block.ops) {
        AB_RETURN_IF_ERROR(std::visit(
            Overloaded{
                [](const PrimOp&) { return absl::OkStatus(); },
                [&](const CallOp& call) {
                  return absl::InvalidArgumentError(absl::StrCat(
                      what_, ": its call of '", module_.function(call.callee).name, "' at ",
                      call.loc.ToString(),
                      " is recursive or reaches a halt, and reverse mode needs "
                      "recursion-free code that returns; write the recursion as a loop"));
                },
                [&](const PopOp& pop) {
                  return absl::InvalidArgumentError(absl::StrCat(
                      what_, ": it contains a pop at ", pop.loc.ToString(),
                      " (a lowered op); differentiate before lowering"));
                },
                [&](const TapePushOp& push) {
                  return absl::InvalidArgumentError(absl::StrCat(
                      what_, ": it already uses tapes (", push.loc.ToString(),
                      "); nested differentiation is not supported"));
                },
                [&](const TapePopOp& pop) {
                  return absl::InvalidArgumentError(absl::StrCat(
                      what_, ": it already uses tapes (", pop.loc.ToString(),
                      "); nested differentiation is not supported"));
                },
            },
            op));
      }
    }
    return absl::OkStatus();
  }

  bool IsF64(VarId v) const { return TypeOf(v).dtype == DType::kF64; }

  // varied: depends on a wrt param through differentiable ops; useful: the
  // result depends on it through any op; active: both, and f64.
  void FindActive(const GradientOf& spec) {
    const size_t n = module_.variables.size();
    varied_.assign(n, false);
    useful_.assign(n, false);
    for (int32_t k : spec.wrt) varied_[G().params[k].value] = true;
    useful_[result_.value] = true;
    for (bool changed = true; changed;) {
      changed = false;
      for (const Block& block : G().blocks) {
        for (const Op& op : block.ops) {
          const auto* prim = std::get_if<PrimOp>(&op);
          if (prim == nullptr) continue;
          const bool differentiable =
              RuleOf(*prim).differentiable;
          bool any_varied = false;
          for (VarId in : prim->inputs) any_varied = any_varied || (varied_[in.value] && IsF64(in));
          bool any_useful = false;
          for (VarId out : prim->outputs) {
            if (differentiable && any_varied && IsF64(out) && !varied_[out.value]) {
              varied_[out.value] = changed = true;
            }
            any_useful = any_useful || useful_[out.value];
          }
          if (!any_useful) continue;
          for (VarId in : prim->inputs) {
            if (!useful_[in.value]) useful_[in.value] = changed = true;
          }
        }
      }
    }
  }
  bool Active(VarId v) const {
    return static_cast<size_t>(v.value) < varied_.size() && varied_[v.value] &&
           useful_[v.value] && IsF64(v);
  }
  bool ActiveOp(const Op& op) const {
    const auto* prim = std::get_if<PrimOp>(&op);
    return prim != nullptr && prim->outputs.size() == 1 && Active(prim->outputs[0]) &&
           RuleOf(*prim).differentiable;
  }

  // Random draws and user kernels on the differentiated path.
  absl::Status CheckDraws() {
    for (const Block& block : G().blocks) {
      for (const Op& op : block.ops) {
        const auto* prim = std::get_if<PrimOp>(&op);
        if (prim == nullptr) continue;
        bool reaches = false;
        for (VarId out : prim->outputs) reaches = reaches || useful_[out.value];
        if (!reaches) continue;
        if (prim->prim == Primitive::kRandomUniform || prim->prim == Primitive::kRandomNormal) {
          return absl::InvalidArgumentError(absl::StrCat(
              what_, ": the result depends on the random draw '",
              std::string(PrimitiveName(prim->prim)), "' at ", prim->loc.ToString(),
              "; a differentiated function must be deterministic (pass the draw in as "
              "an argument)"));
        }
        const AdjointRule rule = RuleOf(*prim);
        for (size_t j = 0; j < prim->inputs.size(); ++j) {
          if (!rule.refuses_input[j] || !varied_[prim->inputs[j].value]) continue;
          return absl::InvalidArgumentError(absl::StrCat(
              what_, ": operand ", j, " ('", module_.var(prim->inputs[j]).name, "') of ",
              std::string(PrimitiveName(prim->prim)), " at ", prim->loc.ToString(),
              " depends on a parameter the gradient is taken with respect to, and ",
              std::string(PrimitiveName(prim->prim)), " passes it no gradient (",
              std::string(AdjointDoc(prim->prim)),
              "); compute that operand from data only, or write the op with other primitives"));
        }
        if (prim->prim == Primitive::kUserKernel) {
          bool varied = false;
          for (VarId in : prim->inputs) varied = varied || varied_[in.value];
          const auto kernel = module_.kernels.find(prim->attrs.kernel);
          const bool has_vjp = kernel != module_.kernels.end() && !kernel->second.vjp.empty();
          if (varied && !has_vjp) {
            return absl::InvalidArgumentError(absl::StrCat(
                what_, ": the gradient flows through the user kernel '", prim->attrs.kernel,
                "' at ", prim->loc.ToString(),
                ", which has no vector-Jacobian product; register one (KernelSignature::vjp "
                "names a kernel computing it) or write that part with primitives"));
          }
          if (varied && prim->outputs.size() != 1) {
            return absl::InvalidArgumentError(absl::StrCat(
                what_, ": the gradient flows through the user kernel '", prim->attrs.kernel,
                "' at ", prim->loc.ToString(), ", which has ", prim->outputs.size(),
                " outputs; reverse mode uses a kernel's vjp only for one-output kernels "
                "(split it into one kernel per output)"));
          }
        }
      }
    }
    return absl::OkStatus();
  }

  // stable[v]: v is written at most once (params count as a write), outside
  // any loop, so the reverse sweep can read its final value.
  void FindStable() {
    const size_t n = module_.variables.size();
    std::vector<int> writes(n, 0);
    std::vector<bool> in_loop(n, false);
    const std::vector<bool> cyclic = OnCycle(G());
    for (VarId p : G().params) ++writes[p.value];
    for (size_t b = 0; b < G().blocks.size(); ++b) {
      for (const Op& op : G().blocks[b].ops) {
        for (VarId v : OpWrites(op)) {
          ++writes[v.value];
          in_loop[v.value] = in_loop[v.value] || cyclic[b];
        }
      }
    }
    stable_.assign(n, false);
    for (size_t v = 0; v < n; ++v) stable_[v] = writes[v] <= 1 && !in_loop[v];
  }
  bool Stable(VarId v) const { return stable_.at(v.value); }

  // Which blocks push their index on the control tape and which reverse
  // blocks pop it. preds_[b] lists b's predecessors, kStart for block 0;
  // the exit (Return) has the returning blocks.
  void PlanControl() {
    const Function& fn = G();
    const size_t n = fn.blocks.size();
    const std::vector<std::vector<BlockId>> preds = Predecessors(fn);
    preds_.assign(n + 1, {});
    for (size_t b = 0; b < n; ++b) {
      for (BlockId p : preds[b]) preds_[b].push_back(p.value);
      if (std::holds_alternative<Return>(fn.blocks[b].terminator)) {
        preds_[n].push_back(static_cast<int64_t>(b));
      }
    }
    if (n > 0) preds_[0].insert(preds_[0].begin(), kStart);
    // Blocks from which a lane can reach the return: only they push, since
    // only their reverse blocks run (a lane elsewhere never returns), and a
    // tape pushed where nothing can pop it would not verify (K3).
    returns_.assign(n, false);
    std::vector<size_t> work(preds_[n].begin(), preds_[n].end());
    for (size_t b : work) returns_[b] = true;
    while (!work.empty()) {
      const size_t b = work.back();
      work.pop_back();
      for (BlockId p : preds[b]) {
        if (returns_[p.value]) continue;
        returns_[p.value] = true;
        work.push_back(static_cast<size_t>(p.value));
      }
    }
    // A block that pushes must push before every successor, so each of its
    // successors must pop: grow both sets to a fixed point.
    pops_.assign(n + 1, false);
    pushes_.assign(n, false);
    for (size_t s = 0; s <= n; ++s) pops_[s] = preds_[s].size() >= 2;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t b = 0; b < n; ++b) {
        const std::vector<size_t> succ = SuccessorsWithExit(b);
        bool push = false;
        for (size_t s : succ) push = push || pops_[s];
        if (!push) continue;
        if (!pushes_[b]) pushes_[b] = changed = true;
        for (size_t s : succ) {
          if (!pops_[s]) pops_[s] = changed = true;
        }
      }
    }
  }
  std::vector<size_t> SuccessorsWithExit(size_t b) {
    const Terminator& t = G().blocks[b].terminator;
    if (std::holds_alternative<Return>(t)) return {G().blocks.size()};
    std::vector<size_t> out;
    for (BlockId s : Successors(t)) out.push_back(static_cast<size_t>(s.value));
    return out;
  }

  // The values an active op's adjoint reads, and which of them are taped.
  struct Saved {
    std::vector<VarId> inputs;  // distinct needed inputs, in order
    bool output = false;        // the output is needed
  };
  Saved SavedFor(const PrimOp& op) const {
    const AdjointRule rule = RuleOf(op);
    Saved saved;
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      if (!rule.needs_input[j]) continue;
      const VarId v = op.inputs[j];
      if (std::find(saved.inputs.begin(), saved.inputs.end(), v) == saved.inputs.end()) {
        saved.inputs.push_back(v);
      }
    }
    saved.output = rule.needs_output;
    return saved;
  }

  void Build(const GradientOf& spec) {
    const std::vector<Block> primal = std::move(G().blocks);
    const int32_t n = static_cast<int32_t>(primal.size());
    // Layout: 0 prologue, 1 + b forward b, n + 1 reverse start, n + 2 + b
    // reverse of b, 2n + 2 the end, then the dispatch blocks.
    const int32_t rev_start = n + 1;
    const int32_t rev_end = 2 * n + 2;
    auto forward = [](int64_t b) { return static_cast<int32_t>(b + 1); };
    auto reverse = [&](int64_t b) { return b == kStart ? rev_end : static_cast<int32_t>(n + 2 + b); };
    blocks_.assign(static_cast<size_t>(2 * n + 3), Block{});
    control_ = NewVar("control.tape", Scalar(DType::kI64));

    // Prologue.
    {
      Block& block = blocks_[0];
      block.label = "entry";
      ops_ = &block.ops;
      loc_ = primal.empty() ? SourceLoc{} : primal[0].loc;
      if (pops_[0] && n > 0 && returns_[0]) Push(control_, Constant(kStart));
      block.terminator = Goto{BlockId(forward(0))};
    }
    // Forward sweep.
    for (int32_t b = 0; b < n; ++b) {
      const Block& from = primal[b];
      Block& block = blocks_[forward(b)];
      block.label = from.label;
      block.loc = from.loc;
      ops_ = &block.ops;
      for (const Op& op : from.ops) {
        loc_ = LocOf(op);
        if (!ActiveOp(op) || !returns_[b]) {
          ops_->push_back(op);
          continue;
        }
        const auto& prim = std::get<PrimOp>(op);
        const Saved saved = SavedFor(prim);
        for (VarId v : saved.inputs) {
          if (!Stable(v)) Push(TapeFor(v), v);
        }
        ops_->push_back(op);
        if (saved.output && !Stable(prim.outputs[0])) Push(TapeFor(prim.outputs[0]), prim.outputs[0]);
      }
      loc_ = from.loc;
      if (pushes_[b] && returns_[b]) Push(control_, Constant(b));
      if (std::holds_alternative<Return>(from.terminator)) {
        block.terminator = Goto{BlockId(rev_start)};
      } else {
        std::vector<int32_t> shift(primal.size());
        for (int32_t i = 0; i < n; ++i) shift[i] = forward(i);
        block.terminator = RemapBlocks(from.terminator, shift);
      }
    }
    // Reverse start: adjoints 0, the result's 1.
    {
      Block& block = blocks_[rev_start];
      block.label = "reverse";
      StartBlock(rev_start);
      loc_ = G().loc;
      for (size_t v = 0; v < varied_.size(); ++v) {
        const VarId var(static_cast<int32_t>(v));
        if (module_.var(var).function != g_ || !Active(var)) continue;
        adjoints_[var.value] = NewVar(absl::StrCat(module_.var(var).name, ".adj"), TypeOf(var));
        if (var != result_) ZeroAdjoint(adjoints_[var.value]);
      }
      if (Active(result_)) AssignLiteral(adjoints_.at(result_.value), 1.0);
      Dispatch(block, static_cast<size_t>(n), reverse);
    }
    // With one returning block (no pop at the reverse start), its reverse is
    // entered only from here: it starts with these zeros.
    const int64_t only_return = pops_[n] || preds_[n].size() != 1 ? -1 : preds_[n][0];
    const std::map<int32_t, std::pair<int32_t, size_t>> start_zeros = zero_;
    // Reverse of each block.
    for (int32_t b = 0; b < n; ++b) {
      const Block& from = primal[b];
      Block& block = blocks_[reverse(b)];
      block.label = absl::StrCat("rev.", from.label);
      block.loc = from.loc;
      StartBlock(reverse(b));
      if (b == only_return) zero_ = start_zeros;
      for (auto it = from.ops.rbegin(); it != from.ops.rend(); ++it) {
        if (ActiveOp(*it)) {
          ReverseOf(std::get<PrimOp>(*it));
          continue;
        }
        // An op that passes no gradient but overwrites an active variable
        // (a constant, a floor): the value before it gets nothing from the
        // uses after it.
        for (VarId v : OpWrites(*it)) {
          if (!Active(v) || Stable(v)) continue;
          loc_ = LocOf(*it);
          ZeroAdjoint(adjoints_.at(v.value));
        }
      }
      loc_ = from.loc;
      Dispatch(blocks_[reverse(b)], static_cast<size_t>(b), reverse);
    }
    // The end: the value and the gradients.
    {
      Block& block = blocks_[rev_end];
      block.label = "gradient";
      StartBlock(rev_end);
      loc_ = G().loc;
      const std::vector<VarId> results = G().results;
      ops_->push_back(MakeCopy(results[0], result_, loc_));
      for (size_t k = 0; k < spec.wrt.size(); ++k) {
        const VarId param = G().params[spec.wrt[k]];
        if (Active(param)) {
          ops_->push_back(MakeCopy(results[1 + k], adjoints_.at(param.value), loc_));
        } else {
          AssignLiteral(results[1 + k], 0.0);
        }
      }
      block.terminator = Return{};
    }
    EraseDeadZeros();
    blocks_.insert(blocks_.end(), std::make_move_iterator(dispatch_.begin()),
                   std::make_move_iterator(dispatch_.end()));
    G().blocks = std::move(blocks_);
    InitializeWhatTheReverseSweepReads(rev_start);
    // The reverse of blocks no lane returns from (a loop that never exits)
    // is unreachable; its pops must go with it (K3).
    RemoveUnreachableBlocks(G());
  }

  // The reverse of one active op.
  void ReverseOf(const PrimOp& op) {
    loc_ = op.loc;
    const AdjointRule rule = RuleOf(op);
    const Saved saved = SavedFor(op);
    const VarId z = op.outputs[0];
    VarId out;
    if (saved.output) out = Stable(z) ? z : Pop(TapeFor(z), absl::StrCat(module_.var(z).name, ".saved"));
    std::vector<VarId> restored(saved.inputs.size());
    for (size_t i = saved.inputs.size(); i-- > 0;) {
      const VarId v = saved.inputs[i];
      restored[i] = Stable(v) ? v : Pop(TapeFor(v), absl::StrCat(module_.var(v).name, ".saved"));
    }
    std::vector<VarId> in(op.inputs.size());
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      if (!rule.needs_input[j]) continue;
      const auto at = std::find(saved.inputs.begin(), saved.inputs.end(), op.inputs[j]);
      in[j] = restored[at - saved.inputs.begin()];
    }
    ReadAdjoint(adjoints_.at(z.value));
    const VarId dz = Prim(Primitive::kCopy, {adjoints_.at(z.value)}, {});
    if (!Stable(z)) ZeroAdjoint(adjoints_.at(z.value));
    const std::vector<VarId> contributions = rule.emit(*this, op, dz, in, out);
    AB_CHECK(contributions.size() == op.inputs.size());
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      const VarId x = op.inputs[j];
      VarId c = contributions[j];
      if (!c.valid() || !Active(x)) continue;
      if (TypeOf(c).shape != TypeOf(x).shape) c = Prim(Primitive::kReduceSum, {c}, {});
      Accumulate(adjoints_.at(x.value), c);
    }
  }

  // Ends `block` (the reverse of `b`, or of the exit when b == n) with the
  // jump to the reverse of the block the lane came from: popped from the
  // control tape when b had several predecessors.
  template <typename Reverse>
  void Dispatch(Block& block, size_t b, Reverse reverse) {
    const std::vector<int64_t>& preds = preds_[b];
    if (preds.empty()) {  // unreachable in the forward sweep
      block.terminator = Goto{BlockId(reverse(kStart))};
      return;
    }
    if (!pops_[b]) {
      block.terminator = Goto{BlockId(reverse(preds[0]))};
      return;
    }
    const VarId came_from = Pop(control_, "control");
    if (preds.size() == 1) {
      // It pops only because its one predecessor pushes for another
      // successor (PlanControl): nothing to choose.
      block.terminator = Goto{BlockId(reverse(preds[0]))};
      return;
    }
    const int32_t base = static_cast<int32_t>(blocks_.size() + dispatch_.size());
    // A chain: test each predecessor but the last, which is the fallback.
    for (size_t i = 0; i + 1 < preds.size(); ++i) {
      Block test;
      test.label = absl::StrCat(block.label, ".from");
      std::vector<Op>* outer = ops_;
      ops_ = &test.ops;
      const VarId is = Prim(Primitive::kEq, {came_from, Constant(preds[i])}, {});
      ops_ = outer;
      const int32_t next = base + static_cast<int32_t>(i) + 1;
      test.terminator = Branch{is, BlockId(reverse(preds[i])),
                               BlockId(i + 2 < preds.size() ? next : reverse(preds.back()))};
      dispatch_.push_back(std::move(test));
    }
    block.terminator = Goto{BlockId(base)};
  }

  Program& program_;
  Module& module_;
  FunctionId g_;
  std::string what_;
  std::set<std::string> names_;
  VarId result_;
  std::vector<bool> varied_, useful_, stable_;
  std::vector<std::vector<int64_t>> preds_;
  std::vector<bool> pops_, pushes_, returns_;
  std::map<int32_t, VarId> tapes_;
  std::map<int32_t, VarId> adjoints_;
  VarId control_;
  std::vector<Block> blocks_;
  std::vector<Block> dispatch_;
  std::vector<Op>* ops_ = nullptr;
  int32_t block_ = -1;  // the index in blocks_ ops_ belongs to, -1 elsewhere
  // Adjoint -> (block, op) of the literal 0 it holds, unread so far; and the
  // zero writes to erase (ZeroAdjoint).
  std::map<int32_t, std::pair<int32_t, size_t>> zero_;
  std::set<std::pair<int32_t, size_t>> dead_;
  SourceLoc loc_;
};

}  // namespace

absl::StatusOr<Program> Differentiate(Program program) {
  if (program.stage != Stage::kTyped) {
    return absl::FailedPreconditionError(absl::StrCat(
        "differentiate needs a typed program (run infer_types first); got stage '",
        std::string(StageName(program.stage)), "'"));
  }
  bool any = false;
  for (size_t f = 0; f < program.module.functions.size(); ++f) {
    if (!program.module.functions[f].gradient_of) continue;
    AB_RETURN_IF_ERROR(Differentiator(program, FunctionId(static_cast<int32_t>(f))).Run());
    any = true;
  }
  if (!any) return program;
  return PruneUnreachable(program);
}

}  // namespace autobatch
