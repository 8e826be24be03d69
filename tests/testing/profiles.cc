// Comparing the counters of two profiles (see profiles.h).
#include "tests/testing/profiles.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/primitives.h"

namespace autobatch::testing {
namespace {

// Appends "what: a against b" to `out` when a != b.
void Diff(std::string& out, const std::string& what, int64_t expected, int64_t got) {
  if (expected != got) absl::StrAppend(&out, "\n  ", what, ": ", expected, " against ", got);
}

}  // namespace

std::string CounterDifference(const Profile& expected, const Profile& got) {
  const Profile& a = expected;
  const Profile& b = got;
  std::string out;
  Diff(out, "batch", a.batch, b.batch);
  Diff(out, "steps", a.steps, b.steps);
  if (a.lane_blocks != b.lane_blocks) absl::StrAppend(&out, "\n  lane_blocks differ");
  Diff(out, "functions", static_cast<int64_t>(a.blocks.size()),
       static_cast<int64_t>(b.blocks.size()));
  for (size_t f = 0; f < std::min(a.blocks.size(), b.blocks.size()); ++f) {
    Diff(out, absl::StrCat("blocks of function ", f), static_cast<int64_t>(a.blocks[f].size()),
         static_cast<int64_t>(b.blocks[f].size()));
    for (size_t k = 0; k < std::min(a.blocks[f].size(), b.blocks[f].size()); ++k) {
      const std::string name =
          absl::StrCat("block ", a.function_names[f], "/", a.block_labels[f][k]);
      const BlockCounters& x = a.blocks[f][k];
      const BlockCounters& y = b.blocks[f][k];
      Diff(out, name + " executions", x.executions, y.executions);
      Diff(out, name + " active_lanes", x.active_lanes, y.active_lanes);
      Diff(out, name + " lane_slots", x.lane_slots, y.lane_slots);
      Diff(out, name + " ops", x.ops, y.ops);
    }
  }
  for (size_t i = 0; i < std::max(a.builtins.size(), b.builtins.size()); ++i) {
    const PrimitiveCounters none;
    const PrimitiveCounters& x = i < a.builtins.size() ? a.builtins[i] : none;
    const PrimitiveCounters& y = i < b.builtins.size() ? b.builtins[i] : none;
    const std::string name(PrimitiveName(static_cast<Primitive>(i)));
    Diff(out, name + " executions", x.executions, y.executions);
    Diff(out, name + " active_lanes", x.active_lanes, y.active_lanes);
  }
  std::map<std::string, std::pair<PrimitiveCounters, PrimitiveCounters>> kernels;
  for (const auto& [name, c] : a.kernels) kernels[name].first = c;
  for (const auto& [name, c] : b.kernels) kernels[name].second = c;
  for (const auto& [name, c] : kernels) {
    Diff(out, "kernel " + name + " executions", c.first.executions, c.second.executions);
    Diff(out, "kernel " + name + " active_lanes", c.first.active_lanes, c.second.active_lanes);
  }
  return out;
}

}  // namespace autobatch::testing
