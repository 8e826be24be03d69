// The versioned JSON form of the IR: save a Program, load it back identical.
//
// Format "autobatch-ir", version 1. Fields marked ? are optional (absent or
// null = the default shown); unknown fields are ignored, a field given
// twice is an error. Indices are 0-based positions in the arrays named.
//
//   {"format": "autobatch-ir", "version": 1,
//    "stage": "untyped" | "typed" | "allocated" | "lowered",
//    "entry": <function index>,
//    "variables": [{"name": str, "function": <function index>,
//                   "type"?: TYPE (absent = not inferred yet),
//                   "storage"?: "null" | "temp" | "register" | "full" | "tape"
//                               (= full),
//                   "uniform"?: bool (= false; ir/ir.h)}],
//    "functions": [{"name": str, "params": [<var>], "results": [<var>],
//                   "signature"?: {"params": [TYPE], "results": [TYPE]},
//                   "gradient_of"?: {"function": <function name>,
//                                    "wrt": [<param index of that function>]},
//                   "loc"?: LOC, "blocks": [BLOCK]}],       (a gradient stub:
//                                                            "blocks": [])
//    "kernels"?: [{"name": str, "inputs": [TYPE], "outputs": [TYPE],
//                  "bit_stable"?: bool (= true), "pure"?: bool (= false)}]}
//                                                       (sorted by name)
//   TYPE   "f64", "i64[3]", "f32[2,5]" (TensorType::ToString)
//   LOC    {"file": str, "line": int}                   (absent = unknown)
//   BLOCK  {"label"?: str (= ""), "ops": [OP], "terminator": TERM, "loc"?: LOC}
//   OP     {"kind": "prim", "prim": <name in ir/primitives.def, or "kernel">,
//           "inputs": [<var>], "outputs": [<var>], "attrs"?: ATTRS,
//           "in_place"?: [<var>] (= []), "loc"?: LOC}
//        | {"kind": "call", "callee": <function>, "args": [<var>],
//           "results": [<var>], "loc"?: LOC}
//        | {"kind": "pop", "vars": [<var>], "loc"?: LOC}
//        | {"kind": "tape_push", "tape": <var>, "value": <var>, "loc"?: LOC}
//        | {"kind": "tape_pop", "tape": <var>, "result": <var>, "loc"?: LOC}
//   ATTRS  {"literal"?: {"dtype": str, "shape": [int], "values": [VALUE]},
//           "dtype"?: str, "ints"?: [int],
//           "matrix"?: {"rows": int, "cols": int, "data": [FLOAT]},
//           "kernel"?: str}
//   TERM   {"kind": "branch", "cond": <var>, "then": <block>, "else": <block>}
//        | {"kind": "goto", "target": <block>} | {"kind": "return"}
//        | {"kind": "push_goto", "callee": <function>, "return_to": <block>}
//        | {"kind": "indirect_goto"} | {"kind": "halt"}
//   VALUE  FLOAT for f64/f32 literals; an integer otherwise (u64 written
//          unsigned, bool as 0/1; true/false are also read).
//   FLOAT  a JSON number, or "nan", "inf", "-inf" (JSON has no such numbers).
//          Doubles are written in the shortest form that reads back to the
//          same bits (-0.0 included); a NaN's sign and payload are not kept.
//
// gradient_of (Function::gradient_of) names its primal rather than giving
// its index, so the file reads like the text form (`= gradient @f wrt 0`).
//
// Versioning: adding optional fields, primitives or dtypes keeps version 1
// (an older reader reports the primitive or dtype it does not know); any
// incompatible change bumps the version, and a reader rejects versions it
// does not know.
#ifndef AUTOBATCH_IR_JSON_H_
#define AUTOBATCH_IR_JSON_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace autobatch {

inline constexpr std::string_view kJsonFormatName = "autobatch-ir";
inline constexpr int kJsonFormatVersion = 1;

// The JSON form of `program` (object keys in nlohmann::json's sorted order).
// Every field of the IR round-trips through ProgramFromJson, provided the
// program's indices are in range and each literal's value vector matches its
// dtype (floats for f64/f32, ints otherwise; the other vector must be empty).
nlohmann::json ProgramToJson(const Program& program);

// The JSON text of `program`, fields in the order documented above;
// indent < 0 gives one line. Deterministic: equal programs give equal text.
// Bytes of names that are not valid UTF-8 are replaced by U+FFFD.
std::string DumpProgramJson(const Program& program, int indent = 2);

// Reads the JSON form back. Checks the structure, not the semantics: every
// required field is present and well typed, format and version are known,
// primitive, dtype, stage and storage names are known, built-in primitives
// have their arity (Info(prim).num_inputs) and exactly one output, each
// literal has as many values as its shape has elements, each matrix rows *
// cols values, kernel names are unique, every function, block (within its
// function) and variable index is in range, and a gradient_of names exactly
// one function and lists indices of that function's params. Does NOT run the verifier
// (ir/verifier.h): a loaded program may still be ill-typed or ill-formed.
// Errors are InvalidArgument naming the JSON pointer of the offending value,
// e.g. "... at /functions/0/blocks/2/ops/1/prim: unknown primitive \"foo\"".
absl::StatusOr<Program> ProgramFromJson(const nlohmann::json& json);

// Parses `text` (ParseJsonText, support/json_text.h) and calls ProgramFromJson.
// Malformed JSON, including a key given twice in one object, is an
// InvalidArgument giving the byte position of the syntax error or the
// duplicate's path.
absl::StatusOr<Program> LoadProgramJson(std::string_view text);

}  // namespace autobatch

#endif  // AUTOBATCH_IR_JSON_H_
