// ParseProgram: the IR's text form (ir/printer.h) read back into a Program.
//
// The parser reads exactly what PrintProgram writes, at every stage and
// with or without PrintOptions (locations, storage classes), so that
// printing a parsed text gives the same text, and parsing a printed program
// gives the same Program (equal JSON forms, ir/json.h) — NaN payloads
// aside, which neither form keeps. The grammar, one construct per line
// (`//` starts a comment that runs to the end of the line; blank lines and
// comment lines may appear anywhere):
//
//   program stage=STAGE entry=@FUNC
//   kernel "name"(TYPE, ...) -> (TYPE, ...) [batch_dependent] [pure]
//   func @FUNC(DECL, ...) -> (DECL, ...) {  [// LOC]
//     signature (TYPE, ...) -> (TYPE, ...)
//     vars #INDEX: %NAME[: TYPE [STORAGE]], ...
//   ^N [LABEL]:
//     [DECL, ... =] PRIM [VAR, ...] [{ATTR, ...}] [in_place(VAR, ...)]  [// LOC]
//     [DECL, ... =] call @FUNC(VAR, ...)                                [// LOC]
//     pop [VAR, ...]                                                   [// LOC]
//     tape_push VAR, VAR | DECL = tape_pop VAR                         [// LOC]
//     branch VAR, ^N, ^N | goto ^N | return | push_goto @FUNC, ^N
//       | indirect_goto | halt                                          [// LOC]
//   }
//   func @FUNC(DECL, ...) -> (DECL, ...) = gradient @FUNC wrt [INT, ...]  [// LOC]
//     signature (TYPE, ...) -> (TYPE, ...)
//     vars #INDEX: %NAME[: TYPE [STORAGE]], ...
//
//   DECL  VAR: TYPE [STORAGE]     TYPE is `?` (unknown) or TensorType's form
//   VAR   %NAME[@FUNC]            STORAGE is null, temp, register, full or tape
//   NAME  [A-Za-z0-9_.]+ or "quoted" (\" \\ \xNN escapes), then an
//         optional #INDEX (the printer's suffix for a repeated name)
//   ATTR  literal = TYPE VALUE | literal = TYPE [VALUE, ...] | dtype = DTYPE
//         | ints = [INT, ...] | matrix = [[F, ...], ...] | matrix = matrix<0xC>
//         | kernel = "name"
//   LOC   file:line (a quoted "file" when the file has control bytes)
//
// Variables. Each variable belongs to one function (Variable::function).
// Inside a function's text a plain `%name` stands for: the function's own
// param or result of that name (any of its variables when the text has
// `vars` lines); else the param or result of that name of the one function
// it push_gotos to that has one (a lowered caller writes its callee's params
// and reads its results); else (without `vars` lines) its own variable of
// that name. `%name@f` names function f's variable. Variable indices: when
// the text has `vars` lines (the printer writes them when the rule below
// would not rebuild the table), each lists a run of consecutive indices
// from #INDEX; otherwise they are numbered function by function: the
// function's params, then its variables in the order its blocks first name
// them, then its results, then its variables that only other functions
// name. A variable's type and storage class come from where it is declared
// (a param, result, op output, call result or tape_pop result), or from its
// `vars` entry (a tape's: no op declares a tape); unset, they are `?` and
// full.
//
// A gradient stub (Function::gradient_of) has no body and no braces: its
// optional signature and vars lines follow its header, and the next `func`
// or `kernel` line (or the end of the text) ends it. `= gradient ... {`
// followed by a body reads a stub with blocks (which the verifier refuses)
// back as printed. Each wrt index must be a param of the primal.
//
// Errors (InvalidArgument) say where, what was expected and what was found:
//   "3:14: expected a type such as f64 or i64[3] after ':', found \"x\"".
// Checked as the JSON reader checks (ir/json.h): syntax, names of stages,
// primitives, dtypes and storage classes, built-in arity and single output,
// literal value counts and ranges, matrix shapes, unique kernels and
// functions, block and function references, and the variable table (every
// index listed once, `#INDEX` suffixes that match). Like the JSON reader it
// does NOT run the verifier (ir/verifier.h). Never crashes, whatever the
// input; linear in the text's size.
#ifndef AUTOBATCH_IR_PARSER_H_
#define AUTOBATCH_IR_PARSER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

absl::StatusOr<Program> ParseProgram(std::string_view text);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_PARSER_H_
