// Context: registers batched functions (decorator style) and user kernels,
// and gives the untyped IR (Module / Program) and batched calls.
//
//   Context ctx;
//   BatchFunction fib = ctx.Declare("fibonacci", {.param_names = {"n"}});
//   ctx.Batch(fib)([&](Builder& b, Value n) {   // may call fib: recursion
//     Var ans = b.Local("ans");
//     b.If(n > 1).Then([&] { ans = fib(n - 1) + fib(n - 2); })
//                .Else([&] { ans = 1; });
//     return ans;
//   });
//   BatchFunction main = ctx.Batch("main")([&](Value n) { return fib(n); });
//   absl::StatusOr<Program> program = ctx.Program(main);
//   absl::StatusOr<std::vector<Tensor>> out =
//       main.Run({n_tensor}, {.dry_run = true});
//
// Registration. `Batch(name)` declares and `Batch(function)` defines: each
// returns an object that is applied to the body lambda and returns the
// BatchFunction handle. The lambda takes an optional `Builder&` first, then one
// parameter per function argument (Value, Var, a tuple or an AUTOBATCH_STRUCT
// type; not `auto`), and returns the results (Value, Var, tuple, struct) or
// nothing. Handles can be called in any body, before their own body is
// defined, so mutual recursion works.
//
// Lazy building. Bodies are built when Module(), Program() or Run() first
// needs them, one at a time on the calling thread, in registration order;
// a lambda may therefore capture its own handle (or any later one) by
// reference. Everything a lambda captures by reference must stay alive until
// then; once built, the lambda is released.
//
// Errors. Misuse while registering or building (a call of an unregistered
// handle, different numbers of returned values on different paths, a Value
// used in another function, an If without a condition, a wrong number of
// arguments, ...) is recorded with the user's "file:line" and returned by
// Module() / Program() / Run(); the first error wins and is kept (building
// continues but its IR is discarded). A function that is called or declared
// but has no body yet is reported without being kept: define it and ask
// again.
//
// IR. Each function's variables belong to it and have readable unique names:
// parameters as given in FunctionOptions::param_names (else p0, p1, ...;
// struct fields as `name.field`), results r0.. (or result_names), locals as
// given to Builder::Local (else l0..), temporaries t0... Every op carries
// the user's source location. The IR is as emitted, statement by statement;
// the compiler's pipelines start with the tidy passes (passes/pipeline.h),
// which remove the copies and trivial blocks that leaves.
//
// Threads. A Context may be used from several threads at once: every
// member function, and every handle's Run / operator() / name(), may be
// called concurrently (and several Contexts are independent). They are
// serialized by one lock per Context while they register, build bodies,
// assemble or compile (the first call for an input signature compiles and
// caches the program; a concurrent first call waits for it); the batched
// runs themselves only read the shared compiled program and run in
// parallel, each on its own VM and backend. Results never depend on what
// other threads do. Body lambdas run with the lock held, on the thread
// whose call needed them: they may use this Context (register, call
// handles) but must not wait for another thread that uses it. User kernels
// may be called from several threads at once (one call per run, or per
// chunk on the threaded backend). Two things are not synchronized: reading
// kernels() races with a RegisterKernel on another thread, and the programs
// CompiledProgram / LoweredProgram point to stay valid only until the next
// registration on any thread (Run holds its own reference).
//
// A Context must outlive its handles' use. It owns a KernelRegistry for the
// user kernels it registers.
#ifndef AUTOBATCH_FRONTEND_CONTEXT_H_
#define AUTOBATCH_FRONTEND_CONTEXT_H_

#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "frontend/builder.h"
#include "frontend/structs.h"
#include "frontend/value.h"
#include "ir/ir.h"
#include "vm/options.h"

namespace autobatch {

class BlockPlan;  // vm/stack/block_plan.h

class Context;

namespace frontend_internal {
class ContextImpl;

// A body lambda, type-erased: its parameter layout and an invoker that
// unflattens the parameters, runs the lambda and flattens its result
// (nullopt if it returns void).
struct BodyDefinition {
  // Per user parameter, the leaf name suffixes ("" for a Value, ".q" ...).
  std::vector<std::vector<std::string>> param_leaf_suffixes;
  std::function<std::optional<std::vector<Value>>(Builder&, std::span<const Value>,
                                                  std::source_location)>
      invoke;
};

template <typename T>
struct CallableTraits : CallableTraits<decltype(&std::remove_cvref_t<T>::operator())> {};
template <typename R, typename... A>
struct CallableTraits<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<A...>;
};
template <typename R, typename... A>
struct CallableTraits<R (*)(A...) noexcept> : CallableTraits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...)> : CallableTraits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...) const> : CallableTraits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...) noexcept> : CallableTraits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...) const noexcept> : CallableTraits<R (*)(A...)> {};

template <typename F>
concept HasCallOperator = requires { &std::remove_cvref_t<F>::operator(); };

// Splits a leading Builder& off a lambda's parameter list.
template <typename Tuple>
struct DropBuilder {
  using type = Tuple;
  static constexpr bool kTakesBuilder = false;
};
template <typename First, typename... Rest>
  requires std::is_same_v<std::remove_cvref_t<First>, Builder>
struct DropBuilder<std::tuple<First, Rest...>> {
  using type = std::tuple<Rest...>;
  static constexpr bool kTakesBuilder = true;
};

template <typename F, typename R, bool kTakesBuilder, typename... P>
BodyDefinition MakeBodyDefinition(F body, std::tuple<P...>*) {
  static_assert((Unflattenable<P> && ...),
                "body lambda parameters must be Value, Var, tuples or "
                "AUTOBATCH_STRUCT types (taken by value or const&)");
  static_assert(std::is_void_v<R> || Flattenable<R>,
                "a body lambda must return void, a Value, a Var, a tuple or an "
                "AUTOBATCH_STRUCT type");
  BodyDefinition def;
  (def.param_leaf_suffixes.push_back([] {
    std::vector<std::string> names;
    FlatNames<std::remove_cvref_t<P>>("", names);
    return names;
  }()),
   ...);
  def.invoke = [body = std::move(body)](
                   Builder& b, std::span<const Value> leaves,
                   std::source_location loc) mutable -> std::optional<std::vector<Value>> {
    LeafReader in(leaves);
    std::tuple<std::remove_cvref_t<P>...> params;
    std::apply([&](auto&... p) { (FlatIn(p, in, loc), ...); }, params);
    auto call = [&]() -> decltype(auto) {
      return std::apply(
          [&](auto&... p) -> decltype(auto) {
            if constexpr (kTakesBuilder) {
              return body(b, p...);
            } else {
              (void)b;
              return body(p...);
            }
          },
          params);
    };
    if constexpr (std::is_void_v<R>) {
      call();
      return std::nullopt;
    } else {
      std::vector<Value> out;
      FlatOut(call(), out);
      return out;
    }
  };
  return def;
}

}  // namespace frontend_internal

// Options of a registered function.
struct FunctionOptions {
  // IR names of the parameters, one per lambda parameter (after Builder&);
  // default p0, p1, ...
  std::vector<std::string> param_names = {};
  // IR names of the results (flattened); default r0, r1, ...
  std::vector<std::string> result_names = {};
  // Declared types (flattened); checked by infer_types and by Run.
  std::optional<Signature> signature = std::nullopt;
  // Parameters (names from param_names; a struct's every field) that are
  // UNIFORM (ir/ir.h): the same for every lane, given once per call as a
  // Tensor of ONE lane (no batch dimension to repeat), stored once and read
  // by every lane through a stride-0 view. Only a program's entry may have
  // them: calling such a function from a body is an error.
  std::vector<std::string> uniform_params = {};
};

// Options of Context::Gradient.
struct GradientOptions {
  // The primal's parameters (their IR names: FunctionOptions::param_names,
  // struct fields as `name.field`) to differentiate with respect to; empty
  // means every parameter. The gradient returns them in the primal's
  // parameter order.
  std::vector<std::string> wrt = {};
  // The gradient function's name; default "<primal>.grad".
  std::string name = "";
};

// Options of a Context; none at present.
struct ContextOptions {};

// A handle to a registered batched function.
class BatchFunction {
 public:
  // An unregistered handle; calling it is an error.
  BatchFunction() = default;

  // Inside a body: a call (arguments flattened; up to 12 C++ arguments).
  CallResult operator()(AUTOBATCH_ARG_PARAMS) const;

  // Outside bodies: runs a batch. `inputs` are the flattened parameters,
  // each a Tensor of [batch, event...]; all must have the same batch size
  // (0 and 1 work). Returns the flattened results. Runs on the VM and
  // backend `options` choose (the program is compiled for the inputs' types
  // once and cached; see Context::LoweredProgram), or with dry_run on the
  // reference interpreter lane by lane.
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs,
                                          const CallOptions& options = {}) const;
  // One input, one output.
  absl::StatusOr<Tensor> operator()(const Tensor& input,
                                    const CallOptions& options = {}) const;

  bool valid() const { return ctx_ != nullptr; }
  // "" for an unregistered handle.
  const std::string& name() const;

 private:
  friend class Context;
  friend class Definer;
  friend class frontend_internal::ContextImpl;
  BatchFunction(Context* ctx, int index) : ctx_(ctx), index_(index) {}
  Context* ctx_ = nullptr;
  int index_ = -1;
};

// A handle to a registered user kernel: callable in bodies like a BatchFunction.
class Kernel {
 public:
  Kernel() = default;
  CallResult operator()(AUTOBATCH_ARG_PARAMS) const;
  const std::string& name() const;

 private:
  friend class Context;
  Kernel(Context* ctx, int index) : ctx_(ctx), index_(index) {}
  Context* ctx_ = nullptr;
  int index_ = -1;
};

// A program-wide uniform input (Context::AddProgramInput): one value for
// every lane, that any function's body may read (a model's data).
class ProgramInput {
 public:
  ProgramInput() = default;
  // Inside a body: the input's value (read-only: it is never assigned).
  // Outside bodies, or for an unregistered handle: an empty Value, and the
  // body records an error.
  Value operator()(std::source_location loc = std::source_location::current()) const;
  const std::string& name() const;
  const TensorType& type() const;
  bool valid() const { return ctx_ != nullptr; }

 private:
  friend class Context;
  ProgramInput(Context* ctx, int index) : ctx_(ctx), index_(index) {}
  Context* ctx_ = nullptr;
  int index_ = -1;
};

// Applies a body lambda to a function: `ctx.Batch(...)(lambda)`.
class Definer {
 public:
  template <typename F>
  BatchFunction operator()(F&& body) && {
    static_assert(frontend_internal::HasCallOperator<F> || std::is_pointer_v<std::remove_cvref_t<F>>,
                  "Batch(...) takes a lambda whose parameter types are spelled out "
                  "(Value, Var, a struct...), not auto");
    using Traits = frontend_internal::CallableTraits<std::remove_cvref_t<F>>;
    using Split = frontend_internal::DropBuilder<typename Traits::Args>;
    Define(frontend_internal::MakeBodyDefinition<std::remove_cvref_t<F>, typename Traits::Result,
                                                 Split::kTakesBuilder>(
        std::forward<F>(body), static_cast<typename Split::type*>(nullptr)));
    return function_;
  }

 private:
  friend class Context;
  Definer(BatchFunction function, std::source_location loc) : function_(function), loc_(loc) {}
  void Define(frontend_internal::BodyDefinition def);
  BatchFunction function_;
  std::source_location loc_;
};

class Context {
 public:
  explicit Context(ContextOptions options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Declares a function whose body is defined later with Batch(function).
  // Names must be unique.
  BatchFunction Declare(std::string name, FunctionOptions options = {},
                   std::source_location loc = std::source_location::current());
  // Declares and defines: ctx.Batch("name")([&](Builder& b, Value x) {...}).
  Definer Batch(std::string name, FunctionOptions options = {},
                std::source_location loc = std::source_location::current());
  // Defines a declared function (once).
  Definer Batch(const BatchFunction& declared,
                std::source_location loc = std::source_location::current());

  // Registers the reverse-mode gradient of `primal`, a function of f64
  // params (and others) returning one f64 scalar: a function taking the
  // primal's params and returning its value, then d value / d p for each
  // param p of options.wrt (each of p's type). Called like any function, in
  // bodies or with Run; the differentiate pass (passes/differentiate.h)
  // writes its body when the program is compiled, through branches and
  // loops with per-lane trip counts. The primal may be defined later.
  // Errors (recursion or random draws on the differentiated path, a
  // non-f64 param or result, an unknown name in wrt) come back from
  // Module() / Program() / Run() with the user's source line.
  BatchFunction Gradient(const BatchFunction& primal, GradientOptions options = {},
                         std::source_location loc = std::source_location::current());

  // Registers a user kernel: a batched implementation receiving every lane
  // of its inputs and the active lanes (backends/kernel_registry.h), with an
  // explicit signature; signature.bit_stable says whether a lane's results
  // are independent of the batch composition, signature.pure whether its
  // outputs depend on its inputs alone with no other effect (default false:
  // a kernel is kept as written unless declared pure; a pure one may be
  // merged with an identical call by cse or dropped when its outputs are
  // unused, ir/ir.h KernelSignature). The handle emits a PrimOp
  // kUserKernel {kernel = name}; programs list the signature in
  // Module::kernels. signature.vjp may name another registered kernel that
  // computes this one's vector-Jacobian product (its inputs: this kernel's
  // inputs then one cotangent per output; its outputs: one cotangent per
  // input; ir/ir.h): then Gradient() differentiates through it, and a
  // gradient through a kernel without one is an error.
  Kernel RegisterKernel(std::string name, KernelSignature signature, KernelFn fn,
                        std::source_location loc = std::source_location::current());

  // Declares a program-wide UNIFORM input (ir/ir.h): one value of `type`
  // for every lane, stored once and read through a stride-0 view, that the
  // body of ANY function may read with `input()` (a model's data, read at
  // the leaf of a recursive sampler). Every program built from this Context
  // takes the program inputs as its entry's last parameters, after the
  // entry's own, in declaration order: Run() gets each as a Tensor of ONE
  // lane. The entry of such a program must not be called by a function.
  // Names must be unique among program inputs.
  ProgramInput AddProgramInput(std::string name, TensorType type,
                               std::source_location loc = std::source_location::current());

  // Registers every function of `program` (an untyped program, e.g. loaded
  // from JSON; it must verify, call no user kernels and have no gradient
  // stubs) under its own name, as if its bodies had been written here, and
  // returns the handle of its entry. The entry's LAST inputs.size()
  // parameters must be uniform: they become `inputs` (read wherever the
  // program read them), so the entry's handle takes the other parameters
  // only. Errors (as Status, naming the function and what to do) are
  // immediate; a name already registered is reported by Program()/Run().
  absl::StatusOr<BatchFunction> Import(const autobatch::Program& program,
                                       std::span<const ProgramInput> inputs,
                                       std::source_location loc =
                                           std::source_location::current());

  // Builds every body not built yet and returns the untyped IR of every
  // registered function (in registration order), or the first error. Every
  // declared function must have a body.
  absl::StatusOr<autobatch::Module> Module();
  // The untyped program with `entry` as entry function; it contains the
  // functions reachable from `entry` (in registration order), which must all
  // have bodies.
  absl::StatusOr<autobatch::Program> Program(const BatchFunction& entry);

  // The program of `entry` typed for `input_types` and allocated (TFP's
  // "compiled" program; runs on the stackless VM), and the same program
  // lowered (runs on the stack VM). Each is compiled once per input signature
  // and cached until the next registration; the pointer stays valid until
  // then. Errors name the failing pass, and show the IR it received if
  // `dump_ir_on_error` (CallOptions::dump_ir_on_error).
  absl::StatusOr<const autobatch::Program*> CompiledProgram(
      const BatchFunction& entry, const std::vector<TensorType>& input_types,
      bool dump_ir_on_error = false);
  absl::StatusOr<const autobatch::Program*> LoweredProgram(
      const BatchFunction& entry, const std::vector<TensorType>& input_types,
      bool dump_ir_on_error = false);
  // The stack VM's block plan (vm/stack/block_plan.h) of LoweredProgram,
  // built once per input signature and cached beside it; it keeps its
  // program alive. For callers that run the same program many times
  // (RunProgram(const BlockPlan&, ...)), as BatchFunction::Run does.
  absl::StatusOr<std::shared_ptr<const BlockPlan>> LoweredPlan(
      const BatchFunction& entry, const std::vector<TensorType>& input_types,
      bool dump_ir_on_error = false);

  // The user kernels registered so far. Reading it races with a
  // RegisterKernel on another thread (runs use their own snapshot).
  const KernelRegistry& kernels() const;

 private:
  friend class BatchFunction;
  friend class Kernel;
  friend class ProgramInput;
  friend class Definer;
  friend class Builder;
  friend struct frontend_internal::Access;
  std::unique_ptr<frontend_internal::ContextImpl> impl_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_FRONTEND_CONTEXT_H_
