// Op counts and a per-lane memory estimate of a program.
#include "passes/analysis/stats.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "passes/analysis/call_graph.h"
#include "support/json_text.h"
#include "support/overloaded.h"

namespace autobatch {
namespace {

constexpr size_t kMaxNameChars = 60;

// Byte counts of huge tensors could overflow when summed; the verifier
// bounds each variable (8 x elements fits int64), not their sum.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max()
                                                     : a + b;
}

int64_t Bytes(const TensorType& type) { return DTypeSize(type.dtype) * type.NumElements(); }

std::string_view TerminatorKind(const Terminator& t) {
  return std::visit(Overloaded{
                        [](const Branch&) { return std::string_view("branch"); },
                        [](const Goto&) { return std::string_view("goto"); },
                        [](const Return&) { return std::string_view("return"); },
                        [](const PushGoto&) { return std::string_view("push_goto"); },
                        [](const IndirectGoto&) { return std::string_view("indirect_goto"); },
                        [](const Halt&) { return std::string_view("halt"); },
                    },
                    t);
}

bool IsPlainName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.';
  });
}

// A name for the text tables: plain names as they are, others quoted with
// their odd bytes escaped; either cut to kMaxNameChars.
std::string ShownName(std::string_view name) {
  if (IsPlainName(name) && name.size() <= kMaxNameChars) return std::string(name);
  return QuotedExcerpt(name, kMaxNameChars);
}

std::string FunctionName(const Program& program, FunctionId f) {
  return "@" + ShownName(program.module.function(f).name);
}

std::string BlockName(const Program& program, FunctionId f, BlockId b) {
  const std::string& label = program.module.function(f).blocks.at(b.value).label;
  return label.empty() ? absl::StrCat("^", b.value)
                       : absl::StrCat("^", b.value, " ", ShownName(label));
}

// A table column's width for `text` (names are cut, so it fits an int).
int Width(std::string_view text) { return static_cast<int>(text.size()); }

std::optional<MemoryEstimate> EstimateMemory(const Program& program, std::string& note) {
  const Module& module = program.module;
  int64_t untyped = 0;
  for (const Variable& v : module.variables) untyped += v.type ? 0 : 1;
  if (untyped > 0) {
    note = absl::StrCat(
        "no memory estimate: ", untyped, " of ", module.variables.size(),
        " variables have no type yet; compile the program first (autobatch ir PROGRAM "
        "--stats --stage typed or --stage lowered, with --types if it has no default "
        "input types)");
    return std::nullopt;
  }
  MemoryEstimate memory;
  memory.has_storage_classes =
      program.stage == Stage::kAllocated || program.stage == Stage::kLowered;
  if (!memory.has_storage_classes) {
    note = "storage classes are chosen at stage allocated: every variable counts as Full "
           "here, and the stack per recursion depth is not estimated";
  }
  std::vector<FrameStats> frames(module.functions.size());
  for (const Variable& v : module.variables) {
    const StorageClass storage =
        memory.has_storage_classes ? v.storage : StorageClass::kFull;
    const auto c = static_cast<size_t>(storage);
    const int64_t bytes = Bytes(*v.type);
    memory.variables[c] += 1;
    memory.bytes[c] = SaturatingAdd(memory.bytes[c], bytes);
    if (storage != StorageClass::kNull && storage != StorageClass::kTape) {
      memory.stored_bytes = SaturatingAdd(memory.stored_bytes, bytes);
    }
    if (storage == StorageClass::kFull) {
      FrameStats& frame = frames.at(v.function.value);
      frame.full_variables += 1;
      frame.full_bytes = SaturatingAdd(frame.full_bytes, bytes);
    }
  }
  if (memory.has_storage_classes) {
    const std::vector<bool> recursive = RecursiveFunctions(module);
    for (size_t f = 0; f < frames.size(); ++f) {
      frames[f].function = FunctionId(static_cast<int32_t>(f));
      frames[f].recursive = recursive[f];
    }
    memory.frames = std::move(frames);
  }
  return memory;
}

}  // namespace

int64_t FrameStats::BytesPerDepth() const { return SaturatingAdd(full_bytes, kPcEntryBytes); }

ProgramStats ComputeStats(const Program& program) {
  const Module& module = program.module;
  const bool has_storage_classes =
      program.stage == Stage::kAllocated || program.stage == Stage::kLowered;
  ProgramStats stats;
  stats.stage = program.stage;
  stats.functions = static_cast<int64_t>(module.functions.size());
  stats.variables = static_cast<int64_t>(module.variables.size());
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const Function& fn = module.functions[f];
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const Block& block = fn.blocks[b];
      BlockStats counts{FunctionId(static_cast<int32_t>(f)),
                        BlockId(static_cast<int32_t>(b))};
      counts.ops = static_cast<int64_t>(block.ops.size());
      for (const Op& op : block.ops) {
        std::visit(Overloaded{
                       [&](const PrimOp& o) {
                         ++stats.primitives[o.prim == Primitive::kUserKernel
                                                ? "kernel:" + o.attrs.kernel
                                                : std::string(PrimitiveName(o.prim))];
                       },
                       [&](const CallOp&) { ++stats.calls; },
                       [&](const PopOp& o) {
                         ++stats.pop_ops;
                         if (has_storage_classes) {
                           counts.pops += static_cast<int64_t>(o.vars.size());
                         }
                       },
                       [&](const TapePushOp&) { ++stats.tape_pushes; },
                       [&](const TapePopOp&) { ++stats.tape_pops; },
                   },
                   op);
        if (has_storage_classes) {
          counts.pushes += static_cast<int64_t>(PushedVariables(module, op).size());
        }
      }
      if (std::holds_alternative<PushGoto>(block.terminator)) ++counts.pushes;
      if (std::holds_alternative<IndirectGoto>(block.terminator)) ++counts.pops;
      ++stats.terminators[std::string(TerminatorKind(block.terminator))];
      stats.ops += counts.ops;
      stats.per_block.push_back(counts);
    }
    stats.blocks += static_cast<int64_t>(fn.blocks.size());
  }
  stats.memory = EstimateMemory(program, stats.memory_note);
  return stats;
}

std::string PrintStats(const Program& program, const ProgramStats& stats) {
  std::string out = absl::StrCat(
      "program stage=", std::string(StageName(stats.stage)), " entry=", FunctionName(program, program.entry),
      ": ", stats.functions, " functions, ", stats.blocks, " blocks, ", stats.ops, " ops, ",
      stats.variables, " variables\n\n");

  std::vector<std::pair<std::string, int64_t>> ops;
  for (const auto& [name, n] : stats.primitives) ops.emplace_back(ShownName(name), n);
  if (stats.calls > 0) ops.emplace_back("call", stats.calls);
  if (stats.pop_ops > 0) ops.emplace_back("pop", stats.pop_ops);
  if (stats.tape_pushes > 0) ops.emplace_back("tape_push", stats.tape_pushes);
  if (stats.tape_pops > 0) ops.emplace_back("tape_pop", stats.tape_pops);
  int width = Width("indirect_goto");
  for (const auto& [name, n] : ops) width = std::max(width, Width(name));
  const auto count_row = [&](std::string_view name, int64_t n) {
    absl::StrAppendFormat(&out, "  %-*s %8d\n", width, name, n);
  };
  absl::StrAppendFormat(&out, "%-*s %8s\n", width + 2, "ops", "count");
  for (const auto& [name, n] : ops) count_row(name, n);
  absl::StrAppendFormat(&out, "%-*s %8s\n", width + 2, "terminators", "count");
  for (const auto& [kind, n] : stats.terminators) count_row(kind, n);

  std::vector<std::pair<std::string, std::string>> names;
  int function_width = Width("function");
  int block_width = Width("block");
  for (const BlockStats& b : stats.per_block) {
    names.emplace_back(FunctionName(program, b.function),
                       BlockName(program, b.function, b.block));
    function_width = std::max(function_width, Width(names.back().first));
    block_width = std::max(block_width, Width(names.back().second));
  }
  absl::StrAppendFormat(&out, "\n%-*s  %-*s %8s %8s %8s\n", function_width, "function",
                        block_width, "block", "ops", "pushes", "pops");
  for (size_t i = 0; i < stats.per_block.size(); ++i) {
    const BlockStats& b = stats.per_block[i];
    absl::StrAppendFormat(&out, "%-*s  %-*s %8d %8d %8d\n", function_width, names[i].first,
                          block_width, names[i].second, b.ops, b.pushes, b.pops);
  }
  out += "(pushes and pops: variables, plus 1 for the PC at push_goto and indirect_goto)\n\n";

  if (!stats.memory) return out + stats.memory_note + "\n";
  const MemoryEstimate& memory = *stats.memory;
  out += "memory per lane (estimate)  variables        bytes\n";
  const auto memory_row = [&](std::string_view what, int64_t count, int64_t bytes) {
    absl::StrAppendFormat(&out, "  %-25s %9d %12d\n", what, count, bytes);
  };
  if (memory.has_storage_classes) {
    for (StorageClass c : {StorageClass::kFull, StorageClass::kRegister,
                           StorageClass::kTemporary, StorageClass::kNull}) {
      const auto i = static_cast<size_t>(c);
      memory_row(c == StorageClass::kNull ? "null (never stored)" : StorageClassName(c),
                 memory.variables[i], memory.bytes[i]);
    }
  }
  const auto tapes = static_cast<size_t>(StorageClass::kTape);
  memory_row("stored", stats.variables - memory.variables[0] - memory.variables[tapes],
             memory.stored_bytes);
  if (memory.variables[tapes] > 0) {
    memory_row("tape (bytes per entry)", memory.variables[tapes], memory.bytes[tapes]);
  }
  if (!memory.has_storage_classes) return out + stats.memory_note + "\n";

  int frame_width = Width("stack per recursion depth");
  for (const FrameStats& frame : memory.frames) {
    frame_width = std::max(frame_width, Width(FunctionName(program, frame.function)) + 2);
  }
  absl::StrAppendFormat(&out, "\n%-*s %10s %12s %6s %12s\n", frame_width,
                        "stack per recursion depth", "full vars", "full bytes", "+ PC",
                        "= bytes");
  for (const FrameStats& frame : memory.frames) {
    absl::StrAppendFormat(&out, "  %-*s %10d %12d %6d %12d%s\n", frame_width - 2,
                          FunctionName(program, frame.function), frame.full_variables,
                          frame.full_bytes, kPcEntryBytes, frame.BytesPerDepth(),
                          frame.recursive ? "  recursive" : "");
  }
  return out;
}

std::string PrintStatsJson(const Program& program, const ProgramStats& stats) {
  using Json = nlohmann::ordered_json;
  const Module& module = program.module;
  Json out;
  out["stage"] = std::string(StageName(stats.stage));
  out["entry"] = module.function(program.entry).name;
  out["functions"] = stats.functions;
  out["blocks"] = stats.blocks;
  out["ops"] = stats.ops;
  out["variables"] = stats.variables;
  out["primitives"] = Json::object();
  for (const auto& [name, n] : stats.primitives) out["primitives"][name] = n;
  out["calls"] = stats.calls;
  out["pop_ops"] = stats.pop_ops;
  if (stats.tape_pushes > 0) out["tape_pushes"] = stats.tape_pushes;
  if (stats.tape_pops > 0) out["tape_pops"] = stats.tape_pops;
  out["terminators"] = Json::object();
  for (const auto& [kind, n] : stats.terminators) out["terminators"][kind] = n;
  out["per_block"] = Json::array();
  for (const BlockStats& b : stats.per_block) {
    const Function& fn = module.function(b.function);
    out["per_block"].push_back({{"function", fn.name},
                                {"block", b.block.value},
                                {"label", fn.blocks.at(b.block.value).label},
                                {"ops", b.ops},
                                {"pushes", b.pushes},
                                {"pops", b.pops}});
  }
  out["memory"] = nullptr;
  if (stats.memory) {
    const MemoryEstimate& memory = *stats.memory;
    Json& m = out["memory"];
    m["variables"] = Json::object();
    if (memory.has_storage_classes) {
      for (StorageClass c : {StorageClass::kFull, StorageClass::kRegister,
                             StorageClass::kTemporary, StorageClass::kNull}) {
        const auto i = static_cast<size_t>(c);
        m["variables"][std::string(StorageClassName(c))] = {{"count", memory.variables[i]},
                                                            {"bytes", memory.bytes[i]}};
      }
      const auto tapes = static_cast<size_t>(StorageClass::kTape);
      if (memory.variables[tapes] > 0) {
        m["variables"]["tape"] = {{"count", memory.variables[tapes]},
                                  {"bytes", memory.bytes[tapes]}};
      }
    } else {
      m["variables"]["total"] = {{"count", stats.variables}, {"bytes", memory.stored_bytes}};
    }
    m["stored_bytes"] = memory.stored_bytes;
    m["pc_entry_bytes"] = kPcEntryBytes;
    m["frames"] = Json::array();
    for (const FrameStats& frame : memory.frames) {
      m["frames"].push_back({{"function", module.function(frame.function).name},
                             {"full_variables", frame.full_variables},
                             {"full_bytes", frame.full_bytes},
                             {"bytes_per_depth", frame.BytesPerDepth()},
                             {"recursive", frame.recursive}});
    }
  }
  out["memory_note"] = stats.memory_note;
  return out.dump(/*indent=*/2, /*indent_char=*/' ', /*ensure_ascii=*/false,
                  Json::error_handler_t::replace);
}

}  // namespace autobatch
