// The pass registry: every pass by name, with a one-line description and a
// uniform signature, for the pipelines (passes/pipeline.cc) and
// `autobatch opt --passes`.
#ifndef AUTOBATCH_PASSES_REGISTRY_H_
#define AUTOBATCH_PASSES_REGISTRY_H_

#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/types.h"

namespace autobatch {

// What a pass may need besides the program.
struct PassContext {
  // The entry's input types, one per parameter (infer_types).
  std::vector<TensorType> input_types;
};

using PassFunction = absl::StatusOr<Program> (*)(Program program, const PassContext& context);

struct PassInfo {
  // As pipelines and `autobatch opt --passes` name it, e.g. "thread_jumps";
  // a variant of a pass carries its option in parentheses,
  // "coalesce_copies(any_reads)".
  std::string_view name;
  // One line: what the pass does.
  std::string_view description;
  // Runs the pass. A program at a stage the pass does not take is
  // InvalidArgument naming the stages it takes (never a crash).
  PassFunction run;
};

// Every pass, in the order they first appear in the pipelines.
std::span<const PassInfo> AllPasses();

// The pass called `name`; NotFound naming it and listing every pass
// otherwise.
absl::StatusOr<const PassInfo*> FindPass(std::string_view name);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_REGISTRY_H_
