// The reference interpreter: one lane, heap-allocated activations, no masks.
#include "vm/reference_interpreter.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/kernels.h"
#include "support/overloaded.h"
#include "support/status.h"
#include "ir/type_rules.h"
#include "vm/inputs.h"

namespace autobatch {
namespace {

// "function 'fib', block ^1 (then2), op 3 (fib.cc:12)"; op -1: the
// terminator; op -2: the block itself.
std::string Where(const Module& module, int32_t function, int32_t block, int op) {
  const Function& f = module.functions[function];
  std::string out = absl::StrCat("function '", f.name, "'");
  if (block < 0) return out;
  const Block& b = f.blocks[block];
  absl::StrAppend(&out, ", block ^", block);
  if (!b.label.empty()) absl::StrAppend(&out, " (", b.label, ")");
  if (op >= 0 && op < static_cast<int>(b.ops.size())) {
    absl::StrAppend(&out, ", op ", op);
    const SourceLoc& loc = LocOf(b.ops[op]);
    if (loc.known()) absl::StrAppend(&out, " (", loc.ToString(), ")");
  } else if (op == -1) {
    absl::StrAppend(&out, ", terminator");
    if (b.loc.known()) absl::StrAppend(&out, " (", b.loc.ToString(), ")");
  }
  return out;
}

absl::Status Prefixed(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, ": ", s.message()));
}

struct Frame {
  int32_t function = 0;
  int32_t block = 0;
  int32_t op = 0;
  std::vector<Tensor> values;    // per slot of the function's variables
  std::vector<uint8_t> defined;  // per slot
};

}  // namespace

absl::StatusOr<ReferenceInterpreter> ReferenceInterpreter::Create(const Program& program,
                                                                  const KernelRegistry* kernels) {
  const Module& module = program.module;
  if (program.stage == Stage::kLowered) {
    return absl::InvalidArgumentError(
        "the reference interpreter runs unlowered programs (stage untyped, typed or "
        "allocated); this program is lowered");
  }
  const int32_t num_functions = static_cast<int32_t>(module.functions.size());
  const int32_t num_vars = static_cast<int32_t>(module.variables.size());
  if (!program.entry.valid() || program.entry.value >= num_functions) {
    return absl::InvalidArgumentError(
        absl::StrCat("the entry function index ", program.entry.value, " does not exist"));
  }
  ReferenceInterpreter interp(program, kernels);
  interp.slot_.assign(num_vars, -1);
  interp.frame_size_.assign(num_functions, 0);
  for (int32_t v = 0; v < num_vars; ++v) {
    FunctionId f = module.variables[v].function;
    if (!f.valid() || f.value >= num_functions) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable '", module.variables[v].name, "' (index ", v,
          ") belongs to function index ", f.value, ", which does not exist"));
    }
    interp.slot_[v] = interp.frame_size_[f.value]++;
  }
  for (int32_t fi = 0; fi < num_functions; ++fi) {
    const Function& f = module.functions[fi];
    auto check_vars = [&](const std::vector<VarId>& vars, int32_t block,
                          int op) -> absl::Status {
      for (VarId v : vars) {
        if (!v.valid() || v.value >= num_vars) {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(module, fi, block, op), ": variable index ", v.value, " does not exist"));
        }
        if (module.variables[v.value].function.value != fi) {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(module, fi, block, op), ": variable '", module.variables[v.value].name,
              "' belongs to another function"));
        }
      }
      return absl::OkStatus();
    };
    if (f.blocks.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("function '", f.name, "' has no blocks (block 0 is its entry)"));
    }
    AB_RETURN_IF_ERROR(check_vars(f.params, -1, -1));
    AB_RETURN_IF_ERROR(check_vars(f.results, -1, -1));
    const int32_t num_blocks = static_cast<int32_t>(f.blocks.size());
    for (int32_t bi = 0; bi < num_blocks; ++bi) {
      const Block& block = f.blocks[bi];
      for (int oi = 0; oi < static_cast<int>(block.ops.size()); ++oi) {
        const Op& op = block.ops[oi];
        AB_RETURN_IF_ERROR(check_vars(OpReads(op), bi, oi));
        AB_RETURN_IF_ERROR(check_vars(OpWrites(op), bi, oi));
        absl::Status s = std::visit(
            Overloaded{
                [&](const PrimOp& p) -> absl::Status {
                  if (p.prim != Primitive::kUserKernel) return absl::OkStatus();
                  if (kernels == nullptr || kernels->Find(p.attrs.kernel) == nullptr) {
                    return absl::NotFoundError(absl::StrCat(
                        Where(module, fi, bi, oi), ": user kernel '", p.attrs.kernel,
                        "' is not registered; register it (Context::RegisterKernel or "
                        "KernelRegistry::Register) before running the program"));
                  }
                  if (!module.kernels.contains(p.attrs.kernel)) {
                    return absl::InvalidArgumentError(absl::StrCat(
                        Where(module, fi, bi, oi), ": user kernel '", p.attrs.kernel,
                        "' is not declared in the module's kernels"));
                  }
                  return absl::OkStatus();
                },
                [&](const CallOp& c) -> absl::Status {
                  if (!c.callee.valid() || c.callee.value >= num_functions) {
                    return absl::InvalidArgumentError(absl::StrCat(
                        Where(module, fi, bi, oi), ": callee index ", c.callee.value,
                        " does not exist"));
                  }
                  const Function& callee = module.functions[c.callee.value];
                  if (c.args.size() != callee.params.size() ||
                      c.results.size() != callee.results.size()) {
                    return absl::InvalidArgumentError(absl::StrCat(
                        Where(module, fi, bi, oi), ": the call of '", callee.name, "' passes ",
                        c.args.size(), " args and receives ", c.results.size(),
                        " results, but '", callee.name, "' has ", callee.params.size(),
                        " params and ", callee.results.size(), " results"));
                  }
                  return absl::OkStatus();
                },
                [&](const PopOp&) -> absl::Status {
                  return absl::InvalidArgumentError(absl::StrCat(
                      Where(module, fi, bi, oi), ": PopOp belongs to lowered programs"));
                },
            },
            op);
        AB_RETURN_IF_ERROR(s);
      }
      auto check_block = [&](BlockId b) -> absl::Status {
        if (!b.valid() || b.value >= num_blocks) {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(module, fi, bi, -1), ": block index ", b.value, " does not exist"));
        }
        return absl::OkStatus();
      };
      absl::Status s = std::visit(
          Overloaded{
              [&](const Branch& t) -> absl::Status {
                AB_RETURN_IF_ERROR(check_vars({t.cond}, bi, -1));
                AB_RETURN_IF_ERROR(check_block(t.then_block));
                return check_block(t.else_block);
              },
              [&](const Goto& t) -> absl::Status { return check_block(t.target); },
              [](const Return&) -> absl::Status { return absl::OkStatus(); },
              [&](const PushGoto&) -> absl::Status {
                return absl::InvalidArgumentError(absl::StrCat(
                    Where(module, fi, bi, -1), ": PushGoto belongs to lowered programs"));
              },
              [&](const IndirectGoto&) -> absl::Status {
                return absl::InvalidArgumentError(absl::StrCat(
                    Where(module, fi, bi, -1), ": IndirectGoto belongs to lowered programs"));
              },
              [](const Halt&) -> absl::Status { return absl::OkStatus(); },
          },
          block.terminator);
      AB_RETURN_IF_ERROR(s);
    }
  }
  if (kernels != nullptr) {
    AB_RETURN_IF_ERROR(kernels->CheckBound(module));
  } else if (!module.kernels.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "the program uses user kernel '", module.kernels.begin()->first,
        "' but no KernelRegistry was given; pass the registry it was registered on"));
  }
  return interp;
}

absl::StatusOr<std::vector<LaneValue>> ReferenceInterpreter::Run(
    std::vector<LaneValue> inputs, const ReferenceOptions& options) const {
  const Module& module = program_->module;
  const Function& entry = module.function(program_->entry);
  if (inputs.size() != entry.params.size()) {
    return absl::InvalidArgumentError(absl::StrCat("'", entry.name, "' takes ",
                                                   entry.params.size(), " input(s) but ",
                                                   inputs.size(), " were given"));
  }

  std::vector<Frame> frames;
  int64_t steps = 0;
  auto new_frame = [&](int32_t function) {
    Frame f;
    f.function = function;
    f.values.resize(frame_size_[function]);
    f.defined.assign(frame_size_[function], 0);
    return f;
  };
  // Writes `value` to `var` of `frame`, checking a declared type.
  auto write = [&](Frame& frame, VarId var, Tensor value, int32_t block,
                   int op) -> absl::Status {
    const Variable& v = module.var(var);
    if (v.type && *v.type != value.type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(module, frame.function, block, op), ": variable '", v.name, "' is declared ",
          v.type->ToString(), " but receives a value of type ", value.type().ToString()));
    }
    frame.values[slot_[var.value]] = std::move(value);
    frame.defined[slot_[var.value]] = 1;
    return absl::OkStatus();
  };
  auto read = [&](const Frame& frame, VarId var, int32_t block,
                  int op) -> absl::StatusOr<const Tensor*> {
    if (!frame.defined[slot_[var.value]]) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(module, frame.function, block, op), ": reads variable '", module.var(var).name,
          "', which has not been written in this activation (undefined on this path)"));
    }
    return &frame.values[slot_[var.value]];
  };
  // Enters `block` of the innermost frame, charging one step.
  auto enter = [&](int32_t block) -> absl::Status {
    Frame& f = frames.back();
    f.block = block;
    f.op = 0;
    ++steps;
    if (options.max_steps > 0 && steps > options.max_steps) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "step budget exhausted: ", options.max_steps, " blocks executed, at ",
          Where(module, f.function, block, -2),
          "; raise max_steps (CallOptions::max_steps, --max-steps) if the program is just "
          "long, or look for a loop that never ends"));
    }
    if (options.deadline && (steps & 1023) == 0 &&
        std::chrono::steady_clock::now() > *options.deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "deadline exceeded after ", steps, " blocks, at ", Where(module, f.function, block, -2),
          "; raise the time budget (CallOptions::timeout_seconds, --timeout) if the program is "
          "just long, or look for a loop that never ends"));
    }
    return absl::OkStatus();
  };

  frames.push_back(new_frame(program_->entry.value));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].batch() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " has batch size ", inputs[i].batch(), "; a LaneValue has batch size 1"));
    }
    AB_RETURN_IF_ERROR(write(frames.back(), entry.params[i], std::move(inputs[i]), -1, -1));
  }
  AB_RETURN_IF_ERROR(enter(0));

  std::vector<TensorType> in_types;
  std::vector<ConstLanesView> in_views;
  std::vector<LanesView> out_views;
  std::vector<Tensor> fresh;
  std::vector<uint8_t> written_in_place;
  while (true) {
    const size_t depth = frames.size();
    Frame& frame = frames.back();
    const Function& function = module.functions[frame.function];
    const Block& block = function.blocks[frame.block];
    if (frame.op < static_cast<int32_t>(block.ops.size())) {
      const Op& op = block.ops[frame.op];
      if (const PrimOp* prim = std::get_if<PrimOp>(&op)) {
        in_types.clear();
        in_views.clear();
        for (VarId in : prim->inputs) {
          AB_ASSIGN_OR_RETURN(const Tensor* value, read(frame, in, frame.block, frame.op));
          in_types.push_back(value->type());
          in_views.push_back(ConstLanesView{value->type(), value->bytes()});
        }
        absl::StatusOr<std::vector<TensorType>> out_types =
            InferPrimitiveType(*prim, in_types, module.kernels);
        if (!out_types.ok()) {
          return Prefixed(out_types.status(), Where(module, frame.function, frame.block, frame.op));
        }
        if (out_types->size() != prim->outputs.size()) {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(module, frame.function, frame.block, frame.op), ": '",
              std::string(PrimitiveName(prim->prim)), "' produces ", out_types->size(),
              " values but the op has ", prim->outputs.size(), " outputs"));
        }
        // Outputs are written in place when the variable already holds a
        // value of the right type that the op does not read (no allocation
        // in loops); otherwise into a fresh tensor.
        fresh.clear();
        fresh.resize(prim->outputs.size());
        written_in_place.assign(prim->outputs.size(), 0);
        out_views.clear();
        for (size_t k = 0; k < prim->outputs.size(); ++k) {
          const VarId o = prim->outputs[k];
          const TensorType& type = (*out_types)[k];
          const Variable& v = module.var(o);
          if (v.type && *v.type != type) {
            return absl::InvalidArgumentError(absl::StrCat(
                Where(module, frame.function, frame.block, frame.op), ": variable '", v.name,
                "' is declared ", v.type->ToString(), " but receives a value of type ",
                type.ToString()));
          }
          if (absl::Status size = CheckValueSize(module, o, type, 1, options.max_value_bytes);
              !size.ok()) {
            return Prefixed(size, Where(module, frame.function, frame.block, frame.op));
          }
          const int32_t s = slot_[o.value];
          bool in_place = frame.defined[s] && frame.values[s].type() == type &&
                          frame.values[s].batch() == 1;
          for (VarId in : prim->inputs) in_place &= in != o;
          for (size_t j = 0; j < k; ++j) in_place &= prim->outputs[j] != o;
          Tensor* target = &frame.values[s];
          written_in_place[k] = in_place;
          if (!in_place) {
            fresh[k] = Tensor(type, 1);
            target = &fresh[k];
          }
          out_views.push_back(LanesView{type, target->bytes()});
        }
        absl::Status s = RunPrimitive(*prim, in_views, out_views, /*num_lanes=*/1, kernels_,
                                      /*active=*/nullptr);
        if (!s.ok()) return Prefixed(s, Where(module, frame.function, frame.block, frame.op));
        for (size_t k = 0; k < prim->outputs.size(); ++k) {
          const int32_t slot = slot_[prim->outputs[k].value];
          if (!written_in_place[k]) frame.values[slot] = std::move(fresh[k]);
          frame.defined[slot] = 1;
        }
        ++frame.op;
        continue;
      }
      if (const CallOp* call = std::get_if<CallOp>(&op)) {
        const Function& callee = module.function(call->callee);
        if (static_cast<int64_t>(depth) >= options.max_depth) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "recursion depth limit of ", options.max_depth, " activations exceeded by the call of '",
              callee.name, "' at ", Where(module, frame.function, frame.block, frame.op),
              "; raise max_depth (CallOptions::max_stack_depth, --max-stack-depth) if the "
              "recursion is meant to go deeper, or check for unbounded recursion"));
        }
        Frame next = new_frame(call->callee.value);
        for (size_t i = 0; i < call->args.size(); ++i) {
          AB_ASSIGN_OR_RETURN(const Tensor* value, read(frame, call->args[i], frame.block, frame.op));
          absl::Status s = write(next, callee.params[i], *value, 0, -2);
          if (!s.ok()) {
            return Prefixed(s, absl::StrCat("passing argument ", i, " of the call at ",
                                            Where(module, frame.function, frame.block, frame.op)));
          }
        }
        frames.push_back(std::move(next));  // invalidates `frame`
        AB_RETURN_IF_ERROR(enter(0));
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          Where(module, frame.function, frame.block, frame.op), ": unexpected PopOp"));
    }

    // The terminator.
    const Terminator& term = block.terminator;
    if (const Branch* branch = std::get_if<Branch>(&term)) {
      AB_ASSIGN_OR_RETURN(const Tensor* cond, read(frame, branch->cond, frame.block, -1));
      if (cond->type() != Scalar(DType::kBool)) {
        return absl::InvalidArgumentError(absl::StrCat(
            Where(module, frame.function, frame.block, -1), ": the branch condition '",
            module.var(branch->cond).name, "' has type ", cond->type().ToString(),
            "; it must be a bool scalar"));
      }
      bool taken = static_cast<uint8_t>(cond->bytes()[0]) != 0;
      AB_RETURN_IF_ERROR(enter(taken ? branch->then_block.value : branch->else_block.value));
    } else if (const Goto* go = std::get_if<Goto>(&term)) {
      AB_RETURN_IF_ERROR(enter(go->target.value));
    } else if (std::holds_alternative<Return>(term) || std::holds_alternative<Halt>(term)) {
      const bool halt = std::holds_alternative<Halt>(term);
      Frame& source = halt ? frames.front() : frame;
      const Function& source_fn = module.functions[source.function];
      std::vector<Tensor> results;
      for (VarId r : source_fn.results) {
        if (!source.defined[slot_[r.value]]) {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(module, frame.function, frame.block, -1), ": '", source_fn.name,
              "' returns without writing its result '", module.var(r).name, "'"));
        }
        results.push_back(source.values[slot_[r.value]]);
      }
      if (halt || frames.size() == 1) return results;
      frames.pop_back();
      Frame& caller = frames.back();
      const CallOp& call =
          std::get<CallOp>(module.functions[caller.function].blocks[caller.block].ops[caller.op]);
      for (size_t i = 0; i < call.results.size(); ++i) {
        AB_RETURN_IF_ERROR(
            write(caller, call.results[i], std::move(results[i]), caller.block, caller.op));
      }
      ++caller.op;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(module, frame.function, frame.block, -1),
          ": lowered terminator in an unlowered program"));
    }
  }
}

absl::StatusOr<std::vector<LaneValue>> RunReference(const Program& program,
                                                    std::vector<LaneValue> inputs,
                                                    const KernelRegistry* kernels,
                                                    const ReferenceOptions& options) {
  AB_ASSIGN_OR_RETURN(ReferenceInterpreter interp, ReferenceInterpreter::Create(program, kernels));
  return interp.Run(std::move(inputs), options);
}

absl::StatusOr<std::vector<Tensor>> RunReferenceBatch(const Program& program,
                                                      std::vector<Tensor> inputs,
                                                      const KernelRegistry* kernels,
                                                      const ReferenceOptions& options) {
  AB_RETURN_IF_ERROR(CheckInputs(program, inputs));
  AB_ASSIGN_OR_RETURN(ReferenceInterpreter interp, ReferenceInterpreter::Create(program, kernels));
  const Module& module = program.module;
  const Function& entry = module.function(program.entry);
  const int64_t batch = inputs.empty() ? 1 : inputs[0].batch();
  std::vector<Tensor> outputs;
  if (batch == 0) {
    for (size_t k = 0; k < entry.results.size(); ++k) {
      std::optional<TensorType> type = module.var(entry.results[k]).type;
      if (!type && entry.signature && k < entry.signature->results.size()) {
        type = entry.signature->results[k];
      }
      if (!type) {
        return absl::FailedPreconditionError(absl::StrCat(
            "a batch of 0 lanes: the type of result '", module.var(entry.results[k]).name,
            "' of '", entry.name, "' is unknown; run infer_types first or declare a signature"));
      }
      outputs.emplace_back(*type, 0);
    }
    return outputs;
  }
  for (int64_t lane = 0; lane < batch; ++lane) {
    std::vector<LaneValue> lane_inputs;
    for (const Tensor& in : inputs) {
      Tensor t(in.type(), 1);
      t.CopyLaneFrom(in, lane, 0);
      lane_inputs.push_back(std::move(t));
    }
    absl::StatusOr<std::vector<LaneValue>> out = interp.Run(std::move(lane_inputs), options);
    if (!out.ok()) return Prefixed(out.status(), absl::StrCat("lane ", lane));
    if (lane == 0) {
      for (const LaneValue& v : *out) outputs.emplace_back(v.type(), batch);
    }
    for (size_t k = 0; k < out->size(); ++k) {
      if ((*out)[k].type() != outputs[k].type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "lane ", lane, ": result ", k, " ('", module.var(entry.results[k]).name,
            "') has type ", (*out)[k].type().ToString(), " but lane 0's has type ",
            outputs[k].type().ToString()));
      }
      outputs[k].CopyLaneFrom((*out)[k], 0, lane);
    }
  }
  return outputs;
}

}  // namespace autobatch
