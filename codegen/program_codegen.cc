// Code generation of whole compiled programs (see codegen.h,
// EmitCompiledProgram, and vm/fused_blocks.h, CompiledRuntime).
//
// Each block becomes one function, its ops in order:
//  - a run of ops the emitter can write (codegen/op_emitter.h) is a loop over
//    the running lanes in chunks of kFusedChunk: each variable the run reads
//    loaded from its storage, the ops on locals, what is read after stored.
//    An op that pushes a frame of its result joins a run only if no op
//    before it in the run touches that variable (the frame is pushed before
//    the loop, and the op reads the value below it); a pop joins one if no
//    later op of the run touches its variables (it happens after the loop);
//  - a copy or keep-or-replace select of a wide value moves storage to
//    storage, only the lanes that change (MovesLanes);
//  - pushes, pops and calls work on the stacks in place, calling the
//    runtime only to grow a stack or to report an overflow or empty stack;
//  - every other op (user kernels, tape ops, ops on uniform values or on
//    values too large for locals) is a call of CompiledRuntime::RunOp.
// The terminator routes the lanes to global block numbers written into the
// code.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/codegen.h"
#include "codegen/op_emitter.h"
#include "ir/printer.h"
#include "support/overloaded.h"
#include "support/status.h"
#include "vm/fused_blocks.h"
#include "vm/stack/block_plan.h"

namespace autobatch {
namespace {

using codegen_internal::CommentText;
using codegen_internal::Local;
using codegen_internal::OpEmitter;
using codegen_internal::PlanSegment;
using codegen_internal::RunEnd;
using codegen_internal::StoredType;
using codegen_internal::TouchesUniform;

bool Pushes(const Module& module, const PrimOp& op) {
  const VarId out = op.outputs[0];
  return module.var(out).storage == StorageClass::kFull &&
         std::find(op.in_place.begin(), op.in_place.end(), out) == op.in_place.end();
}

// Whether `prim` runs inline. `probe` only answers: the constants it writes
// are dropped.
bool Inline(const Module& module, const PrimOp& prim, OpEmitter& probe) {
  return !TouchesUniform(module, prim) && probe.Emit(prim, /*may_push=*/true).has_value();
}

// Whether inline op `op` moves a value storage to storage, as the stack
// VM's peepholes do (StoragePeephole, vm/stack/block_plan.h): a copy into
// another variable, or a keep-or-replace select on one bool per lane,
// either of a value wider than 8 bytes into a variable that outlives the
// block. A run would load and store every lane's whole value; this moves
// only the lanes that change, once.
bool MovesLanes(const Module& module, const PrimOp& op) {
  if (!codegen_internal::MovesInStorage(module, op)) return false;
  const VarId out = op.outputs[0];
  if (op.prim == Primitive::kCopy) return op.inputs[0] != out;
  const VarId cond = op.inputs[0];
  return cond != out && module.var(cond).type->NumElements() == 1 && !Pushes(module, op) &&
         (op.inputs[1] == out) != (op.inputs[2] == out);
}

constexpr char kCheck[] = "  if (const int32_t rc = ";
constexpr char kCheckEnd[] = ") return rc;\n";

// The deepest of the running lanes' stacks in `depth` (an int32_t*), into
// `deepest`.
std::string Deepest(const std::string& depth) {
  return absl::StrCat("    int32_t deepest = 0;\n", "    for (int64_t i = 0; i < n; ++i) {\n",
                      "      const int32_t d = ", depth, "[lanes[i]];\n",
                      "      deepest = d > deepest ? d : deepest;\n    }\n");
}

// Pushes a frame of Full variable `v` for op `op` and the running lanes in
// place (vm/fused_blocks.h, CompiledVar), as StackStorage::Push does, or
// through the runtime when the storage must grow or a stack would overflow.
std::string EmitPush(const Module& module, VarId v, int32_t op) {
  const TensorType& type = *module.var(v).type;
  const std::string st = StoredType(type.dtype);
  const int64_t e = type.NumElements();
  return absl::StrCat(
      "  {  // push a frame of ", CommentText(module.var(v).name), "\n",
      "    autobatch::CompiledVar& s = rt.vars[", v.value, "];\n",
      "    int32_t* const depth = s.stack_depth;\n", Deepest("depth"),
      "    // A frame stack grows when a lane would reach its last frame.\n",
      "    const bool frames = s.depth != nullptr;\n",
      "    if (deepest >= s.depth_limit || deepest + (frames ? 2 : 1) > s.frames) {\n",
      "    ", kCheck, "rt.Push(", v.value, ", ", op, ")", kCheckEnd, "    } else if (frames) {\n",
      "      for (int64_t i = 0; i < n; ++i) ++depth[lanes[i]];\n", "    } else {\n",
      "      ", st, "* const saved = reinterpret_cast<", st, "*>(s.saved);\n",
      "      const ", st, "* const top = reinterpret_cast<const ", st, "*>(s.data);\n",
      "      for (int64_t i = 0; i < n; ++i) {\n", "        const int64_t lane = lanes[i];\n",
      "        const int64_t d = depth[lane];\n", "        for (int64_t e = 0; e < ", e,
      "; ++e) saved[(d * B + lane) * ", e, " + e] = top[lane * ", e, " + e];\n",
      "        depth[lane] = static_cast<int32_t>(d + 1);\n      }\n    }\n  }\n");
}

// Pops op `index` of `block` (a PopOp) in place, or through the runtime
// (RunOp, which reports the empty stack as the VM does) when a lane's
// stack of one of its Full variables is empty.
std::string EmitPop(const Module& module, const PopOp& pop, int32_t index) {
  std::vector<VarId> full;
  for (VarId v : pop.vars) {
    if (module.var(v).storage == StorageClass::kFull) full.push_back(v);
  }
  if (full.empty()) return absl::StrCat("  // op ", index, ": pop of no stack\n");
  std::string code = absl::StrCat("  {  // op ", index, ": pop\n    bool empty = false;\n");
  for (VarId v : full) {
    absl::StrAppend(&code, "    for (int64_t i = 0; i < n; ++i) empty |= rt.vars[", v.value,
                    "].stack_depth[lanes[i]] == 0;\n");
  }
  absl::StrAppend(&code, "    if (empty) {\n    ", kCheck, "rt.RunOp(", index, ")", kCheckEnd,
                  "    } else {\n");
  for (VarId v : full) {
    const TensorType& type = *module.var(v).type;
    const std::string st = StoredType(type.dtype);
    const int64_t e = type.NumElements();
    absl::StrAppend(
        &code, "      {  // ", CommentText(module.var(v).name), "\n",
        "        autobatch::CompiledVar& s = rt.vars[", v.value, "];\n",
        "        int32_t* const depth = s.stack_depth;\n", "        if (s.depth != nullptr) {\n",
        "          for (int64_t i = 0; i < n; ++i) --depth[lanes[i]];\n", "        } else {\n",
        "          const ", st, "* const saved = reinterpret_cast<const ", st, "*>(s.saved);\n",
        "          ", st, "* const top = reinterpret_cast<", st, "*>(s.data);\n",
        "          for (int64_t i = 0; i < n; ++i) {\n",
        "            const int64_t lane = lanes[i];\n",
        "            const int64_t d = depth[lane] - 1;\n",
        "            for (int64_t e = 0; e < ", e,
        "; ++e) top[lane * ", e, " + e] = saved[(d * B + lane) * ", e, " + e];\n",
        "            depth[lane] = static_cast<int32_t>(d);\n          }\n        }\n      }\n");
  }
  absl::StrAppend(&code, "    }\n  }\n");
  return code;
}

// The slot of lane `lane` of the variable whose CompiledVar is `var`.
std::string Slot(const std::string& var) {
  return absl::StrCat("(", var, ".depth != nullptr ? ", var, ".depth[lane] * B + lane : lane)");
}

// The code of a MovesLanes op, `index` of its block.
std::string EmitMove(const Module& module, const PrimOp& op, int32_t index) {
  const VarId out = op.outputs[0];
  const bool copy = op.prim == Primitive::kCopy;
  const VarId from = copy ? op.inputs[0] : (op.inputs[1] == out ? op.inputs[2] : op.inputs[1]);
  const TensorType& type = *module.var(out).type;
  const std::string st = StoredType(type.dtype);
  const int64_t e = type.NumElements();
  std::string code = absl::StrCat("  {  // op ", index, ": ",
                                  CommentText(PrintOp(module, Op(op))), ", in storage\n");
  if (Pushes(module, op)) absl::StrAppend(&code, EmitPush(module, out, index));
  absl::StrAppend(&code, "    const autobatch::CompiledVar& from = rt.vars[", from.value, "];\n",
                  "    const autobatch::CompiledVar& to = rt.vars[", out.value, "];\n",
                  "    const ", st, "* const src = reinterpret_cast<const ", st,
                  "*>(from.data);\n", "    ", st, "* const dst = reinterpret_cast<", st,
                  "*>(to.data);\n");
  std::string test;
  if (!copy) {
    // x = select(c, y, x) takes y where c holds; x = select(c, x, y) where
    // it does not.
    absl::StrAppend(&code, "    const autobatch::CompiledVar& cv = rt.vars[", op.inputs[0].value,
                    "];\n",
                    "    const uint8_t* const c = reinterpret_cast<const uint8_t*>(cv.data);\n");
    test = absl::StrCat("        if ((c[", Slot("cv"), "] != 0) != ",
                        op.inputs[1] == out ? "false" : "true", ") continue;\n");
  }
  absl::StrAppend(&code, "    for (int64_t i = 0; i < n; ++i) {\n",
                  "        const int64_t lane = lanes[i];\n", test,
                  "        const int64_t s = ", Slot("from"), " * ", e, ";\n",
                  "        const int64_t d = ", Slot("to"), " * ", e, ";\n",
                  "        for (int64_t e = 0; e < ", e, "; ++e) dst[d + e] = src[s + e];\n",
                  "    }\n  }\n");
  return code;
}

// The loop of ops [first, end) of `block`, all inline; adds its ops to
// `ops` and their bytes per lane (each op's inputs and outputs counted as
// the run's) to `op_lane_bytes`, for CompiledRuntime::Charge.
std::string EmitRun(const Module& module, FunctionId fn, BlockId b, const Block& block,
                    int32_t first, int32_t end, OpEmitter& emitter, int32_t* ops,
                    int64_t* op_lane_bytes) {
  const SegmentPlan plan = PlanSegment(module, fn, b, block, first, end);
  std::vector<VarId> pushed;  // before the loop: no op before its pusher touches it
  std::string code = absl::StrCat("  {  // ops ", first, "..", end - 1, "\n");
  int32_t prims = 0;
  for (int32_t i = first; i < end; ++i) {
    const auto* prim = std::get_if<PrimOp>(&block.ops[static_cast<size_t>(i)]);
    if (prim == nullptr) continue;  // a pop, after the loop
    ++prims;
    if (Pushes(module, *prim)) {
      pushed.push_back(prim->outputs[0]);
      absl::StrAppend(&code, EmitPush(module, prim->outputs[0], i));
    }
  }
  absl::StrAppend(&code, "    const autobatch::CompiledVar* const vars = rt.vars;\n");
  int64_t lane_bytes = 0;
  auto bind = [&](const std::vector<VarId>& vars, const char* prefix, bool is_const) {
    for (size_t k = 0; k < vars.size(); ++k) {
      const TensorType& type = *module.var(vars[k]).type;
      lane_bytes += type.NumElements() * DTypeSize(type.dtype);
      const std::string st = StoredType(type.dtype);
      const std::string c = is_const ? "const " : "";
      absl::StrAppend(&code, "    ", c, st, "* const ", prefix, k, " = reinterpret_cast<", c, st,
                      "*>(vars[", vars[k].value, "].data);\n", "    const int32_t* const ",
                      prefix, "_depth", k, " = vars[", vars[k].value, "].depth;\n");
    }
  };
  bind(plan.inputs, "in", true);
  bind(plan.outputs, "out", false);
  std::vector<VarId> locals;
  for (int32_t i = first; i < end; ++i) {
    const Op& op = block.ops[static_cast<size_t>(i)];
    if (std::holds_alternative<PopOp>(op)) continue;
    for (VarId v : OpReads(op)) locals.push_back(v);
    for (VarId v : OpWrites(op)) locals.push_back(v);
  }
  std::sort(locals.begin(), locals.end());
  locals.erase(std::unique(locals.begin(), locals.end()), locals.end());
  for (VarId v : locals) {
    const TensorType& type = *module.var(v).type;
    absl::StrAppend(&code, "    alignas(64) ", StoredType(type.dtype), " ", Local(v), "[",
                    std::max<int64_t>(type.NumElements(), 1) * kFusedChunk, "] = {};  // ",
                    CommentText(module.var(v).name), "\n");
  }
  absl::StrAppend(&code, "    for (int64_t base = 0; base < n; base += K) {\n",
                  "      const int64_t m = n - base < K ? n - base : K;\n");
  // A frame stack's lane holds its current value at frame depth - 1 while
  // the op that pushed its new frame reads it.
  auto move = [&](const std::vector<VarId>& vars, const char* prefix, bool load) {
    for (size_t k = 0; k < vars.size(); ++k) {
      const int64_t e = module.var(vars[k]).type->NumElements();
      const bool below_top =
          load && std::find(pushed.begin(), pushed.end(), vars[k]) != pushed.end();
      const std::string below = below_top ? " - 1" : "";
      const std::string depth = absl::StrCat(prefix, "_depth", k);
      const std::string at = absl::StrCat(prefix, k, "[slot * ", e, " + e]");
      const std::string local = absl::StrCat(Local(vars[k]), "[k * ", e, " + e]");
      absl::StrAppend(&code, "      for (int64_t k = 0; k < m; ++k) {\n",
                      "        const int64_t lane = lanes[base + k];\n",
                      "        const int64_t slot = ", depth, " != nullptr ? (", depth,
                      "[lane]", below, ") * B + lane : lane;\n", "        for (int64_t e = 0; e < ",
                      e, "; ++e) ", load ? local : at, " = ", load ? at : local, ";\n",
                      "      }\n");
    }
  };
  move(plan.inputs, "in", true);
  for (int32_t i = first; i < end; ++i) {
    const auto* prim = std::get_if<PrimOp>(&block.ops[static_cast<size_t>(i)]);
    if (prim == nullptr) continue;
    std::optional<std::string> op_code = emitter.Emit(*prim, /*may_push=*/true);
    AB_CHECK(op_code.has_value(), "a planned op is inline");
    absl::StrAppend(&code, "  ", *op_code);
  }
  move(plan.outputs, "out", false);
  absl::StrAppend(&code, "    }\n");
  // The run's pops: no op of the run after one touches its variables.
  for (int32_t i = first; i < end; ++i) {
    if (const auto* pop = std::get_if<PopOp>(&block.ops[static_cast<size_t>(i)])) {
      absl::StrAppend(&code, EmitPop(module, *pop, i));
    }
  }
  absl::StrAppend(&code, "  }\n");
  *ops += prims;
  *op_lane_bytes += prims * lane_bytes;
  return code;
}

// `tapes`: the program has tape ops, whose floors a call moves (the runtime
// does it).
absl::StatusOr<std::string> EmitTerminator(const Module& module, const BlockPlan& plan,
                                           FunctionId fn_id, const Block& block, bool tapes) {
  const Function& fn = module.function(fn_id);
  return std::visit(
      Overloaded{
          [&](const Goto& t) -> absl::StatusOr<std::string> {
            return absl::StrCat("  rt.Jump(lanes, n, ", plan.Gid(fn_id, t.target),
                                ");  // goto\n  return 0;\n");
          },
          [&](const Branch& t) -> absl::StatusOr<std::string> {
            const bool uniform = module.var(t.cond).uniform;
            return absl::StrCat(
                "  {  // branch on ", CommentText(module.var(t.cond).name), "\n",
                "    const uint8_t* const cond = reinterpret_cast<const uint8_t*>(rt.vars[",
                t.cond.value, "].data);\n", "    const int32_t* const depth = rt.vars[",
                t.cond.value, "].depth;\n",
                "    int64_t* const yes = rt.split_true;\n",
                "    int64_t* const no = rt.split_false;\n",
                "    int64_t num_yes = 0, num_no = 0;\n",
                "    for (int64_t i = 0; i < n; ++i) {\n",
                "      const int64_t lane = lanes[i];\n",
                uniform ? "      const int64_t slot = 0;\n"
                        : "      const int64_t slot = depth != nullptr ? depth[lane] * B + lane "
                          ": lane;\n",
                "      if (cond[slot] != 0) {\n        yes[num_yes++] = lane;\n      } else {\n",
                "        no[num_no++] = lane;\n      }\n    }\n",
                "    rt.Jump(yes, num_yes, ", plan.Gid(fn_id, t.then_block), ");\n",
                "    rt.Jump(no, num_no, ", plan.Gid(fn_id, t.else_block), ");\n",
                "  }\n  return 0;\n");
          },
          [&](const PushGoto& t) -> absl::StatusOr<std::string> {
            const std::string enter =
                absl::StrCat("rt.Enter(", plan.Gid(fn_id, t.return_to), ", ", t.callee.value,
                             ");  // ", CommentText(module.function(t.callee).name), "\n");
            if (tapes) return absl::StrCat("  return ", enter);
            // The return addresses pushed in place (CompiledReturns), as
            // StackStorage::PushReturns does, unless the stacks must grow or
            // would overflow.
            return absl::StrCat(
                "  {  // call\n    autobatch::CompiledReturns& pc = *rt.returns;\n",
                Deepest("pc.depth"),
                "    if (deepest + 1 >= pc.depth_limit || deepest + 1 > pc.frames) return ", enter,
                "    for (int64_t i = 0; i < n; ++i) {\n      const int64_t lane = lanes[i];\n",
                "      pc.saved[pc.depth[lane] * B + lane] = ", plan.Gid(fn_id, t.return_to),
                ";\n      ++pc.depth[lane];\n    }\n", "    rt.Jump(lanes, n, ",
                plan.Gid(t.callee, BlockId(0)), ");\n  }\n  return 0;\n");
          },
          [&](const IndirectGoto&) -> absl::StatusOr<std::string> {
            return std::string("  return rt.Leave();\n");
          },
          [&](const Halt&) -> absl::StatusOr<std::string> {
            return std::string("  return rt.Finish();\n");
          },
          [&](const Return&) -> absl::StatusOr<std::string> {
            return absl::InvalidArgumentError(absl::StrCat(
                "block '", block.label, "' of function '", fn.name,
                "' ends in a return, which lowered programs do not have: pass the program "
                "LowerProgram (passes/pipeline.h) produces"));
          },
      },
      block.terminator);
}

}  // namespace

absl::StatusOr<std::string> EmitCompiledProgram(const Program& program,
                                                std::string_view symbol_view) {
  const std::string symbol(symbol_view);
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a compiled program is generated from a lowered program; this one is at stage '",
        std::string(StageName(program.stage)), "': run LowerProgram (passes/pipeline.h) first"));
  }
  AB_RETURN_IF_ERROR(CheckFusedBlocksSymbol(symbol));
  AB_ASSIGN_OR_RETURN(const BlockPlan plan, BlockPlan::Build(program));
  const Module& module = program.module;
  std::string constants;
  int next_constant = 0;
  OpEmitter emitter(module, &constants, &next_constant);
  std::string probe_constants;
  int probe_next = 0;
  OpEmitter probe(module, &probe_constants, &probe_next, /*comments=*/false);
  std::string functions;
  std::string table;
  bool tapes = false;
  for (const Function& fn : module.functions) {
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) tapes = tapes || TapeOf(op).has_value();
    }
  }
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const FunctionId fn_id(static_cast<int32_t>(f));
    const Function& fn = module.functions[f];
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const BlockId block_id(static_cast<int32_t>(b));
      const Block& block = fn.blocks[b];
      const int32_t gid = plan.Gid(fn_id, block_id);
      absl::StrAppend(&functions, "// ", CommentText(fn.name), " / ", CommentText(block.label),
                      ": global block ", gid, "\n", "int32_t Block", gid,
                      "(autobatch::CompiledRuntime& rt) {\n",
                      "  const int64_t* const lanes = rt.lanes;\n",
                      "  const int64_t n = rt.n;\n  const int64_t B = rt.batch;\n");
      std::vector<int32_t> inline_ops;
      int32_t charged_ops = 0;
      int64_t charged_bytes = 0;
      const int32_t num_ops = static_cast<int32_t>(block.ops.size());
      for (int32_t i = 0; i < num_ops;) {
        if (const auto* pop = std::get_if<PopOp>(&block.ops[static_cast<size_t>(i)])) {
          absl::StrAppend(&functions, EmitPop(module, *pop, i));
          ++i;
          continue;
        }
        const auto* prim = std::get_if<PrimOp>(&block.ops[static_cast<size_t>(i)]);
        if (prim == nullptr || !Inline(module, *prim, probe)) {
          absl::StrAppend(&functions, kCheck, "rt.RunOp(", i, ")", kCheckEnd);
          ++i;
          continue;
        }
        if (MovesLanes(module, *prim)) {
          absl::StrAppend(&functions, EmitMove(module, *prim, i));
          const TensorType& type = *module.var(prim->outputs[0]).type;
          charged_ops += 1;
          charged_bytes += 2 * type.NumElements() * DTypeSize(type.dtype);
          inline_ops.push_back(i);
          ++i;
          continue;
        }
        // Inline prims, not the moves, and a push only of a variable no
        // op of the run before it touches.
        const int32_t end = RunEnd(module, block, i, [&](const PrimOp& op,
                                                          std::span<const VarId> locals) {
          return Inline(module, op, probe) && !MovesLanes(module, op) &&
                 !(Pushes(module, op) &&
                   std::find(locals.begin(), locals.end(), op.outputs[0]) != locals.end());
        });
        absl::StrAppend(&functions, EmitRun(module, fn_id, block_id, block, i, end, emitter,
                                            &charged_ops, &charged_bytes));
        for (int32_t k = i; k < end; ++k) {
          if (std::holds_alternative<PrimOp>(block.ops[static_cast<size_t>(k)])) {
            inline_ops.push_back(k);
          }
        }
        i = end;
      }
      if (charged_ops > 0) {
        absl::StrAppend(&functions, kCheck, "rt.Charge(", charged_ops, ", ", charged_bytes, ")",
                        kCheckEnd);
      }
      AB_ASSIGN_OR_RETURN(std::string terminator,
                          EmitTerminator(module, plan, fn_id, block, tapes));
      absl::StrAppend(&functions, terminator, "}\n\n");
      std::string ops_name = "{}";
      if (!inline_ops.empty()) {
        ops_name = absl::StrCat("kInlineOps", gid);
        absl::StrAppend(&constants, "constexpr int32_t ", ops_name, "[] = {");
        for (size_t k = 0; k < inline_ops.size(); ++k) {
          absl::StrAppend(&constants, k == 0 ? "" : ", ", inline_ops[k]);
        }
        absl::StrAppend(&constants, "};\n");
      }
      absl::StrAppend(&table, "    {", f, ", ", b, ", ", ops_name, ", &Block", gid, "},\n");
    }
  }
  return absl::StrCat(
      "// A whole compiled program, generated by autobatch (codegen/codegen.h).\n"
      "// Do not edit: regenerate from the program. Compile with -ffp-contract=off.\n"
      "#include <array>\n#include <bit>\n#include <cmath>\n#include <cstddef>\n"
      "#include <cstdint>\n\n"
      "#include \"backends/element_ops.h\"\n#include \"backends/random.h\"\n"
      "#include \"vm/fused_blocks.h\"\n\n"
      "// Every local is written before it is read; the compiler cannot always tell.\n"
      "#if defined(__GNUC__) && !defined(__clang__)\n"
      "#pragma GCC diagnostic ignored \"-Wmaybe-uninitialized\"\n"
      "#endif\n"
      "#pragma GCC diagnostic ignored \"-Wuninitialized\"\n"
      "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
      "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"\n\n"
      "namespace {\nnamespace ", symbol, "_impl {\n\nnamespace E = autobatch::element;\n\n",
      "// Lanes per chunk: each op runs for K lanes at a time (codegen/codegen.h).\n",
      "constexpr int64_t K = ", kFusedChunk, ";\n\n", constants, "\n", functions,
      "constexpr autobatch::CompiledBlock kBlocks[] = {\n", table, "};\n\n}  // namespace ",
      symbol, "_impl\n}  // namespace\n\n", "const autobatch::FusedProgram& ", symbol,
      "() {\n  static const autobatch::FusedProgram program{",
      absl::StrFormat("0x%016xull", ProgramFingerprint(program)), ", {}, ", symbol,
      "_impl::kBlocks};\n  return program;\n}\n");
}

}  // namespace autobatch
