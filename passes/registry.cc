// The pass registry: every pass by name, with a one-line description.
#include "passes/registry.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "passes/allocate_variables.h"
#include "passes/coalesce_copies.h"
#include "passes/coalesce_registers.h"
#include "passes/compact_variables.h"
#include "passes/cse.h"
#include "passes/fold_branches.h"
#include "passes/fold_constants.h"
#include "passes/fold_copies.h"
#include "passes/fuse_glm.h"
#include "passes/fuse_pop_push.h"
#include "passes/differentiate.h"
#include "passes/infer_types.h"
#include "passes/infer_uniformity.h"
#include "passes/inline_calls.h"
#include "passes/lower_calls.h"
#include "passes/merge_blocks.h"
#include "passes/order_blocks.h"
#include "passes/propagate_copies.h"
#include "passes/remove_dead_ops.h"
#include "passes/remove_unreachable_blocks.h"
#include "passes/simplify_arithmetic.h"
#include "passes/thread_jumps.h"

namespace autobatch {
namespace {

// A pass that needs nothing but the program.
template <absl::StatusOr<Program> (*pass)(Program)>
absl::StatusOr<Program> ProgramOnly(Program program, const PassContext&) {
  return pass(std::move(program));
}

absl::StatusOr<Program> RunInferTypes(Program program, const PassContext& context) {
  return InferTypes(std::move(program), context.input_types, context.deadline);
}

absl::StatusOr<Program> RunInlineCalls(Program program, const PassContext& context) {
  return InlineCalls(std::move(program), context.deadline);
}

template <ForwardCopies forward>
absl::StatusOr<Program> RunCoalesceCopies(Program program, const PassContext& context) {
  return CoalesceCopies(std::move(program), forward, context.deadline);
}

absl::StatusOr<Program> RunRemoveUnreachableBlocks(Program program, const PassContext&) {
  return RemoveUnreachableBlocks(std::move(program));
}

constexpr PassInfo kPasses[] = {
    {"remove_unreachable_blocks", "drops the blocks no path from the entry reaches",
     RunRemoveUnreachableBlocks},
    {"thread_jumps", "jumps through blocks that hold no ops go straight on",
     ProgramOnly<ThreadJumps>},
    {"fold_branches", "a Branch whose two targets are one block becomes a Goto",
     ProgramOnly<FoldBranches>},
    {"merge_blocks", "a block only one Goto reaches joins the block that jumps to it",
     ProgramOnly<MergeBlocks>},
    {"fold_copies", "`t = f(...); x = copy t` becomes `x = f(...)` when t has no other use",
     ProgramOnly<FoldCopies>},
    {"propagate_copies", "reads of a generated `t = copy x` in its own block read x instead",
     ProgramOnly<PropagateCopies>},
    {"remove_dead_ops",
     "removes ops without effects (built-ins, pure kernels) whose outputs nothing reads",
     ProgramOnly<RemoveDeadOps>},
    {"compact_variables",
     "drops unnamed variables, numbers the rest (and generated names) by first appearance",
     ProgramOnly<CompactVariables>},
    {"infer_types", "gives every variable its type from the entry's input types (--types)",
     RunInferTypes},
    {"differentiate",
     "writes each gradient stub's body: its primal's value and reverse-mode gradient",
     ProgramOnly<Differentiate>},
    {"infer_uniformity",
     "values the entry computes once from uniform values become uniform (ir/ir.h)",
     ProgramOnly<InferUniformity>},
    {"fold_constants", "ops of constant inputs become constants (evaluated by the kernels)",
     ProgramOnly<FoldConstants>},
    {"simplify_arithmetic", "IEEE-exact identities (x*1, x/1, x-0, x+(-0), ...) become copies",
     ProgramOnly<SimplifyArithmetic>},
    {"cse", "an op recomputing a value a variable still holds becomes a copy of it",
     ProgramOnly<EliminateCommonSubexpressions>},
    {"fuse_glm",
     "a bernoulli_logit_glm and its _grad on the same operands become one _value_grad op",
     ProgramOnly<FuseGlm>},
    {"inline_calls", "inlines calls of non-recursive functions (one call site, or small)",
     RunInlineCalls},
    {"allocate_variables", "picks each variable's storage class from liveness",
     ProgramOnly<AllocateVariables>},
    {"lower_calls", "turns calls into pushes of the return block and jumps, with pops",
     ProgramOnly<LowerCalls>},
    {"fuse_pop_push", "a pop followed by a write of the same variable becomes an in-place write",
     ProgramOnly<FusePopPush>},
    {"coalesce_copies", "removes copies around block-local temporaries (forward: one read only)",
     RunCoalesceCopies<ForwardCopies::kOnlyRead>},
    {"coalesce_registers", "merges Register variables joined by copies when they never interfere",
     ProgramOnly<CoalesceRegisters>},
    {"coalesce_copies(any_reads)", "coalesce_copies, forwarding temporaries with other reads too",
     RunCoalesceCopies<ForwardCopies::kAnyReads>},
    {"order_blocks", "orders blocks for the stack VM: call paths first, expensive kernels last",
     ProgramOnly<OrderBlocks>},
};

}  // namespace

absl::Status PassOutOfTime(std::string_view pass) {
  return absl::DeadlineExceededError(
      absl::StrCat("pass ", std::string(pass), " was stopped by the compile's time budget"));
}

std::span<const PassInfo> AllPasses() { return kPasses; }

absl::StatusOr<const PassInfo*> FindPass(std::string_view name) {
  std::string names;
  for (const PassInfo& pass : kPasses) {
    if (pass.name == name) return &pass;
    absl::StrAppend(&names, names.empty() ? "" : ", ", std::string(pass.name));
  }
  return absl::NotFoundError(absl::StrCat("no pass is called '", std::string(name),
                                          "'; the passes are: ", names));
}

}  // namespace autobatch
