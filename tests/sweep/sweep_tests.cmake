# `memcert sweep` end-to-end tests (ctest names start with "sweep"). The specs are written by the
# scripts themselves, not read from the repository.
add_test(NAME sweep COMMAND bash ${CMAKE_SOURCE_DIR}/tests/sweep/sweep.sh $<TARGET_FILE:memcert>)
if(MEMCERT_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  # Two ranks on a 2-core machine (CI runs as root, hence --allow-run-as-root).
  add_test(NAME sweep_mpi COMMAND bash ${CMAKE_SOURCE_DIR}/tests/sweep/sweep_mpi.sh $<TARGET_FILE:memcert> ${MPIEXEC_EXECUTABLE})
endif()
