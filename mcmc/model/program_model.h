// ProgramModel: a model written as a program. The user declares parameters
// (name, shape, constraint) and data (name, dtype, shape) and writes only the
// log density, with the frontend and the distribution library; the compiler
// adds the constraint transforms with their log-Jacobians and differentiates
// the whole thing (passes/differentiate.h).
//
//   mcmc::ProgramModel model("eight_schools");
//   auto mu = model.AddParameter("mu");
//   auto tau = model.AddParameter("tau", {}, Transform::kLog);
//   auto eta = model.AddParameter("eta", {8});
//   auto y = model.AddData({.name = "y", .shape = {8}});
//   auto sigma = model.AddData({.name = "sigma", .shape = {8}});
//   model.SetLogDensity([=](ModelTarget& target) {
//     target += normal_lupdf(mu(), 0.0, 5.0);
//     target += cauchy_lupdf(tau(), 0.0, 5.0);
//     target += normal_lupdf(eta(), 0.0, 1.0);
//     target += normal_lupdf(y(), mu() + tau() * eta(), sigma());
//   });
//   AB_RETURN_IF_ERROR(model.SetData(data_tensors));   // or LoadData(json)
//
// Inside the log density, a parameter handle gives the CONSTRAINED value
// (the transform already applied, its log-Jacobian already added to the
// target) and a data handle the data (a program input: stored once, read by
// every lane, ir/ir.h). The log density is Stan's `lp__`: the sum of the
// target terms plus the log-Jacobians, on the unconstrained scale; use the
// `_lupdf` forms to drop constants as Stan's `~` statements do.
//
// Generated quantities (Stan's `generated quantities` block), optional:
// values computed from each draw's constrained parameters and the data,
// possibly random, written after the parameters in the CSV and the summary.
//
//   auto theta = model.AddGenerated("theta", {8});
//   auto y_rep = model.AddGenerated("y_rep", {8});
//   model.SetGeneratedQuantities([=](GeneratedQuantities& gq) {
//     Value th = mu() + tau() * eta();
//     gq.Set(theta, th);
//     gq.Set(y_rep, normal_rng(gq, th, sigma(), y_rep.shape()));
//   });
//
// Each quantity is f64, a scalar or a vector, and must be Set (on every
// path) to a value of its declared type. The body's random stream (for the
// `_rng` functions of distributions_rng.h) is its own: its key comes from
// the run's seed, the chain id and a constant naming this stream, its
// counter from the draw's index (mcmc/chain_rng.h GeneratedQuantitiesRng),
// so adding generated quantities never changes a draw, and a draw's
// quantities do not depend on the batch, the shards or the other chains.
// Sample() runs the body after sampling, batched over (chain, draw) lanes on
// the stack VM (GenerateBatch). Mistakes (a quantity never set, one set to
// another type, a name clash) are errors naming the quantity, reported by
// Validate() (declarations) or CheckGenerated() (the body).
//
// Two ways to run it, with the same bits per chain:
// * Link(ctx) defines the log density and its gradient as functions of
//   another program on `ctx` (a sampler's), which call them directly: the
//   arithmetic runs as batched ops across the chains that reach the call.
//   The batched samplers do this for a model whose AsProgram() is set.
// * As a Model (model.h): LogDensityGradient(Batch) runs the gradient
//   program on the stack VM (for the scalar reference samplers, the
//   initialization and the checks).
#ifndef AUTOBATCH_MCMC_MODEL_PROGRAM_MODEL_H_
#define AUTOBATCH_MCMC_MODEL_PROGRAM_MODEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "frontend/builder.h"
#include "frontend/context.h"
#include "frontend/value.h"
#include "ir/ir.h"
#include "mcmc/model/data.h"
#include "mcmc/model/distributions_rng.h"
#include "mcmc/model/model.h"

namespace autobatch::mcmc {

class ProgramModel;

// A declared parameter; in the log density, `theta()` is its constrained value.
class ModelParameter {
 public:
  ModelParameter() = default;
  Value operator()(std::source_location loc = std::source_location::current()) const;

 private:
  friend class ProgramModel;
  ModelParameter(const ProgramModel* model, int index) : model_(model), index_(index) {}
  const ProgramModel* model_ = nullptr;
  int index_ = -1;
};

// A declared data variable; in the log density, `y()` is its value.
class ModelData {
 public:
  ModelData() = default;
  Value operator()(std::source_location loc = std::source_location::current()) const;

 private:
  friend class ProgramModel;
  ModelData(const ProgramModel* model, int index) : model_(model), index_(index) {}
  const ProgramModel* model_ = nullptr;
  int index_ = -1;
};

// Stan's `target`: the log density accumulates `target += term`, each term
// an f64 SCALAR (the distributions return sums; use reduce_sum for a vector).
// `target += term` may stand inside a loop or a branch.
class ModelTarget {
 public:
  ModelTarget& operator+=(const Value& term);

  // The log density's Builder, for control flow in the body (a loop over
  // time steps: b.While(...).Do(...), b.If(...)); frontend/builder.h.
  Builder& builder() const { return *builder_; }

 private:
  friend class ProgramModel;
  ModelTarget(Var* total, Builder* builder) : total_(total), builder_(builder) {}
  Var* total_;
  Builder* builder_;
};

// A declared generated quantity (ProgramModel::AddGenerated), for
// GeneratedQuantities::Set.
class ModelGenerated {
 public:
  ModelGenerated() = default;
  // As declared: {} or {n} (pass it as an `_rng` function's shape).
  const std::vector<int64_t>& shape() const { return shape_; }

 private:
  friend class ProgramModel;
  friend class GeneratedQuantities;
  ModelGenerated(const ProgramModel* model, int index, std::vector<int64_t> shape)
      : model_(model), index_(index), shape_(std::move(shape)) {}
  const ProgramModel* model_ = nullptr;
  int index_ = -1;
  std::vector<int64_t> shape_;
};

// What a generated-quantities body writes with: the quantities' values
// (Set) and, being a RandomStream, the random stream of the `_rng`
// functions (normal_rng(gq, ...)).
class GeneratedQuantities : public RandomStream {
 public:
  // Sets `quantity` (of this model) to `value`, f64 of its declared shape
  // (checked when the body is compiled). May stand in a branch or a loop;
  // the last Set on a path wins.
  void Set(const ModelGenerated& quantity, const Operand& value);

 private:
  friend class ProgramModel;
  GeneratedQuantities(Value key, Var* counter, Builder* builder, const ProgramModel* model,
                      std::vector<Var>* values, std::vector<std::string>* errors)
      : RandomStream(key, counter, builder), model_(model), values_(values), errors_(errors) {}
  const ProgramModel* model_;
  std::vector<Var>* values_;
  std::vector<std::string>* errors_;
};

class ProgramModel final : public Model {
 public:
  using LogDensityBody = std::function<void(ModelTarget&)>;
  using GeneratedBody = std::function<void(GeneratedQuantities&)>;

  // `name` must be an identifier-like word ([A-Za-z_][A-Za-z0-9_]*): it
  // prefixes the functions the model defines on a Context.
  explicit ProgramModel(std::string name);

  // Declarations, in the order of the unconstrained coordinates (and of the
  // CSV columns). Shapes: {} (scalar) or {n} (vector), n a number or the
  // name of an i64 scalar data variable (Extent, data.h: Stan's
  // `vector[K] beta;` is AddParameter("beta", {"K"})), resolved when the data
  // are set (SetData: an error naming the parameter and the size when it is
  // not an i64 scalar datum or is < 1). Before that, a named extent counts as
  // 0 in parameters(), dimension(), constrained_size() and the CSV names,
  // and Link() and the log density fail with FailedPrecondition. The transform is one
  // of Stan's (constraint.h: bounds elementwise, Simplex() of K values from
  // K - 1 coordinates, Ordered()). Errors (a bad name or shape, a name
  // declared twice, a declaration after Link) are reported by Validate(),
  // SetData() and Link().
  ModelParameter AddParameter(std::string name, std::vector<Extent> shape = {},
                              Transform transform = Transform::kIdentity);
  // The parameters' shapes as declared (names kept), in order.
  const std::vector<std::vector<Extent>>& parameter_shapes() const { return parameter_shapes_; }
  ModelData AddData(DataSpec spec);
  void SetLogDensity(LogDensityBody body);
  // Instead of a C++ body: the log density as IR, what LogDensityProgram()
  // gives (model_json.h reads it from a file): an untyped program whose
  // entry takes q f64[dimension()] then one uniform parameter per data
  // variable, in order, and returns the f64 log density (Jacobians
  // included). Checked when linked (Context::Import: no user kernels).
  void SetLogDensityProgram(Program program);

  // Generated quantities (see the top). Names are checked like parameter
  // names and must differ from every parameter, data and quantity name;
  // shape {} or {n}, n >= 1. Declaring quantities requires a body and a
  // body requires quantities (Validate()).
  ModelGenerated AddGenerated(std::string name, std::vector<int64_t> shape = {});
  void SetGeneratedQuantities(GeneratedBody body);
  // Instead of a C++ body: GeneratedQuantitiesProgram()'s IR (model_json.h).
  void SetGeneratedQuantitiesProgram(Program program);
  struct GeneratedSpec {
    std::string name;
    std::vector<int64_t> shape;
    int64_t size() const { return shape.empty() ? 1 : shape[0]; }
  };
  const std::vector<GeneratedSpec>& generated() const { return generated_; }

  // The declarations are consistent: OK, or InvalidArgument listing every
  // problem.
  absl::Status Validate() const;

  // Gives the data: one Tensor per AddData, in order, each ONE lane of the
  // declared dtype and shape (what ReadData returns), a named extent taking
  // the value of its size variable (data.h ResolveShape), then resolves the
  // parameters' named extents. InvalidArgument naming the variable (and the
  // size) otherwise, the former data kept. May be called again with data of
  // other sizes.
  absl::Status SetData(std::vector<Tensor> data);
  // Reads CmdStan JSON data against the declarations (data.h) and sets it.
  absl::Status LoadData(std::string_view json_text, std::string_view source_name);
  const std::vector<Tensor>& data() const { return data_; }
  const std::vector<DataSpec>& data_specs() const { return data_specs_; }
  bool has_data() const { return has_data_; }

  // The functions Link defines on a Context.
  struct Linked {
    BatchFunction log_density;  // (q f64[d]) -> f64
    BatchFunction gradient;     // (q f64[d]) -> (f64, f64[d])
    std::vector<ProgramInput> data;
  };
  // Data extents given by name are the resolved ones once the data are set
  // (a placeholder 0 before: only an untyped program can be taken from such
  // a Context). A parameter extent given by name needs the data:
  // FailedPrecondition before SetData.
  // Defines `<name>.log_density` and its gradient `<name>.log_density.grad`
  // on `ctx`, and one program input per data variable (named as declared),
  // so every program built on ctx takes the data as its entry's last inputs
  // (Context::AddProgramInput). Errors of a C++ body are reported by ctx
  // (Program(), Run()); those of an imported one (SetLogDensityProgram) here.
  absl::StatusOr<Linked> Link(Context& ctx) const;

  // The untyped program of the log density alone: entry
  // `<name>.log_density(q, data...) -> f64`, the data its last, uniform
  // inputs. What a model file stores (model_json.h).
  absl::StatusOr<Program> LogDensityProgram() const;

  // Defines `<name>.generated_quantities(x, rng_key, rng_counter) ->
  // (one result per quantity, in declaration order)` on `ctx`, x the
  // constrained values f64[constrained_size()] (Constrain's order) and the
  // stream a u64 key and counter, and one program input per data variable
  // as Link does. Builds the body now: errors of the body (a quantity never
  // set, a Set of another model's quantity) and of the frontend come back
  // here, naming the quantity. Requires quantities (generated() not empty).
  absl::StatusOr<BatchFunction> LinkGenerated(Context& ctx) const;
  // Its untyped program, the data its last, uniform inputs: what a model
  // file stores.
  absl::StatusOr<Program> GeneratedQuantitiesProgram() const;

  // The untyped program a user can dump as IR JSON: entry
  // `<name>.value_and_gradient(q) -> (log density, gradient)` calling the
  // linked gradient; its inputs are q then the data.
  absl::StatusOr<Program> GradientProgram() const;

  // --- Model
  // ------------------------------------------------------------------
  std::string name() const override { return name_; }
  std::vector<ParameterSpec> parameters() const override { return parameters_; }
  // Run the gradient program on the stack VM (batch 1, or every active lane
  // at once); before SetData, or when the program fails to compile or run,
  // the log density is NaN and the failure is kept in last_error().
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override;
  void LogDensityGradientBatch(const double* q, double* logp, double* grad, int64_t lanes,
                               const uint8_t* active) const override;
  const ProgramModel* AsProgram() const override { return this; }
  absl::Status last_error() const;
  // The quantities' CSV names ("y_rep.1", ...), their values per lane on the
  // stack VM (batch 1 per call of Generate: stream key 0, counter 0; NaN
  // when it fails), and the check that the body compiles with every
  // quantity set to its declared type (FailedPrecondition before SetData).
  std::vector<std::string> generated_names() const override;
  void Generate(std::span<const double> q, std::span<double> out) const override;
  absl::Status GenerateBatch(const GeneratedDraws& draws, double* out,
                             const CallOptions& call) const override;
  absl::Status PrepareGenerate(const CallOptions& call) const override;
  absl::Status CheckGenerated() const override;

  // Internal: what a log-density body reads while it is being built.
  struct Scope;

 private:
  friend class ModelParameter;
  friend class ModelData;
  friend class GeneratedQuantities;
  static const Scope* CurrentScope();
  std::vector<ProgramInput> AddDataInputs(Context& ctx) const;
  // Records a bad name or shape of a declaration of `kind` ("parameter").
  void CheckDeclaration(std::string_view kind, const std::string& name,
                        const std::vector<Extent>& shape);
  // The data's types: the resolved shapes, or 0 for a named extent before
  // SetData.
  std::vector<TensorType> DataTypes() const;
  // The constrained parameters of `x` (LinkGenerated's input) as values.
  std::vector<Value> SplitConstrained(const Value& x) const;
  // The generated-quantities entry of gq_ctx_, compiled and checked once.
  absl::StatusOr<BatchFunction> GeneratedEntry() const;
  // Link, plus the entry GradientProgram describes.
  absl::StatusOr<BatchFunction> DefineValueAndGradient(Context& ctx) const;

  std::string name_;
  std::vector<ParameterSpec> parameters_;  // resolved shapes (0 for a name before SetData)
  std::vector<std::vector<Extent>> parameter_shapes_;  // as declared
  std::vector<std::vector<int64_t>> data_shapes_;      // resolved by SetData
  std::vector<DataSpec> data_specs_;
  LogDensityBody body_;
  std::shared_ptr<const Program> imported_;  // SetLogDensityProgram
  std::vector<GeneratedSpec> generated_;
  GeneratedBody generated_body_;
  std::shared_ptr<const Program> imported_generated_;  // SetGeneratedQuantitiesProgram
  std::vector<Tensor> data_;
  bool has_data_ = false;
  std::vector<std::string> declaration_errors_;

  // The Context of LogDensityGradient(Batch): built on first use.
  mutable std::mutex eval_mu_;
  mutable std::unique_ptr<Context> eval_ctx_;
  mutable BatchFunction eval_entry_;
  mutable absl::Status last_error_;
  // The Context of GenerateBatch: built on first use.
  mutable std::mutex gq_mu_;
  mutable std::unique_ptr<Context> gq_ctx_;
  mutable absl::StatusOr<BatchFunction> gq_entry_ = absl::UnknownError("not built");
};

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_MODEL_PROGRAM_MODEL_H_
