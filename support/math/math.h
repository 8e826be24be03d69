// The ONE definition of every transcendental function on a bit-stable path:
// the primitives' kernels (backends/element_ops.h), generated and JIT code
// (through the kernels), the reference interpreter, Box-Muller
// (backends/random.h), the samplers' arithmetic (mcmc/sampler_config.h) and
// the built-in models all compute exp, log, ... here, never with <cmath>
// (tests/lint/check_math_calls.cmake fails on a direct call).
//
// Definitions. exp, log, log1p, expm1, tanh, sin, cos, tan, atan, lgamma,
// erfc and pow are SLEEF's deterministic family (Sleef_cinz_*, libsleef
// 3.5.1: no FMA, the same bits from its purec, sse2, sse4, avx and
// avx512fnofma variants; 1.0 ulp, erfc 1.5 ulp); special values follow C99
// Annex F (exp(-inf) = 0, log(0) = -inf, log(x < 0) = NaN, lgamma(0) =
// lgamma(-n) = +inf, erfc(-inf) = 2, atan(+-inf) = +-pi/2, sin(+-inf) = NaN,
// pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN). digamma, log1p_exp and
// logistic are written once, here, from those (exact formulas below), in
// plain IEEE double arithmetic without FMA (the build's -ffp-contract=off).
// log1p(x) for x > 1e300 is log(x) (SLEEF's log1p overflows above 1e307;
// from 2^53 up the two agree). Every NaN a function returns is the
// canonical quiet NaN.
//
// Paths. Eval(fn, x, y, n) runs the widest variant the CPU has, chosen once
// at first use by a run-time CPU check (avx512fnofma, else avx, sse4, sse2;
// purec off x86-64), each variant compiled in its own translation unit with
// its instruction set's flag. Eval(fn, x) and the named scalar functions
// run the sse2 variant on one value (purec off x86-64): the same bits. An element's bits depend on nothing
// but its own value: not on n, its position or its neighbours
// (tests/support/math_test.cc checks every variant against every other,
// the scalar path against the vector one, and the special values).
#ifndef AUTOBATCH_SUPPORT_MATH_MATH_H_
#define AUTOBATCH_SUPPORT_MATH_MATH_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace autobatch::math {

enum class Fn : int8_t {
  // SLEEF's deterministic family.
  kExp,
  kLog,
  kLog1p,
  kExpm1,
  kTanh,
  kSin,
  kCos,
  kTan,
  kAtan,
  kLgamma,  // log |Gamma(x)|
  kErfc,
  // Written here from the above.
  // digamma(x) = d/dx lgamma(x). x >= 10: the asymptotic series
  //   (log(x) - 0.5 / x) - w * P(w), w = 1 / (x * x), P the seven Bernoulli
  //   terms in Horner form (digamma.cc); 0 < x < 10: x_0 = x,
  //   x_{i+1} = x_i + 1 up to the first x_k >= 10, s = sum of 1 / x_i
  //   (i < k, in order), and the series at x_k minus s; x < 0 not an
  //   integer: digamma(1 - x) - pi / tan(pi * r), r = x - round(x) (exact).
  //   digamma(+0) = -inf, digamma(-0) = +inf, negative integers and -inf
  //   -> NaN, +inf -> +inf. Within 1e-14 relative of the true value away
  //   from the positive root 1.4616321449683623 (there about 1e-16
  //   absolute).
  kDigamma,
  // trigamma(x) = d/dx digamma(x). x >= 10: 1/x + 1/(2x^2) + sum_k B_2k /
  //   x^(2k+1), k = 1..7, in Horner form in w = 1 / (x * x) (digamma.cc);
  //   0 < x < 10: the series at x_k (as digamma) plus sum of 1 / x_i^2
  //   (i < k, in order); x < 0 not an integer: pi^2 / sin(pi * r)^2 -
  //   trigamma(1 - x), r = x - round(x) (exact). +-0 and the negative
  //   integers (poles) -> +inf, +inf -> 0, -inf and NaN -> NaN. Within
  //   1e-14 relative for x > 0.
  kTrigamma,
  // log1p_exp(x) = log(1 + e^x) (softplus): t = exp(-|x|), r = log1p(t),
  //   then x > 0 ? x + r : r. Never overflows: +inf -> +inf, -inf -> 0,
  //   huge x -> x, tiny -> log1p(exp(x)).
  kLog1pExp,
  // logistic(x) = 1 / (1 + e^-x): t = exp(-|x|), then x >= 0 ? 1 / (1 + t)
  //   : t / (1 + t). +inf -> 1, -inf -> 0, 0 -> 0.5; t never overflows.
  kLogistic,
};
inline constexpr int kNumFns = static_cast<int>(Fn::kLogistic) + 1;

std::string_view FnName(Fn fn);

// y[i] = fn(x[i]) for i in [0, n). y may be x; otherwise they must not
// overlap. n <= 0 does nothing.
void Eval(Fn fn, const double* x, double* y, int64_t n);
// fn(x): the same bits as Eval on one element.
double Eval(Fn fn, double x);

// y[i] = a[i]^b[i] (SLEEF pow, see above); y may be a or b.
void Pow(const double* a, const double* b, double* y, int64_t n);
double Pow(double a, double b);

// log(sum_i exp(x[i])) of x[0, n), the log_sum_exp primitive's value: any
// NaN -> NaN; else m = max x[i], k = the first index holding it; m = -inf
// (every x[i] = -inf, or n = 0) -> -inf; m = +inf -> +inf; else
// s = +0 + exp(x[i] - m) for each i != k in index order, and the result is
// m + log1p(s). (Two finite values give hi + log1p(exp(lo - hi)), bit for
// bit mcmc's SamplerLogSumExp.)
double LogSumExp(const double* x, int64_t n);
// y[l] = LogSumExp(x + l * n, n) for l in [0, lanes): the same bits, with
// the exps of all the lanes run through the vector path.
void LogSumExpLanes(const double* x, int64_t lanes, int64_t n, double* y);

inline double Exp(double x) { return Eval(Fn::kExp, x); }
inline double Log(double x) { return Eval(Fn::kLog, x); }
inline double Log1p(double x) { return Eval(Fn::kLog1p, x); }
inline double Expm1(double x) { return Eval(Fn::kExpm1, x); }
inline double Tanh(double x) { return Eval(Fn::kTanh, x); }
inline double Sin(double x) { return Eval(Fn::kSin, x); }
inline double Cos(double x) { return Eval(Fn::kCos, x); }
inline double Tan(double x) { return Eval(Fn::kTan, x); }
inline double Atan(double x) { return Eval(Fn::kAtan, x); }
inline double Lgamma(double x) { return Eval(Fn::kLgamma, x); }
inline double Erfc(double x) { return Eval(Fn::kErfc, x); }
inline double Digamma(double x) { return Eval(Fn::kDigamma, x); }
inline double Trigamma(double x) { return Eval(Fn::kTrigamma, x); }
inline double Log1pExp(double x) { return Eval(Fn::kLog1pExp, x); }
inline double Logistic(double x) { return Eval(Fn::kLogistic, x); }

// The instruction-set variants, for tests and benchmarks. Every variant
// gives every function the same bits; Eval uses ActiveIsa().
enum class Isa : int8_t { kPurec, kSse2, kSse4, kAvx, kAvx512 };
std::string_view IsaName(Isa isa);  // SLEEF's: "purec", ..., "avx512fnofma"
// The variants this CPU runs, narrowest first (purec; on x86-64 also sse2
// and whichever of sse4, avx, avx512fnofma it has).
std::vector<Isa> SupportedIsas();
Isa ActiveIsa();  // the widest supported
// Eval, Pow and LogSumExpLanes with variant `isa`, which must be supported
// (checked: an unsupported one aborts). The scalar forms run `isa` on a
// vector holding the one value.
void EvalWith(Isa isa, Fn fn, const double* x, double* y, int64_t n);
double EvalWith(Isa isa, Fn fn, double x);
void PowWith(Isa isa, const double* a, const double* b, double* y, int64_t n);
double PowWith(Isa isa, double a, double b);
void LogSumExpLanesWith(Isa isa, const double* x, int64_t lanes, int64_t n, double* y);

}  // namespace autobatch::math

#endif  // AUTOBATCH_SUPPORT_MATH_MATH_H_
