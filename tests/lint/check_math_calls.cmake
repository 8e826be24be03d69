# Fails when a bit-stable source computes a transcendental function with the
# C library (<cmath>) or Eigen's packet math instead of support/math/math.h,
# the one definition every bit-stable path shares (docs/DESIGN.md,
# "Determinism"). Run by CTest as
#   cmake -DSOURCE_DIR=<root> -P check_math_calls.cmake
# and fails listing every call, with its file and line. Comments and string
# literals are not scanned. tests/ is not scanned (tests compare against
# long-double references).
cmake_minimum_required(VERSION 3.25)

set(names "exp|exp2|expm1|log|log2|log10|log1p|pow|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|lgamma|tgamma|erf|erfc|cbrt|hypot|sincos")
# std::exp(, ::exp(, expf( / expl(, __builtin_exp(
set(qualified_call "(std::|[^A-Za-z0-9_]::|__builtin_)(${names})[fl]?[ \t]*\\(|(^|[^A-Za-z0-9_:.>])(${names})[fl][ \t]*\\(")
# exp(x) on a double; in IR builders these are the frontend's functions.
set(plain_call "(^|[^A-Za-z0-9_:.>])(${names})[ \t]*\\(")
# Eigen: array.exp(), array.pow(y), scalar_exp_op, pexp(...)
set(eigen_call "\\.(exp|log|log1p|expm1|tanh|sin|cos|tan|atan|lgamma|erfc|digamma|logistic)\\(\\)|\\.pow\\(|scalar_(exp|log|log1p|expm1|tanh|sin|cos|pow|lgamma|erfc)_op|[^A-Za-z0-9_]p(exp|log|log1p|expm1|tanh|sin|cos)[ \t]*\\(")

# Files outside the bit-stable promise, each with its reason.
set(exempt
  # Diagnostics (R-hat, ESS, MCSE quantiles) are outside the promise: they
  # also use vector-width-dependent reductions (docs/DESIGN.md).
  "mcmc/output/diagnostics.cc"
  # Times SLEEF against the C library's functions.
  "bench/math_bench.cc"
  # The scalar baselines a user would write, with the C library's math;
  # only timed, never compared bit for bit.
  "bench/libm_targets.cc"
  # PeaNutsNative: the hand-written native baseline vm_bench times (what a
  # user would write, with std::tanh); never compared bit for bit.
  "samples/peanuts/peanuts.cc"
)
# IR builders: their exp(...), log1p(...), ... take Values and emit the
# primitives (frontend/value.h); C library calls are still refused there.
set(ir_builders
  "frontend/value.h"        # the frontend functions themselves
  "frontend/value.cc"
  "mcmc/batched/batched_hmc.cc"   # per-example sampler programs
  "mcmc/batched/batched_nuts.cc"
  "mcmc/batched/batched_rwmh.cc"
  "mcmc/batched/model_kernel.cc"
  "mcmc/model/distributions.cc"   # Stan's distributions built from Values
  "mcmc/model/distributions_rng.cc"  # Stan's _rng functions built from Values
  "mcmc/model/transforms.cc"     # Stan's constraint transforms built from Values
  "samples/gradients/log_densities.cc"  # log densities as programs
  "samples/models/mixture.cc"           # example models (log, log1p on Values)
  "samples/models/poisson_regression.cc"
)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_math_calls.cmake: pass -DSOURCE_DIR=<project root>")
endif()
if(NOT FIXTURE)  # the self-test's fixture has none of these files
  foreach(path IN LISTS exempt ir_builders)
    if(NOT EXISTS "${SOURCE_DIR}/${path}")
      list(APPEND violations "${path}: listed in check_math_calls.cmake but missing; update the list")
    endif()
  endforeach()
endif()
set(folders support ir passes backends vm codegen frontend mcmc samples tools bench)
set(scanned 0)
foreach(folder IN LISTS folders)
  file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}"
       "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.cc"
       "${SOURCE_DIR}/${folder}/*.def" "${SOURCE_DIR}/${folder}/*.inc")
  foreach(source IN LISTS sources)
    # support/math/ is where the definitions live.
    if(source IN_LIST exempt OR source MATCHES "^support/math/")
      continue()
    endif()
    math(EXPR scanned "${scanned} + 1")
    file(STRINGS "${SOURCE_DIR}/${source}" lines)
    set(number 0)
    foreach(line IN LISTS lines)
      math(EXPR number "${number} + 1")
      # String literals, then comments (a // inside a string is gone by then).
      string(REGEX REPLACE "\"([^\"\\\\]|\\\\.)*\"" "\"\"" code "${line}")
      string(REGEX REPLACE "//.*$" "" code "${code}")
      # One MATCHES per if(): if() evaluates every operand of an OR, and a
      # failed MATCHES would clear CMAKE_MATCH_0.
      set(hit "")
      if(code MATCHES "${qualified_call}")
        set(hit "${CMAKE_MATCH_0}")
      elseif(code MATCHES "${eigen_call}")
        set(hit "${CMAKE_MATCH_0}")
      elseif(NOT source IN_LIST ir_builders)
        if(code MATCHES "${plain_call}")
          set(hit "${CMAKE_MATCH_0}")
        endif()
      endif()
      if(NOT hit STREQUAL "")
        string(STRIP "${hit}" hit)
        list(APPEND violations "${source}:${number}: ${hit}")
      endif()
    endforeach()
  endforeach()
endforeach()
if(scanned EQUAL 0)
  list(APPEND violations "no sources found under ${SOURCE_DIR} (is SOURCE_DIR right?)")
endif()
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "Transcendental functions computed outside support/math/math.h "
    "(call math::Exp, math::Log, ... instead, so every path and build gets the same "
    "bits; or, for code outside the bit-stable promise, list the file in "
    "tests/lint/check_math_calls.cmake with its reason):\n  ${text}")
endif()
message(STATUS "math lint: ${scanned} files, no transcendental outside support/math")
