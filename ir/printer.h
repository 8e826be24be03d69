// The deterministic text form of the IR, for humans, golden tests and errors.
//
// The text is a pure function of the IR (and the options): printing the same
// or an equal Program twice gives the same bytes. It is not parsed back; the
// exchange format is JSON (ir/json.h). Example:
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
// * Every written variable shows its type, `?` when it has none; when
//   storage classes are shown, the class follows the type (`%x: f64 full`).
//   Storage classes are shown for programs at stage allocated or lowered.
// * Attributes follow the operands in braces: `{literal = f64[2] [1, nan]}`,
//   `{dtype = i64}`, `{ints = [0, 2]}`, `{matrix = [[1, 2], [3, 4]]}` or, for
//   more than 16 entries, `{matrix = matrix<8x8 #0123456789abcdef>}` (a hash
//   of rows, cols and every bit of the data), `{kernel = "name"}`. Outputs
//   written in place (PrimOp::in_place) follow: `%b: f64 full = mul %a, %c
//   in_place(%b)`.
// * Doubles print in the shortest form that reads back to the same double
//   (std::to_chars), plus `nan`, `inf`, `-inf` and `-0`; NaN sign and
//   payload are not shown. u64 literals print unsigned, bool as true/false.
// * Source locations are printed as a trailing `  // file.cc:12` comment only
//   when PrintOptions::locations is set, so goldens do not depend on paths.
// * Printing never fails or crashes, even on an IR that violates the
//   invariants of ir/ir.h (e.g. for the verifier's messages): an index that is
//   out of range prints as `%<bad:12>`, `^<bad:3>` or `@<bad:5>`.
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
// its blocks, `}`. Storage classes follow `options` only.
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
