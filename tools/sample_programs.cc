// The sample programs the command-line tool knows by name.
#include "tools/sample_programs.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "samples/collatz/collatz.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/mutual_recursion/even_odd.h"
#include "samples/peanuts/peanuts.h"

namespace autobatch {

std::vector<std::string> SampleProgramNames() {
  return {"collatz", "fibonacci", "is_even", "peanuts"};
}

absl::StatusOr<NamedProgram> LoadSampleProgram(const std::string& name,
                                               Context& ctx) {
  BatchFunction entry;
  std::vector<TensorType> types = {Scalar(DType::kI64)};
  if (name == "fibonacci") {
    entry = samples::DefineFibonacci(ctx);
  } else if (name == "is_even") {
    entry = samples::DefineEvenOdd(ctx).is_even;
  } else if (name == "collatz") {
    entry = samples::DefineCollatz(ctx);
  } else if (name == "peanuts") {
    samples::PeaNutsConfig config;
    entry = samples::DefinePeaNuts(ctx, config);
    types = {Vector(DType::kF64, config.dimension), Scalar(DType::kI64),
             Scalar(DType::kI64)};
  } else {
    return absl::NotFoundError(absl::StrCat(
        "'", name, "' is neither a .json program file nor a sample; samples: ",
        absl::StrJoin(SampleProgramNames(), ", ")));
  }
  AB_ASSIGN_OR_RETURN(Program program, ctx.Program(entry));
  return NamedProgram{std::move(program), std::move(types)};
}

}  // namespace autobatch
