// The stack VM's block plan: static facts of a lowered program, computed once.
#include "vm/stack/block_plan.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/status.h"
#include "vm/run_support.h"

namespace autobatch {
namespace {

std::atomic<int64_t> build_count{0};

int64_t LaneBytes(const Variable& var) {
  AB_CHECK(var.type.has_value(), "lowered programs are typed");
  return var.type->NumElements() * DTypeSize(var.type->dtype);
}

bool BlockLocal(const Variable& var) {
  return var.storage == StorageClass::kTemporary || var.storage == StorageClass::kNull;
}

// Bytes per lane of the variables `block` touches.
int64_t BlockLaneBytes(const Module& module, const Block& block) {
  std::vector<VarId> touched;
  for (const Op& op : block.ops) {
    for (VarId v : OpReads(op)) touched.push_back(v);
    for (VarId v : OpWrites(op)) touched.push_back(v);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  int64_t lane_bytes = 0;
  for (VarId v : touched) {
    // A uniform value is one copy for the batch, read in place: no lane's
    // bytes (nor its tile's cache) hold it.
    if (!module.var(v).uniform) lane_bytes += LaneBytes(module.var(v));
  }
  return lane_bytes;
}

bool RunsBatchDependentOp(const Module& module, const Block& block) {
  for (const Op& op : block.ops) {
    const auto* prim = std::get_if<PrimOp>(&op);
    if (prim == nullptr) continue;
    if (prim->prim == Primitive::kUserKernel) {
      const auto kernel = module.kernels.find(prim->attrs.kernel);
      if (kernel == module.kernels.end() || !kernel->second.bit_stable) return true;
    } else if (!Info(prim->prim).bit_stable) {
      return true;
    }
  }
  return false;
}

// reaches[b]: a block ending in PushGoto is reachable from block b of `fn`
// (b included), following Successors to a fixed point.
std::vector<bool> ReachesCall(const Function& fn) {
  std::vector<bool> reaches(fn.blocks.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      if (reaches[b]) continue;
      bool now = std::holds_alternative<PushGoto>(fn.blocks[b].terminator);
      for (BlockId s : Successors(fn.blocks[b].terminator)) now = now || reaches[s.value];
      if (now) reaches[b] = changed = true;
    }
  }
  return reaches;
}

}  // namespace

absl::StatusOr<BlockPlan> BlockPlan::Build(const Program& program) {
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the stack VM runs lowered programs; this one is at stage '",
        std::string(StageName(program.stage)), "': run LowerProgram (passes/pipeline.h)"));
  }
  AB_RETURN_IF_ERROR(CheckNoGradientStubs(program));
  ++build_count;
  BlockPlan plan(program);
  const Module& module = program.module;
  plan.vars_.resize(module.variables.size());
  // Saturating: each value is bounded by max_value_bytes, their sum is not.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 2;
  plan.level_lane_bytes_ = sizeof(int32_t);  // the program counter
  for (size_t v = 0; v < module.variables.size(); ++v) {
    const Variable& var = module.variables[v];
    plan.vars_[v].lane_bytes = LaneBytes(var);
    plan.vars_[v].block_local = BlockLocal(var);
    if (var.storage == StorageClass::kFull) {
      const int64_t bytes = std::max<int64_t>(plan.vars_[v].lane_bytes, 1);
      plan.level_lane_bytes_ = std::min(kMax, plan.level_lane_bytes_ + std::min(kMax, bytes));
    }
  }
  plan.NumberBlocks();
  plan.FindConstants();
  return plan;
}

int64_t BlockPlan::BuildCount() { return build_count.load(); }

bool BlockPlan::PushesFrame(const PrimOp& op, VarId output) const {
  return module().var(output).storage == StorageClass::kFull &&
         std::find(op.in_place.begin(), op.in_place.end(), output) == op.in_place.end();
}

// Half 1 of the block-order contract (block_plan.h), and each block's facts.
void BlockPlan::NumberBlocks() {
  const Module& module = program_->module;
  const size_t num_functions = module.functions.size();
  std::vector<int32_t> order;
  std::vector<bool> seen(num_functions, false);
  order.push_back(program_->entry.value);
  seen[program_->entry.value] = true;
  for (size_t i = 0; i < order.size(); ++i) {
    for (const Block& block : module.functions[order[i]].blocks) {
      if (const auto* call = std::get_if<PushGoto>(&block.terminator)) {
        if (!seen[call->callee.value]) {
          seen[call->callee.value] = true;
          order.push_back(call->callee.value);
        }
      }
    }
  }
  for (size_t f = 0; f < num_functions; ++f) {
    if (!seen[f]) order.push_back(static_cast<int32_t>(f));
  }
  fn_offset_.assign(num_functions, 0);
  for (int32_t f : order) {
    fn_offset_[f] = static_cast<int32_t>(blocks_.size());
    const Function& fn = module.functions[f];
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const Block& block = fn.blocks[b];
      BlockFacts facts;
      facts.fn = FunctionId(f);
      facts.block = BlockId(static_cast<int32_t>(b));
      facts.lane_bytes = BlockLaneBytes(module, block);
      facts.heavy = RunsExpensiveKernel(block);
      facts.batch_dependent = RunsBatchDependentOp(module, block);
      facts.peepholes.reserve(block.ops.size());
      for (const Op& op : block.ops) {
        const auto* prim = std::get_if<PrimOp>(&op);
        StoragePeephole peephole = StoragePeephole::kNone;
        bool uniform = false;  // a uniform operand is read in place (stride 0)
        if (prim != nullptr) {
          for (VarId v : prim->inputs) uniform = uniform || module.var(v).uniform;
          for (VarId v : prim->outputs) uniform = uniform || module.var(v).uniform;
        }
        if (uniform) {
        } else if (prim != nullptr && prim->prim == Primitive::kCopy && prim->inputs.size() == 1 &&
            prim->outputs.size() == 1) {
          const VarId in = prim->inputs[0];
          const VarId out = prim->outputs[0];
          if (in != out && !vars_[out.value].block_local) peephole = StoragePeephole::kCopy;
        } else if (prim != nullptr && prim->prim == Primitive::kSelect &&
                   prim->inputs.size() == 3 && prim->outputs.size() == 1) {
          const VarId out = prim->outputs[0];
          const VarId cond = prim->inputs[0];
          if ((prim->inputs[1] == out) != (prim->inputs[2] == out) && cond != out) {
            const VarId other = prim->inputs[1] == out ? prim->inputs[2] : prim->inputs[1];
            const TensorType& out_type = *module.var(out).type;
            const TensorType& cond_type = *module.var(cond).type;
            if (cond_type.dtype == DType::kBool && cond_type.NumElements() == 1 &&
                *module.var(other).type == out_type && vars_[out.value].lane_bytes > 8 &&
                !vars_[out.value].block_local && !PushesFrame(*prim, out)) {
              peephole = StoragePeephole::kSelect;
            }
          }
        }
        facts.peepholes.push_back(peephole);
      }
      blocks_.push_back(std::move(facts));
    }
  }
}

void BlockPlan::FindConstants() {
  const Module& module = program_->module;
  const size_t num_vars = module.variables.size();
  std::vector<const PrimOp*> writer(num_vars, nullptr);
  std::vector<bool> candidate(num_vars, true);
  for (const Function& fn : module.functions) {
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) {
        const auto* prim = std::get_if<PrimOp>(&op);
        const bool fill = prim != nullptr && prim->outputs.size() == 1 &&
                          (prim->prim == Primitive::kFillLike ||
                           prim->prim == Primitive::kConstant);
        for (VarId v : OpWrites(op)) {
          const size_t i = static_cast<size_t>(v.value);
          if (!fill) {
            candidate[i] = false;
          } else if (writer[i] == nullptr) {
            writer[i] = prim;
          } else if (!(writer[i]->prim == prim->prim &&
                       writer[i]->attrs.literal == prim->attrs.literal)) {
            candidate[i] = false;
          }
        }
      }
    }
  }
  for (size_t v = 0; v < num_vars; ++v) {
    if (candidate[v] && module.variables[v].storage == StorageClass::kTemporary) {
      vars_[v].constant_writer = writer[v];
    }
  }
}

absl::Status CheckBlockOrder(const Program& program) {
  AB_ASSIGN_OR_RETURN(BlockPlan plan, BlockPlan::Build(program));
  const Module& module = program.module;
  std::vector<std::string> errors;
  // Half 1: every function a PushGoto calls, the entry aside, is numbered
  // after one of its callers.
  std::vector<int32_t> first_caller(module.functions.size(), std::numeric_limits<int32_t>::max());
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const int32_t start = plan.Gid(FunctionId(static_cast<int32_t>(f)), BlockId(0));
    for (const Block& block : module.functions[f].blocks) {
      if (const auto* call = std::get_if<PushGoto>(&block.terminator)) {
        int32_t& first = first_caller[call->callee.value];
        first = std::min(first, start);
      }
    }
  }
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const FunctionId fn(static_cast<int32_t>(f));
    if (fn == program.entry || first_caller[f] == std::numeric_limits<int32_t>::max() ||
        module.functions[f].blocks.empty()) {
      continue;
    }
    if (plan.Gid(fn, BlockId(0)) <= first_caller[f]) {
      errors.push_back(absl::StrCat("function '", module.functions[f].name,
                                    "' is numbered before every function that calls it"));
    }
  }
  // Half 2: within each function, blocks 1.. in the order (calling before
  // exit; in each, cheap before expensive).
  for (const Function& fn : module.functions) {
    const std::vector<bool> reaches = ReachesCall(fn);
    auto rank = [&](size_t b) {
      return 2 * (reaches[b] ? 0 : 1) + (RunsExpensiveKernel(fn.blocks[b]) ? 1 : 0);
    };
    auto describe = [&](size_t b) {
      return absl::StrCat("block ", b, " ('", fn.blocks[b].label, "', ",
                          reaches[b] ? "calling" : "exit", ", ",
                          RunsExpensiveKernel(fn.blocks[b]) ? "expensive" : "cheap", ")");
    };
    for (size_t b = 2; b < fn.blocks.size(); ++b) {
      if (rank(b) < rank(b - 1)) {
        errors.push_back(absl::StrCat("function '", fn.name, "': ", describe(b - 1),
                                      " comes before ", describe(b),
                                      "; calling blocks come before exit blocks, and in each, "
                                      "cheap blocks before expensive ones"));
      }
    }
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the program breaks the block-order contract (vm/stack/block_plan.h): ",
      absl::StrJoin(errors, "; "), "; run order_blocks (passes/order_blocks.h) last"));
}

}  // namespace autobatch
