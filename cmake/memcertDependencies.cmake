# The third-party libraries memcert links, found the same way by memcert's own build and by the installed
# memcertConfig.cmake (so a consumer's link line gets exactly what the libraries were built against).
# GMP and MPFR ship no CMake package: they become the imported targets memcert::gmp and memcert::mpfr.
include(CMakeFindDependencyMacro)

if(NOT TARGET memcert::gmp)
  find_path(MEMCERT_GMP_INCLUDE gmpxx.h)
  find_library(MEMCERT_GMP_LIB gmp)
  find_library(MEMCERT_GMPXX_LIB gmpxx)
  if(NOT MEMCERT_GMP_INCLUDE OR NOT MEMCERT_GMP_LIB OR NOT MEMCERT_GMPXX_LIB)
    message(FATAL_ERROR "memcert needs GMP with its C++ interface (Debian: libgmp-dev)")
  endif()
  add_library(memcert::gmp INTERFACE IMPORTED)
  set_target_properties(memcert::gmp PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${MEMCERT_GMP_INCLUDE}"
    INTERFACE_LINK_LIBRARIES "${MEMCERT_GMPXX_LIB};${MEMCERT_GMP_LIB}")
endif()

if(NOT TARGET memcert::mpfr)
  find_path(MEMCERT_MPFR_INCLUDE mpfr.h)
  find_library(MEMCERT_MPFR_LIB mpfr)
  if(NOT MEMCERT_MPFR_INCLUDE OR NOT MEMCERT_MPFR_LIB)
    message(FATAL_ERROR "memcert needs MPFR (Debian: libmpfr-dev)")
  endif()
  add_library(memcert::mpfr INTERFACE IMPORTED)
  set_target_properties(memcert::mpfr PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${MEMCERT_MPFR_INCLUDE}"
    INTERFACE_LINK_LIBRARIES "${MEMCERT_MPFR_LIB};memcert::gmp")
endif()

find_dependency(ZLIB)
find_dependency(Threads)
find_dependency(nlohmann_json 3)
find_dependency(Eigen3 3.3 NO_MODULE)
# Header-only: Boost.Multiprecision (memcert/eigen.hpp's scalars, the engine's multiprecision estimates).
find_dependency(Boost 1.71 CONFIG)
