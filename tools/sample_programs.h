// The sample programs the command-line tool knows by name.
#ifndef AUTOBATCH_TOOLS_SAMPLE_PROGRAMS_H_
#define AUTOBATCH_TOOLS_SAMPLE_PROGRAMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/context.h"
#include "ir/ir.h"

namespace autobatch {

struct NamedProgram {
  Program program;                        // untyped
  std::vector<TensorType> default_types;  // the entry's usual input types
};

// "fibonacci", "is_even", "collatz", "peanuts"; registers on `ctx` (whose
// kernels the program may use). Unknown names list the known ones.
absl::StatusOr<NamedProgram> LoadSampleProgram(const std::string& name,
                                               Context& ctx);
std::vector<std::string> SampleProgramNames();

}  // namespace autobatch

#endif  // AUTOBATCH_TOOLS_SAMPLE_PROGRAMS_H_
