# The installed package as a consumer sees it (ctest test "package"):
#   1. cmake --install BUILD_DIR into a fresh prefix WORK/prefix: the public headers (memcert.hpp, eigen.hpp
#      and what they include) and no internal one;
#   2. configure examples/consumer (a separate project) with find_package(memcert) against that prefix
#      only, build it and run it (exact rank + independent re-verification must agree);
#   3. pkg-config finds memcert.pc in the prefix, names every installed library, and its flags compile and
#      link the same program.
# The program includes only <memcert/memcert.hpp>.
# Run: cmake -DBUILD_DIR=... -DSRC=... -DWORK=... -DCONFIG=... -DCXX=... -P consumer.cmake
foreach(v BUILD_DIR SRC WORK CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "consumer.cmake: pass -D${v}=...")
  endif()
endforeach()

# Runs a command; fails the test with its output when it exits non-zero.
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
foreach(f include/memcert/version.hpp include/memcert/memcert.hpp include/memcert/eigen.hpp
          include/memcert/linalg/qmat/qmat.hpp include/memcert/checker/checker.hpp bin/memcert)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install: ${prefix}/${f} missing")
  endif()
endforeach()
# Internals no public header includes: the SIMD kernels, the attention batches, threading and memory helpers.
foreach(f linalg/zmat/gram_int16.hpp linalg/kruskal_sample.hpp linalg/fmat/nearest_pair.hpp
          theory/mahdavi24/assumption2_batch.hpp numeric/mpfr_array.hpp numeric/double_bits.hpp util/parallel.hpp)
  if(EXISTS "${prefix}/include/memcert/${f}")
    message(FATAL_ERROR "install: internal header memcert/${f} installed")
  endif()
endforeach()
file(GLOB_RECURSE configs "${prefix}/*/memcertConfig.cmake")
file(GLOB_RECURSE pcs "${prefix}/*/memcert.pc")
if(NOT configs OR NOT pcs)
  message(FATAL_ERROR "install: memcertConfig.cmake or memcert.pc missing under ${prefix}")
endif()

# Configure against the install prefix only: no package registry, no memcert source or build tree.
run_step("consumer configure" ${CMAKE_COMMAND} -S "${SRC}/examples/consumer" -B "${WORK}/consumer"
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
run_step("consumer build" ${CMAKE_COMMAND} --build "${WORK}/consumer")
find_program(consumer_exe consumer PATHS "${WORK}/consumer" "${WORK}/consumer/Release" NO_DEFAULT_PATH)
run_step("consumer run" "${consumer_exe}")
if(NOT step_output MATCHES "^rank 2 VALID memcert [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "consumer printed: ${step_output}")
endif()
message(STATUS "find_package consumer: ${step_output}")

# The same program through pkg-config.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  list(GET pcs 0 pc)
  get_filename_component(pcdir "${pc}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pcdir}")
  run_step("pkg-config" ${PKG_CONFIG} --cflags --libs memcert)
  string(STRIP "${step_output}" flags)
  # Every library installed is on the link line.
  file(GLOB_RECURSE archives "${prefix}/*/libmemcert_*.a")
  if(NOT archives)
    message(FATAL_ERROR "install: no libmemcert_*.a under ${prefix}")
  endif()
  foreach(a IN LISTS archives)
    get_filename_component(lib "${a}" NAME_WE)
    string(REGEX REPLACE "^lib" "" lib "${lib}")
    if(NOT " ${flags} " MATCHES " -l${lib} ")
      message(FATAL_ERROR "memcert.pc: Libs lacks -l${lib} (pkg-config printed: ${flags})")
    endif()
  endforeach()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run_step("pkg-config build" ${CXX} "${SRC}/examples/consumer/consumer.cpp" -o "${WORK}/consumer_pc" ${flags})
  run_step("pkg-config run" "${WORK}/consumer_pc")
  message(STATUS "pkg-config consumer: ${step_output}")
endif()
