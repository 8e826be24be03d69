// The deterministic transcendental functions: the variant chosen by a CPU
// check, the functions built on SLEEF's, and log_sum_exp (math.h).
#include "support/math/math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/math/digamma.h"
#include "support/math/sleef_isa.h"
#include "support/status.h"

namespace autobatch::math {
namespace {

using internal::IsaFunctions;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Elements per pass of the functions built on others (values on the stack).
constexpr int64_t kChunk = 256;

// Above this, log1p(x) is computed as log(x): SLEEF 3.5.1's log1p returns
// inf above 1e307, and from 2^53 up log(x) is log1p(x) correctly rounded
// (1/x is below half an ulp of it).
constexpr double kLog1pAsLogAbove = 1e300;

// The functions SLEEF computes alone (log1p has its fix-up above).
bool IsSleef(Fn fn) {
  return static_cast<int>(fn) < internal::kNumSleefFns && fn != Fn::kLog1p;
}
int Index(Fn fn) { return static_cast<int>(fn); }

double Canon(double y) { return y != y ? kNaN : y; }
void Canonicalize(double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Canon(y[i]);
}

const IsaFunctions& Functions(Isa isa) {
  switch (isa) {
    case Isa::kPurec: return internal::PurecFunctions();
#if AUTOBATCH_MATH_X86
    case Isa::kSse2: return internal::Sse2Functions();
    case Isa::kSse4: return internal::Sse4Functions();
    case Isa::kAvx: return internal::AvxFunctions();
    case Isa::kAvx512: return internal::Avx512Functions();
#else
    default: break;
#endif
  }
  AB_CHECK(false, "math: this instruction set's variant is not built for this machine");
  return internal::PurecFunctions();
}

const IsaFunctions& Checked(Isa isa) {
  static const std::vector<Isa> supported = SupportedIsas();
  AB_CHECK(std::find(supported.begin(), supported.end(), isa) != supported.end(),
           "math: this CPU lacks the instruction set asked for; pick one of SupportedIsas()");
  return Functions(isa);
}

const IsaFunctions& Active() {
  static const IsaFunctions& active = Functions(ActiveIsa());
  return active;
}

// The last steps of log1p_exp and logistic (math.h), from t = exp(-|x|)
// (and r = log1p(t)): shared by the scalar and the vector path.
double Log1pExpFrom(double x, double r) { return x > 0 ? x + r : r; }
double LogisticFrom(double x, double t) { return x >= 0 ? 1.0 / (1.0 + t) : t / (1.0 + t); }

double Scalar(const IsaFunctions& f, Fn fn, double x) {
  if (IsSleef(fn)) return Canon(f.unary_one[Index(fn)](x));
  switch (fn) {
    case Fn::kLog1p:
      return Canon(f.unary_one[Index(x > kLog1pAsLogAbove ? Fn::kLog : Fn::kLog1p)](x));
    case Fn::kDigamma: return Canon(internal::Digamma(x, f));
    case Fn::kTrigamma: return Canon(internal::Trigamma(x, f));
    case Fn::kLog1pExp: {
      const double t = f.unary_one[Index(Fn::kExp)](-std::fabs(x));
      return Canon(Log1pExpFrom(x, f.unary_one[Index(Fn::kLog1p)](t)));
    }
    case Fn::kLogistic:
      return Canon(LogisticFrom(x, f.unary_one[Index(Fn::kExp)](-std::fabs(x))));
    default: break;
  }
  AB_CHECK(false, "math: unknown function");
  return kNaN;
}

void Vector(const IsaFunctions& f, Fn fn, const double* x, double* y, int64_t n) {
  if (n <= 0) return;
  if (IsSleef(fn)) {
    f.unary[Index(fn)](x, y, n);
    Canonicalize(y, n);
    return;
  }
  double t[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t m = std::min(kChunk, n - start);
    const double* xs = x + start;
    double* ys = y + start;
    switch (fn) {
      case Fn::kLog1p: {
        bool large = false;
        for (int64_t i = 0; i < m; ++i) large |= xs[i] > kLog1pAsLogAbove;
        if (large) {
          for (int64_t i = 0; i < m; ++i) t[i] = xs[i];
          f.unary[Index(Fn::kLog1p)](t, ys, m);
          for (int64_t i = 0; i < m; ++i) {
            if (t[i] > kLog1pAsLogAbove) ys[i] = f.unary_one[Index(Fn::kLog)](t[i]);
          }
        } else {
          f.unary[Index(Fn::kLog1p)](xs, ys, m);
        }
        break;
      }
      case Fn::kDigamma: internal::Digamma(xs, ys, m, f); break;
      case Fn::kTrigamma:
        for (int64_t i = 0; i < m; ++i) ys[i] = Canon(internal::Trigamma(xs[i], f));
        break;
      case Fn::kLog1pExp:
        for (int64_t i = 0; i < m; ++i) t[i] = -std::fabs(xs[i]);
        f.unary[Index(Fn::kExp)](t, t, m);
        f.unary[Index(Fn::kLog1p)](t, t, m);
        for (int64_t i = 0; i < m; ++i) ys[i] = Log1pExpFrom(xs[i], t[i]);
        break;
      case Fn::kLogistic:
        for (int64_t i = 0; i < m; ++i) t[i] = -std::fabs(xs[i]);
        f.unary[Index(Fn::kExp)](t, t, m);
        for (int64_t i = 0; i < m; ++i) ys[i] = LogisticFrom(xs[i], t[i]);
        break;
      default: AB_CHECK(false, "math: unknown function");
    }
    Canonicalize(ys, m);
  }
}

void VectorPow(const IsaFunctions& f, const double* a, const double* b, double* y, int64_t n) {
  if (n <= 0) return;
  f.pow(a, b, y, n);
  Canonicalize(y, n);
}

// log_sum_exp (math.h) of one lane: its maximum m and the first index k
// holding it, k = -1 when every element is -inf (or there are none), k = -2
// when one is NaN.
struct LaneMax {
  double m = -kInf;
  int64_t k = -1;
};
LaneMax MaxOf(const double* x, int64_t n) {
  LaneMax max;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return {kNaN, -2};
    if (x[i] > max.m) max = {x[i], i};
  }
  return max;
}
// The result from the lane's maximum and log1p(s).
double LogSumExpFrom(const LaneMax& max, double log1p_s) {
  if (max.k == -2) return kNaN;
  if (max.k == -1) return -kInf;
  if (max.m == kInf) return kInf;
  return max.m + log1p_s;
}

void LanesLogSumExp(const IsaFunctions& f, const double* x, int64_t lanes, int64_t n,
                    double* y) {
  const int exp = Index(Fn::kExp);
  const int log1p = Index(Fn::kLog1p);
  if (n > kChunk) {  // one lane at a time, its terms in chunks
    double t[kChunk];
    for (int64_t l = 0; l < lanes; ++l) {
      const double* xl = x + l * n;
      const LaneMax max = MaxOf(xl, n);
      double s = 0;
      for (int64_t start = 0; start < n; start += kChunk) {
        const int64_t m = std::min(kChunk, n - start);
        for (int64_t i = 0; i < m; ++i) t[i] = xl[start + i] - max.m;
        f.unary[exp](t, t, m);
        for (int64_t i = 0; i < m; ++i) {
          if (start + i != max.k) s = s + t[i];
        }
      }
      f.unary[log1p](&s, &s, 1);
      y[l] = Canon(LogSumExpFrom(max, s));
    }
    return;
  }
  // Groups of lanes whose terms fit in one chunk, so that short vectors
  // still fill the vector unit.
  const int64_t group = n == 0 ? kChunk : kChunk / n;
  double t[kChunk];
  double s[kChunk];
  LaneMax max[kChunk];
  for (int64_t first = 0; first < lanes; first += group) {
    const int64_t g = std::min(group, lanes - first);
    for (int64_t j = 0; j < g; ++j) {
      const double* xl = x + (first + j) * n;
      max[j] = MaxOf(xl, n);
      for (int64_t i = 0; i < n; ++i) t[j * n + i] = xl[i] - max[j].m;
    }
    f.unary[exp](t, t, g * n);
    for (int64_t j = 0; j < g; ++j) {
      s[j] = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i != max[j].k) s[j] = s[j] + t[j * n + i];
      }
    }
    f.unary[log1p](s, s, g);
    for (int64_t j = 0; j < g; ++j) y[first + j] = Canon(LogSumExpFrom(max[j], s[j]));
  }
}

// The scalar path: on x86-64 the sse2 variant on a vector holding the value
// (every x86-64 CPU has it; measured one value at a time, it is twice as
// fast as purec for exp and as fast for log1p and tanh), purec elsewhere.
const IsaFunctions& ScalarFunctions() {
#if AUTOBATCH_MATH_X86
  return internal::Sse2Functions();
#else
  return internal::PurecFunctions();
#endif
}

}  // namespace

std::string_view FnName(Fn fn) {
  switch (fn) {
    case Fn::kExp: return "exp";
    case Fn::kLog: return "log";
    case Fn::kLog1p: return "log1p";
    case Fn::kExpm1: return "expm1";
    case Fn::kTanh: return "tanh";
    case Fn::kSin: return "sin";
    case Fn::kCos: return "cos";
    case Fn::kTan: return "tan";
    case Fn::kAtan: return "atan";
    case Fn::kLgamma: return "lgamma";
    case Fn::kErfc: return "erfc";
    case Fn::kDigamma: return "digamma";
    case Fn::kTrigamma: return "trigamma";
    case Fn::kLog1pExp: return "log1p_exp";
    case Fn::kLogistic: return "logistic";
  }
  return "unknown";
}

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kPurec: return "purec";
    case Isa::kSse2: return "sse2";
    case Isa::kSse4: return "sse4";
    case Isa::kAvx: return "avx";
    case Isa::kAvx512: return "avx512fnofma";
  }
  return "unknown";
}

std::vector<Isa> SupportedIsas() {
  std::vector<Isa> isas = {Isa::kPurec};
#if AUTOBATCH_MATH_X86
  __builtin_cpu_init();
  isas.push_back(Isa::kSse2);  // part of x86-64
  if (__builtin_cpu_supports("sse4.1")) isas.push_back(Isa::kSse4);
  if (__builtin_cpu_supports("avx")) isas.push_back(Isa::kAvx);
  if (__builtin_cpu_supports("avx512f")) isas.push_back(Isa::kAvx512);
#endif
  return isas;
}

Isa ActiveIsa() {
  static const Isa active = SupportedIsas().back();
  return active;
}

void Eval(Fn fn, const double* x, double* y, int64_t n) { Vector(Active(), fn, x, y, n); }
double Eval(Fn fn, double x) { return Scalar(ScalarFunctions(), fn, x); }
void Pow(const double* a, const double* b, double* y, int64_t n) {
  VectorPow(Active(), a, b, y, n);
}
double Pow(double a, double b) { return Canon(ScalarFunctions().pow_one(a, b)); }
double LogSumExp(const double* x, int64_t n) {
  double y;
  LanesLogSumExp(Active(), x, /*lanes=*/1, n, &y);
  return y;
}
void LogSumExpLanes(const double* x, int64_t lanes, int64_t n, double* y) {
  LanesLogSumExp(Active(), x, lanes, n, y);
}

void EvalWith(Isa isa, Fn fn, const double* x, double* y, int64_t n) {
  Vector(Checked(isa), fn, x, y, n);
}
double EvalWith(Isa isa, Fn fn, double x) { return Scalar(Checked(isa), fn, x); }
void PowWith(Isa isa, const double* a, const double* b, double* y, int64_t n) {
  VectorPow(Checked(isa), a, b, y, n);
}
double PowWith(Isa isa, double a, double b) { return Canon(Checked(isa).pow_one(a, b)); }
void LogSumExpLanesWith(Isa isa, const double* x, int64_t lanes, int64_t n, double* y) {
  LanesLogSumExp(Checked(isa), x, lanes, n, y);
}

}  // namespace autobatch::math
