// Tiny scalar executors for the pass tests.
#include "tests/passes/machine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch::testing {
namespace {

constexpr int64_t kMaxSteps = 1000000;
constexpr size_t kMaxDepth = 10000;

absl::Status Fail(std::string message) {
  return absl::FailedPreconditionError(std::move(message));
}

bool IsInt(const Module& m, VarId v) {
  const auto& t = m.var(v).type;
  return t && !IsFloat(t->dtype);
}

double Literal0(const Literal& l) {
  return IsFloat(l.type.dtype) ? l.floats.at(0) : static_cast<double>(l.ints.at(0));
}

absl::StatusOr<double> Eval(const Module& m, const PrimOp& op, const Values& in) {
  const bool integer = !op.outputs.empty() && IsInt(m, op.outputs[0]);
  auto as_int = [](double x) { return static_cast<int64_t>(x); };
  switch (op.prim) {
    case Primitive::kConstant: return Literal0(*op.attrs.literal);
    case Primitive::kFillLike: {
      double v = Literal0(*op.attrs.literal);
      return integer ? std::trunc(v) : v;
    }
    case Primitive::kCopy: return in[0];
    case Primitive::kAdd: return in[0] + in[1];
    case Primitive::kSub: return in[0] - in[1];
    case Primitive::kMul: return in[0] * in[1];
    case Primitive::kDiv:
      if (!integer) return in[0] / in[1];
      if (as_int(in[1]) == 0) return 0.0;
      return static_cast<double>(as_int(in[0]) / as_int(in[1]));
    case Primitive::kMod:
      if (!integer) return std::fmod(in[0], in[1]);
      if (as_int(in[1]) == 0) return in[0];
      return static_cast<double>(as_int(in[0]) % as_int(in[1]));
    case Primitive::kNeg: return -in[0];
    case Primitive::kLt: return in[0] < in[1] ? 1.0 : 0.0;
    case Primitive::kLe: return in[0] <= in[1] ? 1.0 : 0.0;
    case Primitive::kGt: return in[0] > in[1] ? 1.0 : 0.0;
    case Primitive::kGe: return in[0] >= in[1] ? 1.0 : 0.0;
    case Primitive::kEq: return in[0] == in[1] ? 1.0 : 0.0;
    case Primitive::kNe: return in[0] != in[1] ? 1.0 : 0.0;
    case Primitive::kAnd: return (in[0] != 0 && in[1] != 0) ? 1.0 : 0.0;
    case Primitive::kOr: return (in[0] != 0 || in[1] != 0) ? 1.0 : 0.0;
    case Primitive::kNot: return in[0] == 0 ? 1.0 : 0.0;
    case Primitive::kSelect: return in[0] != 0 ? in[1] : in[2];
    default:
      return Fail(absl::StrCat("test machine: unsupported primitive ",
                               std::string(PrimitiveName(op.prim))));
  }
}

// --- reference interpreter -----------------------------------------------------

class Reference {
 public:
  explicit Reference(const Program& p) : p_(p), m_(p.module) {}

  absl::StatusOr<Values> Call(FunctionId f, const Values& args, size_t depth) {
    if (depth > kMaxDepth) return Fail("reference: recursion too deep");
    const Function& fn = m_.function(f);
    std::vector<double> vals(m_.variables.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 0; i < args.size(); ++i) vals[fn.params[i].value] = args[i];
    int32_t b = 0;
    while (true) {
      if (++steps_ > kMaxSteps) return Fail("reference: step budget exhausted");
      const Block& block = fn.blocks.at(b);
      for (const Op& op : block.ops) {
        if (const auto* prim = std::get_if<PrimOp>(&op)) {
          Values in;
          for (VarId v : prim->inputs) in.push_back(vals[v.value]);
          AB_ASSIGN_OR_RETURN(double out, Eval(m_, *prim, in));
          vals[prim->outputs[0].value] = out;
        } else if (const auto* call = std::get_if<CallOp>(&op)) {
          Values in;
          for (VarId v : call->args) in.push_back(vals[v.value]);
          AB_ASSIGN_OR_RETURN(Values out, Call(call->callee, in, depth + 1));
          for (size_t j = 0; j < out.size(); ++j) vals[call->results[j].value] = out[j];
        } else {
          return Fail("reference: a PopOp in an unlowered program, or a tape op (not run here)");
        }
      }
      const Terminator& t = block.terminator;
      if (const auto* br = std::get_if<Branch>(&t)) {
        b = vals[br->cond.value] != 0 ? br->then_block.value : br->else_block.value;
      } else if (const auto* g = std::get_if<Goto>(&t)) {
        b = g->target.value;
      } else if (std::holds_alternative<Return>(t) || std::holds_alternative<Halt>(t)) {
        Values out;
        for (VarId v : fn.results) out.push_back(vals[v.value]);
        return out;
      } else {
        return Fail("reference: lowered terminator in an unlowered program");
      }
    }
  }

 private:
  const Program& p_;
  const Module& m_;
  int64_t steps_ = 0;
};

// --- stack machine -------------------------------------------------------------

struct Lane {
  std::vector<std::pair<FunctionId, BlockId>> pc_stack;
  FunctionId f;
  BlockId b;
  bool halted = false;
  int64_t blocks_run = 0;
  std::vector<std::vector<double>> full;  // per variable
  std::vector<double> reg;
  std::vector<bool> reg_set;
  std::vector<bool> temp_set;  // written in the current block run
};

class StackMachine {
 public:
  explicit StackMachine(const Program& p) : p_(p), m_(p.module) {
    int32_t offset = 0;
    for (const Function& fn : m_.functions) {
      offsets_.push_back(offset);
      offset += static_cast<int32_t>(fn.blocks.size());
    }
  }

  absl::StatusOr<StackRun> Run(const std::vector<Values>& inputs) {
    const Function& entry = m_.function(p_.entry);
    std::vector<Lane> lanes(inputs.size());
    const size_t nv = m_.variables.size();
    for (size_t l = 0; l < lanes.size(); ++l) {
      Lane& lane = lanes[l];
      lane.full.resize(nv);
      lane.reg.assign(nv, 0);
      lane.reg_set.assign(nv, false);
      lane.temp_set.assign(nv, false);
      lane.f = p_.entry;
      lane.b = BlockId(0);
      for (size_t i = 0; i < entry.params.size(); ++i) {
        AB_RETURN_IF_ERROR(Write(lane, entry.params[i], inputs[l].at(i), false));
      }
    }
    StackRun run;
    for (const Function& fn : m_.functions) run.executions.emplace_back(fn.blocks.size(), 0);
    while (true) {
      int32_t best = -1;
      for (const Lane& lane : lanes) {
        if (lane.halted) continue;
        const int32_t g = offsets_[lane.f.value] + lane.b.value;
        if (best < 0 || g < best) best = g;
      }
      if (best < 0) break;
      if (++run.block_executions > kMaxSteps) return Fail("stack machine: step budget");
      for (size_t f = 0; f < offsets_.size(); ++f) {
        const int32_t local = best - offsets_[f];
        if (local >= 0 && local < static_cast<int32_t>(m_.functions[f].blocks.size())) {
          ++run.executions[f][local];
        }
      }
      for (size_t l = 0; l < lanes.size(); ++l) {
        Lane& lane = lanes[l];
        if (lane.halted || offsets_[lane.f.value] + lane.b.value != best) continue;
        ++run.lane_block_executions;
        ++lane.blocks_run;
        run.max_lane_block_executions =
            std::max(run.max_lane_block_executions, lane.blocks_run);
        AB_RETURN_IF_ERROR(Step(lane, l));
      }
    }
    for (size_t l = 0; l < lanes.size(); ++l) {
      Lane& lane = lanes[l];
      Values out;
      for (VarId v : entry.results) {
        AB_ASSIGN_OR_RETURN(double x, Read(lane, v));
        out.push_back(x);
      }
      run.outputs.push_back(out);
      for (size_t v = 0; v < nv; ++v) {
        const VarId id(static_cast<int32_t>(v));
        const bool is_result = std::find(entry.results.begin(), entry.results.end(), id) !=
                               entry.results.end();
        const size_t expected = is_result ? 1 : 0;
        if (m_.var(id).storage == StorageClass::kFull && lane.full[v].size() != expected) {
          return Fail(absl::StrCat("stack machine: lane ", l, " halted with ",
                                   lane.full[v].size(), " frame(s) of '", m_.var(id).name,
                                   "' (function '", m_.function(m_.var(id).function).name,
                                   "'), expected ", expected));
        }
      }
    }
    return run;
  }

 private:
  std::string Where(const Lane& lane) const {
    const Function& fn = m_.function(lane.f);
    return absl::StrCat("'", fn.name, "' ^", lane.b.value, " (",
                        fn.blocks[lane.b.value].label, ")");
  }

  absl::StatusOr<double> Read(Lane& lane, VarId v) {
    const Variable& var = m_.var(v);
    switch (var.storage) {
      case StorageClass::kFull:
        if (lane.full[v.value].empty()) {
          return Fail(absl::StrCat("stack machine: read of '", var.name,
                                   "' with an empty stack in ", Where(lane)));
        }
        return lane.full[v.value].back();
      case StorageClass::kRegister:
        if (!lane.reg_set[v.value]) {
          return Fail(absl::StrCat("stack machine: read of unwritten register '", var.name,
                                   "' in ", Where(lane)));
        }
        return lane.reg[v.value];
      case StorageClass::kTemporary:
        if (!lane.temp_set[v.value]) {
          return Fail(absl::StrCat("stack machine: read of temp '", var.name,
                                   "' not written earlier in this block, in ", Where(lane)));
        }
        return lane.reg[v.value];
      case StorageClass::kNull:
        return Fail(absl::StrCat("stack machine: read of null '", var.name, "' in ",
                                 Where(lane)));
      case StorageClass::kTape:
        return Fail(absl::StrCat("stack machine: tape '", var.name, "' read as a value in ",
                                 Where(lane)));
    }
    return Fail("bad storage class");
  }

  absl::Status Write(Lane& lane, VarId v, double x, bool in_place) {
    const Variable& var = m_.var(v);
    switch (var.storage) {
      case StorageClass::kFull:
        if (in_place) {
          if (lane.full[v.value].empty()) {
            return Fail(absl::StrCat("stack machine: in-place write of '", var.name,
                                     "' with an empty stack in ", Where(lane)));
          }
          lane.full[v.value].back() = x;
        } else {
          lane.full[v.value].push_back(x);
        }
        return absl::OkStatus();
      case StorageClass::kRegister:
        lane.reg[v.value] = x;
        lane.reg_set[v.value] = true;
        return absl::OkStatus();
      case StorageClass::kTemporary:
        lane.reg[v.value] = x;
        lane.temp_set[v.value] = true;
        return absl::OkStatus();
      case StorageClass::kNull:
        return absl::OkStatus();
      case StorageClass::kTape:
        return Fail(absl::StrCat("stack machine: tape '", var.name, "' written as a value in ",
                                 Where(lane)));
    }
    return Fail("bad storage class");
  }

  absl::Status Step(Lane& lane, size_t) {
    const Function& fn = m_.function(lane.f);
    const Block& block = fn.blocks.at(lane.b.value);
    std::fill(lane.temp_set.begin(), lane.temp_set.end(), false);
    for (const Op& op : block.ops) {
      if (const auto* prim = std::get_if<PrimOp>(&op)) {
        Values in;
        for (VarId v : prim->inputs) {
          AB_ASSIGN_OR_RETURN(double x, Read(lane, v));
          in.push_back(x);
        }
        AB_ASSIGN_OR_RETURN(double out, Eval(m_, *prim, in));
        const VarId o = prim->outputs[0];
        const bool in_place =
            std::find(prim->in_place.begin(), prim->in_place.end(), o) != prim->in_place.end();
        AB_RETURN_IF_ERROR(Write(lane, o, out, in_place));
      } else if (const auto* pop = std::get_if<PopOp>(&op)) {
        for (VarId v : pop->vars) {
          if (m_.var(v).storage != StorageClass::kFull || lane.full[v.value].empty()) {
            return Fail(absl::StrCat("stack machine: pop of '", m_.var(v).name,
                                     "' (empty or not full) in ", Where(lane)));
          }
          lane.full[v.value].pop_back();
        }
      } else {
        return Fail("stack machine: a CallOp in a lowered program, or a tape op (not run here)");
      }
    }
    const Terminator& t = block.terminator;
    if (const auto* br = std::get_if<Branch>(&t)) {
      AB_ASSIGN_OR_RETURN(double c, Read(lane, br->cond));
      lane.b = c != 0 ? br->then_block : br->else_block;
    } else if (const auto* g = std::get_if<Goto>(&t)) {
      lane.b = g->target;
    } else if (const auto* push = std::get_if<PushGoto>(&t)) {
      if (lane.pc_stack.size() > kMaxDepth) return Fail("stack machine: too deep");
      lane.pc_stack.push_back({lane.f, push->return_to});
      lane.f = push->callee;
      lane.b = BlockId(0);
    } else if (std::holds_alternative<IndirectGoto>(t)) {
      if (lane.pc_stack.empty()) {
        lane.halted = true;
      } else {
        lane.f = lane.pc_stack.back().first;
        lane.b = lane.pc_stack.back().second;
        lane.pc_stack.pop_back();
      }
    } else if (std::holds_alternative<Halt>(t)) {
      lane.halted = true;
    } else {
      return Fail("stack machine: Return in a lowered program");
    }
    return absl::OkStatus();
  }

  const Program& p_;
  const Module& m_;
  std::vector<int32_t> offsets_;
};

}  // namespace

absl::StatusOr<Values> RunReference(const Program& program, const Values& inputs) {
  Reference ref(program);
  return ref.Call(program.entry, inputs, 0);
}

absl::StatusOr<StackRun> RunStackMachine(const Program& program,
                                         const std::vector<Values>& lane_inputs) {
  StackMachine machine(program);
  return machine.Run(lane_inputs);
}

::testing::AssertionResult AgreesWithReference(const Program& unlowered,
                                               const Program& lowered,
                                               const std::vector<Values>& lane_inputs,
                                               StackRun* run) {
  absl::StatusOr<StackRun> stack = RunStackMachine(lowered, lane_inputs);
  if (!stack.ok()) return ::testing::AssertionFailure() << stack.status();
  for (size_t l = 0; l < lane_inputs.size(); ++l) {
    absl::StatusOr<Values> expected = RunReference(unlowered, lane_inputs[l]);
    if (!expected.ok()) return ::testing::AssertionFailure() << expected.status();
    if (stack->outputs[l] != *expected) {
      ::testing::AssertionResult failure = ::testing::AssertionFailure();
      failure << "lane " << l << ": stack machine gives";
      for (double x : stack->outputs[l]) failure << " " << x;
      failure << ", reference gives";
      for (double x : *expected) failure << " " << x;
      return failure;
    }
  }
  if (run != nullptr) *run = *std::move(stack);
  return ::testing::AssertionSuccess();
}

std::vector<Values> SmallLaneInputs(size_t num_params) {
  std::vector<Values> inputs;
  for (int a = 0; a <= 6; ++a) {
    Values lane(num_params, static_cast<double>(a));
    if (lane.size() > 1) lane[1] = 3;
    inputs.push_back(lane);
  }
  return inputs;
}

}  // namespace autobatch::testing
