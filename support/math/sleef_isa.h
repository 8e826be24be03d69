// SLEEF's deterministic functions compiled for one instruction set each
// (internal to support/math; math.h is the interface). Each variant lives in
// a translation unit of its own, built with its instruction set's flag
// (support/math/CMakeLists.txt), since sleef.h declares the AVX-512 and AVX
// functions only under __AVX512F__ / __AVX__; math.cc picks one at run time.
#ifndef AUTOBATCH_SUPPORT_MATH_SLEEF_ISA_H_
#define AUTOBATCH_SUPPORT_MATH_SLEEF_ISA_H_

#include <cstdint>

namespace autobatch::math::internal {

// The functions SLEEF provides, in math::Fn order (kExp .. kErfc).
inline constexpr int kNumSleefFns = 11;

using UnaryLoop = void (*)(const double* x, double* y, int64_t n);
using UnaryOne = double (*)(double x);
using BinaryLoop = void (*)(const double* a, const double* b, double* y, int64_t n);
using BinaryOne = double (*)(double a, double b);

struct IsaFunctions {
  const char* name;  // SLEEF's name of the variant: "purec", "sse2", ...
  // y[i] = f(x[i]), i < n, in vectors of the variant's width (the last one
  // padded); y may be x.
  UnaryLoop unary[kNumSleefFns];
  // f(x) for one value: the variant on a vector holding x.
  UnaryOne unary_one[kNumSleefFns];
  BinaryLoop pow;
  BinaryOne pow_one;
};

const IsaFunctions& PurecFunctions();
// x86-64 only (AUTOBATCH_MATH_X86); the caller checks the CPU first.
const IsaFunctions& Sse2Functions();
const IsaFunctions& Sse4Functions();
const IsaFunctions& AvxFunctions();
const IsaFunctions& Avx512Functions();

}  // namespace autobatch::math::internal

#endif  // AUTOBATCH_SUPPORT_MATH_SLEEF_ISA_H_
