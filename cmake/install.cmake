# The public targets and the install rules: what a consumer links, by
# add_subdirectory or by find_package(autobatch) after cmake --install.
#   autobatch::autobatch  the compiler, the VMs and the frontend
#   autobatch::mcmc       the MCMC library (Sample()), with the above
#   autobatch::mpi        Open MPI behind the Communicator interface
#                         (support/mpi/mpi_communicator.h), when built
#                         with MPI (AUTOBATCH_MPI)
# They carry only what a consumer needs: the include directory, C++20,
# Eigen's alignment (CMakeLists.txt, autobatch_options) and the
# dependencies; our warnings, -march=native and -Werror stay on our code.

add_library(autobatch_library INTERFACE)
target_link_libraries(autobatch_library INTERFACE autobatch_frontend)
set_target_properties(autobatch_library PROPERTIES EXPORT_NAME autobatch)
set_target_properties(autobatch_mcmc PROPERTIES EXPORT_NAME mcmc)
add_library(autobatch::autobatch ALIAS autobatch_library)
add_library(autobatch::mcmc ALIAS autobatch_mcmc)
set(_autobatch_mpi_targets)
if(AUTOBATCH_HAVE_MPI)
  set_target_properties(autobatch_mpi PROPERTIES EXPORT_NAME mpi)
  add_library(autobatch::mpi ALIAS autobatch_mpi)
  set(_autobatch_mpi_targets autobatch_mpi)
endif()

# The autobatch tool, which autobatch_compile_program runs
# (cmake/autobatchCompile.cmake).
if(TARGET autobatch)
  set_target_properties(autobatch PROPERTIES EXPORT_NAME cli)
  add_executable(autobatch::cli ALIAS autobatch)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/autobatchCompile.cmake)

if(NOT AUTOBATCH_INSTALL)
  return()
endif()

include(CMakePackageConfigHelpers)
set(_autobatch_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/autobatch")

# Every library the two public targets link, in dependency order (install
# (EXPORT) fails if one is missing). They keep their names in the export,
# autobatch::autobatch_ir and so on; only the two above are the interface.
install(TARGETS
    autobatch_options
    autobatch_support
    autobatch_math
    autobatch_ir
    autobatch_backends
    autobatch_passes_analysis
    autobatch_passes
    autobatch_vm
    autobatch_stack_vm
    autobatch_codegen
    autobatch_frontend
    autobatch_library
    autobatch_mcmc_output
    autobatch_mcmc_model
    autobatch_mcmc_config
    autobatch_mcmc_data
    autobatch_mcmc_distributions
    autobatch_mcmc_transforms
    autobatch_mcmc_program_model
    autobatch_mcmc_warmup
    autobatch_mcmc_scalar
    autobatch_mcmc_batched
    autobatch_mcmc
    ${_autobatch_mpi_targets}
  EXPORT autobatchTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET autobatch)
  install(TARGETS autobatch EXPORT autobatchTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The headers, by their source paths under include/autobatch (the include
# directory autobatch_options exports). Every header of the library folders
# is public: they include one another. Test helpers (testing/) are not.
install(DIRECTORY
    backends codegen frontend ir mcmc passes support vm
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/autobatch
  FILES_MATCHING PATTERN "*.h" PATTERN "*.def"
  PATTERN "testing" EXCLUDE)

install(EXPORT autobatchTargets
  NAMESPACE autobatch::
  DESTINATION ${_autobatch_cmake_dir})
configure_package_config_file(cmake/autobatchConfig.cmake.in
  "${PROJECT_BINARY_DIR}/autobatchConfig.cmake"
  INSTALL_DESTINATION ${_autobatch_cmake_dir})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/autobatchConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
    "${PROJECT_BINARY_DIR}/autobatchConfig.cmake"
    "${PROJECT_BINARY_DIR}/autobatchConfigVersion.cmake"
    cmake/FindRandom123.cmake
    cmake/autobatchCompile.cmake
  DESTINATION ${_autobatch_cmake_dir})
