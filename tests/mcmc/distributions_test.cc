// The distribution library (mcmc/model/distributions.h) against R's d*
// functions (tests/mcmc/data/distribution_reference.csv, made by
// make_distribution_reference.R; R is not needed to run this test), its
// vectorization, its constants-dropped variants, its gradients against
// central differences, and its values outside the support and domain.
#include "mcmc/model/distributions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "backends/tensor.h"
#include "frontend/context.h"
#include "frontend/value.h"

namespace autobatch::mcmc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Density = std::function<Value(const Value&, const Value&, const Value&, const Value&)>;

// One distribution: its arguments are the columns x, a, b, c (the variate,
// then the parameters in Stan's order); `integer` says which are i64.
struct Dist {
  std::string name = "";
  int num_args = 0;  // columns used, with x
  std::vector<bool> integer = {};
  Density lpdf = nullptr;
  Density lupdf = nullptr;
};

std::vector<Dist> Distributions() {
  auto d2 = [](std::string name, bool int_x, Value (*lp)(const Value&, const Value&),
               Value (*lup)(const Value&, const Value&)) {
    return Dist{
        name,
        2,
        {int_x, false, false, false},
        [lp](const Value& x, const Value& a, const Value&, const Value&) { return lp(x, a); },
        [lup](const Value& x, const Value& a, const Value&, const Value&) { return lup(x, a); }};
  };
  auto d3 = [](std::string name, bool int_x, bool int_a,
               Value (*lp)(const Value&, const Value&, const Value&),
               Value (*lup)(const Value&, const Value&, const Value&)) {
    return Dist{
        name,
        3,
        {int_x, int_a, false, false},
        [lp](const Value& x, const Value& a, const Value& b, const Value&) { return lp(x, a, b); },
        [lup](const Value& x, const Value& a, const Value& b, const Value&) {
          return lup(x, a, b);
        }};
  };
  return {
      d3("normal", false, false, normal_lpdf, normal_lupdf),
      Dist{"student_t",
           4,
           {false, false, false, false},
           [](const Value& x, const Value& a, const Value& b, const Value& c) {
             return student_t_lpdf(x, a, b, c);
           },
           [](const Value& x, const Value& a, const Value& b, const Value& c) {
             return student_t_lupdf(x, a, b, c);
           }},
      d3("cauchy", false, false, cauchy_lpdf, cauchy_lupdf),
      d3("double_exponential", false, false, double_exponential_lpdf, double_exponential_lupdf),
      d3("logistic", false, false, logistic_lpdf, logistic_lupdf),
      d3("lognormal", false, false, lognormal_lpdf, lognormal_lupdf),
      d2("exponential", false, exponential_lpdf, exponential_lupdf),
      d3("gamma", false, false, gamma_lpdf, gamma_lupdf),
      d3("inv_gamma", false, false, inv_gamma_lpdf, inv_gamma_lupdf),
      d3("beta", false, false, beta_lpdf, beta_lupdf),
      d3("uniform", false, false, uniform_lpdf, uniform_lupdf),
      d2("bernoulli", true, bernoulli_lpmf, bernoulli_lupmf),
      d2("bernoulli_logit", true, bernoulli_logit_lpmf, bernoulli_logit_lupmf),
      d3("binomial", true, true, binomial_lpmf, binomial_lupmf),
      d3("binomial_logit", true, true, binomial_logit_lpmf, binomial_logit_lupmf),
      d2("poisson", true, poisson_lpmf, poisson_lupmf),
      d2("poisson_log", true, poisson_log_lpmf, poisson_log_lupmf),
      d3("neg_binomial_2", true, false, neg_binomial_2_lpmf, neg_binomial_2_lupmf),
      d3("neg_binomial_2_log", true, false, neg_binomial_2_log_lpmf, neg_binomial_2_log_lupmf),
  };
}

// One row of the reference table; x and a are lists for dirichlet.
struct Row {
  std::string dist = "";
  std::vector<std::vector<double>> args = {};  // x, a, b, c
  double logp = 0;
  double scale = 0;
};

std::vector<double> ParseList(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) out.push_back(std::strtod(item.c_str(), nullptr));
  return out;
}

const std::vector<Row>& Table() {
  static const std::vector<Row>* table = [] {
    auto* rows = new std::vector<Row>;
    std::ifstream in(std::string(AUTOBATCH_SOURCE_DIR "/tests/mcmc/data/distribution_reference.csv"));
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::vector<std::string> cells;
      std::stringstream fields(line);
      std::string cell;
      while (std::getline(fields, cell, ',')) cells.push_back(cell);
      if (cells.size() != 7) continue;
      Row row;
      row.dist = cells[0];
      for (int k = 1; k <= 4; ++k) row.args.push_back(ParseList(cells[k]));
      row.logp = std::strtod(cells[5].c_str(), nullptr);
      row.scale = std::strtod(cells[6].c_str(), nullptr);
      rows->push_back(row);
    }
    return rows;
  }();
  return *table;
}

std::vector<Row> RowsOf(const std::string& dist) {
  std::vector<Row> out;
  for (const Row& row : Table()) {
    if (row.dist == dist) out.push_back(row);
  }
  return out;
}

// A function of x, a, b, c computing `density` (lpdf or lupdf) and its
// gradient with respect to the real columns in use.
struct Program {
  Context ctx;
  BatchFunction f;
  BatchFunction grad;
};

std::unique_ptr<Program> Build(const Dist& dist, const Density& density) {
  auto p = std::make_unique<Program>();
  p->f = p->ctx.Batch(dist.name, {.param_names = {"x", "a", "b", "c"}})(
      [density](Value x, Value a, Value b, Value c) { return density(x, a, b, c); });
  std::vector<std::string> wrt;
  const std::vector<std::string> names = {"x", "a", "b", "c"};
  for (int k = 0; k < dist.num_args; ++k) {
    if (!dist.integer[k]) wrt.push_back(names[k]);
  }
  p->grad = p->ctx.Gradient(p->f, {.wrt = wrt});
  return p;
}

// Lanes of column values (lanes[lane][column]), each a vector of `width`
// elements (width 0: scalars); integer columns as i64.
std::vector<Tensor> Inputs(const Dist& dist,
                           const std::vector<std::vector<std::vector<double>>>& lanes,
                           int64_t width = 0) {
  std::vector<Tensor> out;
  for (int k = 0; k < 4; ++k) {
    std::vector<double> flat;
    bool vector = false;
    for (const auto& lane : lanes) {
      vector = vector || lane[k].size() > 1;
      for (double v : lane[k]) flat.push_back(v);
    }
    std::vector<int64_t> shape;
    if (vector || width > 0) shape = {static_cast<int64_t>(lanes[0][k].size())};
    if (lanes[0][k].size() == 1 && width == 0) shape = {};
    if (dist.integer[k]) {
      std::vector<int64_t> ints;
      for (double v : flat) ints.push_back(static_cast<int64_t>(v));
      out.push_back(*Tensor::FromVector(ints, shape));
    } else {
      out.push_back(*Tensor::FromVector(flat, shape));
    }
  }
  return out;
}

std::vector<double> Eval(const BatchFunction& f, const std::vector<Tensor>& inputs,
                         size_t output = 0) {
  absl::StatusOr<std::vector<Tensor>> out = f.Run(inputs, {.dry_run = true});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return (*out)[output].ToVector<double>();
}

std::vector<std::vector<std::vector<double>>> Lanes(const std::vector<Row>& rows) {
  std::vector<std::vector<std::vector<double>>> lanes;
  for (const Row& row : rows) lanes.push_back(row.args);
  return lanes;
}

// Every row's lpdf against R's within 1e-12 (1 + sum of |terms|); -inf where
// R gives -inf.
TEST(DistributionsTest, MatchesR) {
  double worst = 0, worst_relative = 0;
  std::string worst_row;
  int checked = 0;
  for (const Dist& dist : Distributions()) {
    const std::vector<Row> rows = RowsOf(dist.name);
    ASSERT_GE(rows.size(), 5u) << dist.name;
    auto program = Build(dist, dist.lpdf);
    const std::vector<double> got = Eval(program->f, Inputs(dist, Lanes(rows)));
    ASSERT_EQ(got.size(), rows.size()) << dist.name;
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& row = rows[i];
      const std::string what =
          dist.name + " row " + std::to_string(i) + " (x = " + std::to_string(row.args[0][0]) + ")";
      ++checked;
      if (std::isinf(row.logp)) {
        EXPECT_EQ(got[i], row.logp) << what;
        continue;
      }
      const double error = std::abs(got[i] - row.logp) / (1 + row.scale);
      EXPECT_LE(error, 1e-12) << what << ": " << got[i] << " vs R's " << row.logp;
      if (error > worst) {
        worst = error;
        worst_row = what;
      }
      if (row.logp != 0) worst_relative = std::max(worst_relative, std::abs(got[i] / row.logp - 1));
    }
  }
  EXPECT_GE(checked, 150);
  std::printf(
      "worst |error| / (1 + sum |terms|) = %.3g at %s; worst |error| / |R's value| = %.3g\n", worst,
      worst_row.c_str(), worst_relative);
}

TEST(DistributionsTest, DirichletMatchesR) {
  Context ctx;
  BatchFunction lpdf = ctx.Batch("dirichlet", {.param_names = {"theta", "alpha"}})(
      [](Value theta, Value alpha) { return dirichlet_lpdf(theta, alpha); });
  BatchFunction lupdf = ctx.Batch("dirichlet_u", {.param_names = {"theta", "alpha"}})(
      [](Value theta, Value alpha) { return dirichlet_lupdf(theta, alpha); });
  BatchFunction grad = ctx.Gradient(lpdf);
  const std::vector<Row> rows = RowsOf("dirichlet");
  ASSERT_EQ(rows.size(), 5u);
  for (const Row& row : rows) {
    const auto k = static_cast<int64_t>(row.args[0].size());
    const std::vector<Tensor> in = {*Tensor::FromVector(row.args[0], {k}),
                                    *Tensor::FromVector(row.args[1], {k})};
    const std::vector<double> got = Eval(lpdf, in);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LE(std::abs(got[0] - row.logp), 1e-12 * (1 + row.scale)) << got[0] << " vs " << row.logp;
    EXPECT_EQ(Eval(lupdf, in)[0], got[0]);
    // d/dtheta_i = (alpha_i - 1) / theta_i; d/dalpha_i = digamma(sum alpha)
    // - digamma(alpha_i) + log theta_i: checked by central differences in
    // alpha (theta's steps leave the simplex).
    if (row.scale > 1e6) continue;
    const std::vector<double> d_theta = Eval(grad, in, 1);
    const std::vector<double> d_alpha = Eval(grad, in, 2);
    for (int64_t i = 0; i < k; ++i) {
      EXPECT_NEAR(d_theta[i], (row.args[1][i] - 1) / row.args[0][i],
                  1e-9 * (1 + std::abs(d_theta[i])));
      std::vector<double> up = row.args[1], down = row.args[1];
      const double h = 1e-6 * std::max(1.0, up[i]);
      up[i] += h;
      down[i] -= h;
      const double hi = Eval(lpdf, {in[0], *Tensor::FromVector(up, {k})})[0];
      const double lo = Eval(lpdf, {in[0], *Tensor::FromVector(down, {k})})[0];
      const double fd = (hi - lo) / (up[i] - down[i]);
      EXPECT_NEAR(d_alpha[i], fd, 1e-6 * (1 + std::abs(d_alpha[i]))) << "alpha " << i;
    }
  }
  // Off the simplex: -inf; alpha <= 0: NaN.
  const std::vector<double> got = Eval(
      lpdf,
      {*Tensor::FromVector(std::vector<double>{0.2, 0.3, 0.6, -0.1, 0.2, 0.9, 0.2, 0.3, 0.5}, {3}),
       *Tensor::FromVector(std::vector<double>{1, 2, 3, 1, 2, 3, 1, 0, 3}, {3})});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], -kInf);
  EXPECT_EQ(got[1], -kInf);
  EXPECT_TRUE(std::isnan(got[2]));
}

// Rows with a finite value, where the test's perturbations stay meaningful.
std::vector<Row> FiniteRows(const std::string& dist) {
  std::vector<Row> out;
  for (const Row& row : RowsOf(dist)) {
    if (std::isfinite(row.logp)) out.push_back(row);
  }
  return out;
}

// One call on vectors of every row's arguments equals the sum of the rows;
// each argument alone as a vector of three copies (the others scalars)
// gives three times the row's value, and the matching gradient.
TEST(DistributionsTest, VectorizedEqualsSumOfScalars) {
  for (const Dist& dist : Distributions()) {
    const std::vector<Row> rows = FiniteRows(dist.name);
    auto program = Build(dist, dist.lpdf);
    std::vector<std::vector<double>> columns(4);
    double sum = 0, scale = 0;
    for (const Row& row : rows) {
      for (int k = 0; k < 4; ++k) columns[k].push_back(row.args[k][0]);
      sum += row.logp;
      scale += row.scale;
    }
    const std::vector<double> all = Eval(program->f, Inputs(dist, {columns}, /*width=*/1));
    ASSERT_EQ(all.size(), 1u) << dist.name;
    EXPECT_LE(std::abs(all[0] - sum), 1e-12 * (1 + scale)) << dist.name;
    // The gradient too: a vector argument's elements each get the scalar
    // call's derivative, a scalar argument three times it.
    const Row& row = rows[1];
    const std::vector<Tensor> scalar_in = Inputs(dist, {row.args});
    const double one = Eval(program->f, scalar_in)[0];
    std::vector<int> real_args;
    for (int k = 0; k < dist.num_args; ++k) {
      if (!dist.integer[k]) real_args.push_back(k);
    }
    std::vector<double> one_grad;
    for (size_t j = 0; j < real_args.size(); ++j) {
      one_grad.push_back(Eval(program->grad, scalar_in, 1 + j)[0]);
    }
    for (int k = 0; k < dist.num_args; ++k) {
      std::vector<std::vector<double>> args = row.args;
      args[k] = {args[k][0], args[k][0], args[k][0]};
      const std::vector<Tensor> in = Inputs(dist, {args});
      const std::vector<double> three = Eval(program->f, in);
      ASSERT_EQ(three.size(), 1u);
      EXPECT_LE(std::abs(three[0] - 3 * one), 1e-13 * (1 + 3 * std::abs(one)))
          << dist.name << " argument " << k << " a vector";
      for (size_t j = 0; j < real_args.size(); ++j) {
        const std::vector<double> g = Eval(program->grad, in, 1 + j);
        const double tolerance = 1e-13 * (1 + 3 * std::abs(one_grad[j]));
        if (real_args[j] == k) {
          ASSERT_EQ(g.size(), 3u) << dist.name;
          for (double element : g) EXPECT_NEAR(element, one_grad[j], tolerance) << dist.name;
        } else {
          ASSERT_EQ(g.size(), 1u) << dist.name;
          EXPECT_NEAR(g[0], 3 * one_grad[j], tolerance)
              << dist.name << " d/d argument " << real_args[j] << ", argument " << k << " a vector";
        }
      }
    }
  }
}

// lpdf - lupdf is the same when every real argument moves (x 0.9, which
// stays in the support and the domain for the rows used), and for the
// continuous distributions equals minus the dropped constant.
TEST(DistributionsTest, LupdfDropsOnlyConstants) {
  const std::map<std::string, double> dropped = {{"normal", 0.5 * std::log(2 * M_PI)},
                                                 {"student_t", 0.5 * std::log(M_PI)},
                                                 {"cauchy", std::log(M_PI)},
                                                 {"double_exponential", std::log(2.0)},
                                                 {"lognormal", 0.5 * std::log(2 * M_PI)}};
  for (const Dist& dist : Distributions()) {
    std::vector<Row> rows;
    for (const Row& row : FiniteRows(dist.name)) {
      if (row.scale < 1e4 && std::abs(row.logp) < 1e4) rows.push_back(row);
    }
    ASSERT_GE(rows.size(), 2u) << dist.name;
    std::vector<std::vector<std::vector<double>>> lanes = Lanes(rows), moved = lanes;
    for (auto& lane : moved) {
      for (int k = 0; k < dist.num_args; ++k) {
        if (!dist.integer[k]) lane[k][0] *= 0.9;
      }
    }
    auto full = Build(dist, dist.lpdf);
    auto dropped_form = Build(dist, dist.lupdf);
    const std::vector<double> a = Eval(full->f, Inputs(dist, lanes));
    const std::vector<double> b = Eval(dropped_form->f, Inputs(dist, lanes));
    const std::vector<double> c = Eval(full->f, Inputs(dist, moved));
    const std::vector<double> d = Eval(dropped_form->f, Inputs(dist, moved));
    ASSERT_EQ(a.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const double tolerance = 1e-12 * (1 + std::abs(a[i]) + std::abs(b[i]) + std::abs(c[i]) +
                                        std::abs(d[i]) + rows[i].scale);
      EXPECT_NEAR(a[i] - b[i], c[i] - d[i], tolerance) << dist.name << " row " << i;
      const auto it = dropped.find(dist.name);
      const double constant = it == dropped.end() ? 0.0 : it->second;
      if (std::none_of(dist.integer.begin(), dist.integer.end(), [](bool b) { return b; })) {
        EXPECT_NEAR(a[i] - b[i], -constant, tolerance) << dist.name << " row " << i;
      }
    }
  }
  // The discrete ones drop exactly their integer terms.
  const Dist poisson = Distributions()[15];
  ASSERT_EQ(poisson.name, "poisson");
  auto full = Build(poisson, poisson.lpdf);
  auto dropped_form = Build(poisson, poisson.lupdf);
  const std::vector<std::vector<std::vector<double>>> lanes = {{{3}, {2.5}, {0}, {0}}};
  EXPECT_NEAR(
      Eval(full->f, Inputs(poisson, lanes))[0] - Eval(dropped_form->f, Inputs(poisson, lanes))[0],
      -std::lgamma(4.0), 1e-14);
}

// Gradients (ctx.Gradient) against central differences, at the table's
// moderate rows, for lpdf and lupdf.
TEST(DistributionsTest, GradientsMatchCentralDifferences) {
  for (const Dist& dist : Distributions()) {
    std::vector<Row> rows;
    for (const Row& row : FiniteRows(dist.name)) {
      bool moderate = row.scale < 1e3;
      for (int k = 0; k < dist.num_args; ++k) {
        const double v = std::abs(row.args[k][0]);
        moderate = moderate && (v == 0 || (v > 1e-3 && v < 1e3));
      }
      // Away from the edges and kinks: theta in (0, 1) strictly, y != mu.
      if (dist.name == "beta" || dist.name == "bernoulli" || dist.name == "binomial") {
        const double theta = dist.name == "binomial" ? row.args[2][0]
                             : dist.name == "beta"   ? row.args[0][0]
                                                     : row.args[1][0];
        moderate = moderate && theta > 1e-3 && theta < 1 - 1e-3;
      }
      if (dist.name == "double_exponential") moderate = moderate && row.args[0] != row.args[1];
      if (dist.name == "exponential" || dist.name == "gamma") {
        moderate = moderate && row.args[0][0] > 0;
      }
      if (dist.name == "poisson") moderate = moderate && row.args[1][0] > 0;
      if (dist.name == "uniform") {
        moderate = moderate && row.args[0][0] > row.args[1][0] && row.args[0][0] < row.args[2][0];
      }
      if (moderate) rows.push_back(row);
    }
    ASSERT_GE(rows.size(), 2u) << dist.name;
    for (const Density& density : {dist.lpdf, dist.lupdf}) {
      auto program = Build(dist, density);
      const auto lanes = Lanes(rows);
      const std::vector<double> value = Eval(program->grad, Inputs(dist, lanes), 0);
      const std::vector<double> primal = Eval(program->f, Inputs(dist, lanes));
      ASSERT_EQ(value.size(), rows.size());
      for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(value[i], primal[i]) << dist.name;
      size_t output = 1;
      for (int k = 0; k < dist.num_args; ++k) {
        if (dist.integer[k]) continue;
        const std::vector<double> g = Eval(program->grad, Inputs(dist, lanes), output++);
        auto up = lanes, down = lanes;
        std::vector<double> steps;
        for (size_t i = 0; i < lanes.size(); ++i) {
          const double h = 1e-6 * std::max(1.0, std::abs(lanes[i][k][0]));
          up[i][k][0] += h;
          down[i][k][0] -= h;
          steps.push_back(up[i][k][0] - down[i][k][0]);
        }
        const std::vector<double> hi = Eval(program->f, Inputs(dist, up));
        const std::vector<double> lo = Eval(program->f, Inputs(dist, down));
        for (size_t i = 0; i < lanes.size(); ++i) {
          const double fd = (hi[i] - lo[i]) / steps[i];
          EXPECT_NEAR(g[i], fd, 1e-6 * (1 + std::abs(g[i])))
              << dist.name << " d/d argument " << k << " row " << i;
        }
      }
    }
  }
}

// Outside the support: -inf (R's log of density 0); a parameter outside
// its domain: NaN (R's NaN; Stan raises an error), whatever the variate.
TEST(DistributionsTest, OutsideSupportAndDomain) {
  struct Case {
    std::string dist = "";
    std::vector<double> args = {};
    double expected = 0;
  };
  const std::vector<Case> cases = {
      {"normal", {0, 0, -1}, kNaN},
      {"normal", {0, 0, 0}, kNaN},
      {"student_t", {0, -1, 0, 1}, kNaN},
      {"student_t", {0, 2, 0, -1}, kNaN},
      {"cauchy", {0, 0, -2}, kNaN},
      {"double_exponential", {1, 0, 0}, kNaN},
      {"logistic", {1, 0, -1}, kNaN},
      {"lognormal", {-1, 0, 1}, -kInf},
      {"lognormal", {1, 0, -1}, kNaN},
      {"exponential", {-0.5, 2}, -kInf},
      {"exponential", {1, -2}, kNaN},
      {"exponential", {-1, -2}, kNaN},
      {"gamma", {-1, 2, 1}, -kInf},
      {"gamma", {1, -0.5, 1}, kNaN},
      {"gamma", {1, 2, 0}, kNaN},
      {"inv_gamma", {0, 2, 1}, -kInf},
      {"inv_gamma", {1, -0.5, 1}, kNaN},
      {"beta", {1.5, 2, 2}, -kInf},
      {"beta", {0.5, -1, 2}, kNaN},
      {"beta", {0.5, 2, 0}, kNaN},
      {"uniform", {2, 0, 1}, -kInf},
      {"uniform", {0.5, 1, 0}, kNaN},
      {"bernoulli", {2, 0.5}, -kInf},
      {"bernoulli", {1, 1.5}, kNaN},
      {"bernoulli", {0, -0.1}, kNaN},
      {"bernoulli_logit", {-1, 0.5}, -kInf},
      {"bernoulli_logit", {1, kNaN}, kNaN},
      {"binomial", {11, 10, 0.5}, -kInf},
      {"binomial", {-1, 10, 0.5}, -kInf},
      {"binomial", {3, 10, 1.1}, kNaN},
      {"binomial", {0, -1, 0.5}, kNaN},
      {"binomial_logit", {11, 10, 0.5}, -kInf},
      {"poisson", {-1, 2}, -kInf},
      {"poisson", {0, -1}, kNaN},
      {"poisson_log", {-2, 0}, -kInf},
      {"neg_binomial_2", {-1, 2, 2}, -kInf},
      {"neg_binomial_2", {1, 0, 2}, kNaN},
      {"neg_binomial_2", {1, 2, 0}, kNaN},
      {"neg_binomial_2_log", {-1, 0, 1}, -kInf},
      {"neg_binomial_2_log", {1, 0, -1}, kNaN},
  };
  for (const Case& c : cases) {
    const std::vector<Dist> all = Distributions();
    const auto dist =
        std::find_if(all.begin(), all.end(), [&](const Dist& d) { return d.name == c.dist; });
    ASSERT_NE(dist, all.end()) << c.dist;
    std::vector<std::vector<double>> args(4, std::vector<double>{0.0});
    for (size_t k = 0; k < c.args.size(); ++k) args[k] = {c.args[k]};
    for (const Density& density : {dist->lpdf, dist->lupdf}) {
      auto program = Build(*dist, density);
      const std::vector<double> got = Eval(program->f, Inputs(*dist, {args}));
      ASSERT_EQ(got.size(), 1u);
      if (std::isnan(c.expected)) {
        EXPECT_TRUE(std::isnan(got[0])) << c.dist << " " << got[0];
      } else {
        EXPECT_EQ(got[0], c.expected) << c.dist;
      }
    }
  }
}

// bernoulli_logit_glm_lpmf (one fused primitive) against bernoulli_logit_lpmf
// of alpha + matvec_input(X, beta): values and gradients within 1e-12, both
// -inf for an outcome outside {0, 1}, both NaN for a NaN alpha (gradient
// too); the gradient against central differences. Three lanes, each with its
// own X and y.
TEST(DistributionsTest, BernoulliLogitGlmMatchesTheComposite) {
  constexpr int64_t kRows = 40, kCols = 4, kLanes = 4;
  Context ctx;
  const FunctionOptions options = {.param_names = {"y", "x", "alpha", "beta"}};
  BatchFunction glm = ctx.Batch("glm", options)([](Value y, Value x, Value alpha, Value beta) {
    return bernoulli_logit_glm_lpmf(y, x, alpha, beta);
  });
  BatchFunction composite =
      ctx.Batch("composite", options)([](Value y, Value x, Value alpha, Value beta) {
        return bernoulli_logit_lpmf(y, alpha + matvec_input(x, beta));
      });
  const GradientOptions wrt = {.wrt = {"alpha", "beta"}};
  BatchFunction glm_grad = ctx.Gradient(glm, wrt);
  BatchFunction composite_grad = ctx.Gradient(composite, wrt);
  std::vector<double> x, alpha, beta;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < kLanes * kRows * kCols; ++i) x.push_back(std::sin(0.37 * i) * 1.7);
  for (int64_t i = 0; i < kLanes * kRows; ++i) y.push_back(i % 7 < 3);
  y[kRows + 11] = 2;  // lane 1: -inf
  for (int64_t l = 0; l < kLanes; ++l) {
    alpha.push_back(0.4 - 0.3 * l);
    for (int64_t j = 0; j < kCols; ++j) beta.push_back(std::cos(1.1 * (l * kCols + j)));
  }
  alpha[2] = kNaN;  // lane 2: NaN
  auto inputs = [&](const std::vector<double>& a, const std::vector<double>& b) {
    return std::vector<Tensor>{*Tensor::FromVector(y, {kRows}),
                               *Tensor::FromVector(x, {kRows, kCols}), *Tensor::FromVector(a),
                               *Tensor::FromVector(b, {kCols})};
  };
  const std::vector<Tensor> in = inputs(alpha, beta);
  const std::vector<double> value = Eval(glm, in), reference = Eval(composite, in);
  ASSERT_EQ(value.size(), static_cast<size_t>(kLanes));
  EXPECT_EQ(value[1], -kInf);
  EXPECT_EQ(reference[1], -kInf);
  EXPECT_TRUE(std::isnan(value[2]) && std::isnan(reference[2]));
  for (int64_t l : {0, 3}) {
    EXPECT_NEAR(value[l], reference[l], 1e-12 * (1 + std::abs(reference[l]))) << "lane " << l;
  }
  // The gradient's value output is the primal's, bit for bit.
  const std::vector<double> grad_value = Eval(glm_grad, in, 0);
  for (int64_t l : {0, 1, 3}) EXPECT_EQ(grad_value[l], value[l]) << "lane " << l;
  for (size_t output : {1, 2}) {
    const std::vector<double> g = Eval(glm_grad, in, output);
    const std::vector<double> want = Eval(composite_grad, in, output);
    ASSERT_EQ(g.size(), want.size());
    const size_t width = g.size() / kLanes;
    for (size_t e = 0; e < g.size(); ++e) {
      if (e / width == 2) {
        EXPECT_TRUE(std::isnan(g[e]) && std::isnan(want[e])) << "output " << output;
      } else {
        EXPECT_NEAR(g[e], want[e], 1e-12 * (1 + std::abs(want[e])))
            << "output " << output << " element " << e;
      }
    }
  }
  // Central differences in alpha and each beta[j], lanes 0 and 3.
  const std::vector<double> d_alpha = Eval(glm_grad, in, 1), d_beta = Eval(glm_grad, in, 2);
  for (int64_t k = -1; k < kCols; ++k) {
    std::vector<double> up_a = alpha, down_a = alpha, up_b = beta, down_b = beta;
    constexpr double h = 1e-6;
    for (int64_t l = 0; l < kLanes; ++l) {
      if (k < 0) {
        up_a[l] += h;
        down_a[l] -= h;
      } else {
        up_b[l * kCols + k] += h;
        down_b[l * kCols + k] -= h;
      }
    }
    const std::vector<double> hi = Eval(glm, inputs(up_a, up_b));
    const std::vector<double> lo = Eval(glm, inputs(down_a, down_b));
    for (int64_t l : {0, 3}) {
      const double g = k < 0 ? d_alpha[l] : d_beta[l * kCols + k];
      EXPECT_NEAR(g, (hi[l] - lo[l]) / (2 * h), 1e-6 * (1 + std::abs(g)))
          << "lane " << l << " d/d " << (k < 0 ? "alpha" : "beta") << " " << k;
    }
  }
}

}  // namespace
}  // namespace autobatch::mcmc
