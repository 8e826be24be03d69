// Internal to frontend/: the state of a Context and of one function body
// under construction, and the emission of IR into it.
#ifndef AUTOBATCH_FRONTEND_BODY_H_
#define AUTOBATCH_FRONTEND_BODY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "backends/kernel_registry.h"
#include "frontend/context.h"
#include "ir/ir.h"
#include "passes/pipeline.h"
#include "support/deadline.h"
#include "vm/stack/block_plan.h"

namespace autobatch::frontend_internal {

class Body;
class ContextImpl;

// "file:line" as kept in the IR: the file's base name, so that printed IR and
// messages do not depend on where the sources were built.
SourceLoc ToSourceLoc(const std::source_location& loc);

// The body being built on this thread (nullptr outside bodies).
Body* CurrentBody();
// The current body if it is `id`, else nullptr.
Body* BodyIfCurrent(uint64_t id);

enum class VarKind : uint8_t {
  kParam,
  kResult,
  kNamedLocal,  // Builder::Local("name")
  kLocal,       // l0, l1...
  kTemp,        // t0, t1...
  kProgramInput,  // this body's alias of a Context::AddProgramInput input
};

// A program-wide uniform input declared with Context::AddProgramInput.
struct ProgramInputEntry {
  std::string name;
  TensorType type;
  SourceLoc loc;
};

// A call (of a Function or Kernel) whose results are created on demand.
struct PendingCall {
  uint64_t body = 0;
  int32_t block = -1;  // position of the CallOp / PrimOp in the body
  int32_t op = -1;
  bool is_kernel = false;
  int callee = -1;        // function or kernel index in the Context
  int known_count = -1;   // kernels: number of outputs
  bool materialized = false;
  std::vector<int32_t> results;  // body variables, once materialized
  SourceLoc loc;
  std::source_location source_loc;
};

// How a literal operand of an op is materialized.
struct LiteralPolicy {
  enum Kind : uint8_t { kLike, kConstant, kConstantAs } kind = kConstant;
  int like = -1;                    // kLike: take the dtype/shape of input `like`
  std::optional<TensorType> type;   // kConstantAs
  static LiteralPolicy Like(int i) { return {kLike, i, std::nullopt}; }
  static LiteralPolicy Constant() { return {}; }
  static LiteralPolicy As(TensorType t) { return {kConstantAs, -1, std::move(t)}; }
};

class Body {
 public:
  Body(ContextImpl& ctx, int function, uint64_t id);

  uint64_t id() const { return id_; }
  ContextImpl& context() { return ctx_; }
  int function() const { return function_; }
  const std::string& function_name() const;

  // --- variables -----------------------------------------------------------
  int32_t NewVar(VarKind kind, const std::string& name = "");
  int32_t NewTemp() { return NewVar(VarKind::kTemp); }
  // This body's variable standing for program input `input` (made on first
  // use; Assemble maps it to the entry's uniform parameter).
  int32_t ProgramInputVar(int input);
  // input index -> this body's alias variable.
  const std::map<int, int32_t>& program_input_vars() const { return program_input_vars_; }

  // --- errors --------------------------------------------------------------
  // Records "file:line: in function 'f': message" (the first error wins).
  void Error(const SourceLoc& loc, const std::string& message);
  // "function 'g'" for the body with this id, or "another Context's function".
  std::string DescribeBody(uint64_t id) const;

  // --- operands ------------------------------------------------------------
  // The variable of a non-literal Value used at `loc`, or -1 after recording
  // an error (empty Value, Value of another function).
  int32_t UseVar(const Value& v, const SourceLoc& loc, const std::string& what);
  // Materializes any Value (a literal becomes a constant of its C++ type, or
  // of `as` if given); -1 after an error.
  int32_t Materialize(const Value& v, const SourceLoc& loc, const std::string& what,
                      const std::optional<TensorType>& as = std::nullopt);

  // --- emission ------------------------------------------------------------
  // Appends a PrimOp with one fresh temporary output; literal inputs follow
  // `policies` (one per input). Returns the output, or an empty Value after
  // an error.
  Value EmitPrim(Primitive prim, std::span<const Value> inputs,
                 std::span<const LiteralPolicy> policies, Attributes attrs,
                 const SourceLoc& loc);
  void EmitCopy(int32_t from, int32_t to, const SourceLoc& loc);
  // Emits a call of function `callee` (a context function index).
  CallResult EmitCall(int callee, std::span<const Value> args, const SourceLoc& loc,
                      std::source_location source_loc);
  CallResult EmitKernel(int kernel, std::span<const Value> args, const SourceLoc& loc,
                        std::source_location source_loc);
  std::vector<Value> CallResults(PendingCall& call, int count);

  // --- control flow --------------------------------------------------------
  int32_t NewBlock(const std::string& label);
  int32_t current_block() const { return current_; }
  bool is_open(int32_t block) const { return open_.at(block); }
  void SetCurrent(int32_t block) { current_ = block; }
  // Ends the current block with `t`; the current block becomes a fresh,
  // unreachable one (code after a Return/Break goes there and is dropped).
  void Terminate(Terminator t, const SourceLoc& loc);
  // Ends `block` (which must be open) with `t`.
  void TerminateBlock(int32_t block, Terminator t, const SourceLoc& loc);
  Branch* BranchOf(int32_t block);
  int NextStatementId() { return statement_counter_++; }
  struct Loop {
    int32_t header, exit;
  };
  std::vector<Loop>& loops() { return loops_; }
  void Return(std::span<const Value> values, const SourceLoc& loc);

  // --- finishing -------------------------------------------------------------
  // Runs the body lambda (once): creates the parameters, invokes, returns.
  void Build(const BodyDefinition& def, std::source_location def_loc);
  // Makes this body a gradient stub of `primal` (context function
  // `primal_index`, already built): the primal's params, results "value"
  // and "d_<param>" per entry of `wrt` (param names; empty: every param),
  // no blocks (ir/ir.h GradientOf; the differentiate pass writes them).
  void BuildGradient(const Body& primal, int primal_index, const std::vector<std::string>& wrt,
                     const SourceLoc& loc);
  // The body of function `f` of `module`, already IR (Context::Import):
  // its variables become this body's, a variable in `inputs` (module var ->
  // program input index) becomes this body's alias of that program input,
  // and a CallOp's callee c becomes `callees[c]` (context indices). Params
  // that are inputs are dropped from the params (and the signature).
  void BuildFromIr(const Module& module, FunctionId f, const std::vector<int>& callees,
                   const std::map<int32_t, int>& inputs);
  // Number of results (-1 before Build). Unreachable returns do not count.
  int num_results() const { return num_results_; }
  int num_params() const { return static_cast<int>(params_.size()); }
  // Gives every call its results now that every callee's result count is
  // known; errors (count mismatches, undefined callees) are returned.
  absl::Status ResolveCalls();
  bool calls_resolved() const { return calls_resolved_; }
  // The function's IR with body-local VarIds (variable i is vars()[i]) and
  // CallOp callees as Context function indices.
  const Function& ir() const { return ir_; }
  const std::vector<Variable>& vars() const { return vars_; }
  const std::vector<VarKind>& kinds() const { return kinds_; }
  const std::vector<std::shared_ptr<PendingCall>>& calls() const { return calls_; }

 private:
  std::string UniqueName(const std::string& base);
  void Finish(const std::optional<std::vector<Value>>& returned, const SourceLoc& end_loc);
  int32_t ResultVar(int i);

  ContextImpl& ctx_;
  int function_;
  uint64_t id_;
  std::vector<Variable> vars_;  // `function` fields unset until assembly
  std::vector<VarKind> kinds_;
  std::set<std::string> names_;
  std::map<int, int32_t> program_input_vars_;
  int auto_local_counter_ = 0;
  int temp_counter_ = 0;
  Function ir_;
  std::vector<bool> open_;  // per block: not terminated yet
  int32_t current_ = 0;
  std::vector<Loop> loops_;
  int statement_counter_ = 0;
  struct ReturnSite {
    int32_t block;
    int count;
    SourceLoc loc;
  };
  std::vector<ReturnSite> returns_;
  std::vector<int32_t> params_;
  std::vector<int32_t> result_vars_;  // created on demand
  int num_results_ = -1;
  std::vector<std::shared_ptr<PendingCall>> calls_;
  bool calls_resolved_ = false;
  std::unique_ptr<Builder> builder_;
};

// A function registered with Context::Gradient.
struct GradientEntry {
  int primal = -1;                // context function index
  std::vector<std::string> wrt;   // param names; empty = every param
};

// One registered function.
struct FunctionEntry {
  std::string name;
  FunctionOptions options;
  SourceLoc declared_at;
  bool defined = false;
  SourceLoc defined_at;
  std::optional<BodyDefinition> definition;  // released once built
  std::source_location definition_loc;
  int num_params = -1;  // flattened; known once defined (or from a signature)
  std::unique_ptr<Body> body;  // once built
  std::optional<GradientEntry> gradient;  // a gradient: built from its primal
};

struct KernelEntry {
  std::string name;
  KernelSignature signature;
  SourceLoc loc;
};

// The state of a Context. Every member is guarded by mu(): the public entry
// points (context.cc) lock it, and everything that runs inside them (body
// building, Body, Builder, Value) runs with it held on the same thread.
class ContextImpl {
 public:
  explicit ContextImpl(Context& ctx, ContextOptions options)
      : ctx_(ctx), options_(options) {}

  // Recursive: body lambdas run with it held and may call back into the
  // Context (register functions, name handles). A std:: mutex, not
  // absl::Mutex, because Debian's Abseil is not built with ThreadSanitizer
  // annotations, so TSan cannot see absl::Mutex's synchronization.
  std::recursive_mutex& mu() { return mu_; }

  Context& ctx() { return ctx_; }
  // A deque: references to entries stay valid while bodies register more.
  std::deque<FunctionEntry>& functions() { return functions_; }
  std::deque<KernelEntry>& kernels() { return kernels_; }
  std::deque<ProgramInputEntry>& program_inputs() { return program_inputs_; }
  KernelRegistry& registry() { return registry_; }
  // A copy of registry() for runs, which read it without the lock; the same
  // copy until the next registration.
  std::shared_ptr<const KernelRegistry> RegistrySnapshot();
  const ContextOptions& options() const { return options_; }

  // Records an error (the first one wins).
  void RecordError(absl::Status status);
  const absl::Status& first_error() const { return first_error_; }
  // Something was registered: cached programs (and the registry snapshot)
  // are stale.
  void Touch() {
    ++generation_;
    registry_snapshot_.reset();
  }

  int AddFunction(std::string name, FunctionOptions options, const SourceLoc& loc);
  // Builds every defined body not built yet.
  void BuildBodies();
  // The module of `functions` (context indices, in order), or an error.
  // With an `entry` (a context index among `functions`), every program
  // input becomes a uniform parameter of the entry, after its own, in
  // declaration order, and every body's alias of it is that parameter.
  absl::StatusOr<autobatch::Module> Assemble(const std::vector<int>& functions,
                                             int entry = -1);
  // Adds kernel `name` and the vjp kernels it names to `module`.
  absl::Status AddKernel(const std::string& name, autobatch::Module& module) const;
  // Context indices of the functions reachable from `entry`, in order.
  absl::StatusOr<std::vector<int>> Reachable(int entry);
  // The program of `entry`, cached until the next registration. Shared so
  // that a run keeps its program alive after the lock is released.
  absl::StatusOr<std::shared_ptr<const autobatch::Program>> CachedProgram(int entry);
  // The program of `entry` compiled (lowered = false: CompileProgram, for
  // the stackless VM; true: LowerProgram, for the stack VM) for
  // `input_types`, cached per (entry, signature) until the next registration.
  // A compile not yet cached runs with `compile`'s deadline and error
  // options (PipelineOptions::deadline, show_ir_on_error; its other
  // switches are ignored: the cache holds the default pipelines' output);
  // once the deadline has passed it stops, and nothing is cached.
  absl::StatusOr<std::shared_ptr<const autobatch::Program>> CachedCompiled(
      int entry, const std::vector<TensorType>& input_types, bool lowered,
      const PipelineOptions& compile = {});
  // The stack VM's plan of CachedCompiled(entry, input_types, lowered =
  // true, compile), built once and cached beside it; it keeps its program
  // alive.
  absl::StatusOr<std::shared_ptr<const BlockPlan>> CachedPlan(
      int entry, const std::vector<TensorType>& input_types,
      const PipelineOptions& compile = {});
  // The name of the body with this id, if it belongs to this context.
  std::optional<std::string> BodyName(uint64_t id) const;

 private:
  std::recursive_mutex mu_;
  Context& ctx_;
  ContextOptions options_;
  std::deque<FunctionEntry> functions_;
  std::deque<KernelEntry> kernels_;
  std::deque<ProgramInputEntry> program_inputs_;
  KernelRegistry registry_;
  std::shared_ptr<const KernelRegistry> registry_snapshot_;  // null: stale
  absl::Status first_error_;
  int64_t generation_ = 0;
  using CachedEntry = std::pair<int64_t, std::shared_ptr<const autobatch::Program>>;
  // entry -> (generation, program).
  std::map<int, CachedEntry> program_cache_;
  // (entry, lowered, signature) -> (generation, program).
  std::map<std::tuple<int, bool, std::string>, CachedEntry> compiled_cache_;
  // The lowered entries' block plans, keyed by the program they plan.
  std::map<const autobatch::Program*, std::pair<int64_t, std::shared_ptr<const BlockPlan>>>
      plan_cache_;
};

}  // namespace autobatch::frontend_internal

#endif  // AUTOBATCH_FRONTEND_BODY_H_
