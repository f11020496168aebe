# `memcert sweep` end-to-end tests (ctest names start with "sweep"). The specs are written by the test
# itself, not read from the repository.
add_test(NAME sweep COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/sweep/sweep_test.py $<TARGET_FILE:memcert>)
if(MEMCERT_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  # Two ranks on a 2-core machine; CI runs as root (the test passes --allow-run-as-root).
  add_test(NAME sweep_mpi COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/sweep/sweep_test.py $<TARGET_FILE:memcert>
                                  --mpi ${MPIEXEC_EXECUTABLE})
endif()
# scripts/plot.py needs Debian's python3 with numpy and matplotlib (scripts/install-deps.sh installs them).
find_program(MEMCERT_PLOT_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(MEMCERT_PLOT_PYTHON)
  execute_process(COMMAND ${MEMCERT_PLOT_PYTHON} -c "import numpy, matplotlib" RESULT_VARIABLE _plot_py_rc
                  OUTPUT_QUIET ERROR_QUIET)
  if(_plot_py_rc EQUAL 0)
    add_test(NAME sweep_plot COMMAND ${MEMCERT_PLOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/sweep/plot_test.py ${CMAKE_SOURCE_DIR})
  endif()
endif()
