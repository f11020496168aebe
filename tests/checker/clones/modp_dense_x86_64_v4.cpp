// The blocked elimination for x86-64-v4 (AVX-512), as modp_dense.cpp's "arch=x86-64-v4" clone (the same
// target attribute, one function each), callable as modp_dense_copies::x86_64_v4().
#define MODP_DENSE_TARGETS __attribute__((target("arch=x86-64-v4")))
#include "kernel/modp_dense_blocked.hpp"
#include "modp_dense_copies.hpp"

namespace {
bool runs_v4() {
  __builtin_cpu_init();
#if defined(__clang__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
#else
  return __builtin_cpu_supports("x86-64-v4");
#endif
}
}  // namespace

MODP_DENSE_COPY(x86_64_v4, "x86-64-v4", runs_v4())
