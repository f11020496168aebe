# The checker's independence as a test: every file under src/checker and include/memcert/checker may
# include only (a) headers of the checker itself (quoted names of its rooms, kernel/... and kinds/..., or
# memcert/checker/...), (b) gmp.h, gmpxx.h, mpfr.h, (c) C++ standard library headers, and (d) the
# compiler's own x86 intrinsics header immintrin.h (part of the toolchain, no code of anyone else's: the
# checker's SHA-256 uses the SHA instructions through it when the CPU has them).
# Run: cmake -DSRC=<source dir> -P independence.cmake
if(NOT DEFINED SRC)
  message(FATAL_ERROR "independence.cmake: pass -DSRC=<source dir>")
endif()

# The C++ standard library headers (C++20) plus the <c...> wrappers of the C library.
set(STD_HEADERS
  algorithm any array atomic barrier bit bitset cassert cctype cerrno cfenv cfloat charconv chrono cinttypes
  climits clocale cmath codecvt compare complex concepts condition_variable coroutine csetjmp csignal
  cstdarg cstddef cstdint cstdio cstdlib cstring ctime cuchar cwchar cwctype deque exception execution
  expected filesystem format forward_list fstream functional future initializer_list iomanip ios iosfwd
  iostream istream iterator latch limits list locale map memory memory_resource mutex new numbers numeric
  optional ostream queue random ranges ratio regex scoped_allocator semaphore set shared_mutex source_location
  span sstream stack stdexcept stop_token streambuf string string_view syncstream system_error thread tuple
  type_traits typeindex typeinfo unordered_map unordered_set utility valarray variant vector version)
set(THIRD_PARTY_ALLOWED gmp.h gmpxx.h mpfr.h immintrin.h)

# Appends to `out_var` a message if one #include line `line` of file `f` is not allowed.
function(check_include f line out_var)
  set(bad "")
  get_filename_component(dir "${f}" DIRECTORY)
  if(line MATCHES "\\.\\.")
    set(bad "${f}: '..' in an include: ${line}")  # memcert/checker/../numeric/... must not pass
  elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
    set(h "${CMAKE_MATCH_1}")
    list(FIND STD_HEADERS "${h}" is_std)
    list(FIND THIRD_PARTY_ALLOWED "${h}" is_allowed)
    if(NOT h MATCHES "^memcert/checker/" AND is_std EQUAL -1 AND is_allowed EQUAL -1)
      set(bad "${f}: <${h}>")
    endif()
  elseif(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
    # A quoted include must name a checker header: memcert/checker/..., or a file of src/checker by its
    # room ("kernel/json.hpp", "kinds/dana24/dana24_forward.hpp", the checker's own include root).
    set(h "${CMAKE_MATCH_1}")
    get_filename_component(checker_dir "${SRC}/src/checker" ABSOLUTE)
    get_filename_component(target "${checker_dir}/${h}" ABSOLUTE)
    if(NOT h MATCHES "^memcert/checker/" AND (NOT h MATCHES "^(kernel|kinds)/" OR NOT EXISTS "${target}"))
      set(bad "${f}: \"${h}\"")
    endif()
  else()
    set(bad "${f}: unparsed include line: ${line}")  # e.g. a macro include
  endif()
  if(bad)
    set(${out_var} ${${out_var}} "${bad}" PARENT_SCOPE)
  endif()
endfunction()

# Self-test of the rules, so a broken regex cannot make this test pass vacuously.
set(probe "${SRC}/src/checker/kernel/verify.cpp")
foreach(bad_line "#include \"memcert/numeric/rational.hpp\"" "#include <nlohmann/json.hpp>"
                 "#include <memcert/linalg/qmat.hpp>" "#include \"../numeric/modp.hpp\""
                 "#include <memcert/checker/../numeric/modp.hpp>" "#include HEADER_MACRO"
                 "#include <Eigen/Dense>" "#include \"no_such_file.hpp\"" "#include \"json.hpp\""
                 "#include \"kernel/no_such_file.hpp\"" "#include \"util/error.hpp\"")
  set(found "")
  check_include("${probe}" "${bad_line}" found)
  if(NOT found)
    message(FATAL_ERROR "independence.cmake self-test: the rules accepted ${bad_line}")
  endif()
endforeach()
foreach(good_line "#include <gmpxx.h>" "#include <mpfr.h>" "#include <vector>" "#include \"kernel/json.hpp\""
                  "#include \"memcert/checker/checker.hpp\"")
  set(found "")
  check_include("${probe}" "${good_line}" found)
  if(found)
    message(FATAL_ERROR "independence.cmake self-test: the rules rejected ${good_line}")
  endif()
endforeach()

file(GLOB_RECURSE files "${SRC}/src/checker/*" "${SRC}/include/memcert/checker/*")
if(NOT files)
  message(FATAL_ERROR "independence.cmake: no checker files found under ${SRC}")
endif()
set(violations "")
foreach(f ${files})
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line ${lines})
    check_include("${f}" "${line}" violations)
  endforeach()
endforeach()

# The link lines too: memcert_checker may link only GMP (gmp, gmpxx) and MPFR (the imported targets
# memcert::gmp and memcert::mpfr of cmake/memcertDependencies.cmake).
file(READ "${SRC}/CMakeLists.txt" top)
string(REGEX MATCHALL "target_link_libraries\\([ \t\n]*memcert_checker[^)]*\\)" links "${top}")
if(NOT links)
  list(APPEND violations "CMakeLists.txt: no target_link_libraries(memcert_checker ...) found")
endif()
foreach(link ${links})
  string(REGEX REPLACE "^target_link_libraries\\([ \t\n]*memcert_checker|\\)$" "" deps "${link}")
  separate_arguments(deps)
  foreach(d ${deps})
    if(NOT d MATCHES "^(PUBLIC|PRIVATE|INTERFACE|memcert::gmp|memcert::mpfr)$")
      list(APPEND violations "CMakeLists.txt: memcert_checker links ${d}")
    endif()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " msg)
  message(FATAL_ERROR "The checker must depend only on GMP, MPFR and the standard library:\n  ${msg}")
endif()
list(LENGTH files n)
message(STATUS "checker independence: ${n} files, only allowed includes")
