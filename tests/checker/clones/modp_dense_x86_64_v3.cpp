// The blocked elimination for x86-64-v3 (AVX2 + FMA), as modp_dense.cpp's "arch=x86-64-v3" clone (the
// same target attribute, one function each), callable as modp_dense_copies::x86_64_v3().
#define MODP_DENSE_TARGETS __attribute__((target("arch=x86-64-v3")))
#include "kernel/modp_dense_blocked.hpp"
#include "modp_dense_copies.hpp"

namespace {
bool runs_v3() {
  __builtin_cpu_init();
#if defined(__clang__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2");
#else
  return __builtin_cpu_supports("x86-64-v3");
#endif
}
}  // namespace

MODP_DENSE_COPY(x86_64_v3, "x86-64-v3", runs_v3())
