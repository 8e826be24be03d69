// Value, Var and Operand: what a function body computes with, plus the
// operators and the built-in primitives as free functions.
//
// Building a body records IR; nothing is computed. Every operator and
// primitive below appends one op (plus, for a C++ literal operand, the op
// that materializes it) to the function body being built on this thread, and
// records the user's source line (std::source_location) on it.
//
// * Value: an immutable result (of an op or call), a parameter, or a C++
//   literal not materialized yet. Values are cheap handles; copying one
//   copies the handle.
// * Var: a mutable local variable (NOT SSA): one IR variable however many
//   times and in however many branches it is assigned. Vars have value
//   semantics: `Var y = x;` makes a new local holding x's current value, and
//   `Value v = x;` snapshots x (later assignments to x do not change v).
// * Operand: what operators and primitives accept: a Value, a Var (read
//   where the op is), a call result, or a C++ literal. It carries the source
//   location of the expression.
//
// Literals. A literal operand combined with a non-literal one takes the
// other's dtype and shape (`n - 1`, `x * 0.5`): the frontend emits
// `fill_like(other) {literal}`. A literal whose value that cast would change
// (0.5 with an i64 operand, 1e40 with f32, -1 with u64) is a type error at
// the user's line (ir/type_rules.h). A literal that stands alone (assigned to a Var, returned, passed to a
// call, or the operand of a unary primitive) is a `constant` of its C++
// type: bool -> bool, float -> f32, double -> f64, 64-bit unsigned integers
// -> u64, every other integer type -> i64.
//
// Names. The free functions are named exactly as the primitive they emit
// (ir/primitives.def): exp, select, reduce_sum, ... They are found by
// argument-dependent lookup, so `exp(x)` works unqualified on a Value.
//
// Errors (an empty Value, a Value of another function, an unassigned Var)
// are recorded with the source location and returned by Context::Module() /
// Context::Program(); the op then yields an empty Value and building
// continues. Using any of this outside a function body yields empty Values.
#ifndef AUTOBATCH_FRONTEND_VALUE_H_
#define AUTOBATCH_FRONTEND_VALUE_H_

#include <cstdint>
#include <memory>
#include <source_location>
#include <type_traits>
#include <vector>

#include "ir/ir.h"
#include "ir/types.h"

namespace autobatch {

class CallResult;
class Operand;
class Var;

namespace frontend_internal {
struct Access;
}  // namespace frontend_internal

// C++ types usable as literal operands.
template <typename T>
concept LiteralType = std::is_arithmetic_v<T>;

// The dtype a C++ literal gets (see the file comment).
template <LiteralType T>
constexpr DType LiteralDType() {
  if constexpr (std::is_same_v<T, bool>) {
    return DType::kBool;
  } else if constexpr (std::is_same_v<T, float>) {
    return DType::kF32;
  } else if constexpr (std::is_floating_point_v<T>) {
    return DType::kF64;
  } else if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
    return DType::kU64;
  } else {
    return DType::kI64;
  }
}

class Value {
 public:
  // An empty Value; using it in an op is an error.
  Value() = default;
  // A C++ literal (see the file comment for its dtype).
  template <LiteralType T>
  Value(T literal);  // NOLINT(google-explicit-constructor)
  // A snapshot of `var`'s current value (emits a copy).
  Value(const Var& var,  // NOLINT(google-explicit-constructor)
        std::source_location loc = std::source_location::current());

  bool empty() const { return kind_ == Kind::kEmpty; }
  bool is_literal() const { return kind_ == Kind::kLiteral; }

 private:
  friend struct frontend_internal::Access;
  enum class Kind : uint8_t { kEmpty, kVar, kLiteral };

  Kind kind_ = Kind::kEmpty;
  DType literal_dtype_ = DType::kF64;
  int32_t var_ = -1;   // kVar: index in its body's variable table
  uint64_t body_ = 0;  // kVar: the body it belongs to
  double float_ = 0;   // kLiteral of a float dtype
  int64_t int_ = 0;    // kLiteral of any other dtype (u64 bit-cast);
                       // kEmpty: why it is empty (frontend_internal::EmptyWhy)
};

template <LiteralType T>
Value::Value(T literal) : kind_(Kind::kLiteral), literal_dtype_(LiteralDType<T>()) {
  if constexpr (std::is_floating_point_v<T>) {
    float_ = static_cast<double>(literal);
  } else if constexpr (std::is_same_v<T, bool>) {
    int_ = literal ? 1 : 0;
  } else {
    int_ = static_cast<int64_t>(literal);
  }
}

class Var {
 public:
  // Unbound: becomes a new local of the current body at its first
  // assignment. Reading it before that is an error.
  Var(std::source_location loc = std::source_location::current())  // NOLINT
      : loc_(loc) {}
  // A new local initialized to `init`.
  explicit Var(const Value& init,
               std::source_location loc = std::source_location::current());
  explicit Var(const CallResult& init,
               std::source_location loc = std::source_location::current());
  template <LiteralType T>
  explicit Var(T init, std::source_location loc = std::source_location::current())
      : Var(Value(init), loc) {}
  // A new local holding `other`'s current value (unbound if `other` is).
  Var(const Var& other, std::source_location loc = std::source_location::current());
  // Takes over `other`'s variable; `other` becomes unbound.
  Var(Var&& other) noexcept;

  // Assigns a value (emits an op writing this variable). A Var-to-Var
  // assignment is attributed to this Var's declaration line.
  Var& operator=(const Operand& value);
  Var& operator=(const Var& other);
  Var& operator=(Var&& other);
  Var& operator+=(const Operand& value);
  Var& operator-=(const Operand& value);
  Var& operator*=(const Operand& value);
  Var& operator/=(const Operand& value);

  bool bound() const { return var_ >= 0; }

 private:
  friend struct frontend_internal::Access;

  int32_t var_ = -1;
  uint64_t body_ = 0;
  std::source_location loc_;  // declaration
};

// What operators and primitives accept (implicitly converted, never named by
// users): a Value, a Var (read in place), a call result or a C++ literal,
// with the source location of the expression.
class Operand {
 public:
  Operand(const Value& value,  // NOLINT(google-explicit-constructor)
          std::source_location loc = std::source_location::current());
  Operand(const Var& var,  // NOLINT(google-explicit-constructor)
          std::source_location loc = std::source_location::current());
  Operand(const CallResult& result,  // NOLINT(google-explicit-constructor)
          std::source_location loc = std::source_location::current());
  template <LiteralType T>
  Operand(T literal,  // NOLINT(google-explicit-constructor)
          std::source_location loc = std::source_location::current())
      : value_(literal), loc_(loc) {}

  const Value& value() const { return value_; }
  const std::source_location& loc() const { return loc_; }

 private:
  Value value_;
  std::source_location loc_;
};

// --- operators -------------------------------------------------------------
Value operator+(const Operand& a, const Operand& b);   // add
Value operator-(const Operand& a, const Operand& b);   // sub
Value operator*(const Operand& a, const Operand& b);   // mul
Value operator/(const Operand& a, const Operand& b);   // div
Value operator%(const Operand& a, const Operand& b);   // mod
Value operator-(const Operand& x);                     // neg
Value operator<(const Operand& a, const Operand& b);   // lt
Value operator<=(const Operand& a, const Operand& b);  // le
Value operator>(const Operand& a, const Operand& b);   // gt
Value operator>=(const Operand& a, const Operand& b);  // ge
Value operator==(const Operand& a, const Operand& b);  // eq
Value operator!=(const Operand& a, const Operand& b);  // ne
Value operator&&(const Operand& a, const Operand& b);  // and (no short circuit)
Value operator||(const Operand& a, const Operand& b);  // or (no short circuit)
Value operator!(const Operand& x);                     // not

// --- primitives (ir/primitives.def), named as the primitive ------------------
// A constant of any type (e.g. a vector); scalars are easier as literals.
Value constant(const Literal& literal,
               std::source_location loc = std::source_location::current());
// `literal` cast to x's dtype, broadcast to x's shape.
Value fill_like(const Operand& x, const Operand& literal);
Value copy(const Operand& x);
Value select(const Operand& cond, const Operand& a, const Operand& b);
Value cast(const Operand& x, DType dtype);
Value broadcast(const Operand& x, std::vector<int64_t> shape);
Value slice(const Operand& x, int64_t begin, int64_t size);
// Joins scalars and vectors of one dtype (literals are constants here).
Value concat(const std::vector<Operand>& parts,
             std::source_location loc = std::source_location::current());
Value add(const Operand& a, const Operand& b);
Value sub(const Operand& a, const Operand& b);
Value mul(const Operand& a, const Operand& b);
Value div(const Operand& a, const Operand& b);
Value mod(const Operand& a, const Operand& b);
Value min(const Operand& a, const Operand& b);
Value max(const Operand& a, const Operand& b);
Value neg(const Operand& x);
Value abs(const Operand& x);
Value exp(const Operand& x);
Value log(const Operand& x);
Value log1p(const Operand& x);
Value expm1(const Operand& x);
Value sqrt(const Operand& x);
Value tanh(const Operand& x);
Value floor(const Operand& x);
Value pow(const Operand& a, const Operand& b);
Value sin(const Operand& x);
Value cos(const Operand& x);
Value atan(const Operand& x);
Value lgamma(const Operand& x);
Value erfc(const Operand& x);
Value digamma(const Operand& x);
Value trigamma(const Operand& x);   // d/dx digamma(x)
Value log1p_exp(const Operand& x);  // softplus, log(1 + e^x)
Value logistic(const Operand& x);   // inverse logit, 1 / (1 + e^-x)
Value lt(const Operand& a, const Operand& b);
Value le(const Operand& a, const Operand& b);
Value gt(const Operand& a, const Operand& b);
Value ge(const Operand& a, const Operand& b);
Value eq(const Operand& a, const Operand& b);
Value ne(const Operand& a, const Operand& b);
Value logical_and(const Operand& a, const Operand& b);  // "and"
Value logical_or(const Operand& a, const Operand& b);   // "or"
Value logical_not(const Operand& x);                    // "not"
Value reduce_sum(const Operand& x);
Value dot(const Operand& a, const Operand& b);
Value squared_norm(const Operand& x);
Value log_sum_exp(const Operand& x);  // log(sum_i e^x[i]), a float scalar
// log(e^a + e^b) elementwise (Stan's binary log_sum_exp), written as
// max(a, b) + log1p_exp(-|a - b|): it never overflows, and its gradient is
// the softmax weights (e^a, e^b) / (e^a + e^b) except where a == b (measure
// zero), where max's and abs's subgradient rules give (1, 0). a and b both
// -inf give NaN (the difference of infinities).
Value log_sum_exp(const Operand& a, const Operand& b);
// out = M x per lane (bit-stable).
Value matvec(std::shared_ptr<const DenseMatrix> matrix, const Operand& x);
// out = M x as one matrix product over the active lanes (NOT bit-stable).
Value matvec_batched(std::shared_ptr<const DenseMatrix> matrix, const Operand& x);
// x[idx[i]] (idx an i64 vector; out-of-range indices clamp).
Value gather(const Operand& x, const Operand& idx);
// zeros(n) with out[idx[i]] += v[i], i ascending (gather's adjoint).
Value scatter_add(const Operand& v, const Operand& idx, int64_t n);
// The Bernoulli-logit log mass of y (i64[N]) at eta = alpha + X beta (X
// f64[N,K] data, alpha an f64 scalar, beta f64[K]), summed over rows; and its
// gradient [d/dalpha, d/dbeta...] (f64[K+1]). ir/primitives.def has the
// per-element formula; mcmc::bernoulli_logit_glm_lpmf wraps the first.
Value bernoulli_logit_glm(const Operand& x, const Operand& y, const Operand& alpha,
                          const Operand& beta);
Value bernoulli_logit_glm_grad(const Operand& x, const Operand& y, const Operand& alpha,
                               const Operand& beta);
// Both in one pass over X: [value, d/dalpha, d/dbeta...] (f64[K+2]), each with
// its separate op's bits (passes/fuse_glm emits it for a program's pairs).
Value bernoulli_logit_glm_value_grad(const Operand& x, const Operand& y, const Operand& alpha,
                                     const Operand& beta);
// M x and M^T y with the matrix an operand (e.g. a uniform input), bit-stable.
Value matvec_input(const Operand& m, const Operand& x);
Value matvec_t_input(const Operand& m, const Operand& y);
// f64 variates of `shape`; key and counter are u64 scalars (literals become
// u64 constants).
Value random_uniform(const Operand& key, const Operand& counter,
                     std::vector<int64_t> shape = {});
Value random_normal(const Operand& key, const Operand& counter,
                    std::vector<int64_t> shape = {});

}  // namespace autobatch

#endif  // AUTOBATCH_FRONTEND_VALUE_H_
