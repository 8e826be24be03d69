# autobatch_share_library_pch(): one precompiled header of the standard and
# third-party headers our code shares (Eigen, Abseil, nlohmann_json), built
# once and reused by every static library and program defined so far in
# this directory and its subdirectories, as tests/CMakeLists.txt does for
# the tests. Each of about 150 library files parsed those headers anew: 1-6 s
# of a 15-31 s compile (measured on mcmc/sample.cc and stack_vm.cc under the
# sanitizers), in each of CI's four builds. Our own headers stay out, so
# editing one rebuilds only the files that include it.
#
# REUSE_FROM needs the same compile flags as the header's own target, so it
# skips a target with a precompiled header of its own (the `autobatch`
# tool's) and one with per-file options (support/math's per-instruction-set
# files). Every file of ours defines the macros the header's libraries read
# (EIGEN_DONT_PARALLELIZE, Eigen's alignment) the same way: GCC refuses a
# header built under other definitions of them, and clang one built at
# another optimization level. GCC and clang (CI's fuzzer build) only.
function(autobatch_share_library_pch)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang)$")
    return()
  endif()
  set(_source "${PROJECT_BINARY_DIR}/autobatch_library_pch.cc")
  file(CONFIGURE OUTPUT "${_source}"
    CONTENT "// Builds the libraries' shared precompiled header (cmake/autobatchPch.cmake).\n")
  add_library(autobatch_library_pch OBJECT "${_source}")
  target_link_libraries(autobatch_library_pch PRIVATE autobatch_options Eigen3::Eigen
    absl::status absl::statusor absl::strings absl::str_format absl::span
    absl::flat_hash_map nlohmann_json::nlohmann_json)
  target_precompile_headers(autobatch_library_pch PRIVATE
    <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional>
    <set> <sstream> <string> <string_view> <span> <variant> <vector>
    <Eigen/Core> <absl/container/flat_hash_map.h> <absl/status/status.h>
    <absl/status/statusor.h> <absl/strings/str_cat.h> <absl/strings/str_format.h>
    <absl/types/span.h> <nlohmann/json.hpp>)
  _autobatch_reuse_library_pch("${CMAKE_CURRENT_SOURCE_DIR}")
endfunction()

function(_autobatch_reuse_library_pch dir)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_type ${_target} TYPE)
    if(NOT _type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(_own_pch ${_target} PRECOMPILE_HEADERS)
    if(_own_pch)
      continue()
    endif()
    get_target_property(_sources ${_target} SOURCES)
    get_target_property(_source_dir ${_target} SOURCE_DIR)
    set(_per_file_options OFF)
    foreach(_source IN LISTS _sources)
      if(NOT IS_ABSOLUTE "${_source}")
        set(_source "${_source_dir}/${_source}")
      endif()
      get_source_file_property(_options "${_source}" TARGET_DIRECTORY ${_target} COMPILE_OPTIONS)
      if(_options)
        set(_per_file_options ON)
      endif()
    endforeach()
    if(NOT _per_file_options)
      target_precompile_headers(${_target} REUSE_FROM autobatch_library_pch)
      # The header's includes resolve in every target (Eigen's directory is
      # not a default one); private, so nothing is exported.
      target_include_directories(${_target} SYSTEM PRIVATE
        $<TARGET_PROPERTY:Eigen3::Eigen,INTERFACE_INCLUDE_DIRECTORIES>)
    endif()
  endforeach()
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_subdir IN LISTS _subdirs)
    _autobatch_reuse_library_pch("${_subdir}")
  endforeach()
endfunction()
