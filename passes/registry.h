// The pass registry: every pass by name, with a one-line description and a
// uniform signature, for the pipelines (passes/pipeline.cc) and
// `autobatch opt --passes`.
#ifndef AUTOBATCH_PASSES_REGISTRY_H_
#define AUTOBATCH_PASSES_REGISTRY_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/types.h"
#include "support/deadline.h"

namespace autobatch {

// What a pass may need besides the program.
struct PassContext {
  // The entry's input types, one per parameter (infer_types).
  std::vector<TensorType> input_types;
  // The compile's time budget (PipelineOptions::deadline). The passes whose
  // time grows faster than the program or that iterate to a fixed point
  // charge their copy of it inside their loops (kPassOpWork per op or block
  // visited) and return DeadlineExceeded once it has passed; the runner
  // turns that into the message naming the pass. None: they never stop.
  Deadline deadline = {};
};

// What a pass charges its deadline per op or block it visits: with
// Deadline::kClockWork, a clock reading every 1,024 (a few microseconds of
// a pass's work at most; the reading costs tens of nanoseconds).
inline constexpr int64_t kPassOpWork = Deadline::kClockWork / 1024;

// The DeadlineExceeded a pass returns once its deadline has passed, naming
// it; RunPipeline replaces the message with one naming the budget too.
absl::Status PassOutOfTime(std::string_view pass);

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
