# Build time of a fresh checkout (README command 1 builds target memcert on 2 cores, without ccache).
# Included from the top-level CMakeLists.txt after every library and the memcert executable exist.
#
# Where the time went (GCC 12, user CPU per translation unit): almost every file includes
# nlohmann/json.hpp, gmpxx.h and often Eigen or CLI11 (3-4 s per file before any code of its own; a claim
# or command file cost 5-9 s in all). A unity build compiles a target's files in a few batches, so each
# batch parses the headers and instantiates the shared templates once: the claim files went from ~6 s
# each to ~1 s, the checker from 75 s to 37 s. What remains is mostly the engine's own Eigen
# decompositions at -O3 (e.g. the dana24 read-out solve, 26 s alone, of which 4 s are headers; -O2 saves
# only 10%), and Eigen::BDCSVD, now instantiated once (memcert/linalg/fmat/eigen_svd.hpp).
# A precompiled header was measured and rejected for the engine: loading it cost more CPU per file than
# parsing saved (the JSON cost is template instantiation, not parsing).
#
# MEMCERT_UNITY_BUILD=OFF compiles file by file (quicker rebuilds while editing one file). CI builds with
# the default, so two files' internal helpers may not share a name within a target (name them after
# their file, e.g. check_ks_at rather than at).
option(MEMCERT_UNITY_BUILD "Compile each memcert target in a few batches of files (unity build)" ON)

# memcert_unity_build(<target> <batch size>): `target` compiled in batches of `batch size` files.
function(memcert_unity_build target batch)
  if(MEMCERT_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH
                                               UNITY_BUILD_BATCH_SIZE ${batch})
  endif()
endfunction()

# The word-size and floating-point kernels keep their own translation units: they carry per-function
# target attributes (AVX2/AVX-512 clones) and file-wide diagnostic pragmas that must not leak into other
# files, and each is small next to the engine's JSON code.
set(MEMCERT_FAST_KERNEL_SOURCES)
foreach(kernel linalg/nmod/dmod linalg/nmod/dmod_gemm linalg/kruskal_sample linalg/kruskal_basis
               linalg/zmat/gram_int16 linalg/zmat/kernel_crt linalg/zmat/multimodular
               linalg/fmat/rump linalg/fmat/sgemm linalg/fmat/symmetric_matvec linalg/fmat/nearest_pair
               cert/rank_tier_cert numeric/exp_bounded model/mha_enclosure theory/mahdavi24/assumption2_batch)
  list(APPEND MEMCERT_FAST_KERNEL_SOURCES ${PROJECT_SOURCE_DIR}/src/${kernel}.cpp)
endforeach()
set_source_files_properties(${MEMCERT_FAST_KERNEL_SOURCES} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
# The same for the certify kernel of trained models (per-function AVX clones).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/model/attention_readout.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

memcert_unity_build(memcert_checker 12)
memcert_unity_build(memcert_core 10)
memcert_unity_build(memcert_mahdavi24 8)
memcert_unity_build(memcert_ks25 8)
memcert_unity_build(memcert_dana24 8)
memcert_unity_build(memcert_proofs 12)
memcert_unity_build(memcert 11)
if(MEMCERT_UNITY_BUILD)
  # The command files' precompiled header (CMakeLists.txt) pays off only file by file: with two batches,
  # building it costs about what parsing CLI11 and nlohmann_json once per batch costs, and both batches
  # would wait for it.
  set_property(TARGET memcert PROPERTY PRECOMPILE_HEADERS "")
endif()
