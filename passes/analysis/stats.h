// Op counts and a per-lane memory estimate of a program
// (`autobatch ir PROGRAM --stats`).
//
// Counts (every stage): ops per primitive (user kernels as "kernel:NAME"),
// CallOps, PopOps, tape pushes and pops, terminators per kind, and per
// block its ops, pushes and pops (of frames and the PC: tape ops move no
// frame; a tape_pop's Full result pushes one like any write).
//
// Pushes and pops follow the stack discipline of ir/ir.h: a block's pushes
// are the variables its ops write by pushing (PushedVariables) plus one for
// the PC when it ends in push_goto; its pops are the variables its PopOps
// name plus one for the PC when it ends in indirect_goto. Before storage
// classes exist (stages untyped and typed) both are 0 but the PC's.
//
// The memory estimate, per lane, needs every variable typed (stage typed or
// later); a variable takes DTypeSize(dtype) x elements bytes:
// * variables: count and bytes per storage class (stages allocated and
//   lowered; at stage typed only the total, storage classes not being
//   chosen yet). Null variables are never stored and not in the total.
// * stack per recursion depth, per function: one frame of each of the
//   function's Full variables plus one PC stack entry (kPcEntryBytes). A
//   lane `d` calls deep into a recursive function holds about d times that.
//   It is an estimate: a variable written again before it is popped pushes
//   another frame, and variables the lane has not written yet take none.
// * tapes (stages allocated and lowered, only when the program has some):
//   their count and the bytes of one entry of each; a lane holds one entry
//   per value pushed and not yet popped, so tapes are not in "stored".
#ifndef AUTOBATCH_PASSES_ANALYSIS_STATS_H_
#define AUTOBATCH_PASSES_ANALYSIS_STATS_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace autobatch {

// Bytes of one entry of the stack VM's PC stack (a block number, int32).
inline constexpr int64_t kPcEntryBytes = 4;

struct BlockStats {
  FunctionId function;
  BlockId block;
  int64_t ops = 0;     // straight-line ops
  int64_t pushes = 0;  // see above
  int64_t pops = 0;
};

struct FrameStats {
  FunctionId function;
  int64_t full_variables = 0;
  int64_t full_bytes = 0;  // one frame of each Full variable of the function
  bool recursive = false;  // on a cycle of the call graph
  int64_t BytesPerDepth() const;  // full_bytes + kPcEntryBytes
};

struct MemoryEstimate {
  bool has_storage_classes = false;  // stage allocated or lowered
  // Indexed by StorageClass; all variables count as Full before allocation.
  // A tape's bytes are those of one entry.
  std::array<int64_t, 5> variables{};
  std::array<int64_t, 5> bytes{};
  int64_t stored_bytes = 0;  // every class but Null and tape (saturates at int64 max)
  std::vector<FrameStats> frames;  // one per function, if has_storage_classes
};

struct ProgramStats {
  Stage stage = Stage::kUntyped;
  int64_t functions = 0;
  int64_t blocks = 0;
  int64_t ops = 0;
  int64_t variables = 0;
  std::map<std::string, int64_t> primitives;   // name -> ops
  int64_t calls = 0;                           // CallOps
  int64_t pop_ops = 0;                         // PopOps
  int64_t tape_pushes = 0;                     // TapePushOps
  int64_t tape_pops = 0;                       // TapePopOps
  std::map<std::string, int64_t> terminators;  // "branch", "halt", ...
  std::vector<BlockStats> per_block;           // functions, then blocks, in order
  // Unset when a variable has no type; memory_note then says why.
  std::optional<MemoryEstimate> memory;
  std::string memory_note;
};

// Requires a program the verifier accepts (ir/verifier.h) at any stage.
ProgramStats ComputeStats(const Program& program);

// The stats as aligned text tables, ending in a newline. Names made of
// [A-Za-z0-9_.] show as they are; others in quotes, bytes outside printable
// ASCII and `"`, `\` as \xNN, cut to 60 bytes (QuotedExcerpt).
std::string PrintStats(const Program& program, const ProgramStats& stats);

// The same as JSON (indented by 2, invalid UTF-8 in names replaced by
// U+FFFD): {"stage", "functions", "blocks", "ops", "variables",
// "primitives": {name: n}, "calls", "pop_ops", "tape_pushes", "tape_pops"
// (both only when not 0), "terminators": {kind: n},
// "per_block": [{"function", "block", "label", "ops", "pushes", "pops"}],
// "memory": null or {"variables": {class: {"count", "bytes"}} (only
// "total" before allocation; "tape" only when there are tapes),
// "stored_bytes", "pc_entry_bytes", "frames":
// [{"function", "full_variables", "full_bytes", "bytes_per_depth",
// "recursive"}]}, "memory_note"}. Names are the IR's own, unquoted.
std::string PrintStatsJson(const Program& program, const ProgramStats& stats);

}  // namespace autobatch

#endif  // AUTOBATCH_PASSES_ANALYSIS_STATS_H_
