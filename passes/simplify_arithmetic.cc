// simplify_arithmetic: IEEE-exact identities become copies.
#include "passes/simplify_arithmetic.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "passes/constants.h"
#include "passes/require_stage.h"
#include "support/status.h"

namespace autobatch {
namespace {

// Where the NaNs of an op's output come from.
enum class NanSource {
  kCanonical,   // it computes: every NaN it returns is the canonical one
  kDataInputs,  // it moves its data inputs' bytes
  kUnknown,     // a user kernel: anything
};

NanSource NanSourceOf(Primitive prim) {
  switch (prim) {
    case Primitive::kCopy:
    case Primitive::kSelect:
    case Primitive::kBroadcast:
    case Primitive::kSlice:
    case Primitive::kConcat:
    case Primitive::kGather:
      return NanSource::kDataInputs;
    case Primitive::kUserKernel:
      return NanSource::kUnknown;
    // Literals and casts convert with Canon (backends/kernels.h); every
    // other primitive computes.
    case Primitive::kConstant:
    case Primitive::kFillLike:
    case Primitive::kCast:
    case Primitive::kAdd:
    case Primitive::kSub:
    case Primitive::kMul:
    case Primitive::kDiv:
    case Primitive::kMod:
    case Primitive::kMin:
    case Primitive::kMax:
    case Primitive::kNeg:
    case Primitive::kAbs:
    case Primitive::kExp:
    case Primitive::kLog:
    case Primitive::kLog1p:
    case Primitive::kExpm1:
    case Primitive::kSqrt:
    case Primitive::kTanh:
    case Primitive::kSin:
    case Primitive::kCos:
    case Primitive::kAtan:
    case Primitive::kLgamma:
    case Primitive::kErfc:
    case Primitive::kDigamma:
    case Primitive::kTrigamma:
    case Primitive::kLog1pExp:
    case Primitive::kLogistic:
    case Primitive::kLogSumExp:
    case Primitive::kFloor:
    case Primitive::kPow:
    case Primitive::kLt:
    case Primitive::kLe:
    case Primitive::kGt:
    case Primitive::kGe:
    case Primitive::kEq:
    case Primitive::kNe:
    case Primitive::kAnd:
    case Primitive::kOr:
    case Primitive::kNot:
    case Primitive::kReduceSum:
    case Primitive::kDot:
    case Primitive::kSquaredNorm:
    case Primitive::kMatVec:
    case Primitive::kMatVecBatched:
    case Primitive::kMatVecInput:
    case Primitive::kMatVecTInput:
    case Primitive::kScatterAdd:
    case Primitive::kBernoulliLogitGlm:
    case Primitive::kBernoulliLogitGlmGrad:
    case Primitive::kBernoulliLogitGlmValueGrad:
    case Primitive::kRandomUniform:
    case Primitive::kRandomNormal:
      return NanSource::kCanonical;
  }
  return NanSource::kUnknown;
}

// canonical[v]: every NaN v can hold, wherever it is read, is the canonical
// quiet NaN (always true of non-float variables). The least fixed point:
// a variable counts once every write to it is proven, so values that only
// circulate among copies are never assumed.
std::vector<bool> CanonicalNans(const Module& module, const Function& function) {
  std::vector<bool> canonical(module.variables.size(), false);
  std::vector<bool> is_param(module.variables.size(), false);
  for (VarId p : function.params) is_param[p.value] = true;
  // Only the variables the function names: a module of thousands of
  // functions would otherwise cost all of its variables per function.
  auto non_float = [&](VarId v) {
    const std::optional<TensorType>& type = module.var(v).type;
    canonical[v.value] = type && !IsFloat(type->dtype);
  };
  for (VarId v : function.params) non_float(v);
  for (VarId v : function.results) non_float(v);
  for (const Block& block : function.blocks) {
    for (const Op& op : block.ops) {
      for (VarId v : OpVariables(op)) non_float(v);
    }
    if (const auto* branch = std::get_if<Branch>(&block.terminator)) non_float(branch->cond);
  }
  // Per written variable: is every write proven, given `canonical`?
  auto all_writes_proven = [&](VarId target) {
    bool proven = true;
    for (const Block& block : function.blocks) {
      for (const Op& op : block.ops) {
        const std::vector<VarId> writes = OpWrites(op);
        if (std::find(writes.begin(), writes.end(), target) == writes.end()) continue;
        const PrimOp* prim = std::get_if<PrimOp>(&op);
        if (prim == nullptr) return false;  // a call result: the callee's NaNs
        switch (NanSourceOf(prim->prim)) {
          case NanSource::kCanonical:
            break;
          case NanSource::kUnknown:
            return false;
          case NanSource::kDataInputs: {
            const size_t first = prim->prim == Primitive::kSelect ? 1 : 0;
            for (size_t i = first; i < prim->inputs.size(); ++i) {
              proven = proven && canonical[prim->inputs[i].value];
            }
            break;
          }
        }
      }
    }
    return proven;
  };
  std::vector<VarId> candidates;
  for (const Block& block : function.blocks) {
    for (const Op& op : block.ops) {
      for (VarId v : OpWrites(op)) {
        if (!canonical[v.value] && !is_param[v.value]) candidates.push_back(v);
      }
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (bool changed = true; changed;) {
    changed = false;
    for (VarId v : candidates) {
      if (canonical[v.value] || !all_writes_proven(v)) continue;
      canonical[v.value] = true;
      changed = true;
    }
  }
  return canonical;
}

// The last write of `out` in the block so far, when it is a one-output
// neg or abs of `in` and neither has been written since.
struct SignOp {
  VarId out;
  Primitive prim;
  VarId in;
};

class Simplifier {
 public:
  Simplifier(const Module& module, const Function& function)
      : module_(module), known_(module, function), canonical_(CanonicalNans(module, function)) {}

  void Run(Block& block) {
    known_.StartBlock();
    sign_ops_.clear();
    std::vector<Op> ops;
    for (Op& op : block.ops) {
      if (PrimOp* prim = std::get_if<PrimOp>(&op)) {
        if (std::optional<PrimOp> simpler = Simplified(*prim)) {
          if (AsSelfCopy(*simpler) && !module_.var(simpler->outputs[0]).uniform) {
            Forget(OpWrites(op));  // nothing is written; forgetting is merely cautious
            continue;
          }
          op = *std::move(simpler);
        }
      }
      Forget(OpWrites(op));
      known_.AfterOp(op);
      Learn(op);
      ops.push_back(std::move(op));
    }
    block.ops = std::move(ops);
  }

 private:
  static bool AsSelfCopy(const PrimOp& op) {
    return op.prim == Primitive::kCopy && op.inputs[0] == op.outputs[0];
  }

  const TensorType& TypeOf(VarId v) const { return *module_.var(v).type; }

  bool Is(VarId v, double x) const {
    const ConstantValue* value = known_.Here(v);
    return value != nullptr && EveryElementIs(*value, x);
  }

  // `out = x`, as a copy or (x scalar, out not) a broadcast; nullopt when
  // x may hold a NaN the op would have made canonical.
  std::optional<PrimOp> Becomes(const PrimOp& op, VarId x, bool canonicalizes = true) const {
    if (canonicalizes && !canonical_[x.value]) return std::nullopt;
    const TensorType& want = TypeOf(op.outputs[0]);
    const TensorType& have = TypeOf(x);
    PrimOp result;
    result.outputs = op.outputs;
    result.inputs = {x};
    result.loc = op.loc;
    if (want == have) {
      result.prim = Primitive::kCopy;
    } else if (have.IsScalar() && have.dtype == want.dtype) {
      result.prim = Primitive::kBroadcast;
      result.attrs.ints = want.shape;
    } else {
      return std::nullopt;
    }
    return result;
  }

  // The inner op of neg(neg x) / abs(abs x), if `v` still holds one.
  const SignOp* SignOpOf(VarId v, Primitive prim) const {
    for (const SignOp& s : sign_ops_) {
      if (s.out == v && s.prim == prim) return &s;
    }
    return nullptr;
  }

  std::optional<PrimOp> Simplified(const PrimOp& op) const {
    if (op.outputs.size() != 1 || !module_.var(op.outputs[0]).type) return std::nullopt;
    const std::vector<VarId>& in = op.inputs;
    switch (op.prim) {
      case Primitive::kMul:
        if (Is(in[1], 1)) return Becomes(op, in[0]);
        if (Is(in[0], 1)) return Becomes(op, in[1]);
        return std::nullopt;
      case Primitive::kDiv:
        if (Is(in[1], 1)) return Becomes(op, in[0]);
        return std::nullopt;
      case Primitive::kSub:
        if (Is(in[1], 0.0)) return Becomes(op, in[0]);
        return std::nullopt;
      case Primitive::kAdd:
        if (Is(in[1], -0.0)) return Becomes(op, in[0]);
        if (Is(in[0], -0.0)) return Becomes(op, in[1]);
        return std::nullopt;
      case Primitive::kNeg:
        if (const SignOp* inner = SignOpOf(in[0], Primitive::kNeg)) return Becomes(op, inner->in);
        return std::nullopt;
      case Primitive::kAbs:
        if (SignOpOf(in[0], Primitive::kAbs) != nullptr) {
          return Becomes(op, in[0], /*canonicalizes=*/false);  // abs's output is canonical
        }
        return std::nullopt;
      case Primitive::kMin:
      case Primitive::kMax:
        if (in[0] == in[1]) return Becomes(op, in[0]);
        return std::nullopt;
      case Primitive::kCast:
        if (op.attrs.dtype == TypeOf(in[0]).dtype && TypeOf(in[0]).dtype != DType::kBool) {
          return Becomes(op, in[0]);
        }
        return std::nullopt;
      case Primitive::kSelect:
        if (in[1] == in[2] || Is(in[0], 1)) return Becomes(op, in[1], /*canonicalizes=*/false);
        if (Is(in[0], 0)) return Becomes(op, in[2], /*canonicalizes=*/false);
        return std::nullopt;
      default:
        return std::nullopt;  // no identity for the other primitives
    }
  }

  void Forget(const std::vector<VarId>& written) {
    std::erase_if(sign_ops_, [&](const SignOp& s) {
      return std::find(written.begin(), written.end(), s.out) != written.end() ||
             std::find(written.begin(), written.end(), s.in) != written.end();
    });
  }

  void Learn(const Op& op) {
    const PrimOp* prim = std::get_if<PrimOp>(&op);
    if (prim == nullptr || prim->outputs.size() != 1 || prim->inputs.size() != 1) return;
    if (prim->prim != Primitive::kNeg && prim->prim != Primitive::kAbs) return;
    if (prim->inputs[0] == prim->outputs[0]) return;  // `x = neg x` no longer holds neg of x
    sign_ops_.push_back(SignOp{prim->outputs[0], prim->prim, prim->inputs[0]});
  }

  const Module& module_;
  KnownConstants known_;
  const std::vector<bool> canonical_;
  std::vector<SignOp> sign_ops_;
};

}  // namespace

absl::StatusOr<Program> SimplifyArithmetic(Program program) {
  AB_RETURN_IF_ERROR(RequireStage(program, "simplify_arithmetic", {Stage::kTyped},
                                  "it runs after infer_types and before allocate_variables"));
  for (Function& function : program.module.functions) {
    Simplifier simplifier(program.module, function);
    for (Block& block : function.blocks) simplifier.Run(block);
  }
  return program;
}

}  // namespace autobatch
