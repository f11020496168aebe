# The checker's independence as a test: every file under src/checker and include/memcert/checker may
# include only (a) headers of the checker itself (quoted names resolving inside src/checker, or
# memcert/checker/...), (b) gmp.h, gmpxx.h, mpfr.h, and (c) C++ standard library headers.
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
set(THIRD_PARTY_ALLOWED gmp.h gmpxx.h mpfr.h)

file(GLOB_RECURSE files "${SRC}/src/checker/*" "${SRC}/include/memcert/checker/*")
if(NOT files)
  message(FATAL_ERROR "independence.cmake: no checker files found under ${SRC}")
endif()
set(violations "")
foreach(f ${files})
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
  get_filename_component(dir "${f}" DIRECTORY)
  foreach(line ${lines})
    if(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
      set(h "${CMAKE_MATCH_1}")
      if(h MATCHES "^memcert/checker/")
        continue()
      endif()
      list(FIND STD_HEADERS "${h}" is_std)
      list(FIND THIRD_PARTY_ALLOWED "${h}" is_allowed)
      if(is_std EQUAL -1 AND is_allowed EQUAL -1)
        list(APPEND violations "${f}: <${h}>")
      endif()
    elseif(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      set(h "${CMAKE_MATCH_1}")
      # A quoted include must name a checker header: memcert/checker/... or a file in src/checker.
      if(h MATCHES "^memcert/checker/")
        continue()
      endif()
      get_filename_component(target "${dir}/${h}" ABSOLUTE)
      get_filename_component(checker_dir "${SRC}/src/checker" ABSOLUTE)
      get_filename_component(target_dir "${target}" DIRECTORY)
      if(NOT target_dir STREQUAL checker_dir OR NOT EXISTS "${target}")
        list(APPEND violations "${f}: \"${h}\"")
      endif()
    else()
      list(APPEND violations "${f}: unparsed include line: ${line}")
    endif()
  endforeach()
endforeach()

# The link lines too: memcert_checker may link only GMP (gmp, gmpxx) and MPFR.
file(READ "${SRC}/CMakeLists.txt" top)
string(REGEX MATCHALL "target_link_libraries\\([ \t\n]*memcert_checker[^)]*\\)" links "${top}")
if(NOT links)
  list(APPEND violations "CMakeLists.txt: no target_link_libraries(memcert_checker ...) found")
endif()
foreach(link ${links})
  string(REGEX REPLACE "^target_link_libraries\\([ \t\n]*memcert_checker|\\)$" "" deps "${link}")
  separate_arguments(deps)
  foreach(d ${deps})
    if(NOT d MATCHES "^(PUBLIC|PRIVATE|INTERFACE|\\$\\{GMPXX_LIB\\}|\\$\\{GMP_LIB\\}|\\$\\{MPFR_LIB\\})$")
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
