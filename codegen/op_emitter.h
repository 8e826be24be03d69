// The C++ of one primitive op of a lowered program for a chunk of lanes,
// and the facts about ops and blocks that both code generators use: the
// fused segments (codegen/codegen.cc) and whole compiled programs
// (codegen/program_codegen.cc). Internal to codegen/.
#ifndef AUTOBATCH_CODEGEN_OP_EMITTER_H_
#define AUTOBATCH_CODEGEN_OP_EMITTER_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "codegen/codegen.h"
#include "ir/ir.h"

namespace autobatch::codegen_internal {

// `text` made safe for a `//` comment of the generated source: printable
// ASCII but the backslash (a line splice) is kept; anything else, line ends
// and carriage returns among them, becomes '?'. Names come from the
// program, which may come from a file: unsanitized, a name holding a line
// end would put the rest of it into the compiled code.
std::string CommentText(std::string_view text);
// The C++ type of an element as computed, and as stored (bool: one byte).
std::string CType(DType d);
std::string StoredType(DType d);
// The name of the local holding `v` for a chunk of lanes.
std::string Local(VarId v);

// Generates the code of one op (a block of statements) and the file-scope
// constants it needs, or says the op cannot be fused.
class OpEmitter {
 public:
  // `comments`: each op's code starts with the op as the IR prints it. An
  // emitter that only asks whether ops can be emitted leaves them out:
  // printing an op costs more than writing its code.
  OpEmitter(const Module& module, std::string* constants, int* next_constant,
            bool comments = true)
      : module_(module),
        constants_(constants),
        next_constant_(next_constant),
        comments_(comments) {}

  // The statements computing `op` for one lane into the locals, or nullopt
  // if the op is not fusable or does not type-check (the interpreter then
  // runs it and reports the error).
  // With `may_push`, an op that pushes a frame of its Full result is
  // emitted too (a compiled program pushes the frame before the loop over
  // the lanes; codegen/program_codegen.cc).
  std::optional<std::string> Emit(const PrimOp& op, bool may_push = false);
 private:
  const TensorType& Type(VarId v) const { return *module_.var(v).type; }
  int64_t Elements(VarId v) const { return Type(v).NumElements(); }
  DType Dt(VarId v) const { return Type(v).dtype; }


  // `r[k, e] = expr;` for the chunk's lanes k and the n elements e.
  static std::string Loop(int64_t n, const std::string& expr);
  // Element e of `v` in lane k, or element 0 if `v` is a scalar broadcast
  // over n.
  std::string At(VarId v) const;
  // Element-wise binary operands broadcast to the output (CheckBinary).
  bool Broadcasts(const PrimOp& op) const;
  std::string NewConstant(const std::string& type, const std::vector<std::string>& values);
  // Whether the operand and result types are those the type rule of an
  // element-wise primitive (ir/type_rules.h) gives, which its template
  // assumes. An op that fails this does not type-check: it is not fused, and
  // the interpreter reports it.
  bool FitsElementwiseRule(const PrimOp& op) const;
  // The code of a primitive with a template in ir/primitives.def (the
  // column `cxx` documents the placeholders).
  std::optional<std::string> FromTemplate(const PrimOp& op) const;
  // The code of every other primitive.
  std::optional<std::string> Body(const PrimOp& op);
  const Module& module_;
  std::string* constants_;
  int* next_constant_;
  bool comments_;

};

// Vars read by the ops of `block` from `from` on, and by its terminator.
std::vector<bool> ReadFrom(const Module& module, const Block& block, size_t from);

// Ops [first, end) of `block` as a segment: the variables it reads before
// writing them, and those it writes that are read after it or outlive the
// block. Pops among the ops are left out (the caller runs them after).
SegmentPlan PlanSegment(const Module& module, FunctionId fn, BlockId b, const Block& block,
                        int32_t first, int32_t end);

// Whether the stack VM moves `op`'s lanes storage to storage when it runs
// it unfused (StoragePeephole, vm/stack/block_plan.h): a copy or a
// keep-or-replace select of a value wider than 8 bytes into a variable that
// outlives its block.
bool MovesInStorage(const Module& module, const PrimOp& op);

// The end of a run of ops of `block` from `first`, which `joins` accepts:
// primitives that `joins(op, locals)` accepts (`locals`: the variables the
// run's primitives before it touch), at most kMaxSegmentOps of them, with
// locals of at most kMaxSegmentLocalBytes for a chunk of lanes; and pops
// whose variables no later op of the run touches (the caller runs them
// after the run's primitives). Any other op ends the run, and pops at its
// end are left out of it. Both code generators plan their runs so.
int32_t RunEnd(const Module& module, const Block& block, int32_t first,
               absl::FunctionRef<bool(const PrimOp&, std::span<const VarId>)> joins);

// Whether `op` reads or writes a uniform variable: generated code indexes
// every operand by lane, so such ops run through the kernels (a stride-0
// view).
bool TouchesUniform(const Module& module, const PrimOp& op);

}  // namespace autobatch::codegen_internal

#endif  // AUTOBATCH_CODEGEN_OP_EMITTER_H_
