# MPI for `memcert sweep` (optional): MEMCERT_MPI=AUTO (default) uses MPI when CMake finds it, ON requires
# it, OFF never uses it. Only the sweep command's sweep_mpi.cpp includes <mpi.h>; the checker and the
# engine libraries never link MPI. Included after the memcert target exists.
set(MEMCERT_MPI AUTO CACHE STRING "Build memcert sweep with MPI sharding: AUTO, ON or OFF")
set_property(CACHE MEMCERT_MPI PROPERTY STRINGS AUTO ON OFF)
set(MEMCERT_HAVE_MPI OFF)
if(NOT MEMCERT_MPI STREQUAL "OFF")
  if(MEMCERT_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(MEMCERT_HAVE_MPI ON)
    target_link_libraries(memcert PRIVATE MPI::MPI_C)
    # The C API only: the deprecated C++ bindings would need libmpi_cxx.
    target_compile_definitions(memcert PRIVATE MEMCERT_HAVE_MPI=1 OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  endif()
endif()
message(STATUS "memcert sweep: MPI ${MEMCERT_HAVE_MPI}")
