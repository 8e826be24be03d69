// SLEEF's deterministic functions for AVX-512F, the avx512fnofma variant
// (sleef_isa.h), compiled with that instruction set's flag (CMakeLists.txt);
// run only where math.cc's CPU check found it.
#include <immintrin.h>
#include <sleef.h>

#include "support/math/sleef_isa.h"

#define AB_ISA_NAME "avx512fnofma"
#define AB_ISA_FUNCTIONS Avx512Functions
#define AB_ISA_VECTOR __m512d
#define AB_ISA_WIDTH 8
#define AB_ISA_INTRINSICS _mm512
#define AB_SLEEF(name, ulp) Sleef_cinz_##name##d8_u##ulp##avx512fnofma
#include "support/math/sleef_functions.inc"
