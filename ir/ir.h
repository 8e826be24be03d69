// The autobatch IR: plain value types with typed indices.
//
// Semantics and invariants (checked by ir/verifier.h):
//
// * A Program is a Module (functions + one variable table) plus an entry
//   function. The entry's parameters and results are the program's inputs and
//   outputs. Blocks, variables and functions are referred to by typed indices
//   (BlockId, VarId, FunctionId), never by pointers: the IR copies, compares,
//   prints and serializes trivially.
// * Every variable holds exactly ONE tensor of one example (its TensorType;
//   the batch dimension is implicit) and belongs to exactly one function.
// * A Function's CFG is a vector of Blocks; block 0 is the entry. A Block is
//   straight-line ops followed by exactly one terminator.
// * Execution is per example ("lane"); a batched executor runs a block for
//   every lane whose control is there. Values never flow between lanes,
//   except through primitives flagged not bit_stable (ir/primitives.def).
// * Stages. kUntyped (frontend output): types may be missing; CallOp and
//   Return allowed; PushGoto, IndirectGoto and PopOp are not. kTyped: every
//   variable has a type. kAllocated: every variable has a storage class
//   chosen from liveness. kLowered: no CallOp or Return; calls are PushGoto.
//
// Storage classes and the stack discipline (stack VM):
// * Null: never read; writes are dropped. Temporary: written and read only
//   inside one block (never crosses a block boundary). Register: one value per
//   lane, no stack (not live across a call that may overwrite it). Full: a
//   per-lane stack. Tape: a tape ("Tapes" below), and nothing else.
// * Every write to a Full variable pushes a new frame for the writing lanes;
//   a PopOp discards the top frame, restoring the value the caller had.
//   Lowering inserts pops where a value dies; fuse_pop_push turns "pop, then
//   write" into an in-place update of the top frame.
// * The program counter is a Full variable of its own: PushGoto(callee,
//   return_to) pushes return_to and jumps to the callee's block 0;
//   IndirectGoto pops the PC and jumps there. Popping the last frame halts the
//   lane. Calls therefore need no frames: a recursive call costs one push per
//   written Full variable, only for the lanes making the call.
// * Unlowered calls: CallOp copies args into the callee's parameters, runs the
//   callee until Return, and copies the callee's result variables into the
//   CallOp's results.
//
// Uniform values (after ISPC): a variable flagged `uniform` holds ONE value
// that every lane reads, stored once per call, never pushed, never a call
// argument or result. It is a uniform param of the entry function (a
// read-only input shared by all lanes and shards, which any function's
// primitives may read: a model's data, read at a sampler's leaf), or is
// written exactly once, by a built-in PrimOp whose inputs are all uniform,
// in a block of the entry that every lane runs exactly once (outside loops
// and per-lane branches; ir/uniform.h). Executors may compute such ops once per call.
// Tapes (what reverse-mode differentiation saves for its reverse sweep):
// * A tape is a variable that is the tape operand of a TapePushOp or
//   TapePopOp, and nothing else: no other op, call, param, result, branch or
//   PopOp names it. Each lane has, for each tape, a LIFO stack of values:
//   `tape_push %t, %x` appends x for the running lanes, `%y = tape_pop %t`
//   moves the top into y and removes it. The tape's type is the type of the
//   values pushed on it (infer_types sets it); its storage class is kTape.
// * Tapes are BALANCED PER ACTIVATION: every activation of a function leaves
//   each of its tapes at the depth it found it (a Halt ends every
//   activation: the lane's tapes must be empty), so one per-lane stack per
//   tape serves recursion too. The verifier rejects a tape that is only
//   pushed or only popped (K3); the balance itself depends on each lane's
//   path, so popping a tape the current activation has not pushed, or an
//   activation ending deeper than it began, is a run-time error that every
//   executor reports. Tapes are not frames: no liveness pop, no PC stack,
//   no fuse_pop_push; only the tape ops move them.
#ifndef AUTOBATCH_IR_IR_H_
#define AUTOBATCH_IR_IR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/primitives.h"
#include "ir/types.h"

namespace autobatch {

// A typed index into one of the IR's tables.
template <typename Tag>
struct Id {
  int32_t value = -1;
  constexpr Id() = default;
  constexpr explicit Id(int32_t v) : value(v) {}
  constexpr bool valid() const { return value >= 0; }
  friend constexpr auto operator<=>(Id, Id) = default;
  template <typename H>
  friend H AbslHashValue(H h, Id id) {
    return H::combine(std::move(h), id.value);
  }
};
using VarId = Id<struct VarTag>;
using BlockId = Id<struct BlockTag>;
using FunctionId = Id<struct FunctionTag>;

// Where a user wrote the op ("file:line"); line 0 = unknown.
struct SourceLoc {
  std::string file;
  int line = 0;
  bool known() const { return line > 0; }
  std::string ToString() const;  // "fib.cc:12", or "<unknown>"
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

enum class StorageClass : uint8_t { kNull, kTemporary, kRegister, kFull, kTape };
std::string_view StorageClassName(StorageClass s);  // "null", "temp", ..., "tape"
std::optional<StorageClass> StorageClassFromName(std::string_view name);

struct Variable {
  std::string name;             // for humans; unique within its function
  FunctionId function;          // the function it belongs to
  std::optional<TensorType> type;  // unset until infer_types (or if given)
  StorageClass storage = StorageClass::kFull;  // set by allocate_variables
  // The same value for every lane, stored once per call (the rules: U1-U5 of
  // ir/verifier.h). Set for uniform entry params by the frontend or the
  // text/JSON form, and for values computed from them by infer_uniformity.
  bool uniform = false;
  friend bool operator==(const Variable&, const Variable&) = default;
};

// A constant tensor. Floats are kept as double, every other dtype as int64
// (u64 bit-cast, bool 0/1), so one literal holds any dtype exactly.
struct Literal {
  TensorType type;
  std::vector<double> floats;  // if IsFloat(type.dtype)
  std::vector<int64_t> ints;   // otherwise
  static Literal F64(double v) { return {Scalar(DType::kF64), {v}, {}}; }
  static Literal I64(int64_t v) { return {Scalar(DType::kI64), {}, {v}}; }
  static Literal Bool(bool v) { return {Scalar(DType::kBool), {}, {v ? 1 : 0}}; }
  friend bool operator==(const Literal&, const Literal&);  // NaN == NaN here
};

// A constant row-major matrix attribute (matvec). Shared, so copying the IR
// does not copy matrices.
struct DenseMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> data;  // row-major, rows * cols
  friend bool operator==(const DenseMatrix&, const DenseMatrix&) = default;
};

// Constant attributes of a PrimOp; which ones a primitive uses is stated in
// ir/primitives.def.
struct Attributes {
  std::optional<Literal> literal;            // constant, fill_like
  std::optional<DType> dtype;                // cast
  std::vector<int64_t> ints;                 // slice {begin, size}; broadcast, random: shape
  std::shared_ptr<const DenseMatrix> matrix;  // matvec, matvec_batched
  std::string kernel;                        // kUserKernel: the kernel's name
  friend bool operator==(const Attributes&, const Attributes&);
};

struct PrimOp {
  Primitive prim;
  std::vector<VarId> inputs;
  std::vector<VarId> outputs;  // exactly one for built-ins
  Attributes attrs;
  SourceLoc loc;
  // Lowered only: outputs (a subset, Full variables) written in place, over
  // the top frame, instead of pushing a new frame. Set by fuse_pop_push.
  std::vector<VarId> in_place;
  friend bool operator==(const PrimOp&, const PrimOp&) = default;
};

struct CallOp {
  FunctionId callee;
  std::vector<VarId> args;     // copied into callee.params
  std::vector<VarId> results;  // receive callee.results
  SourceLoc loc;
  friend bool operator==(const CallOp&, const CallOp&) = default;
};

// Lowered programs only: discard the top frame of each (Full) variable.
struct PopOp {
  std::vector<VarId> vars;
  SourceLoc loc;
  friend bool operator==(const PopOp&, const PopOp&) = default;
};

// Any stage: append `value` to `tape` for the running lanes (ir/ir.h,
// "Tapes"). Reads value; the tape is neither read nor written (TapeOf).
struct TapePushOp {
  VarId tape;
  VarId value;
  SourceLoc loc;
  friend bool operator==(const TapePushOp&, const TapePushOp&) = default;
};

// Any stage: move the top of `tape` into `result` and remove it. Writes
// result (pushing a frame when it is Full, like any write).
struct TapePopOp {
  VarId tape;
  VarId result;
  SourceLoc loc;
  friend bool operator==(const TapePopOp&, const TapePopOp&) = default;
};

using Op = std::variant<PrimOp, CallOp, PopOp, TapePushOp, TapePopOp>;
const SourceLoc& LocOf(const Op& op);

struct Branch {
  VarId cond;  // bool scalar
  BlockId then_block;
  BlockId else_block;
  friend bool operator==(const Branch&, const Branch&) = default;
};
struct Goto {
  BlockId target;
  friend bool operator==(const Goto&, const Goto&) = default;
};
// Unlowered only: leave the function; its result variables hold the results.
struct Return {
  friend bool operator==(const Return&, const Return&) = default;
};
// Lowered only: push return_to (a block of this function) on the PC stack and
// jump to block 0 of callee.
struct PushGoto {
  FunctionId callee;
  BlockId return_to;
  friend bool operator==(const PushGoto&, const PushGoto&) = default;
};
// Lowered only: pop the PC stack and continue there (halt if it is empty).
struct IndirectGoto {
  friend bool operator==(const IndirectGoto&, const IndirectGoto&) = default;
};
// The lane is finished.
struct Halt {
  friend bool operator==(const Halt&, const Halt&) = default;
};
using Terminator = std::variant<Branch, Goto, Return, PushGoto, IndirectGoto, Halt>;

struct Block {
  std::string label;
  std::vector<Op> ops;
  Terminator terminator = Halt{};
  SourceLoc loc;  // of the terminator (e.g. the If that made a Branch)
  friend bool operator==(const Block&, const Block&) = default;
};

// Types the user declared for a function; checked by infer_types.
struct Signature {
  std::vector<TensorType> params;
  std::vector<TensorType> results;
  friend bool operator==(const Signature&, const Signature&) = default;
};

// A function defined as the reverse-mode derivative of another (a gradient
// "stub"): it has no blocks until the differentiate pass
// (passes/differentiate.h) writes its body. Its params are the primal's
// params (same count and types); its results are the primal's value (an
// f64 scalar) followed by one gradient per `wrt` entry, each of the type of
// the primal's param wrt[k]. Only in untyped and typed programs.
struct GradientOf {
  FunctionId function;        // the primal function
  std::vector<int32_t> wrt;   // indices of the primal's params, ascending, distinct
  friend bool operator==(const GradientOf&, const GradientOf&) = default;
};

struct Function {
  std::string name;
  std::vector<VarId> params;
  std::vector<VarId> results;
  std::vector<Block> blocks;  // blocks[0] is the entry
  std::optional<Signature> signature;
  std::optional<GradientOf> gradient_of;  // a gradient stub: no blocks yet
  SourceLoc loc;  // where it was registered
  friend bool operator==(const Function&, const Function&) = default;
};

// A user kernel's declared types; the implementation is bound at run time
// by name (backends/kernel_registry.h).
struct KernelSignature {
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
  bool bit_stable = true;  // per-lane results independent of the batch
  // Its outputs are a function of its inputs alone and a call has no other
  // effect, so cse may merge two calls with the same inputs and
  // remove_dead_ops may drop a call whose outputs nobody reads. False unless
  // declared: a kernel that records, counts or adapts (the MCMC draw
  // recorder, the warmup adapter) must keep every call.
  bool pure = false;
  // The kernel computing this kernel's vector-Jacobian product, or empty
  // (then reverse mode refuses a gradient through it). Its inputs are this
  // kernel's inputs then one cotangent per output (the outputs' types); its
  // outputs are one cotangent per input (the inputs' types; entries for
  // non-f64 inputs are ignored). Checked by the verifier (O5).
  std::string vjp = "";
  friend bool operator==(const KernelSignature&, const KernelSignature&) = default;
};

struct Module {
  std::vector<Function> functions;
  std::vector<Variable> variables;
  std::map<std::string, KernelSignature> kernels;  // user kernels referenced

  Function& function(FunctionId id) { return functions.at(id.value); }
  const Function& function(FunctionId id) const { return functions.at(id.value); }
  Variable& var(VarId id) { return variables.at(id.value); }
  const Variable& var(VarId id) const { return variables.at(id.value); }
  std::optional<FunctionId> FindFunction(std::string_view name) const;
  VarId AddVariable(Variable v);
  FunctionId AddFunction(Function f);
  friend bool operator==(const Module&, const Module&) = default;
};

enum class Stage : uint8_t { kUntyped, kTyped, kAllocated, kLowered };
std::string_view StageName(Stage s);  // "untyped", "typed", ...
std::optional<Stage> StageFromName(std::string_view name);

struct Program {
  Module module;
  FunctionId entry;
  Stage stage = Stage::kUntyped;

  const Function& entry_function() const { return module.function(entry); }
  friend bool operator==(const Program&, const Program&) = default;
};

// `to = copy from`, at `loc`.
PrimOp MakeCopy(VarId to, VarId from, SourceLoc loc);
// Replaces every variable `op` names (PrimOp inputs, outputs and in_place,
// CallOp args and results, PopOp vars, a tape op's tape, value and result)
// by map(v).
void RenameVariables(Op& op, const std::function<VarId(VarId)>& map);
// The same for every op of `fn`, its params, results and Branch conditions.
void RenameVariables(Function& fn, const std::function<VarId(VarId)>& map);

// Visits every variable an op reads / writes (in order). A tape op's tape is
// in neither list (TapeOf): tape_push reads {value}, tape_pop writes
// {result}.
std::vector<VarId> OpReads(const Op& op);
std::vector<VarId> OpWrites(const Op& op);
// The tape of a TapePushOp or TapePopOp; nullopt for every other op.
std::optional<VarId> TapeOf(const Op& op);
// Every variable `op` names: OpReads, OpWrites, then its tape (PrimOp
// in_place vars are among its outputs).
std::vector<VarId> OpVariables(const Op& op);
// The callee params a CallOp copies its arguments into: every param whose
// argument is not that param itself (a self-call passing a param through
// unchanged writes nothing). Requires call.callee to be a function of module.
std::vector<VarId> ParamsWrittenByCall(const Module& module, const CallOp& call);
// The variables `op` writes by pushing a new frame (the stack discipline
// above): its Full outputs (PrimOp) or results (CallOp), except PrimOp
// outputs written in place; none for a PopOp. Meaningful once storage
// classes are chosen (stages allocated and lowered). Out-of-range ids are
// skipped.
std::vector<VarId> PushedVariables(const Module& module, const Op& op);
// Whether the block runs an expensive kernel: a matrix product or a user
// kernel (e.g. a model's gradient). The cost hint order_blocks and the VMs'
// dense/compact choice use.
bool RunsExpensiveKernel(const Block& block);
// Successor blocks of a terminator inside its own function (PushGoto's
// return_to counts as a successor: control comes back there).
std::vector<BlockId> Successors(const Terminator& t);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_IR_H_
