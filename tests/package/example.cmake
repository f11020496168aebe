# examples/eigen_boost against the installed package (ctest test "example_eigen_boost"): install BUILD_DIR into
# a fresh prefix WORK/prefix, configure the example with find_package(memcert) against that prefix only,
# build it and run it (certified rank, kernel and enclosure rank, each certificate re-verified).
# Run: cmake -DBUILD_DIR=... -DSRC=... -DWORK=... -DCONFIG=... -DCXX=... -P example.cmake
foreach(v BUILD_DIR SRC WORK CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "example.cmake: pass -D${v}=...")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK}")
set(prefix "${WORK}/prefix")
set(config_arg "")
if(CONFIG)
  set(config_arg --config ${CONFIG})
endif()
run_step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" ${config_arg})
run_step("example configure" ${CMAKE_COMMAND} -S "${SRC}/examples/eigen_boost" -B "${WORK}/build"
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
run_step("example build" ${CMAKE_COMMAND} --build "${WORK}/build")
find_program(example_exe eigen_boost PATHS "${WORK}/build" "${WORK}/build/Release" NO_DEFAULT_PATH)
run_step("example run" "${example_exe}")
if(NOT step_output MATCHES "^rank 2 VALID\nkernel [^\n]* A\\*x = 0\nenclosure rank >= 4 VALID\n$")
  message(FATAL_ERROR "eigen_boost printed: ${step_output}")
endif()
message(STATUS "eigen_boost: ${step_output}")
