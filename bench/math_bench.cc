// The deterministic transcendental functions (support/math/math.h) against
// glibc: ns per element of each function over an array, on every SLEEF
// variant this CPU has (the vector path, Eval over n elements), of the
// scalar path (Eval(fn, x) per element, what the samplers call: sse2 on
// one value) and of the
// C library's function (or the same formula on it) in a plain loop. Inputs
// are uniform over a range typical of each function; times are the minimum
// over --trials passes over the array, on one thread.
//
// Usage: math_bench [--elements N] [--trials N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/math/math.h"

namespace autobatch::math {
namespace {

double MinNsPerElement(int trials, int64_t n, const std::function<void()>& run) {
  double best = 1e300;
  for (int t = 0; t < trials; ++t) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::nano>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best / static_cast<double>(n);
}

struct Case {
  std::string name;
  std::optional<Fn> fn;  // none: pow
  double lo, hi;
  double (*glibc)(double x);  // null: the C library has none
};

double GlibcPow(double a, double b) { return std::pow(a, b); }

int Main(int argc, char** argv) {
  int64_t n = 4096;  // fits in L1 with its results: the functions' cost, not memory's
  int trials = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--elements") == 0) {
      n = value;
    } else if (std::strcmp(argv[i], "--trials") == 0) {
      trials = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "usage: math_bench [--elements N] [--trials N]\n");
      return 2;
    }
  }
  if (argc % 2 == 0 || n < 1 || trials < 1) {
    std::fprintf(stderr, "usage: math_bench [--elements N >= 1] [--trials N >= 1]\n");
    return 2;
  }
  const std::vector<Case> cases = {
      {"exp", Fn::kExp, -700, 700, [](double x) { return std::exp(x); }},
      {"log", Fn::kLog, 1e-10, 1e10, [](double x) { return std::log(x); }},
      {"log1p", Fn::kLog1p, -0.9, 1e3, [](double x) { return std::log1p(x); }},
      {"expm1", Fn::kExpm1, -40, 40, [](double x) { return std::expm1(x); }},
      {"tanh", Fn::kTanh, -20, 20, [](double x) { return std::tanh(x); }},
      {"sin", Fn::kSin, -100, 100, [](double x) { return std::sin(x); }},
      {"cos", Fn::kCos, -100, 100, [](double x) { return std::cos(x); }},
      {"atan", Fn::kAtan, -1e3, 1e3, [](double x) { return std::atan(x); }},
      {"lgamma", Fn::kLgamma, 0.1, 1e3, [](double x) { return std::lgamma(x); }},
      {"erfc", Fn::kErfc, -5, 26, [](double x) { return std::erfc(x); }},
      {"digamma", Fn::kDigamma, 0.1, 1e3, nullptr},
      {"log1p_exp", Fn::kLog1pExp, -50, 50,
       [](double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }},
      {"logistic", Fn::kLogistic, -50, 50, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"pow", std::nullopt, 0.01, 10, nullptr},
  };
  const std::vector<Isa> isas = SupportedIsas();
  std::printf("ns per element, %lld elements, min of %d trials, one thread\n%-10s %7s",
              static_cast<long long>(n), trials, "function", "glibc");
  for (Isa isa : isas) std::printf(" %12s", std::string(IsaName(isa)).c_str());
  std::printf(" %7s\n", "scalar");
  std::mt19937_64 rng(20261201);
  std::vector<double> x(static_cast<size_t>(n)), b(static_cast<size_t>(n)),
      y(static_cast<size_t>(n));
  volatile double sink = 0;
  for (const Case& c : cases) {
    std::uniform_real_distribution<double> u(c.lo, c.hi);
    std::uniform_real_distribution<double> exponent(-10, 10);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = u(rng);
      b[i] = exponent(rng);
    }
    std::printf("%-10s", c.name.c_str());
    if (c.glibc != nullptr || !c.fn) {
      const double ns = MinNsPerElement(trials, n, [&] {
        for (int64_t i = 0; i < n; ++i) y[i] = c.fn ? c.glibc(x[i]) : GlibcPow(x[i], b[i]);
        sink = sink + y[0];
      });
      std::printf(" %7.2f", ns);
    } else {
      std::printf(" %7s", "-");
    }
    for (Isa isa : isas) {
      const double ns = MinNsPerElement(trials, n, [&] {
        if (c.fn) {
          EvalWith(isa, *c.fn, x.data(), y.data(), n);
        } else {
          PowWith(isa, x.data(), b.data(), y.data(), n);
        }
        sink = sink + y[0];
      });
      std::printf(" %12.2f", ns);
    }
    const double scalar = MinNsPerElement(trials, n, [&] {
      for (int64_t i = 0; i < n; ++i) y[i] = c.fn ? Eval(*c.fn, x[i]) : Pow(x[i], b[i]);
      sink = sink + y[0];
    });
    std::printf(" %7.2f\n", scalar);
  }
  return 0;
}

}  // namespace
}  // namespace autobatch::math

int main(int argc, char** argv) { return autobatch::math::Main(argc, argv); }
