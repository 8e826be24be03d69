# Checks that #include "folder/..." lines point one way between the layers
# (docs/DESIGN.md, "Layers"): a file in a folder may include only its own
# folder and the folders listed for it below. Run by CTest as
#   cmake -DSOURCE_DIR=<root> -P check_layering.cmake
# and fails listing every include that breaks the order.
cmake_minimum_required(VERSION 3.25)
set(allowed_support "support")
set(allowed_ir "support;ir")
set(allowed_passes "support;ir;passes")
set(allowed_backends "support;ir;backends")
set(allowed_vm "support;ir;backends;vm")
set(allowed_codegen "support;ir;backends;vm;codegen")
set(allowed_frontend "support;ir;passes;backends;vm;codegen;frontend")
set(allowed_mcmc "support;ir;passes;backends;vm;codegen;frontend;mcmc")
# samples/models are example models, which use the MCMC library like any user.
set(allowed_samples "support;ir;backends;vm;frontend;mcmc;samples")
set(allowed_tools "support;ir;passes;backends;vm;codegen;frontend;mcmc;samples;tools")
set(allowed_bench "support;ir;passes;backends;vm;codegen;frontend;mcmc;samples;tools;bench")
# Single headers a folder may include beyond its folders: constant folding
# evaluates through RunPrimitive, the one definition every executor runs
# (passes/constants.h).
set(allowed_headers_passes "backends/kernels.h")
# Inside mcmc/: output and model stand alone; warmup, scalar and batched
# build on the folders before them; mcmc/*.{h,cc} (sampler settings, chain
# streams, Sample()) may use every mcmc folder.
set(mcmc_allowed_output "output")
set(mcmc_allowed_model "model")
set(mcmc_allowed_warmup "model;warmup;.")
set(mcmc_allowed_scalar "model;warmup;scalar;.")
set(mcmc_allowed_batched "model;warmup;scalar;batched;.")

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layering.cmake: pass -DSOURCE_DIR=<project root>")
endif()
set(known_folders support ir passes backends vm codegen frontend mcmc samples tools bench tests)
set(violations "")
foreach(folder support ir passes backends vm codegen frontend mcmc samples tools bench)
  file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}"
       "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.cc" "${SOURCE_DIR}/${folder}/*.def")
  if(NOT sources)
    list(APPEND violations "${folder}/: no sources found (is SOURCE_DIR right?)")
  endif()
  foreach(source IN LISTS sources)
    file(STRINGS "${SOURCE_DIR}/${source}" includes REGEX "^#include \"[a-z_0-9]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_0-9]+)/([^\"]*)\".*" "\\1;\\2" parts "${line}")
      list(GET parts 0 target)
      list(GET parts 1 rest)
      if(NOT target IN_LIST known_folders)
        continue()  # a third-party header such as "absl/..." or "nlohmann/..."
      endif()
      if(NOT target IN_LIST allowed_${folder} AND NOT "${target}/${rest}" IN_LIST allowed_headers_${folder})
        list(JOIN allowed_${folder} ", " allowed_text)
        if(allowed_headers_${folder})
          list(JOIN allowed_headers_${folder} ", " headers_text)
          string(APPEND allowed_text " and ${headers_text}")
        endif()
        list(APPEND violations "${source}: ${line} (${folder}/ may include only ${allowed_text})")
      elseif(folder STREQUAL "mcmc" AND target STREQUAL "mcmc")
        string(REGEX MATCH "^mcmc/([a-z_]+)/" from_sub "${source}")
        set(from_sub "${CMAKE_MATCH_1}")
        string(REGEX MATCH "^([a-z_]+)/" to_sub "${rest}")
        set(to_sub "${CMAKE_MATCH_1}")
        if(to_sub STREQUAL "")
          set(to_sub ".")
        endif()
        if(NOT from_sub STREQUAL "" AND NOT to_sub IN_LIST mcmc_allowed_${from_sub})
          list(JOIN mcmc_allowed_${from_sub} ", " allowed_text)
          list(APPEND violations "${source}: ${line} (mcmc/${from_sub}/ may include only mcmc/ folders ${allowed_text})")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "Includes that break the layer order (docs/DESIGN.md, \"Layers\"):\n  ${text}")
endif()
message(STATUS "layering: every include points one way")
