#pragma once
// The checker's blocked elimination over F_p (src/checker/kernel/modp_dense_blocked.hpp), compiled once for
// each instruction set modp_dense.cpp clones it for (modp_dense_x86_64*.cpp, one translation unit each),
// every copy callable by name: tests compare them with GMP whichever copy the CPU would pick at run time.
#include <cstddef>
#include <cstdint>

namespace modp_dense_copies {

struct Copy {
  const char* isa;  // "x86-64" (the build's baseline, as the default clone: no FMA), "x86-64-v3", "x86-64-v4"
  bool runs;        // this CPU has the instruction set
  // The routes of rank_mod_p_dense (strided form; wide: its 512-bit register tiles, else 256-bit ones) and
  // residues_dense (both forms), by this copy.
  std::size_t (*rank)(double* w, std::size_t m, std::size_t n, std::size_t ld, std::uint64_t p, std::uint64_t* det,
                      unsigned threads, bool wide);
  void (*residues)(double* x, std::size_t len, std::uint64_t p);
  void (*residues_copy)(double* dst, const double* src, std::size_t len, std::uint64_t p);
};

Copy x86_64();
Copy x86_64_v3();
Copy x86_64_v4();

}  // namespace modp_dense_copies

// The body of each copy's translation unit, after it has defined MODP_DENSE_TARGETS and included
// kernel/modp_dense_blocked.hpp.
#define MODP_DENSE_COPY(NAME, ISA, RUNS)                                                                     \
  namespace modp_dense_copies {                                                                           \
  Copy NAME() {                                                                                           \
    Copy c;                                                                                               \
    c.isa = ISA;                                                                                          \
    c.runs = RUNS;                                                                                        \
    c.rank = [](double* w, std::size_t m, std::size_t n, std::size_t ld, std::uint64_t p, std::uint64_t* det, \
                unsigned threads, bool wide) {                                                        \
      return memcert_checker::dense_rank_blocked(w, m, n, ld, p, det, threads, wide);                     \
    };                                                                                                    \
    c.residues = [](double* x, std::size_t len, std::uint64_t p) {                                        \
      memcert_checker::dense_reduce_span(x, len, static_cast<double>(p), 1.0 / static_cast<double>(p));   \
    };                                                                                                    \
    c.residues_copy = [](double* dst, const double* src, std::size_t len, std::uint64_t p) {             \
      memcert_checker::dense_reduce_copy(dst, src, len, static_cast<double>(p), 1.0 / static_cast<double>(p)); \
    };                                                                                                    \
    return c;                                                                                             \
  }                                                                                                       \
  }
