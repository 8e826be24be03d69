// ProgramModel: declarations, the log-density function with its transforms,
// linking into a Context, and the Model interface through the stack VM.
#include "mcmc/model/program_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/jit.h"
#include "mcmc/model/transforms.h"
#include "support/status.h"
#include "vm/stack/block_plan.h"

namespace autobatch::mcmc {

// The values a log-density body reads: set while Link's function body is
// being built (on the building thread), as the frontend's current body is.
struct ProgramModel::Scope {
  const ProgramModel* model;
  std::vector<Value> parameters;  // constrained
  std::vector<ProgramInput> data;
};

namespace {

thread_local const ProgramModel::Scope* current_scope = nullptr;

class ScopeGuard {
 public:
  explicit ScopeGuard(const ProgramModel::Scope* scope) : saved_(current_scope) {
    current_scope = scope;
  }
  ~ScopeGuard() { current_scope = saved_; }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  const ProgramModel::Scope* saved_;
};

bool IsIdentifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

const ProgramModel::Scope* ProgramModel::CurrentScope() { return current_scope; }

Value ModelParameter::operator()(std::source_location loc) const {
  const ProgramModel::Scope* scope = ProgramModel::CurrentScope();
  if (scope == nullptr || scope->model != model_ || index_ < 0) {
    // Outside the model's log density: an empty Value, which the frontend
    // reports where it is used.
    (void)loc;
    return Value();
  }
  return scope->parameters.at(static_cast<size_t>(index_));
}

Value ModelData::operator()(std::source_location loc) const {
  const ProgramModel::Scope* scope = ProgramModel::CurrentScope();
  if (scope == nullptr || scope->model != model_ || index_ < 0) return Value();
  return scope->data.at(static_cast<size_t>(index_))(loc);
}

void GeneratedQuantities::Set(const ModelGenerated& quantity, const Operand& value) {
  if (quantity.model_ != model_ || quantity.index_ < 0) {
    errors_->push_back(absl::StrCat(value.loc().file_name(), ":", value.loc().line(),
                                    ": Set of a generated quantity that is not "
                                    "this model's (declare it with "
                                    "AddGenerated on model '",
                                    model_->name_, "')"));
    return;
  }
  (*values_)[static_cast<size_t>(quantity.index_)] = value;
}

ModelTarget& ModelTarget::operator+=(const Value& term) {
  *total_ = *total_ + term;
  return *this;
}

ProgramModel::ProgramModel(std::string name) : name_(std::move(name)) {
  if (!IsIdentifier(name_)) {
    declaration_errors_.push_back(
        absl::StrCat("the model name '", name_,
                     "' is not a word of letters, digits and '_' (it names "
                     "the model's functions)"));
  }
}

void ProgramModel::CheckDeclaration(std::string_view kind, const std::string& name,
                                    const std::vector<Extent>& shape) {
  if (!IsIdentifier(name)) {
    declaration_errors_.push_back(absl::StrCat(std::string(kind), " '", name,
                                               "': a name is a word of letters, digits and '_'"));
  }
  if (shape.size() > 1 || (shape.size() == 1 && !shape[0].named() && shape[0].value < 1)) {
    declaration_errors_.push_back(absl::StrCat(
        std::string(kind), " '", name, "' has shape ", ShapeText(shape), "; a ", std::string(kind),
        " is a scalar (shape []) or a vector of at least one element"));
  }
}

ModelParameter ProgramModel::AddParameter(std::string name, std::vector<Extent> shape,
                                          Transform transform) {
  CheckDeclaration("parameter", name, shape);
  std::vector<int64_t> resolved;
  for (const Extent& e : shape) resolved.push_back(e.named() ? 0 : e.value);
  ParameterSpec spec{std::move(name), std::move(resolved), transform};
  if (!HasNamedExtent(shape)) {  // else checked by SetData
    if (absl::Status valid = ValidateParameter(spec); !valid.ok()) {
      declaration_errors_.push_back(std::string(valid.message()));
    }
  }
  parameters_.push_back(std::move(spec));
  parameter_shapes_.push_back(std::move(shape));
  return ModelParameter(this, static_cast<int>(parameters_.size() - 1));
}

ModelData ProgramModel::AddData(DataSpec spec) {
  data_specs_.push_back(std::move(spec));
  return ModelData(this, static_cast<int>(data_specs_.size() - 1));
}

void ProgramModel::SetLogDensity(LogDensityBody body) { body_ = std::move(body); }

ModelGenerated ProgramModel::AddGenerated(std::string name, std::vector<int64_t> shape) {
  CheckDeclaration("generated quantity", name, std::vector<Extent>(shape.begin(), shape.end()));
  generated_.push_back({std::move(name), shape});
  return ModelGenerated(this, static_cast<int>(generated_.size() - 1), std::move(shape));
}

void ProgramModel::SetGeneratedQuantities(GeneratedBody body) { generated_body_ = std::move(body); }

void ProgramModel::SetGeneratedQuantitiesProgram(Program program) {
  imported_generated_ = std::make_shared<const Program>(std::move(program));
}

void ProgramModel::SetLogDensityProgram(Program program) {
  imported_ = std::make_shared<const Program>(std::move(program));
}

absl::Status ProgramModel::Validate() const {
  std::vector<std::string> errors = declaration_errors_;
  std::set<std::string> names;
  for (const ParameterSpec& p : parameters_) {
    if (!names.insert(p.name).second) {
      errors.push_back(absl::StrCat("'", p.name, "' is declared twice"));
    }
  }
  for (const DataSpec& d : data_specs_) {
    if (!names.insert(d.name).second) {
      errors.push_back(absl::StrCat("'", d.name, "' is declared twice"));
    }
  }
  for (const GeneratedSpec& g : generated_) {
    if (!names.insert(g.name).second) {
      errors.push_back(absl::StrCat("'", g.name,
                                    "' is declared twice (a generated quantity needs a name "
                                    "of its own)"));
    }
  }
  const bool has_generated_body = generated_body_ || imported_generated_ != nullptr;
  if (!generated_.empty() && !has_generated_body) {
    errors.push_back(absl::StrCat("it declares generated quantities ('", generated_[0].name,
                                  "', ...) but no body to compute them (call "
                                  "SetGeneratedQuantities)"));
  }
  if (generated_.empty() && has_generated_body) {
    errors.push_back(
        "it has a generated-quantities body but declares no "
        "quantity (call AddGenerated)");
  }
  if (absl::Status specs = ValidateDataSpecs(data_specs_); !specs.ok()) {
    errors.push_back(std::string(specs.message()));
  }
  for (size_t i = 0; i < parameters_.size(); ++i) {
    for (std::string& e : ExtentNameProblems(parameter_shapes_[i],
                                             absl::StrCat("parameter '", parameters_[i].name, "'"),
                                             data_specs_, data_specs_.size())) {
      errors.push_back(std::move(e));
    }
  }
  if (parameters_.empty()) errors.push_back("it declares no parameter");
  if (!body_ && imported_ == nullptr) {
    errors.push_back("it has no log density (call SetLogDensity)");
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("model '", name_, "': ", absl::StrJoin(errors, "; ")));
}

absl::Status ProgramModel::SetData(std::vector<Tensor> data) {
  AB_RETURN_IF_ERROR(Validate());
  if (data.size() != data_specs_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("model '", name_, "': ", data.size(),
                                                   " data tensors given; it declares ",
                                                   data_specs_.size()));
  }
  std::vector<std::vector<int64_t>> data_shapes;
  for (size_t i = 0; i < data.size(); ++i) {
    const DataSpec& spec = data_specs_[i];
    absl::StatusOr<std::vector<int64_t>> shape =
        ResolveShape(spec.shape, absl::StrCat("data '", spec.name, "'"), data_specs_,
                     std::span<const Tensor>(data).first(i));
    if (!shape.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", name_, "': ", shape.status().message()));
    }
    data_shapes.push_back(*shape);
    const TensorType want{spec.dtype, *shape};
    if (data[i].type() != want || data[i].batch() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", name_, "': data '", spec.name, "' is ", data[i].type().ToString(), " x ",
          data[i].batch(), " lanes; it is declared ", want.ToString(), " (one lane)"));
    }
    if (!data[i].uniform()) data[i].set_uniform();
  }
  std::vector<ParameterSpec> parameters = parameters_;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!HasNamedExtent(parameter_shapes_[i])) continue;
    const std::string who = absl::StrCat("parameter '", parameters[i].name, "'");
    absl::StatusOr<std::vector<int64_t>> shape =
        ResolveShape(parameter_shapes_[i], who, data_specs_, data);
    if (!shape.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", name_, "': ", shape.status().message()));
    }
    if (shape->size() == 1 && (*shape)[0] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", name_, "': ", who, " has extent '", parameter_shapes_[i][0].name,
          "', which is ", (*shape)[0], "; a parameter vector has at least one element"));
    }
    parameters[i].shape = *std::move(shape);
    if (absl::Status valid = ValidateParameter(parameters[i]); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("model '", name_, "': ", valid.message()));
    }
  }
  parameters_ = std::move(parameters);
  data_shapes_ = std::move(data_shapes);
  data_ = std::move(data);
  has_data_ = true;
  // The programs built for the former data's sizes are stale.
  {
    std::lock_guard lock(eval_mu_);
    eval_ctx_.reset();
    eval_entry_ = BatchFunction();
    last_error_ = absl::OkStatus();
  }
  {
    std::lock_guard lock(gq_mu_);
    gq_ctx_.reset();
    gq_entry_ = absl::UnknownError("not built");
  }
  return absl::OkStatus();
}

absl::Status ProgramModel::LoadData(std::string_view json_text, std::string_view source_name) {
  AB_RETURN_IF_ERROR(Validate());
  AB_ASSIGN_OR_RETURN(std::vector<Tensor> data, ReadData(json_text, data_specs_, source_name));
  return SetData(std::move(data));
}

std::vector<TensorType> ProgramModel::DataTypes() const {
  std::vector<TensorType> types;
  for (size_t i = 0; i < data_specs_.size(); ++i) {
    const DataSpec& spec = data_specs_[i];
    if (has_data_) {
      types.push_back(TensorType{spec.dtype, data_shapes_[i]});
      continue;
    }
    std::vector<int64_t> shape;
    for (const Extent& e : spec.shape) shape.push_back(e.named() ? 0 : e.value);
    types.push_back(TensorType{spec.dtype, shape});
  }
  return types;
}

std::vector<ProgramInput> ProgramModel::AddDataInputs(Context& ctx) const {
  std::vector<ProgramInput> data;
  const std::vector<TensorType> types = DataTypes();
  for (size_t i = 0; i < data_specs_.size(); ++i) {
    data.push_back(ctx.AddProgramInput(data_specs_[i].name, types[i]));
  }
  return data;
}

absl::StatusOr<ProgramModel::Linked> ProgramModel::Link(Context& ctx) const {
  if (!has_data_) {
    for (size_t i = 0; i < parameters_.size(); ++i) {
      if (!HasNamedExtent(parameter_shapes_[i])) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "model '", name_, "': parameter '", parameters_[i].name, "' has shape ",
          ShapeText(parameter_shapes_[i]),
          " from the data; set the data (SetData or LoadData) before building its log density"));
    }
  }
  Linked linked;
  linked.data = AddDataInputs(ctx);
  const std::vector<ProgramInput> data = linked.data;
  if (imported_ != nullptr) {
    absl::StatusOr<BatchFunction> imported = ctx.Import(*imported_, data);
    if (!imported.ok()) {
      return absl::Status(imported.status().code(),
                          absl::StrCat("model '", name_, "': ", imported.status().message()));
    }
    linked.log_density = *imported;
    linked.gradient = ctx.Gradient(linked.log_density, {.wrt = {"q"}});
    return linked;
  }
  linked.log_density = ctx.Batch(absl::StrCat(name_, ".log_density"),
                                 {.param_names = {"q"}})([this, data](Builder& b, Value q) {
    Scope scope{this, {}, data};
    Var target = b.Local("target");
    target = 0.0;
    int64_t offset = 0;
    for (const ParameterSpec& p : parameters_) {
      const int64_t n = p.unconstrained_size();
      Value y = p.shape.empty() ? reduce_sum(slice(q, offset, 1)) : slice(q, offset, n);
      if (p.transform == Transform::kIdentity) {
        scope.parameters.push_back(y);
      } else {
        ConstrainedValue c = ConstrainValue(y, p);
        target = target + c.log_jacobian;
        scope.parameters.push_back(c.x);
      }
      offset += n;
    }
    ScopeGuard guard(&scope);
    ModelTarget t(&target, &b);
    body_(t);
    return Value(target);
  });
  linked.gradient = ctx.Gradient(linked.log_density, {.wrt = {"q"}});
  return linked;
}

absl::StatusOr<BatchFunction> ProgramModel::DefineValueAndGradient(Context& ctx) const {
  AB_ASSIGN_OR_RETURN(Linked linked, Link(ctx));
  const BatchFunction gradient = linked.gradient;
  return ctx.Batch(
      absl::StrCat(name_, ".value_and_gradient"),
      {.param_names = {"q"}, .result_names = {"log_density", "gradient"}})([gradient](Value q) {
    auto [value, grad] = gradient(q).Get<2>();
    return std::make_tuple(value, grad);
  });
}

absl::StatusOr<Program> ProgramModel::LogDensityProgram() const {
  AB_RETURN_IF_ERROR(Validate());
  Context ctx;
  AB_ASSIGN_OR_RETURN(Linked linked, Link(ctx));
  return ctx.Program(linked.log_density);
}

absl::StatusOr<Program> ProgramModel::GradientProgram() const {
  AB_RETURN_IF_ERROR(Validate());
  Context ctx;
  AB_ASSIGN_OR_RETURN(BatchFunction entry, DefineValueAndGradient(ctx));
  return ctx.Program(entry);
}

absl::Status ProgramModel::last_error() const {
  std::lock_guard lock(eval_mu_);
  return last_error_;
}

double ProgramModel::LogDensityGradient(std::span<const double> q, std::span<double> grad) const {
  double logp = 0;
  LogDensityGradientBatch(q.data(), &logp, grad.data(), 1, nullptr);
  return logp;
}

void ProgramModel::LogDensityGradientBatch(const double* q, double* logp, double* grad,
                                           int64_t lanes, const uint8_t* active) const {
  const int64_t d = dimension();
  auto fail = [&](absl::Status status) {
    for (int64_t l = 0; l < lanes; ++l) {
      logp[l] = std::numeric_limits<double>::quiet_NaN();
      std::fill(grad + l * d, grad + (l + 1) * d, std::numeric_limits<double>::quiet_NaN());
    }
    std::lock_guard lock(eval_mu_);
    last_error_ = std::move(status);
  };
  BatchFunction entry;
  {
    std::lock_guard lock(eval_mu_);
    if (!has_data_) {
      last_error_ = absl::FailedPreconditionError(
          absl::StrCat("model '", name_, "': no data (call SetData or LoadData first)"));
    } else if (eval_ctx_ == nullptr) {
      eval_ctx_ = std::make_unique<Context>();
      absl::StatusOr<BatchFunction> entry = DefineValueAndGradient(*eval_ctx_);
      if (entry.ok()) {
        eval_entry_ = *entry;
      } else {
        last_error_ = entry.status();
      }
    }
    entry = eval_entry_;
  }
  if (!entry.valid()) return fail(last_error());
  // The active lanes, packed: the results of a lane do not depend on the
  // others (bit-stable primitives only), so this is what a batched call
  // computes for it.
  std::vector<int64_t> lanes_run;
  for (int64_t l = 0; l < lanes; ++l) {
    if (active == nullptr || active[l]) lanes_run.push_back(l);
  }
  if (lanes_run.empty()) return;
  const int64_t n = static_cast<int64_t>(lanes_run.size());
  Tensor qs(Vector(DType::kF64, d), n);
  for (int64_t k = 0; k < n; ++k) {
    std::copy(q + lanes_run[k] * d, q + (lanes_run[k] + 1) * d, qs.data<double>() + k * d);
  }
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(qs));
  for (const Tensor& t : data_) inputs.push_back(t);
  absl::StatusOr<std::vector<Tensor>> out = entry.Run(std::move(inputs), {.vm = Vm::kStack});
  if (!out.ok()) return fail(out.status());
  for (int64_t k = 0; k < n; ++k) {
    logp[lanes_run[k]] = (*out)[0].data<double>()[k];
    std::copy((*out)[1].data<double>() + k * d, (*out)[1].data<double>() + (k + 1) * d,
              grad + lanes_run[k] * d);
  }
}

// ---------------------------------------------------------------------------
// Generated quantities.

std::vector<Value> ProgramModel::SplitConstrained(const Value& x) const {
  std::vector<Value> values;
  int64_t offset = 0;
  for (const ParameterSpec& p : parameters_) {
    const int64_t n = p.size();
    values.push_back(p.shape.empty() ? reduce_sum(slice(x, offset, 1)) : slice(x, offset, n));
    offset += n;
  }
  return values;
}

absl::StatusOr<BatchFunction> ProgramModel::LinkGenerated(Context& ctx) const {
  AB_CHECK(!generated_.empty());
  const std::vector<ProgramInput> data = AddDataInputs(ctx);
  auto prefixed = [this](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat("model '", name_,
                                                    "': generated quantities: ", status.message()));
  };
  if (imported_generated_ != nullptr) {
    const size_t results = imported_generated_->entry_function().results.size();
    if (results != generated_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", name_, "': the generated-quantities program returns ", results,
                       " values; the model declares ", generated_.size(), " generated quantities"));
    }
    absl::StatusOr<BatchFunction> imported = ctx.Import(*imported_generated_, data);
    if (!imported.ok()) return prefixed(imported.status());
    return *imported;
  }
  std::vector<std::string> result_names;
  for (const GeneratedSpec& g : generated_) result_names.push_back(g.name);
  auto errors = std::make_shared<std::vector<std::string>>();
  const BatchFunction entry =
      ctx.Batch(absl::StrCat(name_, ".generated_quantities"),
                {.param_names = {"x", "rng_key", "rng_counter"}, .result_names = result_names})(
          [this, data, errors](Builder& b, Value x, Value key, Value counter) {
            Scope scope{this, SplitConstrained(x), data};
            ScopeGuard guard(&scope);
            Var stream_counter = b.Local("rng_counter.next", counter);
            std::vector<Var> values(generated_.size());
            GeneratedQuantities gq(key, &stream_counter, &b, this, &values, errors.get());
            generated_body_(gq);
            std::vector<Value> out;
            for (size_t i = 0; i < values.size(); ++i) {
              if (values[i].bound()) {
                out.push_back(Value(values[i]));
              } else {
                errors->push_back(absl::StrCat("generated quantity '", generated_[i].name,
                                               "' is never set (call gq.Set(", generated_[i].name,
                                               ", value) in the body)"));
                out.push_back(Value(0.0));
              }
            }
            return out;
          });
  // Build the body now, so that its errors are this call's.
  absl::StatusOr<Program> program = ctx.Program(entry);
  if (!errors->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", name_, "': generated quantities: ", absl::StrJoin(*errors, "; ")));
  }
  if (!program.ok()) return prefixed(program.status());
  return entry;
}

absl::StatusOr<Program> ProgramModel::GeneratedQuantitiesProgram() const {
  AB_RETURN_IF_ERROR(Validate());
  if (generated_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", name_, "' declares no generated quantities"));
  }
  Context ctx;
  AB_ASSIGN_OR_RETURN(BatchFunction entry, LinkGenerated(ctx));
  return ctx.Program(entry);
}

std::vector<std::string> ProgramModel::generated_names() const {
  std::vector<std::string> names;
  for (const GeneratedSpec& g : generated_) {
    if (g.shape.empty()) {
      names.push_back(g.name);
    } else {
      for (int64_t i = 1; i <= g.shape[0]; ++i) names.push_back(absl::StrCat(g.name, ".", i));
    }
  }
  return names;
}

absl::StatusOr<BatchFunction> ProgramModel::GeneratedEntry() const {
  std::lock_guard lock(gq_mu_);
  if (gq_ctx_ != nullptr) return gq_entry_;
  AB_RETURN_IF_ERROR(Validate());
  gq_ctx_ = std::make_unique<Context>();
  gq_entry_ = [&]() -> absl::StatusOr<BatchFunction> {
    AB_ASSIGN_OR_RETURN(BatchFunction entry, LinkGenerated(*gq_ctx_));
    // The quantities' types, from the typed program: each f64 of its shape.
    std::vector<TensorType> input_types = {Vector(DType::kF64, constrained_size()),
                                           Scalar(DType::kU64), Scalar(DType::kU64)};
    for (const TensorType& t : DataTypes()) input_types.push_back(t);
    absl::StatusOr<const Program*> typed = gq_ctx_->CompiledProgram(entry, input_types);
    if (!typed.ok()) {
      return absl::Status(
          typed.status().code(),
          absl::StrCat("model '", name_, "': generated quantities: ", typed.status().message()));
    }
    const Function& fn = (*typed)->entry_function();
    std::vector<std::string> errors;
    for (size_t i = 0; i < generated_.size() && i < fn.results.size(); ++i) {
      const TensorType want{DType::kF64, generated_[i].shape};
      const std::optional<TensorType>& got = (*typed)->module.var(fn.results[i]).type;
      if (got && *got != want) {
        errors.push_back(absl::StrCat(
            "generated quantity '", generated_[i].name, "' is set to a value of type ",
            got->ToString(), "; it is declared ", want.ToString(),
            got->dtype != DType::kF64 ? " (convert counts with cast(x, DType::kF64))" : ""));
      }
    }
    if (!errors.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", name_, "': ", absl::StrJoin(errors, "; ")));
    }
    return entry;
  }();
  return gq_entry_;
}

absl::Status ProgramModel::CheckGenerated() const {
  if (generated_.empty()) return absl::OkStatus();
  return GeneratedEntry().status();
}

absl::Status ProgramModel::PrepareGenerate(const CallOptions& call) const {
  if (generated_.empty()) return absl::OkStatus();
  if (!has_data_) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", name_, "': no data (call SetData or LoadData first)"));
  }
  AB_ASSIGN_OR_RETURN(const BatchFunction entry, GeneratedEntry());
  std::vector<TensorType> input_types = {Vector(DType::kF64, constrained_size()),
                                         Scalar(DType::kU64), Scalar(DType::kU64)};
  for (const TensorType& t : DataTypes()) input_types.push_back(t);
  // GenerateBatch runs on the stack VM whatever call.vm says.
  absl::Status status = [&]() -> absl::Status {
    AB_ASSIGN_OR_RETURN(std::shared_ptr<const BlockPlan> plan,
                        gq_ctx_->LoweredPlan(entry, input_types));
    // Loaded once per process: GenerateBatch's call finds it.
    AB_RETURN_IF_ERROR(JitForCall(plan->program(), call).status());
    return absl::OkStatus();
  }();
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("model '", name_, "': generated quantities: ",
                                                  status.message()));
}

absl::Status ProgramModel::GenerateBatch(const GeneratedDraws& draws, double* out,
                                         const CallOptions& call) const {
  if (generated_.empty() || draws.lanes == 0) return absl::OkStatus();
  if (!has_data_) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", name_, "': no data (call SetData or LoadData first)"));
  }
  AB_ASSIGN_OR_RETURN(const BatchFunction entry, GeneratedEntry());
  const int64_t lanes = draws.lanes;
  const int64_t c = constrained_size();
  Tensor x(Vector(DType::kF64, c), lanes);
  std::copy_n(draws.constrained, lanes * c, x.data<double>());
  Tensor keys(Scalar(DType::kU64), lanes);
  std::copy_n(draws.rng_keys, lanes, keys.data<uint64_t>());
  Tensor counters(Scalar(DType::kU64), lanes);
  std::copy_n(draws.rng_counters, lanes, counters.data<uint64_t>());
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(x));
  inputs.push_back(std::move(keys));
  inputs.push_back(std::move(counters));
  for (const Tensor& t : data_) inputs.push_back(t);
  CallOptions options = call;
  options.vm = Vm::kStack;
  absl::StatusOr<std::vector<Tensor>> results = entry.Run(std::move(inputs), options);
  if (!results.ok()) {
    return absl::Status(
        results.status().code(),
        absl::StrCat("model '", name_, "': generated quantities: ", results.status().message()));
  }
  int64_t g = 0;
  for (const GeneratedSpec& spec : generated_) g += spec.size();
  int64_t column = 0;
  for (size_t i = 0; i < generated_.size(); ++i) {
    const int64_t n = generated_[i].size();
    const double* values = (*results)[i].data<double>();
    for (int64_t l = 0; l < lanes; ++l) std::copy_n(values + l * n, n, out + l * g + column);
    column += n;
  }
  return absl::OkStatus();
}

void ProgramModel::Generate(std::span<const double> q, std::span<double> out) const {
  std::vector<double> constrained(static_cast<size_t>(constrained_size()));
  Constrain(*this, q, constrained);
  const uint64_t key = 0, counter = 0;
  const absl::Status status = GenerateBatch({.lanes = 1,
                                             .q = q.data(),
                                             .constrained = constrained.data(),
                                             .rng_keys = &key,
                                             .rng_counters = &counter},
                                            out.data(), {});
  if (!status.ok()) std::fill(out.begin(), out.end(), std::numeric_limits<double>::quiet_NaN());
}

}  // namespace autobatch::mcmc
