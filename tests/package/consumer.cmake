# The installed package as a consumer sees it (ctest test "package"):
#   1. cmake --install BUILD_DIR into a fresh prefix WORK/prefix: the public headers (memcert.hpp, eigen.hpp
#      and what they include) and no internal one;
#   2. configure examples/consumer (a separate project) with find_package(memcert) against that prefix
#      only, build it and run it (exact rank + independent re-verification must agree, and one call into
#      each paper's library), linked once by the libraries' names (memcert::mahdavi24, ks25, dana24) and
#      once by their earlier names (memcert::mahdavi, ks, dana);
#   3. pkg-config finds memcert.pc in the prefix, names every installed library, and its flags compile and
#      link the same program; so do the same flags with the earlier -l names.
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
# Internals no public header includes: the SIMD and modular kernels, the integer layer, the attention batches,
# threading and memory helpers.
foreach(f linalg/zmat/gram_int16.hpp linalg/zmat/zmat.hpp linalg/nmod/dmod.hpp linalg/kruskal_sample.hpp
          linalg/fmat/nearest_pair.hpp theory/mahdavi24/assumption2_batch.hpp numeric/mpfr_array.hpp
          numeric/double_bits.hpp util/parallel.hpp)
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
set(expected "^rank 2 VALID memcert [0-9]+\\.[0-9]+\\.[0-9]+\npapers T=3 N=4 T=2\n$")
foreach(names current former)
  set(former_arg -DCONSUMER_FORMER_NAMES=OFF)
  if(names STREQUAL "former")
    set(former_arg -DCONSUMER_FORMER_NAMES=ON)
  endif()
  run_step("consumer configure (${names} names)" ${CMAKE_COMMAND} -S "${SRC}/examples/consumer" -B "${WORK}/consumer_${names}"
           -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release ${former_arg}
           -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
  run_step("consumer build (${names} names)" ${CMAKE_COMMAND} --build "${WORK}/consumer_${names}")
  unset(consumer_exe CACHE)
  find_program(consumer_exe consumer PATHS "${WORK}/consumer_${names}" "${WORK}/consumer_${names}/Release" NO_DEFAULT_PATH)
  run_step("consumer run (${names} names)" "${consumer_exe}")
  if(NOT step_output MATCHES "${expected}")
    message(FATAL_ERROR "consumer (${names} names) printed: ${step_output}")
  endif()
  message(STATUS "find_package consumer (${names} names): ${step_output}")
endforeach()

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
  # (A library's earlier name is a symbolic link to the archive of its name: the link's target is listed.)
  set(former_flags " ${flags} ")
  foreach(a IN LISTS archives)
    set(listed "${a}")
    if(IS_SYMLINK "${a}")
      file(READ_SYMLINK "${a}" listed)
      get_filename_component(old "${a}" NAME_WE)
      get_filename_component(new "${listed}" NAME_WE)
      string(REGEX REPLACE "^lib" "" old "${old}")
      string(REGEX REPLACE "^lib" "" new "${new}")
      string(REPLACE " -l${new} " " -l${old} " former_flags "${former_flags}")
    endif()
    get_filename_component(lib "${listed}" NAME_WE)
    string(REGEX REPLACE "^lib" "" lib "${lib}")
    if(NOT " ${flags} " MATCHES " -l${lib} ")
      message(FATAL_ERROR "memcert.pc: Libs lacks -l${lib} (pkg-config printed: ${flags})")
    endif()
  endforeach()
  foreach(old mahdavi ks dana)
    if(NOT former_flags MATCHES " -lmemcert_${old} ")
      message(FATAL_ERROR "install: libmemcert_${old} (the earlier name of a paper's library) missing under ${prefix}")
    endif()
  endforeach()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  separate_arguments(former_flags UNIX_COMMAND "${former_flags}")
  run_step("pkg-config build" ${CXX} "${SRC}/examples/consumer/consumer.cpp" -o "${WORK}/consumer_pc" ${flags})
  run_step("pkg-config run" "${WORK}/consumer_pc")
  if(NOT step_output MATCHES "${expected}")
    message(FATAL_ERROR "pkg-config consumer printed: ${step_output}")
  endif()
  message(STATUS "pkg-config consumer: ${step_output}")
  run_step("pkg-config build (earlier -l names)" ${CXX} "${SRC}/examples/consumer/consumer.cpp" -o "${WORK}/consumer_pc_former"
           ${former_flags})
  run_step("pkg-config run (earlier -l names)" "${WORK}/consumer_pc_former")
  if(NOT step_output MATCHES "${expected}")
    message(FATAL_ERROR "pkg-config consumer (earlier -l names) printed: ${step_output}")
  endif()
endif()
