// ProgramModel: declarations, the log-density function with its transforms,
// linking into a Context, and the Model interface through the stack VM.
#include "mcmc/model/program_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mcmc/model/transforms.h"
#include "support/status.h"

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

ModelParameter ProgramModel::AddParameter(std::string name, std::vector<int64_t> shape,
                                          Transform transform) {
  if (!IsIdentifier(name)) {
    declaration_errors_.push_back(
        absl::StrCat("parameter '", name, "': a name is a word of letters, digits and '_'"));
  }
  if (shape.size() > 1 || (shape.size() == 1 && shape[0] < 1)) {
    declaration_errors_.push_back(
        absl::StrCat("parameter '", name, "' has shape [", absl::StrJoin(shape, ", "),
                     "]; a parameter is a scalar (shape []) or a vector of at least one element"));
  }
  ParameterSpec spec{std::move(name), std::move(shape), transform};
  if (absl::Status valid = ValidateParameter(spec); !valid.ok()) {
    declaration_errors_.push_back(std::string(valid.message()));
  }
  parameters_.push_back(std::move(spec));
  return ModelParameter(this, static_cast<int>(parameters_.size() - 1));
}

ModelData ProgramModel::AddData(DataSpec spec) {
  data_specs_.push_back(std::move(spec));
  return ModelData(this, static_cast<int>(data_specs_.size() - 1));
}

void ProgramModel::SetLogDensity(LogDensityBody body) { body_ = std::move(body); }

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
  if (absl::Status specs = ValidateDataSpecs(data_specs_); !specs.ok()) {
    errors.push_back(std::string(specs.message()));
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
  for (size_t i = 0; i < data.size(); ++i) {
    const DataSpec& spec = data_specs_[i];
    const TensorType want{spec.dtype, spec.shape};
    if (data[i].type() != want || data[i].batch() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", name_, "': data '", spec.name, "' is ", data[i].type().ToString(), " x ",
          data[i].batch(), " lanes; it is declared ", want.ToString(), " (one lane)"));
    }
    if (!data[i].uniform()) data[i].set_uniform();
  }
  data_ = std::move(data);
  has_data_ = true;
  return absl::OkStatus();
}

absl::Status ProgramModel::LoadData(std::string_view json_text, std::string_view source_name) {
  AB_RETURN_IF_ERROR(Validate());
  AB_ASSIGN_OR_RETURN(std::vector<Tensor> data, ReadData(json_text, data_specs_, source_name));
  return SetData(std::move(data));
}

absl::StatusOr<ProgramModel::Linked> ProgramModel::Link(Context& ctx) const {
  Linked linked;
  for (const DataSpec& spec : data_specs_) {
    linked.data.push_back(ctx.AddProgramInput(spec.name, TensorType{spec.dtype, spec.shape}));
  }
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

}  // namespace autobatch::mcmc
