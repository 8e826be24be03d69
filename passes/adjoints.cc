// The adjoint table (passes/adjoints.h).
#include "passes/adjoints.h"

#include <memory>
#include <utility>

#include "support/status.h"

namespace autobatch {
namespace {

using P = Primitive;
using Emit = decltype(AdjointRule::emit);

struct Entry {
  std::string_view doc;
  AdjointRule rule;
};

// An op that passes no gradient.
Entry None(std::string_view doc) { return {doc, {}}; }

Entry Rule(std::string_view doc, std::vector<bool> needs_input, bool needs_output, Emit emit,
           std::vector<bool> refuses_input = {}) {
  return {doc,
          {true, std::move(needs_input), needs_output, std::move(emit), std::move(refuses_input)}};
}

// zeros shaped like `v`.
VarId Zero(AdjointEmitter& e, VarId v) { return e.Fill(v, 0.0); }

VarId Mul(AdjointEmitter& e, VarId a, VarId b) { return e.Prim(P::kMul, {a, b}); }
VarId Div(AdjointEmitter& e, VarId a, VarId b) { return e.Prim(P::kDiv, {a, b}); }
VarId Neg(AdjointEmitter& e, VarId a) { return e.Prim(P::kNeg, {a}); }
VarId Add(AdjointEmitter& e, VarId a, VarId b) { return e.Prim(P::kAdd, {a, b}); }
VarId Sub(AdjointEmitter& e, VarId a, VarId b) { return e.Prim(P::kSub, {a, b}); }
VarId Select(AdjointEmitter& e, VarId c, VarId a, VarId b) {
  return e.Prim(P::kSelect, {c, a, b});
}
// dz where `mask` holds, else 0 (mask has dz's shape or is a scalar).
VarId Where(AdjointEmitter& e, VarId mask, VarId dz) {
  return Select(e, mask, dz, Zero(e, dz));
}

// A vector of `n` f64 zeros.
VarId Zeros(AdjointEmitter& e, int64_t n) {
  Attributes attrs;
  attrs.literal = Literal{Vector(DType::kF64, n), std::vector<double>(n, 0.0), {}};
  return e.Prim(P::kConstant, {}, std::move(attrs));
}

// dz[begin : begin + size] (a vector), or the scalar dz[begin] when
// `scalar`.
VarId SliceOf(AdjointEmitter& e, VarId dz, int64_t begin, int64_t size, bool scalar) {
  Attributes attrs;
  attrs.ints = {begin, size};
  const VarId piece = e.Prim(P::kSlice, {dz}, std::move(attrs));
  return scalar ? e.Prim(P::kReduceSum, {piece}) : piece;
}

Entry EntryOf(Primitive prim, size_t n) {
  switch (prim) {
    case P::kConstant:
      return None("constant: no inputs");
    case P::kFillLike:
      return None("fill_like: no gradient (only x's shape is used)");
    case P::kCopy:
      return Rule("copy: dx = dz", {false}, false,
                  [](AdjointEmitter&, const PrimOp&, VarId dz, auto&, VarId) {
                    return std::vector<VarId>{dz};
                  });
    case P::kSelect:
      return Rule("select: da = c ? dz : 0, db = c ? 0 : dz; the condition gets none",
                  {true, false, false}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    const VarId zero = Zero(e, dz);
                    return std::vector<VarId>{VarId(), Select(e, in[0], dz, zero),
                                              Select(e, in[0], zero, dz)};
                  });
    case P::kCast:
      return Rule("cast: dx = dz from f64 to f64; casts to or from any other dtype pass none",
                  {false}, false,
                  [](AdjointEmitter&, const PrimOp&, VarId dz, auto&, VarId) {
                    return std::vector<VarId>{dz};
                  });
    case P::kBroadcast:
      return Rule("broadcast: dx = sum of dz", {false}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId) {
                    return std::vector<VarId>{e.Prim(P::kReduceSum, {dz})};
                  });
    case P::kSlice:
      return Rule("slice: dx = dz placed at [begin, begin + size), zeros elsewhere", {false},
                  false, [](AdjointEmitter& e, const PrimOp& op, VarId dz, auto&, VarId) {
                    const int64_t n = e.TypeOf(op.inputs[0]).NumElements();
                    const int64_t begin = op.attrs.ints.at(0);
                    const int64_t size = op.attrs.ints.at(1);
                    std::vector<VarId> parts;
                    if (begin > 0) parts.push_back(Zeros(e, begin));
                    parts.push_back(dz);
                    if (begin + size < n) parts.push_back(Zeros(e, n - begin - size));
                    return std::vector<VarId>{parts.size() == 1 ? dz
                                                                : e.Prim(P::kConcat, parts)};
                  });
    case P::kConcat:
      return Rule("concat: each input gets its own slice of dz", std::vector<bool>(n, false),
                  false, [](AdjointEmitter& e, const PrimOp& op, VarId dz, auto&, VarId) {
                    std::vector<VarId> out;
                    int64_t offset = 0;
                    for (VarId x : op.inputs) {
                      const TensorType& type = e.TypeOf(x);
                      const int64_t size = type.NumElements();
                      out.push_back(SliceOf(e, dz, offset, size, type.IsScalar()));
                      offset += size;
                    }
                    return out;
                  });
    case P::kAdd:
      return Rule("add: da = dz, db = dz", {false, false}, false,
                  [](AdjointEmitter&, const PrimOp&, VarId dz, auto&, VarId) {
                    return std::vector<VarId>{dz, dz};
                  });
    case P::kSub:
      return Rule("sub: da = dz, db = -dz", {false, false}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId) {
                    return std::vector<VarId>{dz, Neg(e, dz)};
                  });
    case P::kMul:
      return Rule("mul: da = dz * b, db = dz * a", {true, true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Mul(e, dz, in[1]), Mul(e, dz, in[0])};
                  });
    case P::kDiv:
      return Rule("div: da = dz / b, db = -(dz / b) * z (z = a / b; floats only)",
                  {false, true}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId z) {
                    const VarId da = Div(e, dz, in[1]);
                    return std::vector<VarId>{da, Neg(e, Mul(e, da, z))};
                  });
    case P::kMod:
      return Rule("mod (fmod): da = dz, db = -dz * (a - z) / b, (a - z) / b being the "
                  "truncated quotient",
                  {true, true}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId z) {
                    const VarId quotient = Div(e, Sub(e, in[0], z), in[1]);
                    return std::vector<VarId>{dz, Neg(e, Mul(e, dz, quotient))};
                  });
    case P::kMin:
      return Rule("min: da = dz where a <= b, db = dz where b < a (ties go to a; a NaN "
                  "operand passes none)",
                  {true, true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Where(e, e.Prim(P::kLe, {in[0], in[1]}), dz),
                                              Where(e, e.Prim(P::kLt, {in[1], in[0]}), dz)};
                  });
    case P::kMax:
      return Rule("max: da = dz where a >= b, db = dz where b > a (ties go to a; a NaN "
                  "operand passes none)",
                  {true, true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Where(e, e.Prim(P::kGe, {in[0], in[1]}), dz),
                                              Where(e, e.Prim(P::kGt, {in[1], in[0]}), dz)};
                  });
    case P::kNeg:
      return Rule("neg: dx = -dz", {false}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId) {
                    return std::vector<VarId>{Neg(e, dz)};
                  });
    case P::kAbs:
      return Rule("abs: dx = dz where x > 0, -dz where x < 0, 0 at x = 0 and for NaN",
                  {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    const VarId x = in[0];
                    const VarId zero = Zero(e, x);
                    const VarId negative =
                        Where(e, e.Prim(P::kLt, {x, zero}), Neg(e, dz));
                    return std::vector<VarId>{
                        Select(e, e.Prim(P::kGt, {x, zero}), dz, negative)};
                  });
    case P::kExp:
      return Rule("exp: dx = dz * z", {false}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId z) {
                    return std::vector<VarId>{Mul(e, dz, z)};
                  });
    case P::kLog:
      return Rule("log: dx = dz / x", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Div(e, dz, in[0])};
                  });
    case P::kLog1p:
      return Rule("log1p: dx = dz / (1 + x)", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Div(e, dz, Add(e, e.Fill(in[0], 1.0), in[0]))};
                  });
    case P::kExpm1:
      return Rule("expm1: dx = dz * (z + 1)", {false}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId z) {
                    return std::vector<VarId>{Mul(e, dz, Add(e, z, e.Fill(z, 1.0)))};
                  });
    case P::kSqrt:
      return Rule("sqrt: dx = (dz * 0.5) / z (inf at x = 0)", {false}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId z) {
                    return std::vector<VarId>{Div(e, Mul(e, dz, e.Fill(dz, 0.5)), z)};
                  });
    case P::kTanh:
      return Rule("tanh: dx = dz * (1 - z * z)", {false}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId z) {
                    return std::vector<VarId>{
                        Mul(e, dz, Sub(e, e.Fill(z, 1.0), Mul(e, z, z)))};
                  });
    case P::kFloor:
      return None("floor: no gradient (piecewise constant)");
    case P::kPow:
      return Rule("pow: da = dz * b * a^(b - 1), db = dz * z * log(a) where a > 0, "
                  "else 0",
                  {true, true}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId z) {
                    const VarId a = in[0];
                    const VarId b = in[1];
                    const VarId power = e.Prim(P::kPow, {a, Sub(e, b, e.Fill(b, 1.0))});
                    const VarId da = Mul(e, Mul(e, dz, b), power);
                    const VarId positive = e.Prim(P::kGt, {a, e.Fill(a, 0.0)});
                    const VarId db =
                        Where(e, positive, Mul(e, Mul(e, dz, z), e.Prim(P::kLog, {a})));
                    return std::vector<VarId>{da, db};
                  });
    case P::kLt:
    case P::kLe:
    case P::kGt:
    case P::kGe:
    case P::kEq:
    case P::kNe:
      return None("comparison: no gradient (bool result)");
    case P::kAnd:
    case P::kOr:
    case P::kNot:
      return None("logic: no gradient (bool)");
    case P::kReduceSum:
      return Rule("reduce_sum: dx = dz broadcast to x's shape", {false}, false,
                  [](AdjointEmitter& e, const PrimOp& op, VarId dz, auto&, VarId) {
                    const TensorType& type = e.TypeOf(op.inputs[0]);
                    if (type.IsScalar()) return std::vector<VarId>{dz};
                    Attributes attrs;
                    attrs.ints = type.shape;
                    return std::vector<VarId>{e.Prim(P::kBroadcast, {dz}, std::move(attrs))};
                  });
    case P::kDot:
      return Rule("dot: da = dz * b, db = dz * a", {true, true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Mul(e, dz, in[1]), Mul(e, dz, in[0])};
                  });
    case P::kSquaredNorm:
      return Rule("squared_norm: dx = (dz + dz) * x", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Mul(e, Add(e, dz, dz), in[0])};
                  });
    case P::kMatVec:
    case P::kMatVecBatched:
      return Rule("matvec, matvec_batched: dx = M^T dz (the same primitive, transposed matrix)",
                  {false}, false,
                  [prim](AdjointEmitter& e, const PrimOp& op, VarId dz, auto&, VarId) {
                    const DenseMatrix& m = *op.attrs.matrix;
                    auto t = std::make_shared<DenseMatrix>();
                    t->rows = m.cols;
                    t->cols = m.rows;
                    t->data.resize(m.data.size());
                    for (int64_t i = 0; i < m.rows; ++i) {
                      for (int64_t j = 0; j < m.cols; ++j) {
                        t->data[j * m.rows + i] = m.data[i * m.cols + j];
                      }
                    }
                    Attributes attrs;
                    attrs.matrix = std::move(t);
                    return std::vector<VarId>{e.Prim(prim, {dz}, std::move(attrs))};
                  });
    case P::kSin:
      return Rule("sin: dx = dz * cos(x)", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Mul(e, dz, e.Prim(P::kCos, {in[0]}))};
                  });
    case P::kCos:
      return Rule("cos: dx = -(dz * sin(x))", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Neg(e, Mul(e, dz, e.Prim(P::kSin, {in[0]})))};
                  });
    case P::kAtan:
      return Rule("atan: dx = dz / (1 + x * x) (0 at x = +-inf)", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    const VarId x = in[0];
                    return std::vector<VarId>{
                        Div(e, dz, Add(e, e.Fill(x, 1.0), Mul(e, x, x)))};
                  });
    case P::kLgamma:
      return Rule("lgamma: dx = dz * digamma(x) (NaN at the poles 0, -1, -2, ...)", {true},
                  false, [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Mul(e, dz, e.Prim(P::kDigamma, {in[0]}))};
                  });
    case P::kDigamma:
      return Rule("digamma: dx = dz * trigamma(x)", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Mul(e, dz, e.Prim(P::kTrigamma, {in[0]}))};
                  });
    case P::kTrigamma:
      return Rule("trigamma: no gradient (its derivative, tetragamma, is not a primitive); "
                  "a trigamma on the differentiated path is an error",
                  {false}, false, nullptr, {true});
    case P::kErfc:
      return Rule("erfc: dx = dz * -(2 / sqrt(pi)) * exp(-(x * x))", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    const VarId x = in[0];
                    const VarId gauss = e.Prim(P::kExp, {Neg(e, Mul(e, x, x))});
                    const VarId slope = Mul(e, e.Fill(x, -1.1283791670955126), gauss);
                    return std::vector<VarId>{Mul(e, dz, slope)};
                  });
    case P::kLog1pExp:
      return Rule("log1p_exp: dx = dz * logistic(x)", {true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{Mul(e, dz, e.Prim(P::kLogistic, {in[0]}))};
                  });
    case P::kLogistic:
      return Rule("logistic: dx = dz * (z * (1 - z))", {false}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto&, VarId z) {
                    return std::vector<VarId>{
                        Mul(e, dz, Mul(e, z, Sub(e, e.Fill(z, 1.0), z)))};
                  });
    case P::kLogSumExp:
      return Rule("log_sum_exp: dx = dz * exp(x - z) (the softmax; NaN where z is +-inf)",
                  {true}, true,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId z) {
                    const VarId softmax = e.Prim(P::kExp, {Sub(e, in[0], z)});
                    return std::vector<VarId>{Mul(e, dz, softmax)};
                  });
    case P::kGather:
      return Rule("gather: dx = scatter_add(dz, idx, n) (clamped indices, as gather reads); "
                  "the indices get none",
                  {false, true}, false,
                  [](AdjointEmitter& e, const PrimOp& op, VarId dz, auto& in, VarId) {
                    Attributes attrs;
                    attrs.ints = {e.TypeOf(op.inputs[0]).NumElements()};
                    return std::vector<VarId>{
                        e.Prim(P::kScatterAdd, {dz, in[1]}, std::move(attrs)), VarId()};
                  });
    case P::kScatterAdd:
      return Rule("scatter_add: dv = gather(dz, idx); the indices get none", {false, true},
                  false, [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{e.Prim(P::kGather, {dz, in[1]}), VarId()};
                  });
    case P::kMatVecInput:
      return Rule("matvec_input: dx = matvec_t_input(M, dz); the matrix M (data) gets none: "
                  "an M that depends on a wrt parameter is an error",
                  {true, false}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{VarId(), e.Prim(P::kMatVecTInput, {in[0], dz})};
                  },
                  {true, false});
    case P::kMatVecTInput:
      return Rule("matvec_t_input: dy = matvec_input(M, dz); the matrix M (data) gets none: "
                  "an M that depends on a wrt parameter is an error",
                  {true, false}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    return std::vector<VarId>{VarId(), e.Prim(P::kMatVecInput, {in[0], dz})};
                  },
                  {true, false});
    case P::kBernoulliLogitGlm:
      return Rule("bernoulli_logit_glm: g = bernoulli_logit_glm_grad(X, y, alpha, beta), "
                  "dalpha = dz * g[0], dbeta = dz * g[1..K]; X and y (data) get none: "
                  "an X that depends on a wrt parameter is an error",
                  {true, true, true, true}, false,
                  [](AdjointEmitter& e, const PrimOp&, VarId dz, auto& in, VarId) {
                    const VarId g =
                        e.Prim(P::kBernoulliLogitGlmGrad, {in[0], in[1], in[2], in[3]});
                    const int64_t k = e.TypeOf(in[3]).NumElements();
                    const VarId dalpha = Mul(e, dz, SliceOf(e, g, 0, 1, /*scalar=*/true));
                    const VarId dbeta = Mul(e, SliceOf(e, g, 1, k, /*scalar=*/false), dz);
                    return std::vector<VarId>{VarId(), VarId(), dalpha, dbeta};
                  },
                  {true, false, false, false});
    case P::kBernoulliLogitGlmGrad:
      return Rule("bernoulli_logit_glm_grad: no gradient (second derivatives are not "
                  "primitives); one on the differentiated path is an error",
                  {false, false, false, false}, false, nullptr, {false, false, true, true});
    case P::kBernoulliLogitGlmValueGrad:
      return Rule(
          "bernoulli_logit_glm_value_grad: no gradient (passes/fuse_glm makes it after "
          "differentiate); one on the differentiated path is an error",
          {false, false, false, false}, false, nullptr, {false, false, true, true});
    case P::kRandomUniform:
    case P::kRandomNormal:
      return None("random draws: not differentiable; one on the differentiated path is an error");
    case P::kUserKernel:
      return None("user kernels: not differentiable; one on the differentiated path is an error");
  }
  AB_CHECK(false, "unknown primitive");
  return None("");
}

}  // namespace

AdjointRule AdjointOf(Primitive prim, size_t num_inputs) {
  AdjointRule rule = EntryOf(prim, num_inputs).rule;
  rule.needs_input.resize(num_inputs, false);
  rule.refuses_input.resize(num_inputs, false);
  return rule;
}

std::string_view AdjointDoc(Primitive prim) { return EntryOf(prim, 0).doc; }

}  // namespace autobatch
