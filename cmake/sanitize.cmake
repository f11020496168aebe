# Sanitizer and fuzzing instrumentation for the whole build (included from the top-level CMakeLists.txt
# before any target is defined).
#   -DMEMCERT_SANITIZE=address,undefined   every target built with these sanitizers (the test suite then
#                                          runs under them); undefined behaviour aborts (no recovery).
#   -DMEMCERT_FUZZ=ON                      (clang only) coverage instrumentation for libFuzzer and the
#                                          harnesses of tests/fuzz/ (see scripts/fuzz.sh).
set(MEMCERT_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined (empty: none)")
option(MEMCERT_FUZZ "Build the libFuzzer harnesses in tests/fuzz (clang)" OFF)
if(MEMCERT_SANITIZE)
  add_compile_options(-fsanitize=${MEMCERT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${MEMCERT_SANITIZE})
endif()
if(MEMCERT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MEMCERT_FUZZ needs clang (e.g. CXX=clang++-14); see scripts/fuzz.sh")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
