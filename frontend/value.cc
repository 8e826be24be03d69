// Value, Var, Operand, call results and the primitive free functions.
#include "frontend/value.h"

#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/body.h"
#include "frontend/structs.h"
#include "support/status.h"

namespace autobatch {

using frontend_internal::Access;
using frontend_internal::Body;
using frontend_internal::CurrentBody;
using frontend_internal::EmptyWhy;
using frontend_internal::LiteralPolicy;
using frontend_internal::ToSourceLoc;
using frontend_internal::VarKind;

// --- Access -------------------------------------------------------------------

namespace frontend_internal {

Value Access::MakeVarValue(uint64_t body, int32_t var) {
  Value v;
  v.kind_ = Value::Kind::kVar;
  v.body_ = body;
  v.var_ = var;
  return v;
}

Value Access::MakeEmpty(EmptyWhy why) {
  Value v;
  v.int_ = static_cast<int64_t>(why);
  return v;
}

Value Access::VarRef(const Var& var) {
  if (!var.bound()) return MakeEmpty(EmptyWhy::kUnboundVar);
  return MakeVarValue(var.body_, var.var_);
}

Var Access::MakeBoundVar(uint64_t body, int32_t var, std::source_location loc) {
  Var v(loc);
  v.body_ = body;
  v.var_ = var;
  return v;
}

void Access::Adopt(Var& var, const Value& value, std::source_location loc) {
  Body* body = CurrentBody();
  if (body == nullptr) return;
  int32_t id = body->Materialize(value, ToSourceLoc(loc), "a value bound to a Var");
  if (id < 0) return;
  var.body_ = body->id();
  var.var_ = id;
}

void Access::Assign(Var& var, const Value& value, const SourceLoc& loc) {
  Body* body = CurrentBody();
  if (body == nullptr) return;
  if (var.bound() && var.body_ != body->id()) {
    body->Error(loc, absl::StrCat("assigns a Var of ", body->DescribeBody(var.body_),
                                  "; a Var can only be used in the body that made it"));
    return;
  }
  int32_t source = body->Materialize(value, loc, "the assigned value");
  if (source < 0) return;
  if (!var.bound()) {
    var.body_ = body->id();
    var.var_ = body->NewVar(VarKind::kLocal);
  }
  body->EmitCopy(source, var.var_, loc);
}

std::vector<Value> Access::Results(const CallResult& call, int count) {
  if (call.call_ == nullptr) {
    return std::vector<Value>(count, MakeEmpty(EmptyWhy::kFailed));
  }
  Body* body = CurrentBody();
  if (body == nullptr) return std::vector<Value>(count, MakeEmpty(EmptyWhy::kNoBody));
  if (body->id() != call.call_->body) {
    body->Error(call.call_->loc, "the result of this call is used in another function's body; "
                                 "use call results in the body that made the call");
    return std::vector<Value>(count, MakeEmpty(EmptyWhy::kFailed));
  }
  return body->CallResults(*call.call_, count);
}

CallResult Access::MakeCallResult(std::shared_ptr<PendingCall> call) {
  CallResult r;
  r.call_ = std::move(call);
  return r;
}

}  // namespace frontend_internal

// --- Value, Var, Operand --------------------------------------------------------

Value::Value(const Var& var, std::source_location loc) {
  Body* body = CurrentBody();
  if (body == nullptr) {
    *this = Access::MakeEmpty(EmptyWhy::kNoBody);
    return;
  }
  int32_t source = body->UseVar(Access::VarRef(var), ToSourceLoc(loc), "the Var read here");
  if (source < 0) {
    *this = Access::MakeEmpty(EmptyWhy::kFailed);
    return;
  }
  int32_t snapshot = body->NewTemp();
  body->EmitCopy(source, snapshot, ToSourceLoc(loc));
  *this = Access::MakeVarValue(body->id(), snapshot);
}

Var::Var(const Value& init, std::source_location loc) : loc_(loc) {
  Access::Assign(*this, init, ToSourceLoc(loc));
}

Var::Var(const CallResult& init, std::source_location loc) : loc_(loc) {
  Access::Assign(*this, Operand(init, loc).value(), ToSourceLoc(loc));
}

Var::Var(const Var& other, std::source_location loc) : loc_(loc) {
  if (!other.bound() || CurrentBody() == nullptr) return;
  Access::Assign(*this, Access::VarRef(other), ToSourceLoc(loc));
}

Var::Var(Var&& other) noexcept : var_(other.var_), body_(other.body_), loc_(other.loc_) {
  other.var_ = -1;
  other.body_ = 0;
}

Var& Var::operator=(const Operand& value) {
  Access::Assign(*this, value.value(), ToSourceLoc(value.loc()));
  return *this;
}

Var& Var::operator=(const Var& other) {
  if (this == &other) return *this;
  Access::Assign(*this, Access::VarRef(other), ToSourceLoc(loc_));
  return *this;
}

Var& Var::operator=(Var&& other) {
  if (this == &other) return *this;
  Access::Assign(*this, Access::VarRef(other), ToSourceLoc(loc_));
  return *this;
}

Var& Var::operator+=(const Operand& value) {
  return *this = Operand(Operand(*this, value.loc()) + value, value.loc());
}
Var& Var::operator-=(const Operand& value) {
  return *this = Operand(Operand(*this, value.loc()) - value, value.loc());
}
Var& Var::operator*=(const Operand& value) {
  return *this = Operand(Operand(*this, value.loc()) * value, value.loc());
}
Var& Var::operator/=(const Operand& value) {
  return *this = Operand(Operand(*this, value.loc()) / value, value.loc());
}

Operand::Operand(const Value& value, std::source_location loc) : value_(value), loc_(loc) {}

Operand::Operand(const Var& var, std::source_location loc)
    : value_(Access::VarRef(var)), loc_(loc) {}

Operand::Operand(const CallResult& result, std::source_location loc)
    : value_(Access::Results(result, 1)[0]), loc_(loc) {}

// --- CallResult, TiedVars -----------------------------------------------------------

CallResult::operator Value() const { return Access::Results(*this, 1)[0]; }

std::source_location CallResult::loc() const {
  return call_ != nullptr ? call_->source_loc : std::source_location::current();
}

void TiedVars::operator=(const CallResult& call) {
  AssignLeaves(Access::Results(call, static_cast<int>(vars_.size())), call.loc());
}

void TiedVars::operator=(const Arg& values) { AssignLeaves(values.leaves(), values.loc()); }

void TiedVars::operator=(const TiedVars& other) {
  std::vector<Value> leaves;
  for (const Var* v : other.vars_) leaves.push_back(Access::VarRef(*v));
  AssignLeaves(leaves, vars_.empty() ? std::source_location::current()
                                     : Access::VarLoc(*vars_[0]));
}

void TiedVars::AssignLeaves(const std::vector<Value>& leaves, std::source_location source_loc) {
  Body* body = CurrentBody();
  if (body == nullptr) return;
  SourceLoc loc = ToSourceLoc(source_loc);
  if (leaves.size() != vars_.size()) {
    body->Error(loc, absl::StrCat("Tie of ", vars_.size(), " Vars is assigned ", leaves.size(),
                                  " values"));
    return;
  }
  // Read every right-hand side before writing any Var: a leaf that reads a
  // tied Var is copied first.
  std::vector<Value> sources = leaves;
  for (Value& source : sources) {
    if (source.is_literal() || source.empty() || Access::BodyOf(source) != body->id()) continue;
    for (const Var* v : vars_) {
      if (v->bound() && Access::VarOf(Access::VarRef(*v)) == Access::VarOf(source) &&
          Access::BodyOf(Access::VarRef(*v)) == body->id()) {
        int32_t snapshot = body->NewTemp();
        body->EmitCopy(Access::VarOf(source), snapshot, loc);
        source = Access::MakeVarValue(body->id(), snapshot);
        break;
      }
    }
  }
  for (size_t i = 0; i < vars_.size(); ++i) Access::Assign(*vars_[i], sources[i], loc);
}

// --- operators and primitives -----------------------------------------------------

namespace {

Value Emit(Primitive prim, std::initializer_list<const Operand*> operands,
           std::initializer_list<LiteralPolicy> policies, Attributes attrs = {},
           std::optional<std::source_location> loc = std::nullopt) {
  Body* body = CurrentBody();
  if (body == nullptr) return Access::MakeEmpty(EmptyWhy::kNoBody);
  std::vector<Value> values;
  for (const Operand* op : operands) values.push_back(op->value());
  std::vector<LiteralPolicy> p(policies);
  SourceLoc where = ToSourceLoc(loc ? *loc : (*operands.begin())->loc());
  return body->EmitPrim(prim, values, p, std::move(attrs), where);
}

Value Binary(Primitive prim, const Operand& a, const Operand& b) {
  return Emit(prim, {&a, &b}, {LiteralPolicy::Like(1), LiteralPolicy::Like(0)});
}

Value Unary(Primitive prim, const Operand& x, Attributes attrs = {}) {
  return Emit(prim, {&x}, {LiteralPolicy::Constant()}, std::move(attrs));
}

}  // namespace

Value operator+(const Operand& a, const Operand& b) { return Binary(Primitive::kAdd, a, b); }
Value operator-(const Operand& a, const Operand& b) { return Binary(Primitive::kSub, a, b); }
Value operator*(const Operand& a, const Operand& b) { return Binary(Primitive::kMul, a, b); }
Value operator/(const Operand& a, const Operand& b) { return Binary(Primitive::kDiv, a, b); }
Value operator%(const Operand& a, const Operand& b) { return Binary(Primitive::kMod, a, b); }
Value operator-(const Operand& x) { return Unary(Primitive::kNeg, x); }
Value operator<(const Operand& a, const Operand& b) { return Binary(Primitive::kLt, a, b); }
Value operator<=(const Operand& a, const Operand& b) { return Binary(Primitive::kLe, a, b); }
Value operator>(const Operand& a, const Operand& b) { return Binary(Primitive::kGt, a, b); }
Value operator>=(const Operand& a, const Operand& b) { return Binary(Primitive::kGe, a, b); }
Value operator==(const Operand& a, const Operand& b) { return Binary(Primitive::kEq, a, b); }
Value operator!=(const Operand& a, const Operand& b) { return Binary(Primitive::kNe, a, b); }
Value operator&&(const Operand& a, const Operand& b) { return Binary(Primitive::kAnd, a, b); }
Value operator||(const Operand& a, const Operand& b) { return Binary(Primitive::kOr, a, b); }
Value operator!(const Operand& x) { return Unary(Primitive::kNot, x); }

Value constant(const Literal& literal, std::source_location loc) {
  Attributes attrs;
  attrs.literal = literal;
  Body* body = CurrentBody();
  if (body == nullptr) return Access::MakeEmpty(EmptyWhy::kNoBody);
  return body->EmitPrim(Primitive::kConstant, {}, {}, std::move(attrs), ToSourceLoc(loc));
}

Value fill_like(const Operand& x, const Operand& literal) {
  Body* body = CurrentBody();
  if (body == nullptr) return Access::MakeEmpty(EmptyWhy::kNoBody);
  if (!literal.value().is_literal()) {
    body->Error(ToSourceLoc(literal.loc()),
                "fill_like: the fill value must be a C++ literal (for a computed value "
                "use select or broadcast)");
    return Access::MakeEmpty(EmptyWhy::kFailed);
  }
  // The literal attribute is the literal's own scalar; fill_like casts it.
  Value lit = literal.value();
  Attributes attrs;
  attrs.literal = Literal{Scalar(Access::LiteralDTypeOf(lit)), {}, {}};
  if (IsFloat(Access::LiteralDTypeOf(lit))) {
    attrs.literal->floats = {Access::LiteralFloat(lit)};
  } else {
    attrs.literal->ints = {Access::LiteralInt(lit)};
  }
  return Emit(Primitive::kFillLike, {&x}, {LiteralPolicy::Constant()}, std::move(attrs));
}

Value copy(const Operand& x) { return Unary(Primitive::kCopy, x); }

Value select(const Operand& cond, const Operand& a, const Operand& b) {
  return Emit(Primitive::kSelect, {&cond, &a, &b},
              {LiteralPolicy::Constant(), LiteralPolicy::Like(2), LiteralPolicy::Like(1)});
}

Value cast(const Operand& x, DType dtype) {
  Attributes attrs;
  attrs.dtype = dtype;
  return Unary(Primitive::kCast, x, std::move(attrs));
}

Value broadcast(const Operand& x, std::vector<int64_t> shape) {
  Attributes attrs;
  attrs.ints = std::move(shape);
  return Unary(Primitive::kBroadcast, x, std::move(attrs));
}

Value slice(const Operand& x, int64_t begin, int64_t size) {
  Attributes attrs;
  attrs.ints = {begin, size};
  return Unary(Primitive::kSlice, x, std::move(attrs));
}

Value concat(const std::vector<Operand>& parts, std::source_location loc) {
  Body* body = CurrentBody();
  if (body == nullptr) return Access::MakeEmpty(EmptyWhy::kNoBody);
  std::vector<Value> values;
  for (const Operand& p : parts) values.push_back(p.value());
  std::vector<LiteralPolicy> policies(parts.size(), LiteralPolicy::Constant());
  return body->EmitPrim(Primitive::kConcat, values, policies, {}, ToSourceLoc(loc));
}

Value add(const Operand& a, const Operand& b) { return Binary(Primitive::kAdd, a, b); }
Value sub(const Operand& a, const Operand& b) { return Binary(Primitive::kSub, a, b); }
Value mul(const Operand& a, const Operand& b) { return Binary(Primitive::kMul, a, b); }
Value div(const Operand& a, const Operand& b) { return Binary(Primitive::kDiv, a, b); }
Value mod(const Operand& a, const Operand& b) { return Binary(Primitive::kMod, a, b); }
Value min(const Operand& a, const Operand& b) { return Binary(Primitive::kMin, a, b); }
Value max(const Operand& a, const Operand& b) { return Binary(Primitive::kMax, a, b); }
Value neg(const Operand& x) { return Unary(Primitive::kNeg, x); }
Value abs(const Operand& x) { return Unary(Primitive::kAbs, x); }
Value exp(const Operand& x) { return Unary(Primitive::kExp, x); }
Value log(const Operand& x) { return Unary(Primitive::kLog, x); }
Value log1p(const Operand& x) { return Unary(Primitive::kLog1p, x); }
Value expm1(const Operand& x) { return Unary(Primitive::kExpm1, x); }
Value sqrt(const Operand& x) { return Unary(Primitive::kSqrt, x); }
Value tanh(const Operand& x) { return Unary(Primitive::kTanh, x); }
Value floor(const Operand& x) { return Unary(Primitive::kFloor, x); }
Value pow(const Operand& a, const Operand& b) { return Binary(Primitive::kPow, a, b); }
Value sin(const Operand& x) { return Unary(Primitive::kSin, x); }
Value cos(const Operand& x) { return Unary(Primitive::kCos, x); }
Value atan(const Operand& x) { return Unary(Primitive::kAtan, x); }
Value lgamma(const Operand& x) { return Unary(Primitive::kLgamma, x); }
Value erfc(const Operand& x) { return Unary(Primitive::kErfc, x); }
Value digamma(const Operand& x) { return Unary(Primitive::kDigamma, x); }
Value trigamma(const Operand& x) { return Unary(Primitive::kTrigamma, x); }
Value log1p_exp(const Operand& x) { return Unary(Primitive::kLog1pExp, x); }
Value logistic(const Operand& x) { return Unary(Primitive::kLogistic, x); }
Value lt(const Operand& a, const Operand& b) { return Binary(Primitive::kLt, a, b); }
Value le(const Operand& a, const Operand& b) { return Binary(Primitive::kLe, a, b); }
Value gt(const Operand& a, const Operand& b) { return Binary(Primitive::kGt, a, b); }
Value ge(const Operand& a, const Operand& b) { return Binary(Primitive::kGe, a, b); }
Value eq(const Operand& a, const Operand& b) { return Binary(Primitive::kEq, a, b); }
Value ne(const Operand& a, const Operand& b) { return Binary(Primitive::kNe, a, b); }
Value logical_and(const Operand& a, const Operand& b) { return Binary(Primitive::kAnd, a, b); }
Value logical_or(const Operand& a, const Operand& b) { return Binary(Primitive::kOr, a, b); }
Value logical_not(const Operand& x) { return Unary(Primitive::kNot, x); }
Value reduce_sum(const Operand& x) { return Unary(Primitive::kReduceSum, x); }
Value dot(const Operand& a, const Operand& b) { return Binary(Primitive::kDot, a, b); }
Value squared_norm(const Operand& x) { return Unary(Primitive::kSquaredNorm, x); }
Value log_sum_exp(const Operand& x) { return Unary(Primitive::kLogSumExp, x); }
Value log_sum_exp(const Operand& a, const Operand& b) {
  return max(a, b) + log1p_exp(-abs(a - b));
}

namespace {
Value MatVec(Primitive prim, std::shared_ptr<const DenseMatrix> matrix, const Operand& x) {
  Body* body = CurrentBody();
  if (body == nullptr) return Access::MakeEmpty(EmptyWhy::kNoBody);
  if (matrix == nullptr) {
    body->Error(ToSourceLoc(x.loc()), absl::StrCat(std::string(PrimitiveName(prim)),
                                                   ": the matrix is null"));
    return Access::MakeEmpty(EmptyWhy::kFailed);
  }
  Attributes attrs;
  attrs.matrix = std::move(matrix);
  return Unary(prim, x, std::move(attrs));
}

Value Random(Primitive prim, const Operand& key, const Operand& counter,
             std::vector<int64_t> shape) {
  Attributes attrs;
  attrs.ints = std::move(shape);
  return Emit(prim, {&key, &counter},
              {LiteralPolicy::As(Scalar(DType::kU64)), LiteralPolicy::As(Scalar(DType::kU64))},
              std::move(attrs));
}
}  // namespace

Value matvec(std::shared_ptr<const DenseMatrix> matrix, const Operand& x) {
  return MatVec(Primitive::kMatVec, std::move(matrix), x);
}
Value matvec_batched(std::shared_ptr<const DenseMatrix> matrix, const Operand& x) {
  return MatVec(Primitive::kMatVecBatched, std::move(matrix), x);
}
Value gather(const Operand& x, const Operand& idx) {
  return Emit(Primitive::kGather, {&x, &idx},
              {LiteralPolicy::Constant(), LiteralPolicy::Constant()});
}
Value scatter_add(const Operand& v, const Operand& idx, int64_t n) {
  Attributes attrs;
  attrs.ints = {n};
  return Emit(Primitive::kScatterAdd, {&v, &idx},
              {LiteralPolicy::Constant(), LiteralPolicy::Constant()}, std::move(attrs));
}
Value matvec_input(const Operand& m, const Operand& x) {
  return Emit(Primitive::kMatVecInput, {&m, &x},
              {LiteralPolicy::Constant(), LiteralPolicy::Constant()});
}
Value matvec_t_input(const Operand& m, const Operand& y) {
  return Emit(Primitive::kMatVecTInput, {&m, &y},
              {LiteralPolicy::Constant(), LiteralPolicy::Constant()});
}
Value random_uniform(const Operand& key, const Operand& counter, std::vector<int64_t> shape) {
  return Random(Primitive::kRandomUniform, key, counter, std::move(shape));
}
Value bernoulli_logit_glm(const Operand& x, const Operand& y, const Operand& alpha,
                          const Operand& beta) {
  return Emit(Primitive::kBernoulliLogitGlm, {&x, &y, &alpha, &beta},
              {LiteralPolicy::Constant(), LiteralPolicy::Constant(),
               LiteralPolicy::As(Scalar(DType::kF64)), LiteralPolicy::Constant()});
}
Value bernoulli_logit_glm_grad(const Operand& x, const Operand& y, const Operand& alpha,
                               const Operand& beta) {
  return Emit(Primitive::kBernoulliLogitGlmGrad, {&x, &y, &alpha, &beta},
              {LiteralPolicy::Constant(), LiteralPolicy::Constant(),
               LiteralPolicy::As(Scalar(DType::kF64)), LiteralPolicy::Constant()});
}
Value bernoulli_logit_glm_value_grad(const Operand& x, const Operand& y, const Operand& alpha,
                                     const Operand& beta) {
  return Emit(Primitive::kBernoulliLogitGlmValueGrad, {&x, &y, &alpha, &beta},
              {LiteralPolicy::Constant(), LiteralPolicy::Constant(),
               LiteralPolicy::As(Scalar(DType::kF64)), LiteralPolicy::Constant()});
}
Value random_normal(const Operand& key, const Operand& counter, std::vector<int64_t> shape) {
  return Random(Primitive::kRandomNormal, key, counter, std::move(shape));
}

}  // namespace autobatch
