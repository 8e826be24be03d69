// A program's control-flow graph in Graphviz DOT (`autobatch ir P --dot`).
//
// The graph is a pure function of the Program: equal programs give the same
// bytes. It works at every stage (untyped, typed, allocated, lowered) and
// never fails or crashes, even on an IR the verifier rejects (a target out
// of range is drawn as a red node `@<bad:N>` or `^<bad:N> of function F`).
// Shape of the output, for `dot -Tsvg`:
//
//   digraph autobatch {
//     label="program stage=lowered entry=@main"; ...
//     start -> f0_b0;                              (the entry's block 0)
//     subgraph cluster_f0 {                        (one per function)
//       label="@main (entry)";
//       f0_b0 [label="^0 entry\l%a: f64 full = copy %x  [push 1]\l
//                     push_goto @twice, ^1  [push pc]\l"];
//       ...
//     }
//     f0_b0 -> f1_b0 [label="call", ...];          (push_goto: the call,
//     f0_b0 -> f0_b1 [label="return to", ...];      and where it returns)
//   }
//
// * One node per block. Its label is the block's index and label, then its
//   ops and terminator as ir/printer.h writes them (types, storage classes),
//   one per line, each cut to kDotMaxLineChars; past kDotMaxOpsPerBlock ops
//   a line "... N more ops" stands for the rest (`autobatch ir P --stats`
//   counts them all).
// * Pushes and pops (stages allocated and lowered, where storage classes
//   exist): an op that writes Full variables other than in place ends in
//   `[push N]`, a PopOp in `[pop N]` (N variables), push_goto in
//   `[push pc]` and indirect_goto in `[pop pc]`. Such blocks are drawn bold.
//   At every stage a tape_push ends in `[tape push]` and a tape_pop in
//   `[tape pop]` (plus `[push 1]` when its result is Full).
// * Edges: branch to its then and else blocks (labelled "then", "else");
//   goto (unlabelled); push_goto: a bold blue "call" edge to the callee's
//   block 0 and a dashed "return to" edge to its return block; every CallOp
//   (unlowered): a bold blue "call" edge to the callee's block 0; return and
//   indirect_goto: to the function's "return" node; halt: to the
//   function's "halt" node. Those two nodes exist only when used.
// * A gradient stub (no blocks yet) is one dashed node outside any cluster,
//   labelled with its header line (`func @g(...) -> (...) = gradient @f wrt
//   0`), with a dashed "gradient of" edge to its primal's block 0; calls to
//   the stub point at that node.
// * Escaping: names go through the printer's quoting (`%"a\"b"`; bytes
//   outside printable ASCII as \xNN), then every `"` and `\` is escaped for
//   DOT, so no name can end a DOT string or start an escape. Labels are
//   plain strings (never HTML-like `<...>` labels) on box nodes (never
//   records), so `{`, `}`, `|`, `<` and `>` are ordinary characters.
#ifndef AUTOBATCH_IR_DOT_H_
#define AUTOBATCH_IR_DOT_H_

#include <string>

#include "ir/ir.h"

namespace autobatch {

// Ops shown in one block's node; the rest are summarized in one line.
inline constexpr int kDotMaxOpsPerBlock = 40;
// Characters of one op's line in a node, before DOT escaping; a longer line
// ends in "...". Keeps every DOT string far below Graphviz's limits.
inline constexpr int kDotMaxLineChars = 160;

// The whole program as one DOT digraph (see above).
std::string PrintDot(const Program& program);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_DOT_H_
