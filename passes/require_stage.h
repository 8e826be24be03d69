// RequireStage: the error a pass returns when given a program at a stage
// it does not handle (or with gradient stubs it cannot take).
#ifndef AUTOBATCH_PASSES_REQUIRE_STAGE_H_
#define AUTOBATCH_PASSES_REQUIRE_STAGE_H_

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/ir.h"

namespace autobatch {

// OK if `program` is at one of `stages`; otherwise InvalidArgument naming
// `pass`, the stages it takes and the program's, ending with `advice`
// (e.g. "it runs before infer_types").
inline absl::Status RequireStage(const Program& program, std::string_view pass,
                                 std::initializer_list<Stage> stages, std::string_view advice) {
  if (std::find(stages.begin(), stages.end(), program.stage) != stages.end()) {
    return absl::OkStatus();
  }
  std::string names;
  for (Stage s : stages) {
    absl::StrAppend(&names, names.empty() ? "" : " or ", std::string(StageName(s)));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(pass), " needs a program at stage ", names, ", got stage ",
      std::string(StageName(program.stage)), ": ", std::string(advice)));
}

// OK unless a function of `program` is a gradient stub (Function::
// gradient_of), which a pass past the typed stage cannot take: then
// InvalidArgument naming `pass`, the stub and its primal, saying to run the
// differentiate pass first. Requires: indices in range (a verified program).
inline absl::Status RequireNoGradientStubs(const Program& program, std::string_view pass) {
  for (const Function& f : program.module.functions) {
    if (!f.gradient_of) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(pass), " cannot take function '", f.name, "', a gradient stub of '",
        program.module.function(f.gradient_of->function).name,
        "' with no body yet: run the differentiate pass first (CompileProgram and "
        "LowerProgram do)"));
  }
  return absl::OkStatus();
}

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_REQUIRE_STAGE_H_
