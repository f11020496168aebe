# The checker library's instruction-set clones, read from its symbol table: every target_clones copy is
# keyed on an x86-64 ISA level (arch=x86-64-v2/v3/v4, chosen by the CPU's features; arch=<a CPU model>
# would be chosen only on that very model, every other CPU falling to the baseline copy), the AVX2 + FMA
# level is among them, and nothing calls libm's fma (in the baseline copy that is a software routine, many
# times slower than a product and a sum: an exact a * b + c needs no fused instruction). The x86-64-v3
# clone (or, under clang before 18, which keys the clones on features, the fma clone) is required.
# Run: cmake -DNM=<nm> -DLIB=<libmemcert_checker.a> [-DCOMPILER=<CMAKE_CXX_COMPILER_ID>] -P kernel_clones.cmake
if(NOT DEFINED NM OR NOT DEFINED LIB)
  message(FATAL_ERROR "kernel_clones.cmake: pass -DNM=<nm> -DLIB=<the checker library>")
endif()
execute_process(COMMAND "${NM}" "${LIB}" OUTPUT_VARIABLE syms ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kernel_clones.cmake: ${NM} ${LIB} failed: ${err}")
endif()
set(problems "")
string(REGEX MATCHALL "[ \t]U[ \t]+fma[fl]?(@[^\n]*)?\n" libm_fma "${syms}")
if(libm_fma)
  list(APPEND problems "the checker calls libm's fma (an exact a * b + c needs none)")
endif()
string(REGEX MATCHALL "\\.arch_[A-Za-z0-9_-]+" arches "${syms}")
list(REMOVE_DUPLICATES arches)
set(v3 OFF)
foreach(a ${arches})
  if(a MATCHES "^\\.arch_x86[_-]64[_-]v3")
    set(v3 ON)
  elseif(NOT a MATCHES "^\\.arch_x86[_-]64[_-]v[24]")
    list(APPEND problems "a clone keyed on a CPU model rather than an ISA level: ${a}")
  endif()
endforeach()
if(NOT v3 AND COMPILER STREQUAL "GNU")
  list(APPEND problems "no x86-64-v3 (AVX2 + FMA) clone")
endif()
# clang before 18 keys the copies on features: its AVX2 + FMA copy is the ".fma" clone.
string(REGEX MATCH "\\.fma\\.[0-9]+" fma_clone "${syms}")
if(NOT v3 AND NOT fma_clone AND COMPILER MATCHES "Clang")
  list(APPEND problems "no x86-64-v3 (AVX2 + FMA) clone nor a clone keyed on fma")
endif()
if(problems)
  string(REPLACE ";" "\n  " text "${problems}")
  message(FATAL_ERROR "checker clones:\n  ${text}")
endif()
message(STATUS "checker clones: ${arches}${fma_clone}; no libm fma")
