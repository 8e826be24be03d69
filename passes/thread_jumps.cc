// thread_jumps: jumps through blocks that hold no ops go straight on.
#include "passes/thread_jumps.h"

#include <optional>
#include <vector>

#include "support/overloaded.h"
#include "passes/analysis/cfg.h"

namespace autobatch {
namespace {

bool Empty(const Function& function, BlockId b) {
  return b.value != 0 && function.blocks[b.value].ops.empty();
}

// Where a lane sent to `b` first meets an op or a terminator other than an
// empty block's Goto: `b` itself unless `b` is empty and ends in a Goto.
// Nothing if the Gotos from `b` run round a cycle of empty blocks.
std::optional<BlockId> Destination(const Function& function, BlockId b) {
  for (size_t hops = 0; hops <= function.blocks.size(); ++hops) {
    const auto* jump = std::get_if<Goto>(&function.blocks[b.value].terminator);
    if (!Empty(function, b) || jump == nullptr) return b;
    b = jump->target;
  }
  return std::nullopt;
}

// The new ending of `block`: its jumps threaded through `function`'s empty
// blocks.
void Thread(const Function& function, Block& block) {
  auto thread = [&](BlockId& target) {
    target = Destination(function, target).value_or(target);
  };
  if (const auto* jump = std::get_if<Goto>(&block.terminator)) {
    const std::optional<BlockId> to = Destination(function, jump->target);
    if (!to.has_value()) return;
    // An empty block that ends otherwise than in a Goto lends its ending.
    block.terminator = Empty(function, *to) ? function.blocks[to->value].terminator
                                            : Terminator{Goto{*to}};
  }
  std::visit(Overloaded{
                 [&](Branch& t) {
                   thread(t.then_block);
                   thread(t.else_block);
                 },
                 [&](PushGoto& t) { thread(t.return_to); },
                 [](Goto&) {},
                 [](Return&) {},
                 [](IndirectGoto&) {},
                 [](Halt&) {},
             },
             block.terminator);
}

}  // namespace

absl::StatusOr<Program> ThreadJumps(Program program) {
  for (Function& function : program.module.functions) {
    // Terminators are rewritten from a snapshot so that every block follows
    // the original empty blocks (their own rewrite must not change where
    // another block's jump ends).
    const Function original = function;
    for (Block& block : function.blocks) Thread(original, block);
    RemoveUnreachableBlocks(function);
  }
  return program;
}

}  // namespace autobatch
