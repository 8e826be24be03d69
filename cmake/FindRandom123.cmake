# FindRandom123: Random123 (counter-based random numbers, headers only), which
# ships neither a CMake config nor a pkg-config file. Used by this project's
# build and by the installed package's autobatchConfig.cmake.
#
# Defines Random123_FOUND, Random123_INCLUDE_DIR and the imported target
# Random123::Random123 (its include directory, as SYSTEM).
find_path(Random123_INCLUDE_DIR Random123/philox.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Random123 REQUIRED_VARS Random123_INCLUDE_DIR)
if(Random123_FOUND AND NOT TARGET Random123::Random123)
  add_library(Random123::Random123 INTERFACE IMPORTED)
  set_target_properties(Random123::Random123 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${Random123_INCLUDE_DIR}")
endif()
mark_as_advanced(Random123_INCLUDE_DIR)
