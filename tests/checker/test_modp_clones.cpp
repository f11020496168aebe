// The small-prime elimination is compiled once per instruction set (target_clones in modp_dense.cpp:
// AVX-512, AVX2 + FMA, and the baseline x86-64 without FMA, where a * b + c is a product and a sum). Each
// copy (tests/checker/clones/) and the copy the CPU picks are run on the same inputs and compared with
// GMP: residues with mpz_fdiv_ui, rank and determinant with an elimination over F_p in GMP integers; the
// buffers the copies leave must be identical too (every value they compute is exact, so fused or not, the
// numbers are the same). Primes from 2 to just below 2^26, among them the largest with each lazy window
// length 16, 15, 8, 7, 2 and 1 (the unreduced sums then come closest to 2^52), and entries p - 1 (the
// fastest-growing sums), so every kernel runs at the bound its exactness rests on. Each copy runs both
// register-tile shapes (512-bit tiles, for CPUs with AVX-512; 256-bit ones, for the others).
#include "catch.hpp"
#include "portable_mode.hpp"

#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../../src/checker/kernel/modp.hpp"
#include "clones/modp_dense_copies.hpp"

using namespace memcert_checker;
using modp_dense_copies::Copy;

namespace {

using U64Mat = std::vector<std::vector<std::uint64_t>>;

// Rank and determinant (0 unless square and non-singular) over F_p by the textbook elimination in GMP
// integers: no doubles, no lazy reduction, no shared code with the checker's routes.
std::pair<std::size_t, std::uint64_t> gmp_rank_det(const U64Mat& a, std::uint64_t p) {
  const std::size_t m = a.size(), n = m ? a[0].size() : 0;
  const mpz_class P(static_cast<unsigned long>(p));
  std::vector<std::vector<mpz_class>> z(m, std::vector<mpz_class>(n));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) z[i][j] = static_cast<unsigned long>(a[i][j]);
  mpz_class det = 1, inv, f;
  std::size_t rank = 0;
  for (std::size_t c = 0; c < n && rank < m; ++c) {
    std::size_t r = rank;
    while (r < m && z[r][c] == 0) ++r;
    if (r == m) continue;
    if (r != rank) std::swap(z[r], z[rank]), det = -det;
    det = det * z[rank][c] % P;
    REQUIRE(mpz_invert(inv.get_mpz_t(), z[rank][c].get_mpz_t(), P.get_mpz_t()) != 0);
    for (std::size_t i = rank + 1; i < m; ++i) {
      if (z[i][c] == 0) continue;
      f = z[i][c] * inv % P;
      for (std::size_t j = c; j < n; ++j) mpz_fdiv_r(z[i][j].get_mpz_t(), mpz_class(z[i][j] - f * z[rank][j]).get_mpz_t(), P.get_mpz_t());
    }
    ++rank;
  }
  if (rank < m || m != n) det = 0;
  mpz_fdiv_r(det.get_mpz_t(), det.get_mpz_t(), P.get_mpz_t());
  return {rank, static_cast<std::uint64_t>(det.get_ui())};
}

std::uint64_t lazy_window(std::uint64_t p) {  // updates an entry in [0, p) takes before a reduction
  const std::uint64_t q = p - 1;
  return ((std::uint64_t{1} << 52) - q) / (q * q);
}

// The largest prime p < 2^26 whose lazy window is exactly `len` (primality by GMP): its unreduced sums
// come closest to 2^52.
std::uint64_t largest_prime_with_window(std::uint64_t len) {
  const std::uint64_t two52 = std::uint64_t{1} << 52;
  std::uint64_t q = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(two52 / len)));
  while (q + len * q * q > two52) --q;                          // q = p - 1: q + len q^2 <= 2^52
  while ((q + 1) + len * (q + 1) * (q + 1) <= two52) ++q;
  for (std::uint64_t p = std::min(q + 1, kDensePrimeLimit - 1); p > 2; --p)
    if (mpz_probab_prime_p(mpz_class(static_cast<unsigned long>(p)).get_mpz_t(), 40) > 0 && lazy_window(p) == len)
      return p;
  return 0;
}

// Every copy that runs here, the one the CPU picks (through modp.hpp's entry points) last.
std::vector<Copy> copies() {
  std::vector<Copy> all;
  for (const Copy& c : {modp_dense_copies::x86_64(), modp_dense_copies::x86_64_v3(), modp_dense_copies::x86_64_v4()}) {
    if (c.runs) all.push_back(c);
    else WARN("this CPU lacks " << c.isa << ": that copy is not run");
  }
  Copy picked;
  picked.isa = "dispatched";
  picked.runs = true;
  picked.rank = [](double* w, std::size_t m, std::size_t n, std::size_t ld, std::uint64_t p, std::uint64_t* det,
                   unsigned threads, bool) { return rank_mod_p_dense(w, m, n, ld, p, det, threads); };  // tiles its own
  picked.residues = [](double* x, std::size_t len, std::uint64_t p) { residues_dense(x, len, p); };
  picked.residues_copy = [](double* dst, const double* src, std::size_t len, std::uint64_t p) {
    residues_dense(dst, src, len, p);
  };
  all.push_back(picked);
  return all;
}

}  // namespace

TEST_CASE("modp clones: every instruction set's copy gives GMP's residues", "[checker][modp][clones]") {
  PortableMode mode(false);  // "dispatched" is the cloned route, also under MEMCERT_CHECKER_PORTABLE=1
  std::mt19937_64 rng(61);
  const long big = long{1} << 52;
  std::vector<std::uint64_t> primes = {2, 3, 65521, 8388593, kDensePrimeLimit - 5};  // 2^26 - 5 = 67108859
  for (std::uint64_t len : {16, 8, 1}) primes.push_back(largest_prime_with_window(len));
  for (std::uint64_t p : primes) {
    const long pl = static_cast<long>(p);
    // The ends of the contract (|x| <= 2^52), multiples of p and their neighbours, then random values.
    std::vector<long> xs = {0, 1, -1, big, -big, big - 1, -big + 1, pl - 1, -pl + 1, pl, -pl};
    for (long q : {1L, 2L, 1000003L, big / pl})
      for (long d : {-1L, 0L, 1L})
        if (q * pl + d <= big) xs.insert(xs.end(), {q * pl + d, -(q * pl + d)});
    for (int t = 0; t < 3000; ++t) xs.push_back(static_cast<long>(rng() % ((std::uint64_t{1} << 53) + 1)) - big);
    std::vector<double> want(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i)
      want[i] = static_cast<double>(mpz_fdiv_ui(mpz_class(xs[i]).get_mpz_t(), static_cast<unsigned long>(p)));
    const std::vector<double> src(xs.begin(), xs.end());
    for (const Copy& c : copies()) {
      INFO(c.isa << ", p = " << p);
      std::vector<double> w = src, v(src.size(), -1.0);
      c.residues(w.data(), w.size(), p);
      c.residues_copy(v.data(), src.data(), src.size(), p);
      for (std::size_t i = 0; i < xs.size(); ++i) {
        INFO("x = " << xs[i]);
        REQUIRE(w[i] == want[i]);
        REQUIRE(v[i] == want[i]);
      }
    }
  }
}

TEST_CASE("modp clones: every instruction set's copy gives GMP's rank and determinant, and the same buffer",
          "[checker][modp][clones]") {
  PortableMode mode(false);
  std::mt19937_64 rng(67);
  std::vector<std::uint64_t> primes = {2, 3, 65521, kDensePrimeLimit - 5};
  // Each lazy window length at its largest prime: 16 (every panel's updates in one window: register
  // tiles), 15 and 8 (row pairs, eight updates per pass), 7 and 2 (one update at a time), 1 (a reduction
  // after every update).
  for (std::uint64_t len : {16, 15, 8, 7, 2, 1}) {
    const std::uint64_t p = largest_prime_with_window(len);
    REQUIRE(p > 2);
    REQUIRE(is_prime_u64(p));
    primes.push_back(p);
  }
  const std::vector<Copy> all = copies();
  for (std::uint64_t p : primes) {
    const ModP f{p};
    // m x n: several panels (16 columns) and column tiles (256), ragged ends, more rows than columns.
    const std::vector<std::pair<std::size_t, std::size_t>> shapes = {{70, 90}, {40, 300}, {90, 75}, {64, 64}, {120, 40},
                                                                     {1, 1}, {17, 17}};
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      const auto [m, n] = shapes[s];
      U64Mat a(m, std::vector<std::uint64_t>(n));
      const int kind = static_cast<int>(s % 3);
      for (auto& row : a)
        for (auto& x : row) x = kind == 0 ? p - 1 : rng() % p;
      if (kind == 0)  // every entry p - 1 but a random diagonal: the unreduced sums grow fastest
        for (std::size_t i = 0; i < std::min(m, n); ++i) a[i][i] = rng() % p;
      if (kind == 2) {  // a zero column block, and rows that combine two earlier ones (rank below min(m, n))
        for (auto& row : a)
          for (std::size_t j = std::min(n, std::size_t{20}); j < std::min(n, std::size_t{37}); ++j) row[j] = 0;
        for (std::size_t i = m / 3 + 1; i < m; i += 2) {
          const std::size_t u = rng() % (m / 3 + 1), v = rng() % (m / 3 + 1);
          const std::uint64_t g = rng() % p;
          for (std::size_t j = 0; j < n; ++j) a[i][j] = f.add(a[u][j], f.mul(g, a[v][j]));
        }
      }
      const std::size_t k = std::min(m, n);
      U64Mat sq(k, std::vector<std::uint64_t>(k));
      for (std::size_t i = 0; i < k; ++i) std::copy(a[i].begin(), a[i].begin() + k, sq[i].begin());
      const std::size_t want_rank = gmp_rank_det(a, p).first;
      const auto [want_rank_sq, want_det] = gmp_rank_det(sq, p);
      const std::size_t ld = dense_stride(n) + (s % 2 ? kDenseStride : 0), lk = dense_stride(k);
      for (unsigned threads : {1u, 3u}) {
        std::vector<double> first_w, first_ws;
        for (const Copy& c : all)
        for (bool wide : {false, true}) {
          INFO(c.isa << (wide ? ", 512-bit tiles" : ", 256-bit tiles") << ", p = " << p << ", " << m << " x " << n
                     << ", shape " << kind << ", threads " << threads);
          std::vector<double> w(m * ld, 0.0), ws(k * lk, 0.0);
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) w[i * ld + j] = static_cast<double>(a[i][j]);
          for (std::size_t i = 0; i < k; ++i)
            for (std::size_t j = 0; j < k; ++j) ws[i * lk + j] = static_cast<double>(sq[i][j]);
          CHECK(c.rank(w.data(), m, n, ld, p, nullptr, threads, wide) == want_rank);
          std::uint64_t det = 7;
          CHECK(c.rank(ws.data(), k, k, lk, p, &det, threads, wide) == want_rank_sq);
          CHECK(det == want_det);
          if (first_w.empty()) {
            first_w = w, first_ws = ws;
          } else {  // bit for bit the buffers of the first copy (the baseline's)
            CHECK(std::memcmp(w.data(), first_w.data(), w.size() * sizeof(double)) == 0);
            CHECK(std::memcmp(ws.data(), first_ws.data(), ws.size() * sizeof(double)) == 0);
          }
        }
      }
    }
  }
}
