// SLEEF's deterministic functions in scalar C (purec), for every machine
// (sleef_isa.h).
#include <sleef.h>

#include "support/math/sleef_isa.h"

#define AB_ISA_NAME "purec"
#define AB_ISA_FUNCTIONS PurecFunctions
#define AB_ISA_VECTOR double
#define AB_ISA_WIDTH 1
#define AB_ISA_LOAD(p) (*(p))
#define AB_ISA_STORE(p, v) (*(p) = (v))
#define AB_ISA_SET1(x) (x)
#define AB_ISA_FIRST(v) (v)
#define AB_SLEEF(name, ulp) Sleef_cinz_##name##d1_u##ulp##purec
#include "support/math/sleef_functions.inc"
