// Several values as one: call results, tuples and user structs, flattened
// into several IR variables (users never see the flattening), plus Arg (an
// argument of a call or Return) and Tie (assign several Vars at once).
//
// A "flattenable" C++ type is made of leaves, in order:
//   Value, Var                        one leaf each
//   std::tuple, std::pair, std::array of flattenable types
//   a struct declared with AUTOBATCH_STRUCT(Type, field...)
//   C++ literals and CallResult       one leaf (as arguments and returns only)
//   std::vector<Value>                its elements (arguments/returns only)
// Such types can be parameters of a body lambda, arguments of calls, the
// return value of a body, and the result of a call:
//
//   struct TreeState { Value q, p, logw; };
//   AUTOBATCH_STRUCT(TreeState, q, p, logw)   // at namespace scope
//
//   BatchFunction step = ctx.Batch("step")([&](Builder& b, TreeState s) {
//     return TreeState{s.q + s.p, s.p, s.logw};
//   });
//   ... inside another body:  TreeState t = step(s);
//
// A struct whose fields are Vars is a mutable struct: assigning it assigns
// every field (an IR copy each), so it can be updated in branches and loops.
#ifndef AUTOBATCH_FRONTEND_STRUCTS_H_
#define AUTOBATCH_FRONTEND_STRUCTS_H_

#include <array>
#include <cstddef>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "frontend/value.h"

// Declares the fields of a struct for flattening; use at the struct's
// namespace scope after its definition: AUTOBATCH_STRUCT(TreeState, q, p, logw).
// Fields are visited (and flattened) in the order listed; the names become
// the IR variable names of struct parameters (e.g. `state.q`).
#define AUTOBATCH_STRUCT(Type, ...)                                          \
  template <typename AbSelf, typename AbVisitor>                             \
    requires std::is_same_v<std::remove_const_t<AbSelf>, Type>               \
  void AutobatchVisitFields(AbSelf& ab_self, AbVisitor&& ab_visit) {         \
    AB_INTERNAL_FOR_EACH(AB_INTERNAL_VISIT_FIELD, __VA_ARGS__)               \
  }

#define AB_INTERNAL_VISIT_FIELD(field) ab_visit(ab_self.field, #field);
#define AB_INTERNAL_PARENS ()
#define AB_INTERNAL_EXPAND(...) \
  AB_INTERNAL_EXPAND3(AB_INTERNAL_EXPAND3(AB_INTERNAL_EXPAND3(__VA_ARGS__)))
#define AB_INTERNAL_EXPAND3(...) \
  AB_INTERNAL_EXPAND2(AB_INTERNAL_EXPAND2(AB_INTERNAL_EXPAND2(__VA_ARGS__)))
#define AB_INTERNAL_EXPAND2(...) \
  AB_INTERNAL_EXPAND1(AB_INTERNAL_EXPAND1(AB_INTERNAL_EXPAND1(__VA_ARGS__)))
#define AB_INTERNAL_EXPAND1(...) __VA_ARGS__
#define AB_INTERNAL_FOR_EACH(macro, ...) \
  __VA_OPT__(AB_INTERNAL_EXPAND(AB_INTERNAL_FOR_EACH_HELPER(macro, __VA_ARGS__)))
#define AB_INTERNAL_FOR_EACH_HELPER(macro, a1, ...) \
  macro(a1) __VA_OPT__(AB_INTERNAL_FOR_EACH_AGAIN AB_INTERNAL_PARENS(macro, __VA_ARGS__))
#define AB_INTERNAL_FOR_EACH_AGAIN() AB_INTERNAL_FOR_EACH_HELPER

namespace autobatch {

class CallResult;

namespace frontend_internal {

struct PendingCall;  // frontend/body.h

// Why a Value is empty (kept in its int_ field).
enum class EmptyWhy : int64_t {
  kDefault = 0,     // default-constructed or moved-from
  kUnboundVar = 1,  // read of a Var that was never assigned
  kNoBody = 2,      // computed outside any function body
  kFailed = 3,      // the op that made it failed (an error is recorded)
};

// The frontend's access to private parts (implemented in frontend/*.cc).
struct Access {
  static Value MakeVarValue(uint64_t body, int32_t var);
  static Value MakeEmpty(EmptyWhy why);
  static EmptyWhy WhyEmpty(const Value& v) { return static_cast<EmptyWhy>(v.int_); }
  static int32_t VarOf(const Value& v) { return v.var_; }
  static uint64_t BodyOf(const Value& v) { return v.body_; }
  static DType LiteralDTypeOf(const Value& v) { return v.literal_dtype_; }
  static double LiteralFloat(const Value& v) { return v.float_; }
  static int64_t LiteralInt(const Value& v) { return v.int_; }
  // `var` read in place (no copy): a Value naming its variable, or an empty
  // Value (kUnboundVar) if it was never assigned.
  static Value VarRef(const Var& var);
  // Binds `var` to the variable of `value` (materializing a literal as a
  // constant) without a copy.
  static void Adopt(Var& var, const Value& value, std::source_location loc);
  static std::source_location VarLoc(const Var& var) { return var.loc_; }
  static Var MakeBoundVar(uint64_t body, int32_t var, std::source_location loc);
  // Emits `var = value` in the current body (binding an unbound Var).
  static void Assign(Var& var, const Value& value, const SourceLoc& loc);
  // The call's first `count` results (all results are variables).
  static std::vector<Value> Results(const CallResult& call, int count);
  static CallResult MakeCallResult(std::shared_ptr<PendingCall> call);
};

// Reads leaves in order when unflattening.
class LeafReader {
 public:
  explicit LeafReader(std::span<const Value> leaves) : leaves_(leaves) {}
  Value Next() { return pos_ < leaves_.size() ? leaves_[pos_++] : Value(); }

 private:
  std::span<const Value> leaves_;
  size_t pos_ = 0;
};

struct NoopFieldVisitor {
  template <typename F>
  void operator()(F&, const char*) const {}
};

template <typename T>
concept HasAutobatchFields = requires(T& t) { AutobatchVisitFields(t, NoopFieldVisitor{}); };

// Flat<T>: Out (append leaves), In (read leaves back into a default T; only
// for parameter/result types), Names (leaf name suffixes like ".q").
template <typename T, typename = void>
struct Flat;

template <typename T>
void FlatOut(const T& x, std::vector<Value>& out) {
  Flat<std::remove_cvref_t<T>>::Out(x, out);
}
template <typename T>
void FlatIn(T& x, LeafReader& in, std::source_location loc) {
  Flat<std::remove_cvref_t<T>>::In(x, in, loc);
}
template <typename T>
void FlatNames(const std::string& prefix, std::vector<std::string>& out) {
  Flat<std::remove_cvref_t<T>>::Names(prefix, out);
}

template <>
struct Flat<Value> {
  static void Out(const Value& v, std::vector<Value>& out) { out.push_back(v); }
  static void In(Value& v, LeafReader& in, std::source_location) { v = in.Next(); }
  static void Names(const std::string& prefix, std::vector<std::string>& out) {
    out.push_back(prefix);
  }
};

template <>
struct Flat<Var> {
  static void Out(const Var& v, std::vector<Value>& out) {
    out.push_back(Access::VarRef(v));
  }
  static void In(Var& v, LeafReader& in, std::source_location loc) {
    Access::Adopt(v, in.Next(), loc);
  }
  static void Names(const std::string& prefix, std::vector<std::string>& out) {
    out.push_back(prefix);
  }
};

template <LiteralType T>
struct Flat<T> {
  static void Out(T x, std::vector<Value>& out) { out.push_back(Value(x)); }
};

template <>
struct Flat<std::vector<Value>> {
  static void Out(const std::vector<Value>& x, std::vector<Value>& out) {
    out.insert(out.end(), x.begin(), x.end());
  }
};

template <typename... Ts>
struct Flat<std::tuple<Ts...>> {
  static void Out(const std::tuple<Ts...>& x, std::vector<Value>& out) {
    std::apply([&](const auto&... e) { (FlatOut(e, out), ...); }, x);
  }
  static void In(std::tuple<Ts...>& x, LeafReader& in, std::source_location loc) {
    std::apply([&](auto&... e) { (FlatIn(e, in, loc), ...); }, x);
  }
  static void Names(const std::string& prefix, std::vector<std::string>& out) {
    NamesImpl(prefix, out, std::index_sequence_for<Ts...>{});
  }
  template <size_t... I>
  static void NamesImpl(const std::string& prefix, std::vector<std::string>& out,
                        std::index_sequence<I...>) {
    (FlatNames<Ts>(prefix + "." + std::to_string(I), out), ...);
  }
};

template <typename A, typename B>
struct Flat<std::pair<A, B>> {
  static void Out(const std::pair<A, B>& x, std::vector<Value>& out) {
    FlatOut(x.first, out);
    FlatOut(x.second, out);
  }
  static void In(std::pair<A, B>& x, LeafReader& in, std::source_location loc) {
    FlatIn(x.first, in, loc);
    FlatIn(x.second, in, loc);
  }
  static void Names(const std::string& prefix, std::vector<std::string>& out) {
    FlatNames<A>(prefix + ".first", out);
    FlatNames<B>(prefix + ".second", out);
  }
};

template <typename T, size_t N>
struct Flat<std::array<T, N>> {
  static void Out(const std::array<T, N>& x, std::vector<Value>& out) {
    for (const T& e : x) FlatOut(e, out);
  }
  static void In(std::array<T, N>& x, LeafReader& in, std::source_location loc) {
    for (T& e : x) FlatIn(e, in, loc);
  }
  static void Names(const std::string& prefix, std::vector<std::string>& out) {
    for (size_t i = 0; i < N; ++i) FlatNames<T>(prefix + "." + std::to_string(i), out);
  }
};

template <typename T>
struct Flat<T, std::enable_if_t<HasAutobatchFields<T>>> {
  static void Out(const T& x, std::vector<Value>& out) {
    AutobatchVisitFields(x, [&](const auto& field, const char*) { FlatOut(field, out); });
  }
  static void In(T& x, LeafReader& in, std::source_location loc) {
    AutobatchVisitFields(x, [&](auto& field, const char*) { FlatIn(field, in, loc); });
  }
  static void Names(const std::string& prefix, std::vector<std::string>& out) {
    T probe{};
    AutobatchVisitFields(probe, [&](auto& field, const char* name) {
      FlatNames<std::remove_cvref_t<decltype(field)>>(prefix + "." + name, out);
    });
  }
};

}  // namespace frontend_internal

// Types that can be passed to calls and returned from bodies.
template <typename T>
concept Flattenable = requires(const std::remove_cvref_t<T>& x, std::vector<Value>& out) {
  frontend_internal::Flat<std::remove_cvref_t<T>>::Out(x, out);
};
// Types that can also be parameters of bodies and results of calls.
template <typename T>
concept Unflattenable =
    Flattenable<T> && std::is_default_constructible_v<std::remove_cvref_t<T>> &&
    requires(std::remove_cvref_t<T>& x, frontend_internal::LeafReader& in) {
      frontend_internal::Flat<std::remove_cvref_t<T>>::In(x, in, std::source_location());
      frontend_internal::Flat<std::remove_cvref_t<T>>::Names(std::string(),
                                                             std::declval<std::vector<std::string>&>());
    };

// The number of leaves of an unflattenable type.
template <Unflattenable T>
int LeafCount() {
  std::vector<std::string> names;
  frontend_internal::FlatNames<T>("", names);
  return static_cast<int>(names.size());
}

// The results of a call to a BatchFunction or Kernel, used as one Value, several
// Values, a tuple or a struct. How many results the call has is checked when
// the module is built (a BatchFunction's body may not be built yet when it is
// called); a call whose results are never used receives them anyway.
// Converting the same call result twice gives the same variables. Used as
// an argument or returned from a body lambda, a CallResult is ONE value; to
// pass on several results, convert first: `return f(x).As<std::tuple<Value,
// Value>>();`.
class CallResult {
 public:
  // Exactly one result.
  operator Value() const;  // NOLINT(google-explicit-constructor)
  // Exactly N results.
  template <size_t N>
  std::array<Value, N> Get() const {
    std::vector<Value> v = frontend_internal::Access::Results(*this, static_cast<int>(N));
    std::array<Value, N> out;
    for (size_t i = 0; i < N; ++i) out[i] = v[i];
    return out;
  }
  // As a tuple, pair, array or AUTOBATCH_STRUCT type (implicitly too).
  template <Unflattenable T>
  T As() const {
    std::vector<Value> v = frontend_internal::Access::Results(*this, LeafCount<T>());
    T out{};
    frontend_internal::LeafReader in(v);
    frontend_internal::FlatIn(out, in, loc());
    return out;
  }
  template <Unflattenable T>
    requires(!std::is_same_v<T, Value> && !std::is_same_v<T, Var>)
  operator T() const {  // NOLINT(google-explicit-constructor)
    return As<T>();
  }
  // Exactly `count` results.
  std::vector<Value> Values(int count) const {
    return frontend_internal::Access::Results(*this, count);
  }
  // Where the call is.
  std::source_location loc() const;

 private:
  friend struct frontend_internal::Access;
  CallResult() = default;
  std::shared_ptr<frontend_internal::PendingCall> call_;
};

namespace frontend_internal {
template <>
struct Flat<CallResult> {
  static void Out(const CallResult& r, std::vector<Value>& out) {
    out.push_back(static_cast<Value>(r));
  }
};
}  // namespace frontend_internal

// One argument of a call or Return, flattened (implicitly converted from any
// flattenable type, with the source location of the call).
class Arg {
 public:
  // "No argument here" (the default of unused argument slots).
  static Arg None(std::source_location loc = std::source_location::current()) {
    Arg a;
    a.loc_ = loc;
    return a;
  }
  template <Flattenable T>
    requires(!std::is_same_v<std::remove_cvref_t<T>, Arg>)
  Arg(const T& x,  // NOLINT(google-explicit-constructor)
      std::source_location loc = std::source_location::current())
      : present_(true), loc_(loc) {
    frontend_internal::FlatOut(x, leaves_);
  }

  bool present() const { return present_; }
  const std::vector<Value>& leaves() const { return leaves_; }
  const std::source_location& loc() const { return loc_; }

 private:
  Arg() = default;
  bool present_ = false;
  std::vector<Value> leaves_;
  std::source_location loc_;
};

// Parameter lists of calls and Return: up to 12 arguments (each may be a
// struct or tuple of any size). The first slot's default records the call
// site for calls without arguments.
#define AUTOBATCH_ARG_PARAMS                                                   \
  ::autobatch::Arg a0 = ::autobatch::Arg::None(std::source_location::current()), \
                   ::autobatch::Arg a1 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a2 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a3 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a4 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a5 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a6 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a7 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a8 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a9 = ::autobatch::Arg::None(),               \
                   ::autobatch::Arg a10 = ::autobatch::Arg::None(),              \
                   ::autobatch::Arg a11 = ::autobatch::Arg::None()
#define AUTOBATCH_ARG_PARAMS_NO_DEFAULTS                                       \
  ::autobatch::Arg a0, ::autobatch::Arg a1, ::autobatch::Arg a2,               \
      ::autobatch::Arg a3, ::autobatch::Arg a4, ::autobatch::Arg a5,           \
      ::autobatch::Arg a6, ::autobatch::Arg a7, ::autobatch::Arg a8,           \
      ::autobatch::Arg a9, ::autobatch::Arg a10, ::autobatch::Arg a11
#define AUTOBATCH_ARG_LIST {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7, &a8, &a9, &a10, &a11}

// Several Vars assigned at once: `Tie(a, b) = f(b, a);`. Every right-hand
// side is read before any Var is written, so swaps work.
class TiedVars {
 public:
  explicit TiedVars(std::vector<Var*> vars) : vars_(std::move(vars)) {}
  TiedVars(const TiedVars&) = default;
  // A call with exactly as many results as there are Vars.
  void operator=(const CallResult& call);
  // A tuple, struct, ... with as many leaves as there are Vars.
  void operator=(const Arg& values);
  void operator=(const TiedVars& other);

 private:
  void AssignLeaves(const std::vector<Value>& leaves, std::source_location loc);
  std::vector<Var*> vars_;
};

template <typename... Vs>
  requires(std::is_same_v<Vs, Var> && ...)
TiedVars Tie(Vs&... vars) {
  return TiedVars(std::vector<Var*>{&vars...});
}

}  // namespace autobatch

#endif  // AUTOBATCH_FRONTEND_STRUCTS_H_
