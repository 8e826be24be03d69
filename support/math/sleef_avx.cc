// SLEEF's deterministic functions for AVX (sleef_isa.h), compiled with
// that instruction set's flag (CMakeLists.txt); run only where math.cc's
// CPU check found it.
#include <immintrin.h>
#include <sleef.h>

#include "support/math/sleef_isa.h"

#define AB_ISA_NAME "avx"
#define AB_ISA_FUNCTIONS AvxFunctions
#define AB_ISA_VECTOR __m256d
#define AB_ISA_WIDTH 4
#define AB_ISA_INTRINSICS _mm256
#define AB_SLEEF(name, ulp) Sleef_cinz_##name##d4_u##ulp##avx
#include "support/math/sleef_functions.inc"
