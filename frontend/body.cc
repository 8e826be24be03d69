// One function body under construction: variables, emission, control flow.
#include "frontend/body.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch::frontend_internal {
namespace {

thread_local Body* current_body = nullptr;

// Restores the previous current body when a build ends.
class CurrentBodyScope {
 public:
  explicit CurrentBodyScope(Body* body) : saved_(current_body) { current_body = body; }
  ~CurrentBodyScope() { current_body = saved_; }
  CurrentBodyScope(const CurrentBodyScope&) = delete;
  CurrentBodyScope& operator=(const CurrentBodyScope&) = delete;

 private:
  Body* saved_;
};

std::string Plural(int n, std::string_view noun) {
  return absl::StrCat(n, " ", std::string(noun), n == 1 ? "" : "s");
}

// A C++ literal value converted to `dtype` with cast semantics
// (ir/primitives.def), as stored in a Literal.
void AppendConverted(const Value& v, DType dtype, int64_t count, Literal& out) {
  DType from = Access::LiteralDTypeOf(v);
  double f = Access::LiteralFloat(v);
  int64_t i = Access::LiteralInt(v);
  if (IsFloat(dtype)) {
    double x = IsFloat(from)              ? f
               : from == DType::kU64      ? static_cast<double>(static_cast<uint64_t>(i))
                                          : static_cast<double>(i);
    if (dtype == DType::kF32) x = static_cast<double>(static_cast<float>(x));
    out.floats.assign(count, x);
    return;
  }
  int64_t x = 0;
  if (dtype == DType::kBool) {
    x = IsFloat(from) ? (f != 0 || std::isnan(f)) : (i != 0);
  } else if (IsFloat(from)) {
    if (std::isnan(f)) {
      x = 0;
    } else if (dtype == DType::kU64) {
      if (f <= 0) {
        x = 0;
      } else if (f >= 18446744073709551616.0) {
        x = -1;  // UINT64_MAX bit-cast
      } else {
        x = static_cast<int64_t>(static_cast<uint64_t>(f));
      }
    } else {
      double lo = dtype == DType::kI32 ? -2147483648.0 : -9223372036854775808.0;
      double hi = dtype == DType::kI32 ? 2147483648.0 : 9223372036854775808.0;
      if (f <= lo) {
        x = dtype == DType::kI32 ? std::numeric_limits<int32_t>::min()
                                 : std::numeric_limits<int64_t>::min();
      } else if (f >= hi) {
        x = dtype == DType::kI32 ? std::numeric_limits<int32_t>::max()
                                 : std::numeric_limits<int64_t>::max();
      } else {
        x = static_cast<int64_t>(f);
      }
    }
  } else if (dtype == DType::kI32) {
    x = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(i)));
  } else {
    x = i;
  }
  out.ints.assign(count, x);
}

Literal MakeLiteral(const Value& v, const std::optional<TensorType>& as) {
  Literal lit;
  lit.type = as ? *as : Scalar(Access::LiteralDTypeOf(v));
  int64_t count = lit.type.NumElements();
  AppendConverted(v, lit.type.dtype, count < 0 ? 0 : count, lit);
  return lit;
}

}  // namespace

SourceLoc ToSourceLoc(const std::source_location& loc) {
  std::string_view file = loc.file_name() ? loc.file_name() : "";
  size_t slash = file.find_last_of('/');
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  return SourceLoc{std::string(file), static_cast<int>(loc.line())};
}

Body* CurrentBody() { return current_body; }

Body* BodyIfCurrent(uint64_t id) {
  return current_body != nullptr && current_body->id() == id ? current_body : nullptr;
}

Body::Body(ContextImpl& ctx, int function, uint64_t id)
    : ctx_(ctx), function_(function), id_(id) {
  const FunctionEntry& entry = ctx_.functions().at(function_);
  ir_.name = entry.name;
  ir_.loc = entry.defined_at;
  ir_.signature = entry.options.signature;
  NewBlock("entry");
  current_ = 0;
}

const std::string& Body::function_name() const { return ir_.name; }

std::string Body::UniqueName(const std::string& base) {
  if (!names_.contains(base)) return base;
  for (int k = 1;; ++k) {
    std::string name = absl::StrCat(base, "_", k);
    if (!names_.contains(name)) return name;
  }
}

int32_t Body::NewVar(VarKind kind, const std::string& name) {
  std::string chosen;
  switch (kind) {
    case VarKind::kParam:
    case VarKind::kResult:
    case VarKind::kNamedLocal:
    case VarKind::kProgramInput:
      chosen = UniqueName(name);
      break;
    case VarKind::kLocal:
      do {
        chosen = absl::StrCat("l", auto_local_counter_++);
      } while (names_.contains(chosen));
      break;
    case VarKind::kTemp:
      do {
        chosen = absl::StrCat("t", temp_counter_++);
      } while (names_.contains(chosen));
      break;
  }
  names_.insert(chosen);
  Variable var;
  var.name = std::move(chosen);
  vars_.push_back(std::move(var));
  kinds_.push_back(kind);
  return static_cast<int32_t>(vars_.size() - 1);
}

int32_t Body::ProgramInputVar(int input) {
  auto it = program_input_vars_.find(input);
  if (it != program_input_vars_.end()) return it->second;
  const ProgramInputEntry& entry = ctx_.program_inputs().at(input);
  const int32_t var = NewVar(VarKind::kProgramInput, entry.name);
  vars_[var].type = entry.type;
  vars_[var].uniform = true;
  program_input_vars_.emplace(input, var);
  return var;
}

void Body::Error(const SourceLoc& loc, const std::string& message) {
  ctx_.RecordError(absl::InvalidArgumentError(
      absl::StrCat(loc.ToString(), ": in function '", ir_.name, "': ", message)));
}

std::string Body::DescribeBody(uint64_t id) const {
  std::optional<std::string> owner = ctx_.BodyName(id);
  return owner ? absl::StrCat("function '", *owner, "'") : std::string("another Context's function");
}

int32_t Body::UseVar(const Value& v, const SourceLoc& loc, const std::string& what) {
  AB_CHECK(!v.is_literal());
  if (v.empty()) {
    switch (Access::WhyEmpty(v)) {
      case EmptyWhy::kDefault:
        Error(loc, absl::StrCat(what, " is an empty Value (default-constructed or "
                                      "moved-from); assign it before use"));
        break;
      case EmptyWhy::kUnboundVar:
        Error(loc, absl::StrCat(what, " reads a Var that was never assigned; assign "
                                      "it (on every path) before reading it"));
        break;
      case EmptyWhy::kNoBody:
        Error(loc, absl::StrCat(what, " was computed outside any function body; "
                                      "compute it inside the body lambda"));
        break;
      case EmptyWhy::kFailed:
        Error(loc, absl::StrCat(what, " comes from an op that failed"));
        break;
    }
    return -1;
  }
  if (Access::BodyOf(v) != id_) {
    Error(loc, absl::StrCat(what, " belongs to ", DescribeBody(Access::BodyOf(v)),
                            "; a Value can only be used in the body that made it "
                            "(pass it as an argument instead)"));
    return -1;
  }
  int32_t var = Access::VarOf(v);
  AB_CHECK(var >= 0 && var < static_cast<int32_t>(vars_.size()));
  return var;
}

int32_t Body::Materialize(const Value& v, const SourceLoc& loc, const std::string& what,
                          const std::optional<TensorType>& as) {
  if (!v.is_literal()) return UseVar(v, loc, what);
  Attributes attrs;
  attrs.literal = MakeLiteral(v, as);
  int32_t out = NewTemp();
  ir_.blocks[current_].ops.push_back(
      PrimOp{Primitive::kConstant, {}, {VarId(out)}, std::move(attrs), loc, {}});
  return out;
}

Value Body::EmitPrim(Primitive prim, std::span<const Value> inputs,
                     std::span<const LiteralPolicy> policies, Attributes attrs,
                     const SourceLoc& loc) {
  AB_CHECK(inputs.size() == policies.size());
  std::vector<VarId> in(inputs.size());
  bool failed = false;
  auto what = [&](size_t i) {
    return inputs.size() == 1
               ? absl::StrCat("the operand of '", std::string(PrimitiveName(prim)), "'")
               : absl::StrCat("operand ", i + 1, " of '", std::string(PrimitiveName(prim)), "'");
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_literal()) continue;
    int32_t var = UseVar(inputs[i], loc, what(i));
    if (var < 0) failed = true;
    in[i] = VarId(var);
  }
  if (failed) return Access::MakeEmpty(EmptyWhy::kFailed);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_literal()) continue;
    const LiteralPolicy& p = policies[i];
    if (p.kind == LiteralPolicy::kLike && p.like >= 0 &&
        !inputs[p.like].is_literal()) {
      Attributes fill;
      fill.literal = MakeLiteral(inputs[i], std::nullopt);
      int32_t out = NewTemp();
      ir_.blocks[current_].ops.push_back(PrimOp{
          Primitive::kFillLike, {in[p.like]}, {VarId(out)}, std::move(fill), loc, {}});
      in[i] = VarId(out);
    } else {
      in[i] = VarId(Materialize(inputs[i], loc, what(i),
                                p.kind == LiteralPolicy::kConstantAs ? p.type : std::nullopt));
    }
  }
  int32_t out = NewTemp();
  ir_.blocks[current_].ops.push_back(
      PrimOp{prim, std::move(in), {VarId(out)}, std::move(attrs), loc, {}});
  return Access::MakeVarValue(id_, out);
}

void Body::EmitCopy(int32_t from, int32_t to, const SourceLoc& loc) {
  if (from == to) return;
  ir_.blocks[current_].ops.push_back(
      PrimOp{Primitive::kCopy, {VarId(from)}, {VarId(to)}, {}, loc, {}});
}

CallResult Body::EmitCall(int callee, std::span<const Value> args, const SourceLoc& loc,
                          std::source_location source_loc) {
  auto call = std::make_shared<PendingCall>();
  call->body = id_;
  call->callee = callee;
  call->loc = loc;
  call->source_loc = source_loc;
  const FunctionEntry& entry = ctx_.functions().at(callee);
  const int num_args = static_cast<int>(args.size());
  if (entry.num_params >= 0 && entry.num_params != num_args) {
    Error(loc, absl::StrCat("the call of '", entry.name, "' passes ",
                            Plural(num_args, "value"), " but '", entry.name, "' takes ",
                            Plural(entry.num_params, "value"),
                            " (structs and tuples count one per field)"));
    return Access::MakeCallResult(std::move(call));  // block -1: a failed call
  }
  std::vector<VarId> arg_vars;
  bool failed = false;
  for (int i = 0; i < num_args; ++i) {
    std::optional<TensorType> as;
    if (entry.options.signature && i < static_cast<int>(entry.options.signature->params.size())) {
      as = entry.options.signature->params[i];
    }
    int32_t var = Materialize(args[i], loc,
                              absl::StrCat("argument ", i + 1, " of the call of '", entry.name, "'"),
                              as);
    if (var < 0) failed = true;
    arg_vars.push_back(VarId(var));
  }
  if (failed) return Access::MakeCallResult(std::move(call));
  ir_.blocks[current_].ops.push_back(
      CallOp{FunctionId(callee), std::move(arg_vars), {}, loc});
  call->block = current_;
  call->op = static_cast<int32_t>(ir_.blocks[current_].ops.size() - 1);
  calls_.push_back(call);
  return Access::MakeCallResult(std::move(call));
}

CallResult Body::EmitKernel(int kernel, std::span<const Value> args, const SourceLoc& loc,
                            std::source_location source_loc) {
  auto call = std::make_shared<PendingCall>();
  call->body = id_;
  call->is_kernel = true;
  call->callee = kernel;
  call->loc = loc;
  call->source_loc = source_loc;
  const KernelEntry& entry = ctx_.kernels().at(kernel);
  call->known_count = static_cast<int>(entry.signature.outputs.size());
  const int num_args = static_cast<int>(args.size());
  const int num_inputs = static_cast<int>(entry.signature.inputs.size());
  if (num_args != num_inputs) {
    Error(loc, absl::StrCat("kernel '", entry.name, "' takes ", Plural(num_inputs, "input"),
                            " but is called with ", Plural(num_args, "value")));
    return Access::MakeCallResult(std::move(call));
  }
  std::vector<VarId> in;
  bool failed = false;
  for (int i = 0; i < num_args; ++i) {
    int32_t var = Materialize(args[i], loc,
                              absl::StrCat("input ", i + 1, " of kernel '", entry.name, "'"),
                              entry.signature.inputs[i]);
    if (var < 0) failed = true;
    in.push_back(VarId(var));
  }
  if (failed) return Access::MakeCallResult(std::move(call));
  std::vector<VarId> out;
  for (int i = 0; i < call->known_count; ++i) {
    int32_t var = NewTemp();
    out.push_back(VarId(var));
    call->results.push_back(var);
  }
  Attributes attrs;
  attrs.kernel = entry.name;
  ir_.blocks[current_].ops.push_back(
      PrimOp{Primitive::kUserKernel, std::move(in), std::move(out), std::move(attrs), loc, {}});
  call->block = current_;
  call->op = static_cast<int32_t>(ir_.blocks[current_].ops.size() - 1);
  call->materialized = true;
  return Access::MakeCallResult(std::move(call));
}

std::vector<Value> Body::CallResults(PendingCall& call, int count) {
  std::vector<Value> out;
  if (call.block < 0) {  // the call failed; its error is recorded
    out.assign(count, Access::MakeEmpty(EmptyWhy::kFailed));
    return out;
  }
  if (!call.materialized) {
    for (int i = 0; i < count; ++i) call.results.push_back(NewTemp());
    call.materialized = true;
    std::vector<VarId> results;
    for (int32_t r : call.results) results.push_back(VarId(r));
    std::get<CallOp>(ir_.blocks.at(call.block).ops.at(call.op)).results = std::move(results);
  }
  const int have = static_cast<int>(call.results.size());
  if (have != count) {
    std::string callee = call.is_kernel ? absl::StrCat("kernel '", ctx_.kernels().at(call.callee).name, "'")
                                        : absl::StrCat("the call of '", ctx_.functions().at(call.callee).name, "'");
    Error(call.loc, call.is_kernel
                        ? absl::StrCat(callee, " has ", Plural(have, "output"), " but is used as ",
                                       Plural(count, "value"))
                        : absl::StrCat(callee, " is used as ", Plural(count, "value"),
                                       " but was already used as ", Plural(have, "value")));
    out.assign(count, Access::MakeEmpty(EmptyWhy::kFailed));
    return out;
  }
  for (int32_t r : call.results) out.push_back(Access::MakeVarValue(id_, r));
  return out;
}

int32_t Body::NewBlock(const std::string& label) {
  Block block;
  block.label = label;
  ir_.blocks.push_back(std::move(block));
  open_.push_back(true);
  return static_cast<int32_t>(ir_.blocks.size() - 1);
}

void Body::TerminateBlock(int32_t block, Terminator t, const SourceLoc& loc) {
  AB_CHECK(open_.at(block), "terminating a block twice");
  ir_.blocks[block].terminator = std::move(t);
  ir_.blocks[block].loc = loc;
  open_[block] = false;
}

void Body::Terminate(Terminator t, const SourceLoc& loc) {
  TerminateBlock(current_, std::move(t), loc);
  current_ = NewBlock("unreachable");
}

Branch* Body::BranchOf(int32_t block) {
  return std::get_if<Branch>(&ir_.blocks.at(block).terminator);
}

int32_t Body::ResultVar(int i) {
  const FunctionEntry& entry = ctx_.functions().at(function_);
  while (static_cast<int>(result_vars_.size()) <= i) {
    int k = static_cast<int>(result_vars_.size());
    std::string name = k < static_cast<int>(entry.options.result_names.size())
                           ? entry.options.result_names[k]
                           : absl::StrCat("r", k);
    int32_t var = NewVar(VarKind::kResult, name);
    if (entry.options.signature && k < static_cast<int>(entry.options.signature->results.size())) {
      vars_[var].type = entry.options.signature->results[k];
    }
    result_vars_.push_back(var);
  }
  return result_vars_[i];
}

void Body::Return(std::span<const Value> values, const SourceLoc& loc) {
  const FunctionEntry& entry = ctx_.functions().at(function_);
  std::vector<int32_t> sources;
  for (size_t i = 0; i < values.size(); ++i) {
    std::optional<TensorType> as;
    if (entry.options.signature && i < entry.options.signature->results.size()) {
      as = entry.options.signature->results[i];
    }
    sources.push_back(Materialize(values[i], loc, absl::StrCat("returned value ", i + 1), as));
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    int32_t result = ResultVar(static_cast<int>(i));
    if (sources[i] >= 0) EmitCopy(sources[i], result, loc);
  }
  returns_.push_back(ReturnSite{current_, static_cast<int>(values.size()), loc});
  Terminate(autobatch::Return{}, loc);
}

void Body::Build(const BodyDefinition& def, std::source_location def_loc) {
  CurrentBodyScope scope(this);
  const FunctionEntry& entry = ctx_.functions().at(function_);
  const SourceLoc loc = ToSourceLoc(def_loc);
  const auto& names = entry.options.param_names;
  const int num_user_params = static_cast<int>(def.param_leaf_suffixes.size());
  if (!names.empty() && static_cast<int>(names.size()) != num_user_params) {
    Error(loc, absl::StrCat("FunctionOptions::param_names has ", Plural(static_cast<int>(names.size()), "name"),
                            " but the body lambda takes ", Plural(num_user_params, "parameter")));
  }
  std::vector<Value> leaves;
  std::set<std::string> uniform(entry.options.uniform_params.begin(),
                                entry.options.uniform_params.end());
  for (int p = 0; p < num_user_params; ++p) {
    std::string base = p < static_cast<int>(names.size()) ? names[p] : absl::StrCat("p", p);
    const bool is_uniform = uniform.erase(base) > 0;
    for (const std::string& suffix : def.param_leaf_suffixes[p]) {
      int32_t var = NewVar(VarKind::kParam, base + suffix);
      vars_[var].uniform = is_uniform;
      size_t k = params_.size();
      if (entry.options.signature && k < entry.options.signature->params.size()) {
        vars_[var].type = entry.options.signature->params[k];
      }
      params_.push_back(var);
      leaves.push_back(Access::MakeVarValue(id_, var));
    }
  }
  if (entry.options.signature &&
      entry.options.signature->params.size() != params_.size()) {
    Error(loc, absl::StrCat("the signature declares ",
                            Plural(static_cast<int>(entry.options.signature->params.size()), "parameter"),
                            " but the body takes ", Plural(static_cast<int>(params_.size()), "value"),
                            " (structs and tuples count one per field)"));
  }
  for (const std::string& name : uniform) {
    Error(loc, absl::StrCat("FunctionOptions::uniform_params names '", name,
                            "', which is not a parameter; use the names of param_names "
                            "(or p0, p1, ... without them)"));
  }
  // The Builder lives as long as the Body, so a Builder& that escapes its
  // lambda is still detected as belonging to this function.
  builder_.reset(new Builder(id_));
  std::optional<std::vector<Value>> returned = def.invoke(*builder_, leaves, def_loc);
  Finish(returned, loc);
}

void Body::BuildFromIr(const Module& module, FunctionId f, const std::vector<int>& callees,
                       const std::map<int32_t, int>& inputs) {
  Function fn = module.function(f);
  std::vector<int32_t> local(module.variables.size(), -1);
  auto map = [&](VarId v) {
    if (auto it = inputs.find(v.value); it != inputs.end()) {
      return VarId(ProgramInputVar(it->second));
    }
    int32_t& l = local.at(v.value);
    if (l < 0) {
      l = NewVar(VarKind::kNamedLocal, module.var(v).name);
      vars_[l].type = module.var(v).type;
    }
    return VarId(l);
  };
  if (fn.signature) {
    std::vector<TensorType> kept;
    for (size_t i = 0; i < fn.params.size() && i < fn.signature->params.size(); ++i) {
      if (!inputs.contains(fn.params[i].value)) kept.push_back(fn.signature->params[i]);
    }
    fn.signature->params = std::move(kept);
  }
  std::erase_if(fn.params, [&](VarId p) { return inputs.contains(p.value); });
  RenameVariables(fn, map);
  for (Block& block : fn.blocks) {
    for (Op& op : block.ops) {
      if (auto* call = std::get_if<CallOp>(&op)) call->callee = FunctionId(callees.at(call->callee.value));
    }
  }
  fn.name = ir_.name;
  ir_ = std::move(fn);
  open_.assign(ir_.blocks.size(), false);
  for (VarId p : ir_.params) params_.push_back(p.value);
  for (VarId r : ir_.results) result_vars_.push_back(r.value);
  num_results_ = static_cast<int>(ir_.results.size());
  calls_resolved_ = true;
}

void Body::BuildGradient(const Body& primal, int primal_index,
                         const std::vector<std::string>& wrt, const SourceLoc& loc) {
  ir_.blocks.clear();
  open_.clear();
  std::vector<std::string> names;
  for (VarId p : primal.ir().params) names.push_back(primal.vars().at(p.value).name);
  GradientOf spec{FunctionId(primal_index), {}};
  if (wrt.empty()) {
    for (size_t i = 0; i < names.size(); ++i) spec.wrt.push_back(static_cast<int32_t>(i));
  }
  for (const std::string& name : wrt) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      Error(loc, absl::StrCat("Gradient(", primal.function_name(), "): '", name,
                              "' is not a parameter of '", primal.function_name(),
                              "' (its parameters: ", absl::StrJoin(names, ", "),
                              "); name them in GradientOptions::wrt"));
      continue;
    }
    const auto index = static_cast<int32_t>(it - names.begin());
    if (std::find(spec.wrt.begin(), spec.wrt.end(), index) != spec.wrt.end()) {
      Error(loc, absl::StrCat("Gradient(", primal.function_name(), "): '", name,
                              "' is listed twice in GradientOptions::wrt"));
      continue;
    }
    spec.wrt.push_back(index);
  }
  std::sort(spec.wrt.begin(), spec.wrt.end());
  for (const std::string& name : names) {
    const int32_t var = NewVar(VarKind::kParam, name);
    params_.push_back(var);
    ir_.params.push_back(VarId(var));
  }
  result_vars_.push_back(NewVar(VarKind::kResult, "value"));
  for (int32_t k : spec.wrt) result_vars_.push_back(NewVar(VarKind::kResult, "d_" + names[k]));
  for (int32_t r : result_vars_) ir_.results.push_back(VarId(r));
  num_results_ = static_cast<int>(result_vars_.size());
  ir_.gradient_of = std::move(spec);
  ir_.loc = loc;
  calls_resolved_ = true;
}

void Body::Finish(const std::optional<std::vector<Value>>& returned, const SourceLoc& end_loc) {
  // The end of the lambda returns what it returned (nothing for void).
  Return(returned ? std::span<const Value>(*returned) : std::span<const Value>(), end_loc);

  // Drop unreachable blocks (code after Return/Break, joins nobody reaches).
  const int32_t n = static_cast<int32_t>(ir_.blocks.size());
  std::vector<int32_t> remap(n, -1);
  std::vector<int32_t> order;
  std::vector<int32_t> stack = {0};
  remap[0] = 0;
  order.push_back(0);
  while (!stack.empty()) {
    int32_t b = stack.back();
    stack.pop_back();
    for (BlockId s : Successors(ir_.blocks[b].terminator)) {
      if (remap[s.value] < 0) {
        remap[s.value] = 0;
        order.push_back(s.value);
        stack.push_back(s.value);
      }
    }
  }
  std::sort(order.begin(), order.end());  // keep creation order
  std::vector<Block> blocks;
  for (int32_t b : order) {
    remap[b] = static_cast<int32_t>(blocks.size());
    blocks.push_back(std::move(ir_.blocks[b]));
  }
  for (Block& block : blocks) {
    std::visit(Overloaded{
                   [&](Branch& t) {
                     t.then_block = BlockId(remap[t.then_block.value]);
                     t.else_block = BlockId(remap[t.else_block.value]);
                   },
                   [&](Goto& t) { t.target = BlockId(remap[t.target.value]); },
                   [](autobatch::Return&) {},
                   [](PushGoto&) {},
                   [](IndirectGoto&) {},
                   [](Halt&) {},
               },
               block.terminator);
  }
  ir_.blocks = std::move(blocks);
  for (auto& call : calls_) {
    if (call->block >= 0) call->block = remap[call->block];  // -1: dropped
    if (call->block < 0) call->block = -2;
  }

  // Every reachable return must agree on the number of results.
  const FunctionEntry& entry = ctx_.functions().at(function_);
  const ReturnSite* first = nullptr;
  for (const ReturnSite& site : returns_) {
    if (remap[site.block] < 0) continue;
    if (first == nullptr) {
      first = &site;
    } else if (site.count != first->count) {
      Error(site.loc, absl::StrCat("returns ", Plural(site.count, "value"), " here but ",
                                   Plural(first->count, "value"), " at ", first->loc.ToString(),
                                   "; every path must return the same number of values"
                                   " (the end of the body returns what the lambda returns)"));
      break;
    }
  }
  if (first != nullptr) {
    num_results_ = first->count;
  } else {
    num_results_ = entry.options.signature
                       ? static_cast<int>(entry.options.signature->results.size())
                       : 0;
  }
  if (entry.options.signature &&
      static_cast<int>(entry.options.signature->results.size()) != num_results_) {
    Error(first ? first->loc : end_loc,
          absl::StrCat("returns ", Plural(num_results_, "value"), " but the signature declares ",
                       Plural(static_cast<int>(entry.options.signature->results.size()), "result")));
  }
  ir_.params.clear();
  for (int32_t p : params_) ir_.params.push_back(VarId(p));
  ir_.results.clear();
  for (int i = 0; i < num_results_; ++i) ir_.results.push_back(VarId(ResultVar(i)));
}

absl::Status Body::ResolveCalls() {
  if (calls_resolved_) return absl::OkStatus();
  for (const auto& call : calls_) {
    if (call->block < 0 || call->is_kernel) continue;
    const FunctionEntry& callee = ctx_.functions().at(call->callee);
    if (!callee.defined || callee.body == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          call->loc.ToString(), ": in function '", ir_.name, "': calls '", callee.name,
          "' (declared at ", callee.declared_at.ToString(),
          ") whose body was never defined; define it with ctx.Batch(", callee.name, ")(...)"));
    }
    CallOp& op = std::get<CallOp>(ir_.blocks.at(call->block).ops.at(call->op));
    const int num_params = callee.body->num_params();
    if (static_cast<int>(op.args.size()) != num_params) {
      Error(call->loc, absl::StrCat("the call of '", callee.name, "' passes ",
                                    Plural(static_cast<int>(op.args.size()), "value"), " but '",
                                    callee.name, "' takes ", Plural(num_params, "value")));
      continue;
    }
    const int count = callee.body->num_results();
    if (!call->materialized) {
      // Results nobody uses still need variables to receive them.
      for (int i = 0; i < count; ++i) call->results.push_back(NewTemp());
      call->materialized = true;
      op.results.clear();
      for (int32_t r : call->results) op.results.push_back(VarId(r));
    } else if (static_cast<int>(call->results.size()) != count) {
      Error(call->loc, absl::StrCat("the call of '", callee.name, "' is used as ",
                                    Plural(static_cast<int>(call->results.size()), "value"), " but '",
                                    callee.name, "' returns ", Plural(count, "value")));
    }
  }
  calls_resolved_ = true;
  return absl::OkStatus();
}

}  // namespace autobatch::frontend_internal
