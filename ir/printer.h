// The deterministic text form of the IR, for humans, golden tests and errors.
//
// The text is a pure function of the IR (and the options): printing the same
// or an equal Program twice gives the same bytes. ParseProgram (ir/parser.h)
// reads PrintProgram's text back into an equal Program (NaN payloads aside),
// so the text is an exchange format like JSON (ir/json.h). Example:
//
//   program stage=untyped entry=@main
//
//   func @fibonacci(%n: ?) -> (%ans: ?) {
//   ^0 entry:
//     %one: ? = fill_like %n {literal = i64 1}
//     %cond: ? = gt %n, %one
//     branch %cond, ^1, ^2
//   ^1 recurse:
//     %n_1: ? = sub %n, %one
//     %f1: ? = call @fibonacci(%n_1)
//     ...
//   }
//
// Conventions:
// * `%name` is a variable, `^3` block 3 of the current function, `@name` a
//   function. A block header shows its index and label: `^0 entry:`.
// * A variable's display name is its Variable::name. It is quoted
//   (`%"a b"`) unless it matches [A-Za-z0-9_.]+, and gets the suffix `#<id>`
//   (`%n#7`, or `%#7` when the name is empty) when an earlier variable of the
//   same function has the same name. The name depends only on the Module and
//   the VarId, so PrintOp agrees with PrintFunction.
// * Inside PrintFunction / PrintProgram a variable of another function is
//   qualified, `%n@fib`, where the plain name would read back as another
//   variable (the rule is in ir/parser.h: a plain name is the function's own
//   param or result, else a param or result of the one function it
//   push_gotos to that has it, else its own variable). A lowered caller's
//   `%n: i64 full = copy %n` thus reads `%n@fib: i64 full = copy %n` when
//   the caller has its own %n. PrintOp and PrintTerminator, which have no
//   enclosing function, never qualify. Header params and results never do.
// * A gradient stub (Function::gradient_of, no blocks) is its header line
//   with what defines it instead of a body, then its signature and `vars`
//   lines if any, and no braces:
//   `func @g(%x: f64, %y: f64) -> (%v: f64, %dx: f64) = gradient @f wrt 0`
//   (wrt lists gradient_of.wrt). A stub that has blocks, which the
//   verifier refuses, prints `= gradient @f wrt 0 {` and its body.
// * `vars` lines (`  vars #9: %n, %r, %dead: f64 null`) follow a function's
//   signature when the variable table does not follow from the text (ir/
//   parser.h gives the default numbering: per function, params, then
//   variables as its blocks first name them, then results). Each lists a run
//   of the function's variables with consecutive indices from #9, cut into
//   lines of about 100 characters; a variable that no op writes and that is
//   not a param or result shows its type (and storage class) there. When
//   one function needs them, every function has them.
// * Tape ops: `tape_push %tape, %value` and `%result: f64 = tape_pop %tape`.
//   A tape is never written, so a typed tape shows its type (and class,
//   `%t: f64 tape`) on the `vars` lines.
// * Every written variable shows its type, `?` when it has none; when
//   storage classes are shown, the class follows the type (`%x: f64 full`).
//   Storage classes are shown for programs at stage allocated or lowered,
//   and by PrintProgram whenever a variable's class is not full.
// * Attributes follow the operands in braces: `{literal = f64[2] [1, nan]}`,
//   `{dtype = i64}`, `{ints = [0, 2]}`, `{matrix = [[1, 2], [3, 4]]}` (in
//   full whatever the size; `matrix<0x3>` when there are no rows but
//   columns; only a matrix whose data does not match rows * cols, which is
//   not valid IR, prints as `matrix<2x2 #hash, 3 values>`), `{kernel =
//   "name"}`. Outputs written in place (PrimOp::in_place) follow: `%b: f64
//   full = mul %a, %c in_place(%b)`.
// * Doubles print in the shortest form that reads back to the same double
//   (std::to_chars), plus `nan`, `inf`, `-inf` and `-0`; NaN sign and
//   payload are not shown. u64 literals print unsigned, bool as true/false.
// * Source locations are printed as a trailing `  // file.cc:12` comment only
//   when PrintOptions::locations is set, so goldens do not depend on paths.
//   A file name with a control byte (or a leading `"`) is quoted. Unknown
//   locations (line 0) print nothing, so a file without a line is lost.
// * Printing never fails or crashes, even on an IR that violates the
//   invariants of ir/ir.h (e.g. for the verifier's messages): an index that is
//   out of range prints as `%<bad:12>`, `^<bad:3>` or `@<bad:5>`. Such text
//   (and that of programs breaking F2 or V1 of ir/verifier.h) does not read
//   back.
#ifndef AUTOBATCH_IR_PRINTER_H_
#define AUTOBATCH_IR_PRINTER_H_

#include <optional>
#include <string>

#include "ir/ir.h"

namespace autobatch {

struct PrintOptions {
  // Append `  // file:line` to ops, terminators and functions with a known
  // location.
  bool locations = false;
  // Show each written variable's storage class. PrintProgram also shows them
  // whenever the program's stage is allocated or lowered.
  bool storage_classes = false;
};

// The whole program: header line (stage, entry), user kernels, functions.
std::string PrintProgram(const Program& program, const PrintOptions& options = {});

// One function: `func @name(params) -> (results) {`, its signature if any,
// its blocks, `}` (a gradient stub: its header line, signature and vars
// lines only). Storage classes follow `options` only.
std::string PrintFunction(const Module& module, FunctionId function,
                          const PrintOptions& options = {});
// Same, showing storage classes when the program's stage has them.
std::string PrintFunction(const Program& program, FunctionId function,
                          const PrintOptions& options = {});

// One op on one line, without indentation or newline, e.g.
// `%n_1: i64 = sub %n, %one`.
std::string PrintOp(const Module& module, const Op& op,
                    const PrintOptions& options = {});

// One terminator, e.g. `branch %cond, ^1, ^2` or `push_goto @fib, ^3`.
std::string PrintTerminator(const Module& module, const Terminator& terminator,
                            const PrintOptions& options = {});

// `%name` as PrintFunction shows the variable (see the naming rule above).
std::string PrintVar(const Module& module, VarId var);

// `f64[3]`, or `?` when the type is unknown.
std::string PrintType(const std::optional<TensorType>& type);

// `f64 1.5`, `i64[3] [1, 2, 3]`, `u64 18446744073709551615`, `bool true`.
std::string PrintLiteral(const Literal& literal);

// The shortest text that reads back to `value` (see the conventions above).
std::string PrintDouble(double value);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_PRINTER_H_
