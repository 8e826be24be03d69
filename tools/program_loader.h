// LoadProgramFile: the program a command names, from a JSON or text file or a sample.
#ifndef AUTOBATCH_TOOLS_PROGRAM_LOADER_H_
#define AUTOBATCH_TOOLS_PROGRAM_LOADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "frontend/context.h"
#include "tools/sample_programs.h"

namespace autobatch {

// `what` ending in .json, .ir or .txt is a program file; anything else names
// a sample (LoadSampleProgram, registered on `ctx`). A file whose first
// character other than whitespace is `{` is read as JSON (LoadProgramJson,
// ir/json.h); any other file as the IR's text form (ParseProgram,
// ir/parser.h), whatever its extension. A loaded file is verified
// (VerifyProgram); its default input types are the entry params' types
// when every param has one, else none.
//
// Errors name the file: "p.ir:3:14: expected ..." for text, "p.json: ..."
// for JSON, "p.ir: the program is not valid IR:\n..." for the verifier's
// findings; a directory or an unreadable file says so.
absl::StatusOr<NamedProgram> LoadProgramFile(const std::string& what, Context& ctx);

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_PROGRAM_LOADER_H_
