# `memcert sweep` end-to-end tests (ctest names start with "sweep"). The specs are written by the test
# itself, not read from the repository.
add_test(NAME sweep COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/sweep/sweep_test.py $<TARGET_FILE:memcert>)
if(MEMCERT_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  # Two ranks on a 2-core machine; CI runs as root (the test passes --allow-run-as-root).
  add_test(NAME sweep_mpi COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/sweep/sweep_test.py $<TARGET_FILE:memcert>
                                  --mpi ${MPIEXEC_EXECUTABLE})
endif()
