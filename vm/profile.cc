// Profiling counters of a batched run: cheap, always on.
#include "vm/profile.h"

#include <algorithm>
#include <numeric>

#include "support/status.h"

namespace autobatch {

void Profile::Reset(const Program& program, int64_t batch_size,
                    bool with_timing) {
  batch = batch_size;
  steps = 0;
  storage_bytes = 0;
  timing = with_timing;
  const auto& functions = program.module.functions;
  blocks.assign(functions.size(), {});
  function_names.assign(functions.size(), {});
  block_labels.assign(functions.size(), {});
  for (size_t f = 0; f < functions.size(); ++f) {
    blocks[f].assign(functions[f].blocks.size(), {});
    function_names[f] = functions[f].name;
    for (const Block& b : functions[f].blocks) block_labels[f].push_back(b.label);
  }
  builtins.assign(static_cast<size_t>(NumBuiltinPrimitives()), {});
  kernels.clear();
  lane_blocks.assign(static_cast<size_t>(batch_size), 0);
}

void Profile::Add(const Profile& shard) {
  AB_CHECK(shard.blocks.size() == blocks.size() && shard.builtins.size() == builtins.size(),
           "Profile::Add: the profiles are of different programs");
  batch += shard.batch;
  steps += shard.steps;
  storage_bytes += shard.storage_bytes;
  timing = timing || shard.timing;
  for (size_t f = 0; f < blocks.size(); ++f) {
    AB_CHECK(shard.blocks[f].size() == blocks[f].size(),
             "Profile::Add: the profiles are of different programs");
    for (size_t b = 0; b < blocks[f].size(); ++b) {
      BlockCounters& to = blocks[f][b];
      const BlockCounters& from = shard.blocks[f][b];
      to.executions += from.executions;
      to.active_lanes += from.active_lanes;
      to.dense += from.dense;
      to.compact += from.compact;
      to.tiles += from.tiles;
      to.dense_fused += from.dense_fused;
      to.ops += from.ops;
      to.nanoseconds += from.nanoseconds;
      to.lane_slots += from.lane_slots;
    }
  }
  auto add = [](PrimitiveCounters& to, const PrimitiveCounters& from) {
    to.executions += from.executions;
    to.active_lanes += from.active_lanes;
    to.nanoseconds += from.nanoseconds;
    to.lane_slots += from.lane_slots;
  };
  for (size_t i = 0; i < builtins.size(); ++i) add(builtins[i], shard.builtins[i]);
  for (const auto& [name, c] : shard.kernels) add(kernels[name], c);
  lane_blocks.insert(lane_blocks.end(), shard.lane_blocks.begin(), shard.lane_blocks.end());
}

double Profile::Utilization() const {
  int64_t slots = 0, active = 0;
  for (const auto& fn : blocks) {
    for (const BlockCounters& b : fn) {
      slots += b.lane_slots;
      active += b.active_lanes;
    }
  }
  if (slots == 0) return 1.0;
  return static_cast<double>(active) / static_cast<double>(slots);
}

int64_t Profile::PrimitiveExecutions(const std::string& name) const {
  if (std::optional<Primitive> p = PrimitiveFromName(name)) {
    return builtins.empty() ? 0 : builtins[static_cast<size_t>(*p)].executions;
  }
  auto it = kernels.find(name);
  return it == kernels.end() ? 0 : it->second.executions;
}

int64_t Profile::FunctionBlockExecutions(FunctionId fn) const {
  int64_t total = 0;
  for (const BlockCounters& b : blocks.at(fn.value)) total += b.executions;
  return total;
}

double Profile::LockStepBound() const {
  if (lane_blocks.empty()) return 1.0;
  int64_t max = *std::max_element(lane_blocks.begin(), lane_blocks.end());
  if (max == 0) return 1.0;
  double mean = std::accumulate(lane_blocks.begin(), lane_blocks.end(), 0.0) /
                static_cast<double>(lane_blocks.size());
  return mean / static_cast<double>(max);
}

nlohmann::json Profile::ToJson() const {
  nlohmann::json out;
  out["batch"] = batch;
  out["steps"] = steps;
  out["storage_bytes"] = storage_bytes;
  out["utilization"] = Utilization();
  out["lock_step_bound"] = LockStepBound();
  nlohmann::json block_list = nlohmann::json::array();
  for (size_t f = 0; f < blocks.size(); ++f) {
    for (size_t b = 0; b < blocks[f].size(); ++b) {
      const BlockCounters& c = blocks[f][b];
      if (c.executions == 0) continue;
      nlohmann::json entry = {
          {"function", function_names[f]},
          {"block", b},
          {"label", block_labels[f][b]},
          {"executions", c.executions},
          {"active_lanes", c.active_lanes},
          {"dense", c.dense},
          {"compact", c.compact},
          {"tiles", c.tiles},
          {"dense_fused", c.dense_fused},
          {"utilization", c.lane_slots == 0 ? 1.0
                                            : static_cast<double>(c.active_lanes) /
                                                  static_cast<double>(c.lane_slots)},
          {"ops", c.ops},
      };
      if (timing) entry["seconds"] = static_cast<double>(c.nanoseconds) * 1e-9;
      block_list.push_back(std::move(entry));
    }
  }
  out["blocks"] = std::move(block_list);
  nlohmann::json prims = nlohmann::json::object();
  auto add = [&](const std::string& name, const PrimitiveCounters& c) {
    if (c.executions == 0) return;
    nlohmann::json p = {{"executions", c.executions},
                        {"active_lanes", c.active_lanes}};
    if (timing) p["seconds"] = static_cast<double>(c.nanoseconds) * 1e-9;
    prims[name] = std::move(p);
  };
  for (size_t i = 0; i < builtins.size(); ++i) {
    add(std::string(PrimitiveName(static_cast<Primitive>(i))), builtins[i]);
  }
  for (const auto& [name, c] : kernels) add("kernel:" + name, c);
  out["primitives"] = std::move(prims);
  return out;
}

}  // namespace autobatch
