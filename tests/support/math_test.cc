// Tests of the deterministic transcendental functions (support/math/math.h):
// every instruction-set variant gives every function the same bits on a
// million inputs, the scalar path gives the vector path's bits, the special
// values are the documented ones, and the functions are accurate.
#include "support/math/math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace autobatch::math {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<Fn>& AllFns() {
  static const std::vector<Fn> fns = [] {
    std::vector<Fn> all;
    for (int i = 0; i < kNumFns; ++i) all.push_back(static_cast<Fn>(i));
    return all;
  }();
  return fns;
}

uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }

// n inputs: raw random bit patterns (every magnitude, NaNs, infinities,
// subnormals), uniform in [-1000, 1000] and in [-10, 10], and the special
// values, interleaved so that each sits at every position of a vector.
std::vector<double> Inputs(int64_t n, uint64_t seed) {
  const std::vector<double> special = {0.0,   -0.0,  1.0,    -1.0,   0.5,     -0.5,   2.0,
                                       -2.0,  kInf,  -kInf,  kNaN,   -kNaN,   1e-310, -1e-310,
                                       1e308, -1e308, 709.78, -745.1, 710.0,  -746.0, 1e-20,
                                       -1e-20, 3.0,   -3.0,  100.5,  -100.5,  20.0,   -20.0};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> wide(-1000.0, 1000.0);
  std::uniform_real_distribution<double> narrow(-10.0, 10.0);
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0: x[i] = std::bit_cast<double>(rng()); break;
      case 1: x[i] = wide(rng); break;
      case 2: x[i] = narrow(rng); break;
      default: x[i] = special[static_cast<size_t>(i / 4) % special.size()];
    }
  }
  return x;
}

// The first index where a and b differ in their bits, or -1.
int64_t FirstDifference(const std::vector<double>& a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (Bits(a[i]) != Bits(b[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

// What the test runs on; purec is always among them.
std::string IsaList() {
  std::string names;
  for (Isa isa : SupportedIsas()) names += std::string(IsaName(isa)) + " ";
  return names;
}

TEST(MathTest, TheWidestVariantIsActive) {
  const std::vector<Isa> isas = SupportedIsas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::kPurec);
  EXPECT_EQ(ActiveIsa(), isas.back());
#if defined(__x86_64__)
  EXPECT_NE(std::find(isas.begin(), isas.end(), Isa::kSse2), isas.end());
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(ActiveIsa(), Isa::kAvx512);
  }
#endif
  std::printf("variants on this CPU: %s(active: %s)\n", IsaList().c_str(),
              std::string(IsaName(ActiveIsa())).c_str());
}

// One million inputs per function: every variant's vector path gives the
// purec variant's bits, and so does every variant's scalar path.
TEST(MathTest, EveryVariantGivesTheSameBitsOnAMillionInputs) {
  constexpr int64_t kN = 1 << 20;
  const std::vector<double> x = Inputs(kN, 20260101);
  for (Fn fn : AllFns()) {
    std::vector<double> want(kN);
    EvalWith(Isa::kPurec, fn, x.data(), want.data(), kN);
    for (Isa isa : SupportedIsas()) {
      std::vector<double> got(kN);
      EvalWith(isa, fn, x.data(), got.data(), kN);
      const int64_t i = FirstDifference(want, got);
      EXPECT_EQ(i, -1) << FnName(fn) << " " << IsaName(isa) << " at x = " << x[i] << ": "
                       << got[i] << " vs purec " << want[i];
    }
    // The scalar path (Eval(fn, x), which the samplers use) on every input.
    std::vector<double> scalar(kN);
    for (int64_t i = 0; i < kN; ++i) scalar[i] = Eval(fn, x[i]);
    const int64_t i = FirstDifference(want, scalar);
    EXPECT_EQ(i, -1) << FnName(fn) << " scalar at x = " << x[i] << ": " << scalar[i]
                     << " vs vector " << want[i];
  }
}

TEST(MathTest, EveryVariantsScalarPathGivesTheVectorBits) {
  constexpr int64_t kN = 1 << 14;
  const std::vector<double> x = Inputs(kN, 7);
  for (Fn fn : AllFns()) {
    std::vector<double> want(kN);
    Eval(fn, x.data(), want.data(), kN);
    for (Isa isa : SupportedIsas()) {
      std::vector<double> got(kN);
      for (int64_t i = 0; i < kN; ++i) got[i] = EvalWith(isa, fn, x[i]);
      const int64_t i = FirstDifference(want, got);
      EXPECT_EQ(i, -1) << FnName(fn) << " " << IsaName(isa) << " scalar at x = " << x[i];
    }
  }
}

TEST(MathTest, AnElementsBitsDoNotDependOnItsPositionOrTheCount) {
  const std::vector<double> x = Inputs(37, 3);
  for (Fn fn : AllFns()) {
    std::vector<double> all(x.size());
    Eval(fn, x.data(), all.data(), static_cast<int64_t>(x.size()));
    for (size_t start = 0; start < x.size(); ++start) {
      for (int64_t n : {1, 2, 3, 5, 9}) {
        if (start + static_cast<size_t>(n) > x.size()) continue;
        std::vector<double> part(static_cast<size_t>(n));
        Eval(fn, x.data() + start, part.data(), n);
        for (int64_t k = 0; k < n; ++k) {
          EXPECT_EQ(Bits(part[k]), Bits(all[start + k])) << FnName(fn) << " x = " << x[start + k];
        }
      }
    }
    // In place.
    std::vector<double> in_place = x;
    Eval(fn, in_place.data(), in_place.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(FirstDifference(in_place, all), -1) << FnName(fn);
  }
}

TEST(MathTest, PowGivesTheSameBitsOnEveryVariantAndPath) {
  constexpr int64_t kN = 1 << 18;
  const std::vector<double> a = Inputs(kN, 11);
  std::vector<double> b = Inputs(kN, 12);
  std::rotate(b.begin(), b.begin() + 5, b.end());  // other pairs of special values
  std::vector<double> want(kN);
  PowWith(Isa::kPurec, a.data(), b.data(), want.data(), kN);
  for (Isa isa : SupportedIsas()) {
    std::vector<double> got(kN);
    PowWith(isa, a.data(), b.data(), got.data(), kN);
    const int64_t i = FirstDifference(want, got);
    EXPECT_EQ(i, -1) << IsaName(isa) << " pow(" << a[i] << ", " << b[i] << ")";
    for (int64_t k = 0; k < kN; k += 61) {
      EXPECT_EQ(Bits(PowWith(isa, a[k], b[k])), Bits(want[k])) << a[k] << ", " << b[k];
    }
  }
  for (int64_t k = 0; k < kN; k += 7) {
    ASSERT_EQ(Bits(Pow(a[k], b[k])), Bits(want[k])) << a[k] << ", " << b[k];
  }
}

TEST(MathTest, EveryNanIsTheCanonicalNan) {
  const std::vector<double> x = Inputs(4096, 5);
  const uint64_t canonical = Bits(kNaN);
  for (Fn fn : AllFns()) {
    std::vector<double> y(x.size());
    Eval(fn, x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < y.size(); ++i) {
      if (y[i] != y[i]) {
        ASSERT_EQ(Bits(y[i]), canonical) << FnName(fn) << " x = " << x[i];
      }
    }
  }
  EXPECT_EQ(Bits(Pow(-2.0, 0.5)), canonical);
  EXPECT_EQ(Bits(Log(-kNaN)), canonical);
}

// The special values math.h documents.
TEST(MathTest, SpecialValues) {
  struct Case {
    Fn fn;
    double x;
    double want;
  };
  const double pi_2 = 1.5707963267948966;
  const std::vector<Case> cases = {
      {Fn::kExp, 0.0, 1.0},         {Fn::kExp, -kInf, 0.0},         {Fn::kExp, kInf, kInf},
      {Fn::kExp, 710.0, kInf},      {Fn::kExp, -746.0, 0.0},        {Fn::kLog, 1.0, 0.0},
      {Fn::kLog, 0.0, -kInf},       {Fn::kLog, -0.0, -kInf},        {Fn::kLog, -1.0, kNaN},
      {Fn::kLog, kInf, kInf},       {Fn::kLog1p, -1.0, -kInf},      {Fn::kLog1p, -2.0, kNaN},
      {Fn::kLog1p, 0.0, 0.0},       {Fn::kLog1p, 1e308, 709.19620864216608},
      {Fn::kLog1p, 1.7976931348623157e308, 709.78271289338397}, {Fn::kLog1p, kInf, kInf},       {Fn::kLog1p, 1e-300, 1e-300},   {Fn::kExpm1, 0.0, 0.0},
      {Fn::kExpm1, -kInf, -1.0},    {Fn::kExpm1, 1e-300, 1e-300},   {Fn::kTanh, kInf, 1.0},
      {Fn::kTanh, -kInf, -1.0},     {Fn::kTanh, 0.0, 0.0},          {Fn::kSin, 0.0, 0.0},
      {Fn::kSin, kInf, kNaN},       {Fn::kCos, 0.0, 1.0},           {Fn::kCos, -kInf, kNaN},
      {Fn::kAtan, kInf, pi_2},      {Fn::kAtan, -kInf, -pi_2},      {Fn::kAtan, 0.0, 0.0},
      {Fn::kLgamma, 1.0, 0.0},      {Fn::kLgamma, 2.0, 0.0},        {Fn::kLgamma, 0.0, kInf},
      {Fn::kLgamma, -3.0, kInf},    {Fn::kLgamma, kInf, kInf},      {Fn::kErfc, 0.0, 1.0},
      {Fn::kErfc, kInf, 0.0},       {Fn::kErfc, -kInf, 2.0},        {Fn::kErfc, 30.0, 0.0},
      {Fn::kDigamma, 0.0, -kInf},   {Fn::kDigamma, -0.0, kInf},     {Fn::kDigamma, -1.0, kNaN},
      {Fn::kDigamma, -1e20, kNaN},  {Fn::kDigamma, -kInf, kNaN},    {Fn::kDigamma, kInf, kInf},
      {Fn::kLog1pExp, kInf, kInf},  {Fn::kLog1pExp, -kInf, 0.0},    {Fn::kLog1pExp, 1000.0, 1000.0},
      {Fn::kLog1pExp, 1e300, 1e300}, {Fn::kLog1pExp, -1000.0, 0.0}, {Fn::kLogistic, 0.0, 0.5},
      {Fn::kLogistic, kInf, 1.0},   {Fn::kLogistic, -kInf, 0.0},    {Fn::kLogistic, 1000.0, 1.0},
      {Fn::kLogistic, -1000.0, 0.0}, {Fn::kLogistic, 40.0, 1.0},
  };
  for (const Case& c : cases) {
    for (Isa isa : SupportedIsas()) {
      const double got = EvalWith(isa, c.fn, c.x);
      if (c.want != c.want) {
        EXPECT_TRUE(got != got) << FnName(c.fn) << "(" << c.x << ") = " << got;
      } else {
        EXPECT_EQ(Bits(got), Bits(c.want)) << FnName(c.fn) << "(" << c.x << ") = " << got
                                           << ", want " << c.want << " (" << IsaName(isa) << ")";
      }
    }
  }
  // NaN in, NaN out, for every function.
  for (Fn fn : AllFns()) EXPECT_TRUE(Eval(fn, kNaN) != Eval(fn, kNaN)) << FnName(fn);
  // Signed zeros where the function is odd.
  for (Fn fn : {Fn::kExpm1, Fn::kTanh, Fn::kSin, Fn::kAtan, Fn::kLog1p}) {
    EXPECT_TRUE(std::signbit(Eval(fn, -0.0))) << FnName(fn);
  }
  EXPECT_EQ(Pow(kNaN, 0.0), 1.0);
  EXPECT_EQ(Pow(1.0, kNaN), 1.0);
  EXPECT_EQ(Pow(0.0, -1.0), kInf);
  EXPECT_TRUE(std::isnan(Pow(-8.0, 1.0 / 3)));
  EXPECT_EQ(Pow(2.0, 10.0), 1024.0);
  EXPECT_EQ(Pow(-2.0, 3.0), -8.0);
}

// ulps between a double and a long double reference.
double Ulps(double got, long double want) {
  const double w = static_cast<double>(want);
  if (got == w) return 0;
  const double ulp = std::nextafter(std::fabs(w), kInf) - std::fabs(w);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

TEST(MathTest, AccurateAgainstLongDouble) {
  struct Range {
    Fn fn;
    long double (*ref)(long double);
    double lo, hi, max_ulps;
  };
  const std::vector<Range> ranges = {
      {Fn::kExp, [](long double x) { return expl(x); }, -700, 700, 1.0},
      {Fn::kLog, [](long double x) { return logl(x); }, 1e-300, 1e300, 1.0},
      {Fn::kLog1p, [](long double x) { return log1pl(x); }, -0.999, 1e6, 1.0},
      {Fn::kLog1p, [](long double x) { return log1pl(x); }, 1e-300, 1.7e308, 1.0},
      {Fn::kExpm1, [](long double x) { return expm1l(x); }, -40, 700, 1.0},
      {Fn::kTanh, [](long double x) { return tanhl(x); }, -20, 20, 1.0},
      {Fn::kSin, [](long double x) { return sinl(x); }, -100, 100, 1.0},
      {Fn::kCos, [](long double x) { return cosl(x); }, -100, 100, 1.0},
      {Fn::kAtan, [](long double x) { return atanl(x); }, -1e3, 1e3, 1.0},
      {Fn::kLgamma, [](long double x) { return lgammal(x); }, 2.5, 1e5, 1.0},
      {Fn::kErfc, [](long double x) { return erfcl(x); }, -5, 26, 1.5},
      {Fn::kLog1pExp,
       [](long double x) { return x > 0 ? x + log1pl(expl(-x)) : log1pl(expl(x)); }, -700, 700,
       2.0},
      {Fn::kLogistic, [](long double x) { return 1 / (1 + expl(-x)); }, -700, 700, 2.0},
  };
  std::mt19937_64 rng(99);
  for (const Range& r : ranges) {
    const bool logarithmic = r.lo > 0 && r.hi / r.lo > 1e6;
    std::uniform_real_distribution<double> u(logarithmic ? std::log(r.lo) : r.lo,
                                             logarithmic ? std::log(r.hi) : r.hi);
    double worst = 0;
    for (int i = 0; i < 20000; ++i) {
      const double v = u(rng);
      const double x = logarithmic ? std::exp(v) : v;
      worst = std::max(worst, Ulps(Eval(r.fn, x), r.ref(x)));
    }
    EXPECT_LE(worst, r.max_ulps) << FnName(r.fn);
  }
}

// Known values (mpmath, 40 digits, at the exact double).
TEST(MathTest, DigammaMatchesKnownValues) {
  struct Known {
    double x;
    double want;
  };
  const std::vector<Known> known = {
      {1.0, -0.5772156649015328606},
      {2.0, 0.4227843350984671394},
      {0.5, -1.963510026021423479},
      {0.25, -4.227453533376265408},
      {1e-8, -100000000.5772156464},
      {3.5, 1.103156640645243187},
      {10.0, 2.251752589066721108},
      {9.999, 2.251647417205735314},
      {10.5, 2.303001034297686375},
      {100.0, 4.6001618527380874},
      {1e10, 23.02585092989045684},
      {1e300, 690.7755278982137053},
      {-0.5, 0.03648997397857652056},
      {-1.5, 0.7031566406452431872},
      {-2.25, 4.158583564657972275},
      {-10.1, 12.03005224854830926},
      {-1e-8, 99999999.42278431656},
      {0.1, -10.42375494041107623},
      {5.0, 1.506117668431800473},
      {2.718281828459045, 0.8049262744635664872},
      {1e-300, -9.999999999999999749e+299},
      {-100.75, 1.476004116748550896},
      {1.5, 0.03648997397857652056},
      {7.25, 1.910453526883736028},
  };
  for (const Known& k : known) {
    EXPECT_NEAR(Digamma(k.x), k.want, 1e-14 * std::fabs(k.want)) << "digamma(" << k.x << ")";
  }
  // At the positive root the value is about -9.24e-17: absolute accuracy.
  EXPECT_NEAR(Digamma(1.4616321449683622), -9.2412655217294275168e-17, 1e-15);
  // The recurrence: digamma(x + 1) = digamma(x) + 1 / x, to rounding.
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(0.01, 50);
  for (int i = 0; i < 1000; ++i) {
    const double x = u(rng);
    const double lhs = Digamma(x + 1), rhs = Digamma(x) + 1 / x;
    EXPECT_NEAR(lhs, rhs, 4e-15 * std::max(std::fabs(1 / x), 1.0)) << x;
  }
}

// Known values (mpmath's psi(1, x), 40 digits, at the exact double).
TEST(MathTest, TrigammaMatchesKnownValues) {
  struct Known {
    double x;
    double want;
  };
  const std::vector<Known> known = {
      {1.0, 1.6449340668482264365},    {2.0, 0.64493406684822643647},
      {0.5, 4.9348022005446793094},    {0.25, 17.197329154507110739},
      {1e-08, 10000000000000001.226},  {3.5, 0.33035775610023486497},
      {10.0, 0.10516633568168574612},  {9.999, 0.10517738667672886215},
      {10.5, 0.099916956059126733204}, {100.0, 0.010050166663333571395},
      {1e10, 1.00000000005e-10},       {-0.5, 8.9348022005446793094},
      {-1.5, 9.3792466449891237539},   {-2.25, 19.379410511869137363},
      {-10.1, 103.26156923946724557},  {-1e-08, 10000000000000001.226},
      {0.1, 101.4332991507927477},     {7.25, 0.14787923315893216965},
      {-100.75, 19.729332339250960611},
  };
  for (const Known& k : known) {
    EXPECT_NEAR(Trigamma(k.x), k.want, 1e-14 * std::fabs(k.want)) << "trigamma(" << k.x << ")";
  }
  EXPECT_EQ(Trigamma(0.0), kInf);
  EXPECT_EQ(Trigamma(-0.0), kInf);
  EXPECT_EQ(Trigamma(-3.0), kInf);
  EXPECT_EQ(Trigamma(1e-300), kInf);  // 1e600 overflows
  EXPECT_EQ(Trigamma(kInf), 0.0);
  EXPECT_TRUE(std::isnan(Trigamma(-kInf)));
  EXPECT_TRUE(std::isnan(Trigamma(kNaN)));
  // It is digamma's derivative: central differences agree.
  for (double x : {0.3, 1.7, 4.0, 12.5, -0.4, -3.6}) {
    const double h = 1e-5 * std::max(1.0, std::fabs(x));
    EXPECT_NEAR((Digamma(x + h) - Digamma(x - h)) / (2 * h), Trigamma(x),
                1e-6 * std::max(1.0, Trigamma(x)))
        << x;
  }
}

TEST(MathTest, LogSumExpSpecialValues) {
  auto lse = [](std::vector<double> x) {
    return LogSumExp(x.data(), static_cast<int64_t>(x.size()));
  };
  EXPECT_EQ(lse({}), -kInf);
  EXPECT_EQ(lse({-kInf, -kInf}), -kInf);
  EXPECT_EQ(lse({-kInf, 3.0}), 3.0);
  EXPECT_EQ(lse({1.0, kInf, -kInf}), kInf);
  EXPECT_TRUE(std::isnan(lse({1.0, kNaN, kInf})));
  EXPECT_TRUE(std::isnan(lse({kInf, kNaN})));
  EXPECT_EQ(lse({5.0}), 5.0);
  EXPECT_EQ(lse({0.0, 0.0}), Log1p(1.0));
  EXPECT_EQ(lse({1000.0, 1000.0}), 1000.0 + Log1p(1.0));  // no overflow
  EXPECT_EQ(lse({-1000.0, -1000.0}), -1000.0 + Log1p(1.0));
  // Two elements: exactly hi + log1p(exp(lo - hi)) (mcmc's SamplerLogSumExp).
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal(0, 30);
  for (int i = 0; i < 1000; ++i) {
    const double a = normal(rng), b = normal(rng);
    const double hi = std::max(a, b), lo = std::min(a, b);
    EXPECT_EQ(Bits(lse({a, b})), Bits(hi + Log1p(Exp(lo - hi))));
  }
  // Against long double.
  for (int i = 0; i < 200; ++i) {
    std::vector<double> x(static_cast<size_t>(1 + i % 40));
    for (double& v : x) v = normal(rng);
    long double m = *std::max_element(x.begin(), x.end()), s = 0;
    for (double v : x) s += expl(v - m);
    EXPECT_LE(Ulps(lse(x), m + logl(s)), 2.0);
  }
}

// The lanes form gives each lane the one-lane bits, on every variant, for
// short vectors (lanes grouped into one vector call) and long ones (over
// 256 elements: chunked), with special values scattered in.
TEST(MathTest, LogSumExpLanesGiveEachLaneItsOwnBits) {
  for (int64_t n : {0, 1, 2, 3, 7, 64, 255, 256, 257, 1000}) {
    const int64_t lanes = n > 256 ? 5 : 67;
    std::vector<double> x = Inputs(lanes * n, static_cast<uint64_t>(n));
    for (double& v : x) {
      if (std::isfinite(v) && std::fabs(v) > 1e6) v = std::fmod(v, 1000.0);
    }
    // Half the lanes hold no special value, so their sums are exercised.
    for (int64_t l = 0; l < lanes; l += 2) {
      for (int64_t i = 0; i < n; ++i) {
        double& v = x[l * n + i];
        if (!std::isfinite(v)) v = 0.25 * static_cast<double>(i);
      }
    }
    std::vector<double> want(lanes);
    for (int64_t l = 0; l < lanes; ++l) want[l] = LogSumExp(x.data() + l * n, n);
    for (Isa isa : SupportedIsas()) {
      std::vector<double> got(lanes);
      LogSumExpLanesWith(isa, x.data(), lanes, n, got.data());
      EXPECT_EQ(FirstDifference(want, got), -1) << "n = " << n << " " << IsaName(isa);
    }
    std::vector<double> got(lanes);
    LogSumExpLanes(x.data(), lanes, n, got.data());
    EXPECT_EQ(FirstDifference(want, got), -1) << "n = " << n;
  }
}

}  // namespace
}  // namespace autobatch::math
