// SLEEF's deterministic functions for SSE2 (sleef_isa.h), compiled with
// that instruction set's flag (CMakeLists.txt); run only where math.cc's
// CPU check found it.
#include <immintrin.h>
#include <sleef.h>

#include "support/math/sleef_isa.h"

#define AB_ISA_NAME "sse2"
#define AB_ISA_FUNCTIONS Sse2Functions
#define AB_ISA_VECTOR __m128d
#define AB_ISA_WIDTH 2
#define AB_ISA_INTRINSICS _mm
#define AB_SLEEF(name, ulp) Sleef_cinz_##name##d2_u##ulp##sse2
#include "support/math/sleef_functions.inc"
