// The small-prime routes of modp.hpp (p < 2^26): the blocked elimination on integer-valued doubles
// (modp_dense_blocked.hpp, its kernels cloned for AVX-512, AVX2 + FMA and the baseline x86-64, the copy
// chosen once at run time by the CPU's features), or their portable twins in 64-bit integers.
#include <cstdint>
#include <utility>
#include <vector>

#include "memcert/checker/checker.hpp"
#include "kernel/modp.hpp"

// The ISA levels: x86-64-v3 is AVX2 + FMA + BMI1/2 (Haswell and every later AVX2 CPU: Skylake, Zen, ...),
// x86-64-v4 adds AVX-512F/BW/CD/DQ/VL; a copy is picked by the CPU's features, never by its model name
// (arch=haswell would be picked on a Haswell only). Clang before 18 accepts arch=x86-64-vN clones but its
// resolver never picks them: there the copies are keyed on features (FMA implies AVX, all the kernels
// need).
#if defined(__clang__) && __clang_major__ < 18
#define MODP_DENSE_TARGETS __attribute__((target_clones("avx512f", "fma", "default")))
#else
#define MODP_DENSE_TARGETS __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#include "kernel/modp_dense_blocked.hpp"
#undef MODP_DENSE_TARGETS

namespace memcert_checker {

namespace {
// The CPU runs the AVX-512 copy (32 vector registers of 512 bits): dense_rank_blocked's wide tiles fit
// them. The same test as the clone resolver's (above), so the tile width always matches the copy.
bool dense_wide_vectors() {
  __builtin_cpu_init();
#if defined(__clang__) && __clang_major__ < 18
  return __builtin_cpu_supports("avx512f");
#else
  return __builtin_cpu_supports("x86-64-v4");
#endif
}

// The portable twin of dense_reduce: x mod q in [0, q) in 64-bit integers (|x| <= 2^52: exact).
double residue_portable(double x, std::int64_t q) {
  const std::int64_t r = static_cast<std::int64_t>(x) % q;
  return static_cast<double>(r < 0 ? r + q : r);
}
}  // namespace

void residues_dense(double* x, std::size_t len, std::uint64_t p) {
  if (checker_portable()) {  // the portable twin: one residue at a time
    for (std::size_t j = 0; j < len; ++j) x[j] = residue_portable(x[j], static_cast<std::int64_t>(p));
    return;
  }
  dense_reduce_span(x, len, static_cast<double>(p), 1.0 / static_cast<double>(p));
}

namespace {
// The portable twin of rank_mod_p_dense: the textbook elimination in 64-bit integers (modp.cpp).
std::size_t rank_mod_p_portable(const double* w, std::size_t m, std::size_t n, std::size_t ld, std::uint64_t p,
                                std::uint64_t* det) {
  const ModP f{p};
  ModMat a(m, std::vector<std::uint64_t>(n));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) a[i][j] = static_cast<std::uint64_t>(w[i * ld + j]);
  const std::size_t rank = rank_mod_p_reference(a, f);
  if (det) *det = (m == n && rank == m) ? det_mod_p_reference(std::move(a), f) : 0;
  return rank;
}
}  // namespace

void residues_dense(double* dst, const double* src, std::size_t len, std::uint64_t p) {
  if (checker_portable()) {  // the portable twin: one residue at a time
    for (std::size_t j = 0; j < len; ++j) dst[j] = residue_portable(src[j], static_cast<std::int64_t>(p));
    return;
  }
  dense_reduce_copy(dst, src, len, static_cast<double>(p), 1.0 / static_cast<double>(p));
}

std::size_t rank_mod_p_dense(std::vector<double>& w, std::size_t m, std::size_t n, std::uint64_t p,
                             std::uint64_t* det, unsigned threads) {
  return rank_mod_p_dense(w.data(), m, n, n, p, det, threads);
}

std::size_t rank_mod_p_dense(double* w, std::size_t m, std::size_t n, std::size_t ld, std::uint64_t p,
                             std::uint64_t* det, unsigned threads) {
  if (checker_portable()) return rank_mod_p_portable(w, m, n, ld, p, det);
  static const bool wide = dense_wide_vectors();
  return dense_rank_blocked(w, m, n, ld, p, det, threads, wide);
}

}  // namespace memcert_checker
