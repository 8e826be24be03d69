// The inputs of `autobatch run`: read from a JSON file and checked against
// the program's entry parameters before anything is compiled, so that a
// mistake in the file is reported as one (the file, the input, the
// parameter, what was expected and what to write), not as a type error deep
// in the program; and a type error that inputs of guessed dtypes cause,
// explained as one.
#ifndef AUTOBATCH_TOOLS_RUN_INPUTS_H_
#define AUTOBATCH_TOOLS_RUN_INPUTS_H_

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "ir/ir.h"

namespace autobatch {

struct RunInputs {
  std::vector<Tensor> tensors;  // one per entry parameter, in order
  std::vector<bool> uniform;    // per input: written {"uniform": ...}
  // Per input: no type was expected and the file declares no "dtype", so
  // the dtype was inferred from the values (tools/tensor_json.h: integers
  // only are i64).
  std::vector<bool> guessed;
};

// Reads the inputs file `path` (tools/tensor_json.h) for the entry
// parameters of `program`. Parameter i's expected type is `types[i]` (run
// --types) when `types` is not empty, else the one the program declares
// (the parameter variable's type, else the entry's signature), else none.
// An input with an expected type is read as that type: JSON integers are
// fine for a float dtype (2 is 2.0), a fraction for an integer dtype is an
// error. Without one, its dtype and shape come from the file.
//
// Errors (InvalidArgument) name the file, the input and its parameter (name
// and position), what the file holds, what was expected and what to do:
// * `types` not one per parameter, or disagreeing with a declared type;
// * the file not holding one input per parameter;
// * an input that cannot be read as its expected type, or that declares
//   another "dtype" or "shape" than the expected type's.
absl::StatusOr<RunInputs> ReadRunInputs(const std::string& path, const Program& program,
                                        std::span<const TensorType> types);

// Explains `error`, the error of running `program` on inputs of `types`
// read from `path`, some of whose dtypes were `guessed` (RunInputs). If
// `program` is untyped, does not type-check for `types` (CheckProgram,
// passes/pipeline.h) but does with f64 for a guessed i64 input (one written
// with integers only, like [2, 9, 16]), the error is about that input: its
// file, its parameter, and the fix (write 2.0, declare "dtype": "f64", or
// pass --types). If it does not type-check either way, `error` followed by
// a line listing the types guessed from the file. Otherwise `error` as it
// is. Run only after a failure, so that a run that works pays nothing.
absl::Status ExplainGuessedTypes(const std::string& path, const Program& program,
                                 std::span<const TensorType> types,
                                 const std::vector<bool>& guessed, const absl::Status& error);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_RUN_INPUTS_H_
