// The fuzzer's gradient check (tests/fuzz/gradient_check.h).
#include "tests/fuzz/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/run.h"
#include "passes/pipeline.h"

namespace autobatch {
namespace {

bool IsF64Scalar(const TensorType& t) { return t.dtype == DType::kF64 && t.IsScalar(); }

// `program` with a gradient stub of its entry (with respect to every
// param) as the entry, or nullopt when the entry does not take f64 scalars
// and return one f64 scalar (as compiled for `types`).
std::optional<Program> WithGradientEntry(const Program& program,
                                         const std::vector<TensorType>& types,
                                         bool& straight_line) {
  if (program.stage != Stage::kUntyped && program.stage != Stage::kTyped) return std::nullopt;
  const Function& entry = program.entry_function();
  if (entry.gradient_of || entry.params.empty() || entry.results.size() != 1) return std::nullopt;
  if (!std::all_of(types.begin(), types.end(), IsF64Scalar)) return std::nullopt;
  absl::StatusOr<Program> compiled = CompileProgram(program, types);
  if (!compiled.ok()) return std::nullopt;
  const Function& compiled_entry = compiled->entry_function();
  if (!IsF64Scalar(*compiled->module.var(compiled_entry.results[0]).type)) return std::nullopt;
  // Finite differences need straight-line code without step functions:
  // floor, mod and casts are flat between their jumps (derivative 0), and
  // central differences whose steps are whole numbers see a sawtooth such
  // as floor(y) - y as flat too (derivative 0, where the gradient says -1),
  // at both step sizes (found by the fuzzer, 2026-11-29).
  straight_line = std::all_of(
      compiled->module.functions.begin(), compiled->module.functions.end(),
      [](const Function& f) {
        if (f.blocks.size() != 1) return false;
        return std::none_of(f.blocks[0].ops.begin(), f.blocks[0].ops.end(), [](const Op& op) {
          const auto* prim = std::get_if<PrimOp>(&op);
          return prim != nullptr && (prim->prim == Primitive::kFloor ||
                                     prim->prim == Primitive::kMod || prim->prim == Primitive::kCast);
        });
      });
  Program out = program;
  Function stub;
  stub.name = "fuzz.gradient";
  while (out.module.FindFunction(stub.name)) stub.name += "_";
  const FunctionId id(static_cast<int32_t>(out.module.functions.size()));
  auto var = [&](std::string name) {
    return out.module.AddVariable(Variable{std::move(name), id, std::nullopt, StorageClass::kFull});
  };
  GradientOf spec{program.entry, {}};
  for (size_t i = 0; i < entry.params.size(); ++i) {
    stub.params.push_back(var(absl::StrCat("p", i)));
    spec.wrt.push_back(static_cast<int32_t>(i));
  }
  stub.results.push_back(var("value"));
  for (size_t i = 0; i < entry.params.size(); ++i) stub.results.push_back(var(absl::StrCat("d", i)));
  stub.gradient_of = std::move(spec);
  out.module.functions.push_back(std::move(stub));
  out.entry = id;
  return out;
}

double Lane(const Tensor& t, int64_t lane) {
  double v;
  std::memcpy(&v, t.lane_bytes_ptr(lane), sizeof v);
  return v;
}

// f(inputs with input `param` of `lane` moved by `step`), on the reference
// interpreter.
std::optional<double> Shifted(const Program& program, std::vector<Tensor> inputs,
                              const KernelRegistry& kernels, const CallOptions& options,
                              size_t param, int64_t lane, double step) {
  std::vector<double> values = inputs[param].ToVector<double>();
  values[lane] += step;
  inputs[param] = *Tensor::FromVector(values);
  absl::StatusOr<std::vector<Tensor>> out = RunProgram(program, inputs, &kernels, options);
  if (!out.ok()) return std::nullopt;
  return Lane((*out)[0], lane);
}

// Central differences at two step sizes; nullopt unless both exist and
// agree with each other.
std::optional<double> AgreedDifference(const Program& program, const std::vector<Tensor>& inputs,
                                       const KernelRegistry& kernels, const CallOptions& options,
                                       size_t param, int64_t lane) {
  const double x = inputs[param].ToVector<double>()[lane];
  double estimates[2];
  const double relative_steps[2] = {1e-3, 1e-5};
  for (int k = 0; k < 2; ++k) {
    const double step = relative_steps[k] * std::max(1.0, std::abs(x));
    const auto up = Shifted(program, inputs, kernels, options, param, lane, step);
    const auto down = Shifted(program, inputs, kernels, options, param, lane, -step);
    if (!up || !down || !std::isfinite(*up) || !std::isfinite(*down)) return std::nullopt;
    estimates[k] = (*up - *down) / ((x + step) - (x - step));
  }
  const double scale = std::max({1.0, std::abs(estimates[0]), std::abs(estimates[1])});
  if (std::abs(estimates[0] - estimates[1]) > 1e-5 * scale) return std::nullopt;
  return estimates[1];
}

}  // namespace

GradientCheck CheckGradients(const Program& program, const std::vector<Tensor>& inputs,
                             const KernelRegistry& kernels, CallOptions options) {
  GradientCheck check;
  std::vector<TensorType> types;
  for (const Tensor& t : inputs) types.push_back(t.type());
  bool straight_line = false;
  const std::optional<Program> gradient = WithGradientEntry(program, types, straight_line);
  if (!gradient) return check;
  check.checked = true;
  struct Run {
    const char* name;
    bool dry_run;
    Vm vm;
    absl::StatusOr<std::vector<Tensor>> out = absl::UnknownError("not run");
  };
  Run runs[] = {{"reference interpreter", true, Vm::kStack},
                {"stackless VM", false, Vm::kStackless},
                {"stack VM", false, Vm::kStack}};
  for (Run& run : runs) {
    options.dry_run = run.dry_run;
    options.vm = run.vm;
    run.out = RunProgram(*gradient, inputs, &kernels, options);
    if (run.out.status().code() == absl::StatusCode::kInternal) {
      check.finding = absl::StrCat("Internal error differentiating the entry, from ", run.name,
                                   ": ", std::string(run.out.status().message()));
      return check;
    }
  }
  check.status = runs[0].out.status();
  for (size_t i = 0; i < std::size(runs); ++i) {
    for (size_t j = i + 1; j < std::size(runs); ++j) {
      if (!runs[i].out.ok() || !runs[j].out.ok()) continue;
      check.compared = true;
      const std::vector<Tensor>& a = *runs[i].out;
      const std::vector<Tensor>& b = *runs[j].out;
      for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
        if (!(a[k] == b[k])) {
          check.finding = absl::StrCat("gradient output ", k, " differs between ", runs[i].name,
                                       " and ", runs[j].name);
          return check;
        }
      }
    }
  }
  if (!straight_line || !runs[0].out.ok()) return check;
  options.dry_run = true;
  const std::vector<Tensor>& out = *runs[0].out;
  for (size_t param = 0; param < inputs.size(); ++param) {
    for (int64_t lane = 0; lane < inputs[param].batch(); ++lane) {
      const double g = Lane(out[1 + param], lane);
      if (!std::isfinite(g) || !std::isfinite(Lane(out[0], lane))) continue;
      const std::optional<double> fd =
          AgreedDifference(program, inputs, kernels, options, param, lane);
      if (!fd) continue;
      check.finite_differences = true;
      const double scale = std::max({1.0, std::abs(*fd), std::abs(g)});
      if (std::abs(g - *fd) > 1e-3 * scale) {
        check.finding = absl::StrCat("the gradient in input ", param, " of lane ", lane, " is ",
                                     g, " but central differences at two step sizes agree on ",
                                     *fd);
        return check;
      }
    }
  }
  return check;
}

}  // namespace autobatch
