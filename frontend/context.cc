// Context: registration, lazy body building, assembly of the IR, batched calls.
#include "frontend/context.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/body.h"
#include "passes/pipeline.h"
#include "frontend/run.h"
#include "ir/verifier.h"
#include "support/memory.h"
#include "support/status.h"
#include "vm/inputs.h"
#include "vm/run_support.h"

namespace autobatch {

using frontend_internal::Body;
using frontend_internal::ContextImpl;
using frontend_internal::CurrentBody;
using frontend_internal::FunctionEntry;
using frontend_internal::GradientEntry;
using frontend_internal::KernelEntry;
using frontend_internal::ToSourceLoc;
using frontend_internal::VarKind;

namespace frontend_internal {
namespace {

std::atomic<uint64_t> next_body_id{1};

void RemapVars(Function& f, int32_t offset) {
  RenameVariables(f, [offset](VarId v) { return VarId(v.value + offset); });
}

// Drops variables nothing refers to and renumbers generated names (t0, t1,
// ... and l0, l1, ... per function, in order of first appearance), so the
// printed IR does not show the gaps of dropped bodies' variables. Only
// generated names look like t<N> or l<N> after this, besides names the user
// chose so: the tidy passes tell temporaries apart by that.
void CompactAndRename(Module& module, const std::vector<VarKind>& kinds) {
  const int32_t n = static_cast<int32_t>(module.variables.size());
  std::vector<int32_t> remap(n, -1);
  std::vector<int32_t> order;
  auto see = [&](VarId v) {
    if (v.valid() && v.value < n && remap[v.value] < 0) {
      remap[v.value] = static_cast<int32_t>(order.size());
      order.push_back(v.value);
    }
  };
  for (const Function& f : module.functions) {
    for (VarId v : f.params) see(v);
    for (const Block& block : f.blocks) {
      for (const Op& op : block.ops) {
        for (VarId v : OpVariables(op)) see(v);
      }
      if (const Branch* b = std::get_if<Branch>(&block.terminator)) see(b->cond);
    }
    for (VarId v : f.results) see(v);
  }
  std::vector<Variable> vars;
  std::vector<std::set<std::string>> user_names(module.functions.size());
  for (int32_t old : order) {
    VarKind k = kinds[old];
    if (k != VarKind::kTemp && k != VarKind::kLocal) {
      user_names[module.variables[old].function.value].insert(module.variables[old].name);
    }
  }
  std::vector<int> temp_counter(module.functions.size(), 0);
  std::vector<int> local_counter(module.functions.size(), 0);
  for (int32_t old : order) {
    Variable var = module.variables[old];
    const int f = var.function.value;
    auto fresh = [&](const char* prefix, int& counter) {
      std::string name;
      do {
        name = absl::StrCat(prefix, counter++);
      } while (user_names[f].contains(name));
      return name;
    };
    if (kinds[old] == VarKind::kTemp) var.name = fresh("t", temp_counter[f]);
    if (kinds[old] == VarKind::kLocal) var.name = fresh("l", local_counter[f]);
    vars.push_back(std::move(var));
  }
  module.variables = std::move(vars);
  for (Function& f : module.functions) {
    RenameVariables(f, [&](VarId v) { return VarId(remap[v.value]); });
  }
}

}  // namespace

void ContextImpl::RecordError(absl::Status status) {
  if (first_error_.ok()) first_error_ = std::move(status);
}

int ContextImpl::AddFunction(std::string name, FunctionOptions options, const SourceLoc& loc) {
  if (name.empty()) {
    RecordError(absl::InvalidArgumentError(
        absl::StrCat(loc.ToString(), ": a function needs a non-empty name")));
  }
  for (const FunctionEntry& f : functions_) {
    if (f.name == name) {
      RecordError(absl::AlreadyExistsError(
          absl::StrCat(loc.ToString(), ": function '", name, "' is already registered (at ",
                       f.declared_at.ToString(), "); function names must be unique")));
      break;
    }
  }
  FunctionEntry entry;
  entry.name = std::move(name);
  entry.declared_at = loc;
  if (options.signature) entry.num_params = static_cast<int>(options.signature->params.size());
  entry.options = std::move(options);
  functions_.push_back(std::move(entry));
  Touch();
  return static_cast<int>(functions_.size() - 1);
}

void ContextImpl::BuildBodies() {
  for (size_t i = 0; i < functions_.size(); ++i) {
    if (!functions_[i].defined || functions_[i].body != nullptr) continue;
    if (functions_[i].gradient) continue;  // below, once its primal is built
    functions_[i].body = std::make_unique<Body>(*this, static_cast<int>(i), next_body_id++);
    BodyDefinition def = std::move(*functions_[i].definition);
    functions_[i].definition.reset();
    // `functions_` may grow while the body builds (a body may register
    // functions), so the entry is looked up again afterwards.
    Body* body = functions_[i].body.get();
    body->Build(def, functions_[i].definition_loc);
  }
  for (size_t i = 0; i < functions_.size(); ++i) {
    FunctionEntry& entry = functions_[i];
    if (!entry.gradient || entry.body != nullptr) continue;
    const FunctionEntry& primal = functions_[entry.gradient->primal];
    if (primal.body == nullptr) continue;  // Reachable reports the missing body
    entry.body = std::make_unique<Body>(*this, static_cast<int>(i), next_body_id++);
    entry.body->BuildGradient(*primal.body, entry.gradient->primal, entry.gradient->wrt,
                              entry.defined_at);
  }
}

std::optional<std::string> ContextImpl::BodyName(uint64_t id) const {
  for (const FunctionEntry& f : functions_) {
    if (f.body != nullptr && f.body->id() == id) return f.name;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<int>> ContextImpl::Reachable(int entry) {
  std::vector<bool> seen(functions_.size(), false);
  std::vector<int> stack = {entry};
  seen[entry] = true;
  while (!stack.empty()) {
    int f = stack.back();
    stack.pop_back();
    const FunctionEntry& e = functions_[f];
    if (!e.defined || e.body == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "function '", e.name, "' (declared at ", e.declared_at.ToString(),
          ") has no body; define it with ctx.Batch(", e.name, ")(...)"));
    }
    AB_RETURN_IF_ERROR(e.body->ResolveCalls());
    // A gradient stub's primal is part of the program (call_graph.h).
    if (const auto& grad = e.body->ir().gradient_of; grad && !seen[grad->function.value]) {
      seen[grad->function.value] = true;
      stack.push_back(grad->function.value);
    }
    for (const Block& block : e.body->ir().blocks) {
      for (const Op& op : block.ops) {
        if (const CallOp* call = std::get_if<CallOp>(&op)) {
          if (!seen[call->callee.value]) {
            seen[call->callee.value] = true;
            stack.push_back(call->callee.value);
          }
        }
      }
    }
  }
  std::vector<int> out;
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i]) out.push_back(static_cast<int>(i));
  }
  return out;
}

absl::Status ContextImpl::AddKernel(const std::string& name, autobatch::Module& module) const {
  // A kernel and the chain of vjp kernels it names.
  for (std::string next = name; !next.empty() && !module.kernels.contains(next);) {
    const KernelEntry* entry = nullptr;
    for (const KernelEntry& k : kernels_) {
      if (k.name == next) entry = &k;
    }
    if (entry == nullptr) {
      if (next == name) return absl::OkStatus();  // the verifier names the missing kernel
      return absl::InvalidArgumentError(absl::StrCat(
          "a kernel names '", next, "' as its vjp (KernelSignature::vjp), but no kernel '", next,
          "' is registered; register it with ctx.RegisterKernel before building the program"));
    }
    module.kernels[next] = entry->signature;
    next = entry->signature.vjp;
  }
  return absl::OkStatus();
}

absl::StatusOr<autobatch::Module> ContextImpl::Assemble(const std::vector<int>& functions,
                                                        int entry) {
  AB_RETURN_IF_ERROR(first_error_);
  // (body's alias variable + its function's offset) -> program input.
  std::map<int32_t, int> aliases;
  autobatch::Module module;
  std::vector<int32_t> function_id(functions_.size(), -1);
  for (size_t k = 0; k < functions.size(); ++k) function_id[functions[k]] = static_cast<int32_t>(k);
  std::vector<VarKind> kinds;
  for (int index : functions) {
    const FunctionEntry& entry = functions_[index];
    const Body& body = *entry.body;
    const int32_t offset = static_cast<int32_t>(module.variables.size());
    const FunctionId id(function_id[index]);
    for (size_t v = 0; v < body.vars().size(); ++v) {
      Variable var = body.vars()[v];
      var.function = id;
      module.variables.push_back(std::move(var));
      kinds.push_back(body.kinds()[v]);
    }
    for (const auto& [input, var] : body.program_input_vars()) aliases[var + offset] = input;
    Function f = body.ir();
    RemapVars(f, offset);
    if (f.gradient_of) {
      AB_CHECK(function_id[f.gradient_of->function.value] >= 0, "primal missing from the module");
      f.gradient_of->function = FunctionId(function_id[f.gradient_of->function.value]);
    }
    for (Block& block : f.blocks) {
      for (Op& op : block.ops) {
        if (CallOp* call = std::get_if<CallOp>(&op)) {
          AB_CHECK(function_id[call->callee.value] >= 0, "callee missing from the module");
          call->callee = FunctionId(function_id[call->callee.value]);
        } else if (PrimOp* prim = std::get_if<PrimOp>(&op);
                   prim != nullptr && prim->prim == Primitive::kUserKernel) {
          AB_RETURN_IF_ERROR(AddKernel(prim->attrs.kernel, module));
        }
      }
    }
    module.functions.push_back(std::move(f));
  }
  if (entry >= 0 && !program_inputs_.empty()) {
    // The program inputs become the entry's last parameters (uniform), and
    // every alias of one is that parameter.
    const FunctionId entry_id(function_id[entry]);
    if (module.function(entry_id).gradient_of) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the entry '", module.function(entry_id).name,
          "' is a gradient (Context::Gradient), which takes its primal's parameters only; "
          "the Context's program inputs (", program_inputs_.front().name,
          ", ...: AddProgramInput) are parameters of the entry: make the entry a function "
          "that calls the gradient"));
    }
    for (const Function& f : module.functions) {
      for (const Block& block : f.blocks) {
        for (const Op& op : block.ops) {
          const auto* call = std::get_if<CallOp>(&op);
          if (call == nullptr || call->callee != entry_id) continue;
          return absl::InvalidArgumentError(absl::StrCat(
              call->loc.ToString(), ": function '", f.name, "' calls '",
              module.function(entry_id).name,
              "', the entry of this program; the Context's program inputs (",
              program_inputs_.front().name,
              ", ...: AddProgramInput) are parameters of the entry, which therefore "
              "cannot be called: make the entry a function that only calls the others"));
        }
      }
    }
    std::vector<VarId> params;
    for (const ProgramInputEntry& input : program_inputs_) {
      Variable var;
      var.name = input.name;
      var.function = entry_id;
      var.type = input.type;
      var.uniform = true;
      params.push_back(module.AddVariable(std::move(var)));
      kinds.push_back(VarKind::kParam);
    }
    Function& fn = module.function(entry_id);
    fn.params.insert(fn.params.end(), params.begin(), params.end());
    if (fn.signature) {
      for (const ProgramInputEntry& input : program_inputs_) {
        fn.signature->params.push_back(input.type);
      }
    }
    for (Function& f : module.functions) {
      RenameVariables(f, [&](VarId v) {
        auto it = aliases.find(v.value);
        return it == aliases.end() ? v : params[it->second];
      });
    }
  }
  // The module is left as emitted: the pipelines start with the tidy passes
  // (passes/pipeline.h). Their propagate_copies keeps the locals the user
  // named, and compact_variables renumbers what this names t<N> and l<N>.
  CompactAndRename(module, kinds);
  return module;
}

std::shared_ptr<const KernelRegistry> ContextImpl::RegistrySnapshot() {
  if (registry_snapshot_ == nullptr) {
    registry_snapshot_ = std::make_shared<const KernelRegistry>(registry_);
  }
  return registry_snapshot_;
}

absl::StatusOr<std::shared_ptr<const autobatch::Program>> ContextImpl::CachedProgram(int entry) {
  auto it = program_cache_.find(entry);
  if (it != program_cache_.end() && it->second.first == generation_) return it->second.second;
  AB_ASSIGN_OR_RETURN(autobatch::Program program, ctx_.Program(BatchFunction(&ctx_, entry)));
  auto shared = std::make_shared<const autobatch::Program>(std::move(program));
  program_cache_[entry] = {generation_, shared};
  return shared;
}

absl::StatusOr<std::shared_ptr<const autobatch::Program>> ContextImpl::CachedCompiled(
    int entry, const std::vector<TensorType>& input_types, bool lowered,
    const PipelineOptions& compile) {
  std::string signature;
  for (const TensorType& t : input_types) absl::StrAppend(&signature, t.ToString(), ";");
  auto key = std::make_tuple(entry, lowered, signature);
  auto it = compiled_cache_.find(key);
  if (it != compiled_cache_.end() && it->second.first == generation_) return it->second.second;
  AB_ASSIGN_OR_RETURN(std::shared_ptr<const autobatch::Program> untyped, CachedProgram(entry));
  AB_ASSIGN_OR_RETURN(autobatch::Program compiled,
                      lowered ? LowerProgram(*untyped, input_types, compile)
                              : CompileProgram(*untyped, input_types, compile));
  auto shared = std::make_shared<const autobatch::Program>(std::move(compiled));
  compiled_cache_[key] = {generation_, shared};
  return shared;
}

absl::StatusOr<std::shared_ptr<const BlockPlan>> ContextImpl::CachedPlan(
    int entry, const std::vector<TensorType>& input_types, const PipelineOptions& compile) {
  AB_ASSIGN_OR_RETURN(std::shared_ptr<const autobatch::Program> program,
                      CachedCompiled(entry, input_types, /*lowered=*/true, compile));
  auto it = plan_cache_.find(program.get());
  if (it != plan_cache_.end() && it->second.first == generation_) return it->second.second;
  AB_ASSIGN_OR_RETURN(BlockPlan plan, BlockPlan::Build(*program));
  // The plan points into its program: one allocation holds both.
  struct Planned {
    std::shared_ptr<const autobatch::Program> program;
    BlockPlan plan;
  };
  auto planned = std::make_shared<const Planned>(Planned{std::move(program), std::move(plan)});
  std::shared_ptr<const BlockPlan> shared(planned, &planned->plan);
  std::erase_if(plan_cache_, [&](const auto& e) { return e.second.first != generation_; });
  plan_cache_[planned->program.get()] = {generation_, shared};
  return shared;
}

}  // namespace frontend_internal

absl::StatusOr<const autobatch::Program*> Context::CompiledProgram(
    const BatchFunction& entry, const std::vector<TensorType>& input_types,
    bool dump_ir_on_error) {
  if (entry.ctx_ != this) {
    return absl::InvalidArgumentError("CompiledProgram: the handle belongs to another Context");
  }
  std::lock_guard lock(impl_->mu());
  AB_ASSIGN_OR_RETURN(std::shared_ptr<const autobatch::Program> program,
                      impl_->CachedCompiled(entry.index_, input_types, /*lowered=*/false,
                                            {.show_ir_on_error = dump_ir_on_error}));
  return program.get();  // the cache keeps it alive until the next registration
}

absl::StatusOr<const autobatch::Program*> Context::LoweredProgram(
    const BatchFunction& entry, const std::vector<TensorType>& input_types,
    bool dump_ir_on_error) {
  if (entry.ctx_ != this) {
    return absl::InvalidArgumentError("LoweredProgram: the handle belongs to another Context");
  }
  std::lock_guard lock(impl_->mu());
  AB_ASSIGN_OR_RETURN(std::shared_ptr<const autobatch::Program> program,
                      impl_->CachedCompiled(entry.index_, input_types, /*lowered=*/true,
                                            {.show_ir_on_error = dump_ir_on_error}));
  return program.get();  // the cache keeps it alive until the next registration
}

absl::StatusOr<std::shared_ptr<const BlockPlan>> Context::LoweredPlan(
    const BatchFunction& entry, const std::vector<TensorType>& input_types,
    bool dump_ir_on_error) {
  if (entry.ctx_ != this) {
    return absl::InvalidArgumentError("LoweredPlan: the handle belongs to another Context");
  }
  std::lock_guard lock(impl_->mu());
  return impl_->CachedPlan(entry.index_, input_types, {.show_ir_on_error = dump_ir_on_error});
}

// --- Context --------------------------------------------------------------------

Context::Context(ContextOptions options)
    : impl_(std::make_unique<ContextImpl>(*this, options)) {}

Context::~Context() = default;

BatchFunction Context::Declare(std::string name, FunctionOptions options, std::source_location loc) {
  std::lock_guard lock(impl_->mu());
  int index = impl_->AddFunction(std::move(name), std::move(options), ToSourceLoc(loc));
  return BatchFunction(this, index);
}

Definer Context::Batch(std::string name, FunctionOptions options, std::source_location loc) {
  return Definer(Declare(std::move(name), std::move(options), loc), loc);
}

Definer Context::Batch(const BatchFunction& declared, std::source_location loc) {
  if (declared.ctx_ != this) {
    std::lock_guard lock(impl_->mu());
    impl_->RecordError(absl::InvalidArgumentError(absl::StrCat(
        ToSourceLoc(loc).ToString(), ": Batch(function): the handle ",
        declared.ctx_ == nullptr ? "was never registered (default-constructed)"
                                 : "belongs to another Context",
        "; declare it with this Context's Declare first")));
    return Definer(BatchFunction(), loc);
  }
  return Definer(declared, loc);
}

void Definer::Define(frontend_internal::BodyDefinition def) {
  if (!function_.valid()) return;
  ContextImpl& impl = *function_.ctx_->impl_;
  std::lock_guard lock(impl.mu());
  FunctionEntry& entry = impl.functions().at(function_.index_);
  const SourceLoc loc = ToSourceLoc(loc_);
  if (entry.defined) {
    impl.RecordError(absl::AlreadyExistsError(absl::StrCat(
        loc.ToString(), ": function '", entry.name, "' already has a body (defined at ",
        entry.defined_at.ToString(), ")")));
    return;
  }
  int num_params = 0;
  for (const auto& suffixes : def.param_leaf_suffixes) num_params += static_cast<int>(suffixes.size());
  entry.defined = true;
  entry.defined_at = loc;
  entry.definition_loc = loc_;
  entry.num_params = num_params;
  entry.definition = std::move(def);
  impl.Touch();
}

BatchFunction Context::Gradient(const BatchFunction& primal, GradientOptions options,
                               std::source_location loc) {
  const SourceLoc where = ToSourceLoc(loc);
  std::lock_guard lock(impl_->mu());
  if (primal.ctx_ != this) {
    impl_->RecordError(absl::InvalidArgumentError(absl::StrCat(
        where.ToString(), ": Gradient(function): the handle ",
        primal.ctx_ == nullptr ? "was never registered (default-constructed)"
                               : "belongs to another Context",
        "; pass a function registered on this Context")));
    return BatchFunction();
  }
  const std::string& primal_name = impl_->functions().at(primal.index_).name;
  std::string name =
      options.name.empty() ? absl::StrCat(primal_name, ".grad") : std::move(options.name);
  const int index = impl_->AddFunction(std::move(name), FunctionOptions{}, where);
  FunctionEntry& entry = impl_->functions().at(index);
  entry.defined = true;
  entry.defined_at = where;
  entry.gradient = GradientEntry{primal.index_, std::move(options.wrt)};
  return BatchFunction(this, index);
}

Kernel Context::RegisterKernel(std::string name, KernelSignature signature, KernelFn fn,
                               std::source_location loc) {
  const SourceLoc where = ToSourceLoc(loc);
  std::lock_guard lock(impl_->mu());
  if (!fn) {
    impl_->RecordError(absl::InvalidArgumentError(absl::StrCat(
        where.ToString(), ": RegisterKernel('", name, "'): the implementation is empty")));
  } else if (absl::Status s = impl_->registry().Register(name, signature, std::move(fn)); !s.ok()) {
    impl_->RecordError(absl::Status(s.code(), absl::StrCat(where.ToString(), ": ", s.message())));
  }
  impl_->kernels().push_back(KernelEntry{std::move(name), std::move(signature), where});
  impl_->Touch();
  return Kernel(this, static_cast<int>(impl_->kernels().size() - 1));
}

absl::StatusOr<autobatch::Module> Context::Module() {
  if (CurrentBody() != nullptr) {
    return absl::FailedPreconditionError("Context::Module() called while a body is being built");
  }
  std::lock_guard lock(impl_->mu());
  impl_->BuildBodies();
  AB_RETURN_IF_ERROR(impl_->first_error());
  std::vector<int> all;
  for (size_t i = 0; i < impl_->functions().size(); ++i) {
    const FunctionEntry& e = impl_->functions()[i];
    if (!e.defined || e.body == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "function '", e.name, "' (declared at ", e.declared_at.ToString(),
          ") has no body; define it with ctx.Batch(", e.name, ")(...)"));
    }
    AB_RETURN_IF_ERROR(e.body->ResolveCalls());
    all.push_back(static_cast<int>(i));
  }
  return impl_->Assemble(all);
}

absl::StatusOr<autobatch::Program> Context::Program(const BatchFunction& entry) {
  if (entry.ctx_ != this) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Context::Program: the entry handle ",
        entry.ctx_ == nullptr ? "was never registered (default-constructed)"
                              : "belongs to another Context"));
  }
  if (CurrentBody() != nullptr) {
    return absl::FailedPreconditionError("Context::Program() called while a body is being built");
  }
  std::lock_guard lock(impl_->mu());
  impl_->BuildBodies();
  AB_RETURN_IF_ERROR(impl_->first_error());
  AB_ASSIGN_OR_RETURN(std::vector<int> functions, impl_->Reachable(entry.index_));
  AB_ASSIGN_OR_RETURN(autobatch::Module module, impl_->Assemble(functions, entry.index_));
  autobatch::Program program;
  program.module = std::move(module);
  program.entry = FunctionId(static_cast<int32_t>(
      std::find(functions.begin(), functions.end(), entry.index_) - functions.begin()));
  program.stage = Stage::kUntyped;
  return program;
}

const KernelRegistry& Context::kernels() const { return impl_->registry(); }

// --- Function, Kernel ----------------------------------------------------------------

namespace {

std::vector<Value> CollectLeaves(std::initializer_list<const Arg*> args) {
  std::vector<Value> leaves;
  for (const Arg* a : args) {
    if (!a->present()) break;
    leaves.insert(leaves.end(), a->leaves().begin(), a->leaves().end());
  }
  return leaves;
}

}  // namespace

CallResult BatchFunction::operator()(AUTOBATCH_ARG_PARAMS_NO_DEFAULTS) const {
  Body* body = CurrentBody();
  if (body == nullptr) return frontend_internal::Access::MakeCallResult(nullptr);
  const SourceLoc loc = ToSourceLoc(a0.loc());
  if (ctx_ == nullptr) {
    body->Error(loc, "calls a BatchFunction handle that was never registered (default-constructed); "
                     "get handles from Context::Declare or Context::Batch");
    return frontend_internal::Access::MakeCallResult(nullptr);
  }
  if (&body->context() != ctx_->impl_.get()) {
    body->Error(loc, absl::StrCat("calls function '", name(),
                                  "' of another Context; register it on this Context"));
    return frontend_internal::Access::MakeCallResult(nullptr);
  }
  return body->EmitCall(index_, CollectLeaves(AUTOBATCH_ARG_LIST), loc, a0.loc());
}

const std::string& BatchFunction::name() const {
  static const std::string kNone;
  if (ctx_ == nullptr) return kNone;
  std::lock_guard lock(ctx_->impl_->mu());
  return ctx_->impl_->functions().at(index_).name;  // entries never move or change name
}

absl::StatusOr<std::vector<Tensor>> BatchFunction::Run(std::vector<Tensor> inputs,
                                                  const CallOptions& options) const {
  if (ctx_ == nullptr) {
    return absl::InvalidArgumentError(
        "BatchFunction::Run: the handle was never registered (default-constructed)");
  }
  if (CurrentBody() != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "BatchFunction::Run('", name(), "') called while a body is being built"));
  }
  // Compiling needs the lock; the run does not (it only reads the shared
  // program and registry snapshot), so runs on several threads overlap.
  std::shared_ptr<const autobatch::Program> program, compiled;
  std::shared_ptr<const BlockPlan> plan;  // the stack VM's
  std::shared_ptr<const KernelRegistry> kernels;
  // The call's time budget covers a compile it needs (RunProgram's does,
  // frontend/run.h); the run gets what is left.
  const Deadline deadline = CallDeadline(options);
  // Memory the system refuses while compiling is an error, as in the run.
  AB_RETURN_IF_ERROR(CatchResourceErrors("compiling the function", [&]() -> absl::Status {
    std::lock_guard lock(ctx_->impl_->mu());
    AB_ASSIGN_OR_RETURN(program, ctx_->impl_->CachedProgram(index_));
    AB_RETURN_IF_ERROR(CheckInputs(*program, inputs));
    if (!options.dry_run) {
      std::vector<TensorType> types;
      for (const Tensor& t : inputs) types.push_back(t.type());
      const PipelineOptions compile{.show_ir_on_error = options.dump_ir_on_error,
                                    .deadline = deadline};
      if (options.vm == Vm::kStack) {
        AB_ASSIGN_OR_RETURN(plan, ctx_->impl_->CachedPlan(index_, types, compile));
      } else {
        AB_ASSIGN_OR_RETURN(compiled, ctx_->impl_->CachedCompiled(index_, types,
                                                                  /*lowered=*/false, compile));
      }
    }
    kernels = ctx_->impl_->RegistrySnapshot();
    return absl::OkStatus();
  }));
  CallOptions left = options;
  left.deadline = deadline.at();
  if (plan != nullptr) return RunProgram(*plan, std::move(inputs), kernels.get(), left);
  // dry_run: RunProgram runs the untyped program on the reference
  // interpreter, one lane at a time.
  return RunProgram(options.dry_run ? *program : *compiled, std::move(inputs), kernels.get(),
                    left);
}

absl::StatusOr<Tensor> BatchFunction::operator()(const Tensor& input, const CallOptions& options) const {
  AB_ASSIGN_OR_RETURN(std::vector<Tensor> out, Run({input}, options));
  if (out.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function '", name(), "' has ", out.size(), " results; use BatchFunction::Run for them"));
  }
  return std::move(out[0]);
}

CallResult Kernel::operator()(AUTOBATCH_ARG_PARAMS_NO_DEFAULTS) const {
  Body* body = CurrentBody();
  if (body == nullptr) return frontend_internal::Access::MakeCallResult(nullptr);
  const SourceLoc loc = ToSourceLoc(a0.loc());
  if (ctx_ == nullptr) {
    body->Error(loc, "calls a Kernel handle that was never registered (default-constructed); "
                     "get handles from Context::RegisterKernel");
    return frontend_internal::Access::MakeCallResult(nullptr);
  }
  if (&body->context() != ctx_->impl_.get()) {
    body->Error(loc, absl::StrCat("calls kernel '", name(),
                                  "' of another Context; register it on this Context"));
    return frontend_internal::Access::MakeCallResult(nullptr);
  }
  return body->EmitKernel(index_, CollectLeaves(AUTOBATCH_ARG_LIST), loc, a0.loc());
}

absl::StatusOr<BatchFunction> Context::Import(const autobatch::Program& program,
                                              std::span<const ProgramInput> inputs,
                                              std::source_location loc) {
  const SourceLoc where = ToSourceLoc(loc);
  if (program.stage != Stage::kUntyped) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Context::Import: the program is at stage ", std::string(StageName(program.stage)),
        "; import an untyped program (what Context::Program and `autobatch ir --json` give)"));
  }
  AB_RETURN_IF_ERROR(VerifyProgram(program));
  const autobatch::Module& module = program.module;
  for (const Function& fn : module.functions) {
    if (fn.gradient_of) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Context::Import: function '", fn.name, "' is a gradient stub; import the primal "
          "and call Context::Gradient on it"));
    }
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) {
        const auto* prim = std::get_if<PrimOp>(&op);
        if (prim != nullptr && prim->prim == Primitive::kUserKernel) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Context::Import: function '", fn.name, "' calls user kernel '",
              prim->attrs.kernel, "' at ", prim->loc.ToString(),
              "; an imported program is IR only (its kernels' code cannot come with it)"));
        }
      }
    }
  }
  const Function& entry = module.function(program.entry);
  if (entry.params.size() < inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Context::Import: the entry '", entry.name, "' has ", entry.params.size(),
        " parameters, fewer than the ", inputs.size(), " program inputs given"));
  }
  std::map<int32_t, int> input_of_var;
  const size_t first = entry.params.size() - inputs.size();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Variable& var = module.var(entry.params[first + k]);
    if (!inputs[k].valid() || inputs[k].ctx_ != this) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Context::Import: program input ", k, " is not a ProgramInput of this Context"));
    }
    if (!var.uniform) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Context::Import: parameter '", var.name, "' of the entry '", entry.name,
          "' stands for program input '", inputs[k].name(),
          "' but is not uniform; the program inputs are the entry's last, uniform parameters"));
    }
    if (var.type && *var.type != inputs[k].type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Context::Import: parameter '", var.name, "' of the entry '", entry.name, "' is ",
          var.type->ToString(), " but program input '", inputs[k].name(), "' is ",
          inputs[k].type().ToString()));
    }
    input_of_var[entry.params[first + k].value] = inputs[k].index_;
  }
  std::lock_guard lock(impl_->mu());
  std::vector<int> index(module.functions.size());
  for (size_t f = 0; f < module.functions.size(); ++f) {
    index[f] = impl_->AddFunction(module.functions[f].name, FunctionOptions{}, where);
  }
  for (size_t f = 0; f < module.functions.size(); ++f) {
    frontend_internal::FunctionEntry& e = impl_->functions().at(index[f]);
    e.defined = true;
    e.defined_at = where;
    e.body = std::make_unique<frontend_internal::Body>(*impl_, index[f],
                                                       frontend_internal::next_body_id++);
    e.body->BuildFromIr(module, FunctionId(static_cast<int32_t>(f)), index, input_of_var);
    e.num_params = e.body->num_params();
  }
  impl_->Touch();
  return BatchFunction(this, index[program.entry.value]);
}

ProgramInput Context::AddProgramInput(std::string name, TensorType type,
                                      std::source_location loc) {
  const SourceLoc where = ToSourceLoc(loc);
  std::lock_guard lock(impl_->mu());
  for (const frontend_internal::ProgramInputEntry& input : impl_->program_inputs()) {
    if (input.name == name) {
      impl_->RecordError(absl::InvalidArgumentError(absl::StrCat(
          where.ToString(), ": AddProgramInput('", name, "'): a program input of that name was "
          "declared at ", input.loc.ToString(), "; program inputs need unique names")));
    }
  }
  impl_->program_inputs().push_back(frontend_internal::ProgramInputEntry{std::move(name), std::move(type), where});
  impl_->Touch();
  return ProgramInput(this, static_cast<int>(impl_->program_inputs().size() - 1));
}

Value ProgramInput::operator()(std::source_location loc) const {
  Body* body = CurrentBody();
  if (body == nullptr) return Value();
  if (ctx_ == nullptr) {
    body->Error(ToSourceLoc(loc), "reads a ProgramInput handle that was never registered "
                                  "(default-constructed); get handles from "
                                  "Context::AddProgramInput");
    return Value();
  }
  if (&body->context() != ctx_->impl_.get()) {
    body->Error(ToSourceLoc(loc), absl::StrCat("reads program input '", name(),
                                               "' of another Context; declare it on this "
                                               "Context"));
    return Value();
  }
  return frontend_internal::Access::MakeVarValue(body->id(), body->ProgramInputVar(index_));
}

const std::string& ProgramInput::name() const {
  static const std::string kNone;
  if (ctx_ == nullptr) return kNone;
  std::lock_guard lock(ctx_->impl_->mu());
  return ctx_->impl_->program_inputs().at(index_).name;  // entries never move
}

const TensorType& ProgramInput::type() const {
  static const TensorType kNone{};
  if (ctx_ == nullptr) return kNone;
  std::lock_guard lock(ctx_->impl_->mu());
  return ctx_->impl_->program_inputs().at(index_).type;
}

const std::string& Kernel::name() const {
  static const std::string kNone;
  if (ctx_ == nullptr) return kNone;
  std::lock_guard lock(ctx_->impl_->mu());
  return ctx_->impl_->kernels().at(index_).name;  // entries never move or change name
}

}  // namespace autobatch
